//! The survey on a phone-sized screen (390 × 844) in headless Chromium: the transformed code
//! is readable without scrolling the page sideways, and each new item starts at the top.

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, open_queue, Store, TestApp};

/// Two items of a method with a long line (wider than a phone).
fn study_files() -> (String, String) {
    let long = "        return values.length + offset + Math.max(first, second) + Math.min(third, fourth) + limit;";
    let method = |name: &str| {
        format!("    int size(int[] values, int {name}) {{\n{long}\n    }}\n")
            .replace("offset", name)
    };
    let bug = serde_json::json!({"bug_id": "Lang-1", "project": "Lang", "file": "A.java",
        "method": "size", "source": method("offset"), "buggy_lines": [2]});
    let items: String = ["o", "shift"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            serde_json::json!({"id": format!("naming_{}", i + 1), "bug_id": "Lang-1",
                "operator": "RenameVariable-1", "level": "naming", "source": method(n),
                "summary": format!("renames `offset` to `{n}`")})
            .to_string()
                + "\n"
        })
        .collect();
    (bug.to_string(), items)
}

/// A study of the two items with an open invite link: (study, invite token).
async fn study_with_invite(
    db: &natstudy_core::service::Db,
    name: &str,
) -> (natstudy_vocab::ids::StudyId, String) {
    let study = natstudy_core::store::studies::create(db, None, name, "")
        .await
        .expect("study");
    let (bugs, items) = study_files();
    natstudy_core::service::imports::import_items_text(
        db,
        study,
        None,
        ("b", &bugs),
        ("t", &items),
    )
    .await
    .expect("items");
    let (_, token) = open_queue(db, study, 5).await.expect("queue");
    (study, token)
}

/// Opens the invite link `token` and waits until the page is interactive.
async fn open_invite(b: &Browser, app: &TestApp, token: &str) {
    b.client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("goto");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
}

async fn js(b: &Browser, script: &str) -> serde_json::Value {
    b.client.execute(script, vec![]).await.expect("script")
}

