//! Reading a diff on a phone (390 × 844) and a laptop (1366 × 900) in headless Chromium (#71):
//! code at 12 px or more with some 40 characters a line on the phone and one line-number
//! gutter, lines that break between tokens only (on the Defects4J reference methods too),
//! the whole method on the page, and every change reached by previous / next (buttons and the
//! keys `p` / `n`) or from the list of changes.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{cli, fresh_db, open_queue, reference_dir, study_of, Store, TestApp};

const SIZES: [(u32, u32); 2] = [(390, 844), (1366, 900)];

/// A 60-line method whose `total` is renamed on three lines far apart, with a string literal
/// longer than a phone's line.
fn long_method(total: &str) -> String {
    let mut lines = vec![
        "    int sum(int[] values) {".to_owned(),
        format!("        int {total} = 0;"),
    ];
    for i in 0..26 {
        lines.push(format!(
            "        int a{i} = values.length + Math.max(values[0], {i}) * {i};"
        ));
    }
    lines.push(format!("        {total} += values[0];"));
    lines.push(
        "        String label = \"a-string-literal-much-wider-than-any-phone-screen-can-show\";"
            .into(),
    );
    for i in 26..54 {
        lines.push(format!("        int a{i} = label.length() + {i};"));
    }
    lines.push(format!("        return {total};"));
    lines.push("    }".into());
    lines.join("\n") + "\n"
}

/// A participant of the invite `token` in a window of `size`, at the first item.
async fn join(app: &TestApp, token: &str, (w, h): (u32, u32)) -> Browser {
    let b = Browser::start_sized(w, h).await.expect("browser");
    b.client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("goto");
    b.join_consent_and_start().await.expect("the rating view");
    b
}

async fn js(b: &Browser, script: &str) -> serde_json::Value {
    b.client.execute(script, vec![]).await.expect("script")
}