#[tokio::test]
async fn a_phone_reads_the_transformed_code_and_each_item_from_the_top() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (study, token) = study_with_invite(&db, "Phone").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start().await.expect("browser");
    b.client
        .set_window_size(390, 844)
        .await
        .expect("phone-sized window");
    open_invite(&b, &app, &token).await;
    // a participant's pages load the participants' small bundle
    let links = js(
        &b,
        "return [...document.querySelectorAll('link')].map(l => l.getAttribute('href')).join(' ')",
    )
    .await;
    assert!(
        links
            .as_str()
            .unwrap_or("")
            .contains("/pkg/natstudy_participant."),
        "{links}"
    );
    b.join_consent_and_start().await.expect("the rating view");

    // NATSTUDY_SCREENSHOTS=DIR keeps what the phone showed, to look at
    b.keep_screenshot("phone-rating.png").await;
    // unified by default on a phone, and nothing wider than the screen
    b.client
        .find(Locator::Css("table.diff.unified"))
        .await
        .expect("the unified view is the phone's default");
    let overflow = js(
        &b,
        "return document.documentElement.scrollWidth - window.innerWidth",
    )
    .await;
    assert!(
        overflow.as_f64().is_some_and(|o| o <= 0.0),
        "the page scrolls sideways by {overflow}"
    );
    // the transformed line is inside the screen, whole
    let right = js(
        &b,
        "const cells = document.querySelectorAll('table.diff td.code.add'); \
         return Math.max(...Array.from(cells).map(c => c.getBoundingClientRect().right));",
    )
    .await;
    assert!(
        right.as_f64().is_some_and(|r| r > 0.0 && r <= 390.0),
        "transformed code ends at {right} px on a 390 px screen"
    );

    // a wrapped line never starts left of its own indentation (a hanging indent): every
    // line box of an indented code cell begins at or right of its first character
    let worst = js(
        &b,
        "let worst = 1e9; \
         for (const cell of document.querySelectorAll('table.diff td.code')) { \
           const text = cell.textContent; const n = text.length - text.trimStart().length; \
           if (n === 0 || text.trim() === '') continue; \
           const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT); \
           let node, start = null, seen = 0; \
           while ((node = walker.nextNode())) { \
             if (seen + node.length > n) { start = document.createRange(); \
               start.setStart(node, n - seen); start.setEnd(node, n - seen + 1); break; } \
             seen += node.length; } \
           const x0 = start.getBoundingClientRect().left; \
           const all = document.createRange(); all.selectNodeContents(cell); \
           const rects = Array.from(all.getClientRects()).filter(r => r.width > 0); \
           const firstTop = Math.min(...rects.map(r => r.top)); \
           for (const r of rects) if (r.top > firstTop + 2) worst = Math.min(worst, r.left - x0); } \
         return worst;",
    )
    .await;
    let worst = worst.as_f64().expect("a number");
    assert!(
        worst >= -1.0,
        "a wrapped line starts {worst} px left of its indentation"
    );
    let wrapped = js(
        &b,
        "return Array.from(document.querySelectorAll('table.diff td.code.add')).some(c => c.getClientRects()[0].height > 30)",
    )
    .await;
    assert_eq!(
        wrapped,
        serde_json::json!(true),
        "the long line wraps on a phone"
    );
    // answers are touch targets of at least 44 px
    let target = js(
        &b,
        "return Math.min(...Array.from(document.querySelectorAll('.likert-option')).map(l => l.getBoundingClientRect().height))",
    )
    .await;
    assert!(
        target.as_f64().is_some_and(|h| h >= 44.0),
        "an answer is {target} px tall"
    );

    // scrolled down to the questions, answered: the next item starts at the top
    js(
        &b,
        "window.scrollTo(0, document.body.scrollHeight); return null",
    )
    .await;
    let scrolled = js(&b, "return window.scrollY").await;
    assert!(scrolled.as_f64().is_some_and(|y| y > 0.0), "{scrolled}");
    b.click("#cr-1").await.expect("cr");
    b.click("#cc-2").await.expect("cc");
    b.click("#submit").await.expect("submit");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("next item");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("rating view");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let y = js(&b, "return window.scrollY").await;
        if y.as_f64() == Some(0.0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the next item opened scrolled to {y}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // the same browser reopening the invite link continues as the same participant
    let code = b.text_of("#resume-code").await;
    assert_eq!(code.len(), 11, "a resume code is on the page: {code:?}");
    let who = b.text_of(".survey-head .muted").await;
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite again");
    b.wait_contains("#invite-continuing", "continue where you left off")
        .await;
    b.click("#join").await.expect("continue");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("same count");
    // another device (a laptop-sized browser) continues with the resume code
    let laptop = Browser::start().await.expect("browser");
    laptop
        .client
        .set_window_size(1366, 900)
        .await
        .expect("laptop-sized window");
    laptop
        .goto_hydrated(&app.url("/resume"))
        .await
        .expect("resume page");
    laptop
        .client
        .find(Locator::Css("#resume-input"))
        .await
        .expect("input")
        .send_keys(&code.to_lowercase())
        .await
        .expect("type");
    laptop.click("#resume-submit").await.expect("resume");
    laptop
        .wait_for_text("#progress", "1 / 2")
        .await
        .expect("the same participant's count");
    assert_eq!(laptop.text_of(".survey-head .muted").await, who);
    assert_eq!(laptop.text_of("#resume-code").await, code);
    laptop.close().await;
    // the site's root leads the participant back to their study, with how far they are
    b.goto_hydrated(&app.url("/"))
        .await
        .expect("the start page");
    b.wait_contains("#my-studies", "1 of 2 rated").await;
    assert_eq!(b.text_of("main h2").await, "Your study");
    let link = format!("#my-studies a[href='/annotate/{study}']");
    let right = js(
        &b,
        &format!("return document.querySelector(\"{link}\").getBoundingClientRect().right"),
    )
    .await;
    assert!(
        right.as_f64().is_some_and(|r| r > 0.0 && r <= 390.0),
        "the study's link ends at {right} px on a 390 px screen"
    );
    let overflow = b.sideways().await.expect("width");
    assert!(
        overflow <= 0.0,
        "the start page scrolls sideways by {overflow}"
    );
    b.click(&link).await.expect("back to the study");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("the survey again");
    // the phone rates the last item: every Revise link of the list is on screen
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#cr-1").await.expect("cr");
    b.click("#cc-1").await.expect("cc");
    b.click("#submit").await.expect("submit");
    b.client
        .wait()
        .for_element(Locator::Css("#rated a.revise"))
        .await
        .expect("the rated items");
    let right = js(
        &b,
        "return Math.max(...Array.from(document.querySelectorAll('#rated a.revise')).map(a => a.getBoundingClientRect().right))",
    )
    .await;
    assert!(
        right.as_f64().is_some_and(|r| r > 0.0 && r <= 390.0),
        "a Revise link ends at {right} px on a 390 px screen"
    );
    // the headings whole ("Readabilit" was clipped) and each link one word on one line
    // ("Revi/se" broke in two)
    let clipped = js(
        &b,
        "return Array.from(document.querySelectorAll('#rated th')).filter(th => th.scrollWidth > th.clientWidth + 1).map(th => th.textContent)",
    )
    .await;
    assert_eq!(clipped, serde_json::json!([]), "clipped headings");
    let lines = js(
        &b,
        "return Math.max(...Array.from(document.querySelectorAll('#rated a.revise')).map(a => a.getClientRects().length))",
    )
    .await;
    assert_eq!(lines, serde_json::json!(1), "a Revise link on one line");
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The slow link of the issue's trial, emulated in Chromium through the DevTools protocol: a
/// cold cache, 400 ms of latency and 400 kbit/s.
const SLOW_LINK: (u32, u32) = (400, 400);

/// On a slow connection the rating form shows before the wasm arrives: answers clicked then are
/// still selected once the page is interactive, and the vote carries them.
async fn answers_clicked_before_the_page_is_interactive_survive_it(viewport: (u32, u32)) {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (study, token) = study_with_invite(&db, "Slow").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    // the participant joined on another device; here they continue with the resume code
    let base = app.url("");
    let other = natstudy_tests::participants::participant(&base, study, &token).await;
    let state = natstudy_tests::participants::state(&base, &other, study)
        .await
        .expect("state");
    let code = state["resume_code"].as_str().expect("code").to_owned();
    let mut b = Browser::start_sized(viewport.0, viewport.1)
        .await
        .expect("browser");
    b.throttle(SLOW_LINK.0, SLOW_LINK.1)
        .await
        .expect("slow link");
    b.client.goto(&app.url("/resume")).await.expect("resume");
    b.client
        .find(Locator::Css("#resume-input"))
        .await
        .expect("input")
        .send_keys(&code)
        .await
        .expect("type");
    // a plain form: it works before the wasm arrives
    b.click("#resume-submit").await.expect("submit");
    b.client
        .wait()
        .for_element(Locator::Css("#cr-2"))
        .await
        .expect("the rating form, drawn by the server");
    let hydrated = js(
        &b,
        "return document.getElementById('hydrated').dataset.hydrated",
    )
    .await;
    assert_eq!(hydrated, "false", "answered before the page is interactive");
    let shown = std::time::Instant::now();
    b.click("#cr-2").await.expect("cr");
    b.click("#cc-3").await.expect("cc");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated at last");
    let before_hydration = shown.elapsed().as_secs_f64();
    let checked = js(
        &b,
        "return [document.getElementById('cr-2').checked, document.getElementById('cc-3').checked]",
    )
    .await;
    assert_eq!(
        checked,
        serde_json::json!([true, true]),
        "the answers survived"
    );
    b.click("#submit").await.expect("submit");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("recorded");
    let votes: Vec<(i64, i64)> = sqlx::query_as("SELECT cr, cc FROM votes")
        .fetch_all(&db.pool)
        .await
        .expect("votes");
    assert_eq!(votes, vec![(2, 3)]);
    // the time runs from when the item was shown (the page's load), not from hydration: the
    // participant looked at it all the while the wasm came down the slow link
    let time: Option<f64> = sqlx::query_scalar("SELECT time_secs FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("time");
    let time = time.expect("a measured time");
    assert!(
        before_hydration >= 5.0,
        "the slow link held the page back {before_hydration:.1} s"
    );
    assert!(
        time >= before_hydration,
        "time on item {time} s for {before_hydration:.1} s of viewing before the page was interactive"
    );
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// On a slow connection the invite page shows before the wasm arrives, and "Take part" tapped
/// then works as a plain form: it reaches the consent page, never a raw error.
async fn take_part_works_before_the_page_is_interactive(viewport: (u32, u32)) {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (_, token) = study_with_invite(&db, "Slow join").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let mut b = Browser::start_sized(viewport.0, viewport.1)
        .await
        .expect("browser");
    b.throttle(SLOW_LINK.0, SLOW_LINK.1)
        .await
        .expect("slow link");
    b.client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite page");
    b.client
        .wait()
        .for_element(Locator::Css("#join"))
        .await
        .expect("the button, drawn by the server");
    let hydrated = js(
        &b,
        "return document.getElementById('hydrated').dataset.hydrated",
    )
    .await;
    assert_eq!(hydrated, "false", "tapped before the page is interactive");
    b.click("#join").await.expect("take part");
    b.client
        .wait()
        .for_element(Locator::Css("#consent-submit"))
        .await
        .expect("the consent page");
    let body = b.text_of("body").await;
    assert!(!body.contains("ServerError"), "{body}");
    let joined: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM annotators")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(joined, 1);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn answers_clicked_before_the_page_is_interactive_survive_it_on_a_laptop() {
    answers_clicked_before_the_page_is_interactive_survive_it((1366, 900)).await;
}

#[tokio::test]
async fn answers_clicked_before_the_page_is_interactive_survive_it_on_a_phone() {
    answers_clicked_before_the_page_is_interactive_survive_it((390, 844)).await;
}

#[tokio::test]
async fn take_part_works_before_the_page_is_interactive_on_a_laptop() {
    take_part_works_before_the_page_is_interactive((1366, 900)).await;
}

#[tokio::test]
async fn take_part_works_before_the_page_is_interactive_on_a_phone() {
    take_part_works_before_the_page_is_interactive((390, 844)).await;
}

/// A touch screen has no keys: the rating view names none ("Submit", not "Submit (Enter)";
/// "Guideline", "Context: file and project"; no key rule), while a laptop's names them.
#[tokio::test]
async fn a_touch_screen_names_no_keys() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (_, token) = study_with_invite(&db, "Touch").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    for touch in [true, false] {
        let b = Browser::start_sized(390, 844).await.expect("browser");
        if touch {
            b.touch().await.expect("touch emulation");
        }
        open_invite(&b, &app, &token).await;
        let coarse = js(
            &b,
            "return matchMedia('(hover: none) and (pointer: coarse)').matches",
        )
        .await;
        assert_eq!(coarse, serde_json::json!(touch), "the screen's pointer");
        b.join_consent_and_start().await.expect("the rating view");
        let shown = js(
            &b,
            "return [document.querySelector('#submit').innerText.trim(), \
             document.querySelector('#guideline-toggle').innerText.trim(), \
             document.querySelector('#context summary').innerText.trim(), \
             getComputedStyle(document.querySelector('#key-hint')).display]",
        )
        .await;
        let expected = if touch {
            serde_json::json!(["Submit", "Guideline", "Context: file and project", "none"])
        } else {
            serde_json::json!([
                "Submit (Enter)",
                "Guideline (g)",
                "Context (c): file and project",
                "block"
            ])
        };
        assert_eq!(shown, expected, "touch: {touch}");
        b.close().await;
    }
    drop(app);
    guard.drop_now(db).await;
}

/// The rating view's focus rings show (they were hard to see on the diff region, the Context
/// summary and the comment box): a dark ring with yellow bands, the same on every focusable
/// part, once the keyboard moves focus; on a laptop and on a phone.
async fn the_rating_views_focus_rings_show((width, height): (u32, u32)) {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (_, token) = study_with_invite(&db, "Focus").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start_sized(width, height).await.expect("browser");
    open_invite(&b, &app, &token).await;
    b.join_consent_and_start().await.expect("the rating view");
    // the keyboard in use (Tab), so that focus shows as the keyboard's
    b.press("\u{E004}").await.expect("tab");
    for css in [".diff-wrap", "#context summary", "textarea[name=comment]"] {
        let ring = js(
            &b,
            &format!(
                "const el = document.querySelector('{css}'); el.focus(); \
                 const cs = getComputedStyle(el); \
                 return [el.matches(':focus-visible'), cs.outlineStyle, cs.outlineWidth, \
                         cs.outlineColor, cs.boxShadow.includes('rgb(242, 176, 30)')]"
            ),
        )
        .await;
        assert_eq!(
            ring,
            serde_json::json!([true, "solid", "3px", "rgb(29, 35, 41)", true]),
            "{width} px: {css}"
        );
    }
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn the_rating_views_focus_rings_show_on_a_laptop() {
    the_rating_views_focus_rings_show((1366, 900)).await;
}

#[tokio::test]
async fn the_rating_views_focus_rings_show_on_a_phone() {
    the_rating_views_focus_rings_show((390, 844)).await;
}