/// Waits until change `k` (from 1) is on screen with the focus, and the bar says so.
async fn at_change(b: &Browser, k: usize, of: usize) {
    let script = format!(
        "const row = document.getElementById('change-{k}'); if (!row) return 'no row'; \
         const r = row.getBoundingClientRect(); \
         const nav = document.querySelector('.change-nav').getBoundingClientRect(); \
         if (r.top < 0 || r.bottom > Math.min(window.innerHeight, nav.top)) return 'off screen at ' + r.top; \
         if (document.activeElement !== row) return 'focus on ' + document.activeElement.id; \
         return document.getElementById('change-status').textContent;"
    );
    let want = if k == of {
        format!("Change {k} of {of}, the last")
    } else {
        format!("Change {k} of {of}")
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = js(b, &script).await;
        if got.as_str() == Some(want.as_str()) {
            return;
        }
        assert!(Instant::now() < deadline, "change {k}: {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_diff_is_read_on_the_page_and_every_change_is_a_step_away() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    // its file: the method in a class, with a long line that wraps on a phone
    let file = format!(
        "package a;\n\nclass A {{\n        private static final String HEADER = \"first, second, third, fourth, fifth, sixth\" + \"seventh, eighth, ninth\";\n\n{}}}\n",
        long_method("total")
    );
    let bug = serde_json::json!({"bug_id": "Lang-1", "project": "Lang", "file": "A.java",
        "method": "sum", "source": long_method("total"), "file_source": file,
        "buggy_lines": [2]});
    let item = serde_json::json!({"id": "naming_1", "bug_id": "Lang-1",
        "operator": "RenameVariable-1", "level": "naming", "source": long_method("acc"),
        "summary": "renames `total` to `acc`"});
    let study = study_of(&db, "Reading", &bug.to_string(), &format!("{item}\n"))
        .await
        .expect("study");
    let (_, token) = open_queue(&db, study, 5).await.expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    for (w, h) in SIZES {
        let phone = w < 700;
        let b = join(&app, &token, (w, h)).await;
        b.keep_screenshot(&format!("diff-{w}.png")).await;
        // the page does not scroll sideways; the diff is not a box that scrolls inside it
        assert!(b.sideways().await.expect("width") <= 0.0, "{w}: sideways");
        let boxed = js(
            &b,
            "const d = document.querySelector('.diff-wrap'); \
             return [d.scrollHeight - d.clientHeight, d.clientHeight - window.innerHeight];",
        )
        .await;
        assert!(
            boxed[0].as_f64().is_some_and(|x| x <= 1.0)
                && boxed[1].as_f64().is_some_and(|x| x > 0.0),
            "{w}: the diff is cut to a box ({boxed})"
        );
        // a line that scrolls is reachable by keyboard: nothing serious for axe
        let serious = b.axe_serious().await.expect("axe");
        assert!(serious.is_empty(), "{w}: {serious:?}");
        // the long literal is whole on one line (its line scrolls), never split
        let literal = js(
            &b,
            "const s = [...document.querySelectorAll('td.code .str')].find(s => s.textContent.includes('much-wider')); \
             return [s.getClientRects().length, s.closest('.cl').scrollWidth > s.closest('.cl').clientWidth];",
        )
        .await;
        assert_eq!(literal[0], 1, "{w}: the literal is split: {literal}");
        if phone {
            assert_eq!(literal[1], true, "{w}: its line scrolls: {literal}");
            // characters of code a line holds, and the font they are drawn in
            let measure = js(
                &b,
                "const cl = document.querySelector('table.diff td.code .cl'); const cs = getComputedStyle(cl); \
                 const probe = document.createElement('span'); probe.style.whiteSpace = 'pre'; \
                 probe.textContent = 'x'.repeat(100); cl.appendChild(probe); \
                 const ch = probe.getBoundingClientRect().width / 100; probe.remove(); \
                 const width = cl.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight); \
                 return [parseFloat(cs.fontSize), Math.floor(width / ch)];",
            )
            .await;
            let (font, chars) = (
                measure[0].as_f64().expect("px"),
                measure[1].as_f64().expect("n"),
            );
            assert!(font >= 12.0, "the diff's font is {font} px");
            assert!(
                chars >= 38.0,
                "a line holds {chars} characters of code at {w} px"
            );
            // one gutter: the original's numbers on demand
            let shown = "return [...document.querySelectorAll('td.ln-old')].filter(td => td.offsetParent !== null).length";
            assert_eq!(js(&b, shown).await, 0, "one gutter on a phone");
            b.click("#line-numbers").await.expect("both numbers");
            assert!(
                js(&b, shown).await.as_i64().is_some_and(|n| n > 50),
                "both gutters on demand"
            );
            b.click("#line-numbers").await.expect("one gutter");
            assert_eq!(js(&b, shown).await, 0);
        } else {
            let toggle = "const t = document.getElementById('line-numbers'); return !t || t.offsetParent === null";
            assert_eq!(js(&b, toggle).await, true, "no gutter toggle on a laptop");
        }
        // previous / next by mouse, then by the keys
        b.click("#next-change").await.expect("next");
        at_change(&b, 1, 3).await;
        b.click("#next-change").await.expect("next");
        at_change(&b, 2, 3).await;
        b.press("n").await.expect("n");
        at_change(&b, 3, 3).await;
        b.press("n").await.expect("n at the end");
        at_change(&b, 3, 3).await;
        b.press("p").await.expect("p");
        at_change(&b, 2, 3).await;
        b.click("#prev-change").await.expect("previous");
        at_change(&b, 1, 3).await;
        // any change from the list: its picker and the choice
        b.client
            .find(Locator::Css("#goto-change"))
            .await
            .expect("the list")
            .select_by_value("3")
            .await
            .expect("choose");
        at_change(&b, 3, 3).await;
        let listed = js(
            &b,
            "return [...document.querySelectorAll('#goto-change option')].map(o => o.textContent)",
        )
        .await;
        assert_eq!(
            listed,
            serde_json::json!([
                "3 changes…",
                "1 of 3: line 2",
                "2 of 3: line 29",
                "3 of 3: line 59"
            ])
        );
        if phone {
            // the Context file view: a wrapped line hangs at its own indentation too
            b.click("#context summary").await.expect("context");
            b.client
                .wait()
                .for_element(Locator::Css("table.file td.code"))
                .await
                .expect("the file");
            let hang = js(&b, HANGING).await;
            let (wrapped, worst) = (hang[0].as_i64().expect("n"), hang[1].as_f64().expect("px"));
            assert!(wrapped > 0, "no line of the file wraps on a phone");
            assert!(
                worst >= -1.0,
                "a wrapped file line starts {worst} px left of its indentation"
            );
        }
        b.keep_screenshot(&format!("diff-{w}-change-3.png")).await;
        b.close().await;
    }
    guard.drop_now(db).await;
}

/// The file view's wrapped lines: `[how many wrap, the least px a continuation line starts
/// right of its line's first character]` (negative: left of its indentation).
const HANGING: &str = r#"
let worst = 1e9, wrapped = 0;
for (const cell of document.querySelectorAll('table.file td.code .cl')) {
  const text = cell.textContent; const n = text.length - text.trimStart().length;
  if (n === 0 || text.trim() === '') continue;
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let node, start = null, seen = 0;
  while ((node = walker.nextNode())) {
    if (seen + node.length > n) { start = document.createRange(); start.setStart(node, n - seen); start.setEnd(node, n - seen + 1); break; }
    seen += node.length;
  }
  const x0 = start.getBoundingClientRect().left;
  const all = document.createRange(); all.selectNodeContents(cell);
  const rects = Array.from(all.getClientRects()).filter(r => r.width > 0);
  const firstTop = Math.min(...rects.map(r => r.top));
  let wraps = false;
  for (const r of rects) if (r.top > firstTop + 2) { wraps = true; worst = Math.min(worst, r.left - x0); }
  if (wraps) wrapped++;
}
return [wrapped, worst];
"#;

/// The tokens of each code line on the page that a line break splits: `[line, token]`. A
/// token as Java reads it (a literal, a name, a number, an operator); a comment's words each.
const SPLIT_TOKENS: &str = r#"
const re = /\/\/.*|\/\*.*?(?:\*\/|$)|"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|[A-Za-z_$][\w$]*|\d[\w.]*(?:[eEpP][+-]\d+)?|[=<>!&|+\-*\/%^~?:]+|\S/g;
const split = [];
let wrapped = 0;
for (const cl of document.querySelectorAll('table.diff td.code .cl')) {
  const text = cl.textContent;
  const lh = parseFloat(getComputedStyle(cl).lineHeight) || 16;
  if (cl.getBoundingClientRect().height > lh * 1.5) wrapped++;
  const nodes = []; const w = document.createTreeWalker(cl, NodeFilter.SHOW_TEXT);
  let n, pos = 0; while ((n = w.nextNode())) { nodes.push([n, pos]); pos += n.length; }
  const at = (off, end) => { for (const [node, p] of nodes) if (off < p + node.length || (end && off === p + node.length)) return [node, off - p]; return null; };
  const words = /\S+/g;
  const pieces = [];
  let m;
  while ((m = re.exec(text))) {
    // a comment breaks between its words
    if (m[0].startsWith('//') || m[0].startsWith('/*')) {
      let w; words.lastIndex = 0;
      while ((w = words.exec(m[0]))) pieces.push([m.index + w.index, w[0]]);
    } else pieces.push([m.index, m[0]]);
  }
  for (const [index, token] of pieces) {
    const a = at(index, false), z = at(index + token.length, true);
    if (!a || !z) continue;
    const r = document.createRange(); r.setStart(a[0], a[1]); r.setEnd(z[0], z[1]);
    const tops = [...r.getClientRects()].filter(x => x.width > 0).map(x => x.top);
    if (tops.length && Math.max(...tops) - Math.min(...tops) > lh / 2) split.push([text.trim(), token]);
  }
}
return [wrapped, split.slice(0, 10)];
"#;

/// Every Defects4J reference method, renamed by the engine (a change on every line the variable
/// is on), read on a phone and a laptop: lines wrap (on the phone) and no token is split.
#[tokio::test]
async fn no_defects4j_method_breaks_inside_a_token() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let dir = tempfile::tempdir().expect("dir");
    let pairs = reference_dir().join("defects4j-lang").join("pairs.csv");
    let bugs = dir.path().join("bugs.jsonl");
    let out = dir.path().join("t.jsonl");
    let path = |p: &std::path::Path| p.display().to_string();
    cli(&db.url, &["study", "create", "source"])
        .await
        .expect("study");
    cli(
        &db.url,
        &[
            "import",
            "bugs",
            "--study",
            "source",
            &path(&pairs),
            "--out",
            &path(&bugs),
        ],
    )
    .await
    .expect("bugs");
    cli(
        &db.url,
        &[
            "transform",
            "--bugs",
            &path(&bugs),
            "--operators",
            "studied",
            "--all-sites",
            "--out",
            &path(&out),
        ],
    )
    .await
    .expect("transform");
    // one transformation per bug: a renaming where the method has a name to rename
    let mut chosen: std::collections::BTreeMap<String, (bool, String)> = Default::default();
    for l in std::fs::read_to_string(&out).expect("items").lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        let bug = v["bug_id"].as_str().unwrap_or_default().to_owned();
        let rename = v["operator"]
            .as_str()
            .is_some_and(|o| o.starts_with("Rename"));
        let entry = chosen.entry(bug).or_insert((rename, l.to_owned()));
        if rename && !entry.0 {
            *entry = (true, l.to_owned());
        }
    }
    let items: String = chosen.values().map(|(_, l)| format!("{l}\n")).collect();
    let seen = chosen;
    let n = seen.len();
    let imported = std::fs::read_to_string(&bugs)
        .expect("bugs")
        .lines()
        .count();
    assert_eq!(n, imported, "every imported bug renamed");
    let bug_text = std::fs::read_to_string(&bugs).expect("bugs");
    let study = study_of(&db, "Read", &bug_text, &items)
        .await
        .expect("study");
    let (_, token) = open_queue(&db, study, 5).await.expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    for (w, h) in SIZES {
        let b = join(&app, &token, (w, h)).await;
        let mut wrapped = 0;
        for i in 0..n {
            if i == 0 {
                b.keep_screenshot(&format!("d4j-{w}.png")).await;
            }
            let got = js(&b, SPLIT_TOKENS).await;
            wrapped += got[0].as_i64().expect("count");
            assert_eq!(
                got[1],
                serde_json::json!([]),
                "{w} px, item {}: split tokens",
                i + 1
            );
            assert!(b.sideways().await.expect("width") <= 0.0, "{w}: sideways");
            b.click("#cr-1").await.expect("cr");
            b.click("#cc-1").await.expect("cc");
            b.click("#submit").await.expect("submit");
            if i + 1 < n {
                b.wait_for_text("#progress", &format!("{} / {n}", i + 1))
                    .await
                    .expect("the next item");
                b.client
                    .wait()
                    .for_element(Locator::Css("#submit:not([disabled])"))
                    .await
                    .expect("ready");
            }
        }
        if w < 700 {
            assert!(
                wrapped > n as i64,
                "only {wrapped} lines wrap on a phone: the check saw no breaks"
            );
        }
        b.close().await;
    }
    guard.drop_now(db).await;
}
