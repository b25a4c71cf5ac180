//! A designed study's participants in headless Chromium: invite link → consent → guideline →
//! every unit answered → finish with the completion code, for each kind of unit (one snippet
//! with a scale, a choice and a comprehension question; a pair; a set), by keyboard, by mouse
//! and without JavaScript, on a phone and a laptop, on both stores. What reaches the export is
//! checked against what the page showed: the sides and the order, and each answer. Also over
//! a slow link, with an 11-point scale's two-digit keys, and with an attention unit.

use std::time::Duration;

use fantoccini::Locator;
use natstudy_core::service::{designs, invites, Db};
use natstudy_engine::design::parse_design;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Store, TestApp};
use natstudy_types::{Role, StudyId};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Hands {
    Keyboard,
    Mouse,
    NoJavaScript,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Design {
    /// A snippet a unit: a 5-point scale, a choice, a comprehension question, a multiple
    /// choice, a text and a number.
    Snippet,
    Pair,
    Set,
}

const SNIPPET: &str = r#"title = "Reading snippets"
[[question]]
id = "readable"
kind = "likert"
prompt = "How easy is this snippet to read?"
points = 5
labels = ["Very hard", "Hard", "Neither", "Easy", "Very easy"]
[[question]]
id = "effort"
kind = "likert"
prompt = "How much effort would a change take?"
points = 11
labels = ["None", "Very much"]
[[question]]
id = "style"
kind = "choice"
prompt = "Which style is it closest to?"
options = ["Google", "Sun", "Other"]
[[question]]
id = "output"
kind = "answer"
prompt = "What does it print?"
[[question]]
id = "smells"
kind = "multi"
prompt = "Which smells do you see?"
options = ["long", "deep", "none"]
[[question]]
id = "why"
kind = "text"
prompt = "Why is it easy or hard?"
max_chars = 200
[[question]]
id = "minutes"
kind = "number"
prompt = "Minutes to change it?"
min = 0
max = 60
"#;

const PAIR: &str = r#"title = "Which reads better"
[[question]]
id = "better"
kind = "pairwise"
prompt = "Which of the two reads better?"
ties = true
"#;

const SET: &str = r#"title = "Easiest and hardest"
[[question]]
id = "ease"
kind = "best-worst"
prompt = "Which is the easiest to understand, and which the hardest?"
set_size = 3
per_snippet = 1
"#;

/// Two Java snippets (one shown as a diff against its original) and one in Python (plain).
const SNIPPETS: &str = r#"{"id": "J1", "code": "int add(int a, int b) {\n    return b + a;\n}", "original": "int add(int a, int b) {\n    return a + b;\n}", "language": "java", "key": {"output": "3"}, "options": {"output": ["2", "3", "4"]}, "context": "From a calculator."}
{"id": "J2", "code": "for (int i = 0; i < 2; i++) {\n    System.out.println(i);\n}", "language": "java", "key": {"output": "0 1"}, "options": {"output": ["0 1", "1 2", "0 1 2"]}}
{"id": "P1", "code": "def add(a, b):\n    return a + b", "language": "python", "key": {"output": "3"}, "options": {"output": ["3", "ab", "None"]}}
"#;

async fn designed(db: &Db, design: Design) -> (StudyId, String) {
    let text = match design {
        Design::Snippet => SNIPPET,
        Design::Pair => PAIR,
        Design::Set => SET,
    };
    let d = parse_design("design.toml", text).expect("design");
    let study = designs::create(db, None, None, "Designed study", "", &d)
        .await
        .expect("study");
    // a pair's or a set's design asks no question with a right answer: no keys
    let snippets = match design {
        Design::Snippet => SNIPPETS.to_owned(),
        _ => SNIPPETS
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).expect("json");
                if let Some(o) = v.as_object_mut() {
                    o.remove("key");
                    o.remove("options");
                }
                format!("{v}\n")
            })
            .collect(),
    };
    designs::import_snippets_text(db, study, None, "snippets.jsonl", &snippets)
        .await
        .expect("snippets");
    sqlx::query(
        "UPDATE studies SET ratings_per_item = 1, completion_code = 'DONE42' WHERE id = $1",
    )
    .bind(study)
    .execute(&mut *db.write().await.expect("write"))
    .await
    .expect("settings");
    let path = invites::create_for_design(db, study, 5, false, None)
        .await
        .expect("invite");
    (study, path)
}

async fn wait_for(b: &Browser, css: &str, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while b.client.find(Locator::Css(css)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The labels' snippets of the unit on screen, in the order shown: its snippets' sections.
async fn units_on_screen(b: &Browser) -> usize {
    b.client
        .find_all(Locator::Css("section.snippet"))
        .await
        .expect("snippets")
        .len()
}

/// Chooses the input `id` (a radio or a checkbox) by the participant's hands: a click, or
/// for the keyboard the `key` that the page maps to it.
async fn choose(b: &Browser, hands: Hands, id: &str, key: &str) {
    match hands {
        Hands::Keyboard => b.press(key).await.expect("key"),
        Hands::Mouse | Hands::NoJavaScript => b.click(&format!("#{id}")).await.expect("click"),
    }
}

/// Types `keys` into the field `id` (focused by the keys, as Tab would).
async fn type_into(b: &Browser, id: &str, keys: &str) {
    b.client
        .find(Locator::Css(&format!("#{id}")))
        .await
        .expect("field")
        .send_keys(keys)
        .await
        .expect("keys");
}

async fn submit(b: &Browser, hands: Hands) {
    match hands {
        Hands::Keyboard => b.press("\u{E007}").await.expect("enter"),
        _ => b.click("#submit").await.expect("submit"),
    }
}

/// Through the invite link at `url`: consent and the guideline, by `hands`, up to the first
/// unit.
async fn join_and_start(b: &Browser, url: &str, hands: Hands) {
    b.client.goto(url).await.expect("invite");
    if hands == Hands::NoJavaScript {
        b.join_consent_and_start_without_javascript()
            .await
            .expect("start");
    } else {
        b.join_and_consent("1-3", true).await.expect("consent");
        b.wait_for_text("#start", "Start rating")
            .await
            .expect("guideline");
        b.click("#start").await.expect("start");
    }
}

/// The claim of the unit on screen (`None`: no unit).
async fn claim_on_screen(b: &Browser) -> Option<String> {
    b.client
        .execute(
            "const c = document.querySelector('#answer-form input[name=claim]'); return c ? c.value : null",
            vec![],
        )
        .await
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
}

/// How many units the participant answered (the progress `n / total`).
async fn progress(b: &Browser) -> String {
    b.text_of("#progress").await
}

async fn a_participant_answers(store: Store, design: Design, hands: Hands, size: (u32, u32)) {
    a_participant_answers_over(store, design, hands, size, None).await
}

/// A slow mobile link: 400 ms each way, 400 kbit/s, no cache.
const SLOW_LINK: (u32, u32) = (400, 400);

/// [`a_participant_answers`] over a `link` (latency in ms, kbit/s) when given.
async fn a_participant_answers_over(
    store: Store,
    design: Design,
    hands: Hands,
    (w, h): (u32, u32),
    link: Option<(u32, u32)>,
) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, path) = designed(&db, design).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let mut b = match hands {
        Hands::NoJavaScript => Browser::start_without_javascript(w, h).await,
        _ => Browser::start_sized(w, h).await,
    }
    .expect("browser");
    if let Some((latency, kbit)) = link {
        b.throttle(latency, kbit).await.expect("slow link");
    }
    join_and_start(&b, &app.url(&path), hands).await;
    let units = match design {
        Design::Snippet => 3,
        Design::Pair => 3,
        Design::Set => 1,
    };
    let mut shown_orders: Vec<Vec<String>> = Vec::new();
    for n in 0..units {
        wait_for(&b, "#answer-form", "a unit to answer").await;
        if hands != Hands::NoJavaScript {
            b.wait_for_text("#hydrated", "interactive")
                .await
                .expect("hydrated");
        }
        let count = units_on_screen(&b).await;
        let expected = match design {
            Design::Snippet => 1,
            Design::Pair => 2,
            Design::Set => 3,
        };
        assert_eq!(count, expected, "snippets shown");
        // (axe runs as a script: on the pages with JavaScript)
        if n == 0 && hands != Hands::NoJavaScript {
            let serious = b.axe_serious().await.expect("axe");
            assert!(serious.is_empty(), "{serious:?}");
            assert!(b.sideways().await.expect("width") <= 0.5, "fits the screen");
        }
        // a new unit's form is empty: nothing given for the last one is carried into it
        let carried = b
            .client
            .execute(
                "return document.querySelectorAll('#answer-form input:checked').length + \
                 Array.from(document.querySelectorAll('#answer-form textarea, #answer-form input[type=number]')) \
                   .filter(e => e.value !== '').length",
                vec![],
            )
            .await
            .ok()
            .and_then(|v| v.as_i64());
        if hands != Hands::NoJavaScript {
            assert_eq!(carried, Some(0), "unit {n} starts empty");
        }
        // what the page shows, in order: each snippet's first code line
        let mut order = Vec::new();
        for label in ["A", "B", "C"].iter().take(count) {
            order.push(b.text_of(&format!("#snippet-{label}")).await);
        }
        shown_orders.push(order);
        match design {
            Design::Snippet => {
                choose(&b, hands, "q-readable-4", "4").await;
                if n == 0 && hands != Hands::NoJavaScript {
                    // the page opened again keeps what was given (the draft, kept in the
                    // browser; a new navigation, which the browser's own form restore skips)
                    let here = b.client.current_url().await.expect("url");
                    b.client.goto(here.as_str()).await.expect("again");
                    wait_for(&b, "#answer-form", "the unit again").await;
                    b.wait_for_text("#hydrated", "interactive")
                        .await
                        .expect("hydrated");
                    let kept = b
                        .client
                        .execute(
                            "return document.getElementById('q-readable-4').checked",
                            vec![],
                        )
                        .await
                        .expect("checked");
                    assert_eq!(
                        kept,
                        serde_json::json!(true),
                        "the answer survives a reload"
                    );
                }
                // the eleventh point of an 11-point scale: "1" then "1" at once by keyboard
                match hands {
                    Hands::Keyboard => {
                        b.press("1").await.expect("key");
                        b.press("1").await.expect("key");
                    }
                    _ => b.click("#q-effort-11").await.expect("click"),
                }
                choose(&b, hands, "q-style-2", "2").await;
                // the comprehension question offers the snippet's own options: the first
                choose(&b, hands, "q-output-1", "1").await;
                // boxes ticked (the keyboard: Space on each, reached by Tab) and fields typed in
                for id in ["q-smells-1", "q-smells-3"] {
                    match hands {
                        Hands::Keyboard => type_into(&b, id, " ").await,
                        _ => b.click(&format!("#{id}")).await.expect("tick"),
                    }
                }
                type_into(&b, "q-why-text", "short names").await;
                type_into(&b, "q-minutes-number", "12.5").await;
            }
            Design::Pair => choose(&b, hands, "q-better-B", "b").await,
            Design::Set => {
                choose(&b, hands, "q-ease-best-A", "a").await;
                choose(&b, hands, "q-ease-worst-C", "c").await;
            }
        }
        let before = progress(&b).await;
        submit(&b, hands).await;
        // the next unit, or the end of the work
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let now = progress(&b).await;
            if now != before && !now.is_empty() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the answer was taken ({before})"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // nothing is left: finish, and the completion code
    wait_for(&b, "#finish", "the finish").await;
    b.click("#finish").await.expect("finish");
    b.wait_contains("body", "DONE42").await;
    b.close().await;
    // every unit has its k answers: the link now turns a newcomer away before they consent
    let late = Browser::start_without_javascript(w, h)
        .await
        .expect("browser");
    late.client.goto(&app.url(&path)).await.expect("invite");
    late.wait_contains("#invite-invalid", "This study is full")
        .await;
    late.close().await;
    // every answer is exported with what was shown and its time
    let out = designs::export_responses(&db, study).await.expect("export");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let per_unit = match design {
        Design::Snippet => 7,
        _ => 1,
    };
    assert_eq!(lines.len(), units * per_unit, "{out}");
    let code_of = |id: &str| -> &str {
        match id {
            "J1" => "return b + a",
            "J2" => "System.out.println",
            _ => "def add",
        }
    };
    for l in &lines {
        assert!(
            l["seconds"].as_f64().is_some_and(|t| t > 0.0 && t < 600.0),
            "{l}"
        );
    }
    match design {
        Design::Snippet => {
            for l in lines.iter().filter(|l| l["question"] == "readable") {
                assert_eq!(l["answer"], 4, "{l}");
            }
            for l in lines.iter().filter(|l| l["question"] == "effort") {
                assert_eq!(l["answer"], 11, "{l}");
            }
            for l in lines.iter().filter(|l| l["question"] == "style") {
                assert_eq!(l["answer"], "Sun", "{l}");
            }
            let outputs: Vec<&str> = lines
                .iter()
                .filter(|l| l["question"] == "output")
                .filter_map(|l| l["answer"].as_str())
                .collect();
            let mut sorted = outputs.clone();
            sorted.sort();
            assert_eq!(sorted, ["0 1", "2", "3"], "each snippet's first option");
            for l in lines.iter().filter(|l| l["question"] == "smells") {
                assert_eq!(l["answer"], serde_json::json!(["long", "none"]), "{l}");
            }
            for l in lines.iter().filter(|l| l["question"] == "why") {
                assert_eq!(l["answer"], "short names", "{l}");
            }
            for l in lines.iter().filter(|l| l["question"] == "minutes") {
                assert_eq!(l["answer"], 12.5, "{l}");
            }
        }
        Design::Pair => {
            for (l, shown) in lines.iter().zip(&shown_orders) {
                let pair: Vec<String> = serde_json::from_value(l["pair"].clone()).expect("pair");
                // A was on top as recorded, and "B" is the second snippet shown
                assert!(shown[0].contains(code_of(&pair[0])), "{shown:?} {pair:?}");
                assert!(shown[1].contains(code_of(&pair[1])), "{shown:?} {pair:?}");
                assert_eq!(l["answer"], pair[1].as_str());
            }
        }
        Design::Set => {
            let l = &lines[0];
            let set: Vec<String> = serde_json::from_value(l["set"].clone()).expect("set");
            for (i, id) in set.iter().enumerate() {
                assert!(
                    shown_orders[0][i].contains(code_of(id)),
                    "{shown_orders:?} {set:?}"
                );
            }
            assert_eq!(l["best"], set[0].as_str());
            assert_eq!(l["worst"], set[2].as_str());
        }
    }
    drop(app);
    guard.drop_now(db).await;
}

const PHONE: (u32, u32) = (390, 844);
const LAPTOP: (u32, u32) = (1366, 900);

#[tokio::test]
async fn snippets_by_keyboard_on_a_phone_sqlite() {
    a_participant_answers(Store::Sqlite, Design::Snippet, Hands::Keyboard, PHONE).await;
}

#[tokio::test]
async fn snippets_without_javascript_on_a_laptop_postgres() {
    a_participant_answers(
        Store::Postgres,
        Design::Snippet,
        Hands::NoJavaScript,
        LAPTOP,
    )
    .await;
}

#[tokio::test]
async fn pairs_by_keyboard_on_a_laptop_postgres() {
    a_participant_answers(Store::Postgres, Design::Pair, Hands::Keyboard, LAPTOP).await;
}

#[tokio::test]
async fn pairs_without_javascript_on_a_phone_sqlite() {
    a_participant_answers(Store::Sqlite, Design::Pair, Hands::NoJavaScript, PHONE).await;
}

#[tokio::test]
async fn sets_by_mouse_on_a_phone_postgres() {
    a_participant_answers(Store::Postgres, Design::Set, Hands::Mouse, PHONE).await;
}

#[tokio::test]
async fn sets_by_keyboard_on_a_laptop_sqlite() {
    a_participant_answers(Store::Sqlite, Design::Set, Hands::Keyboard, LAPTOP).await;
}

/// The answer page over a slow mobile link: the page loads, becomes interactive and takes
/// every answer by keyboard, and the times are the page's own.
#[tokio::test]
async fn snippets_by_keyboard_on_a_phone_over_a_slow_link_postgres() {
    a_participant_answers_over(
        Store::Postgres,
        Design::Snippet,
        Hands::Keyboard,
        PHONE,
        Some(SLOW_LINK),
    )
    .await;
}

#[tokio::test]
async fn pairs_by_mouse_on_a_phone_postgres() {
    a_participant_answers(Store::Postgres, Design::Pair, Hands::Mouse, PHONE).await;
}

#[tokio::test]
async fn sets_without_javascript_on_a_laptop_postgres() {
    a_participant_answers(Store::Postgres, Design::Set, Hands::NoJavaScript, LAPTOP).await;
}

#[tokio::test]
async fn snippets_by_mouse_on_a_laptop_sqlite() {
    a_participant_answers(Store::Sqlite, Design::Snippet, Hands::Mouse, LAPTOP).await;
}

/// A participant revises an answer before the finish: the list of the pairs answered (each
/// with its answer), the first shown again with its answer chosen, changed, and back on the
/// list with the new answer; then the finish and the code. The export holds the revised
/// answer, once.
async fn a_participant_revises_an_answer(store: Store, hands: Hands, (w, h): (u32, u32)) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, path) = designed(&db, Design::Pair).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = match hands {
        Hands::NoJavaScript => Browser::start_without_javascript(w, h).await,
        _ => Browser::start_sized(w, h).await,
    }
    .expect("browser");
    join_and_start(&b, &app.url(&path), hands).await;
    for _ in 0..3 {
        wait_for(&b, "#answer-form", "a pair to answer").await;
        if hands != Hands::NoJavaScript {
            b.wait_for_text("#hydrated", "interactive")
                .await
                .expect("hydrated");
        }
        let before = progress(&b).await;
        choose(&b, hands, "q-better-B", "b").await;
        submit(&b, hands).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while progress(&b).await == before {
            assert!(std::time::Instant::now() < deadline, "taken ({before})");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // the list of the pairs answered, each with its answer
    wait_for(&b, "#answered", "the list of answers").await;
    let rows = b
        .client
        .find_all(Locator::Css("#answered tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 3);
    b.wait_contains("#answered tbody tr:nth-child(1) .unit-answers", "better: B")
        .await;
    match hands {
        // the link, focused, and Enter
        Hands::Keyboard => b
            .client
            .find(Locator::Css("#revise-1"))
            .await
            .expect("the link")
            .send_keys("\u{E007}")
            .await
            .expect("Enter"),
        _ => b.click("#revise-1").await.expect("revise"),
    }
    wait_for(&b, "#answer-form", "the pair again").await;
    b.wait_contains("#item-heading", "Revise your answers")
        .await;
    let checked = b
        .client
        .execute(
            "return document.getElementById('q-better-B').checked",
            vec![],
        )
        .await
        .expect("checked");
    assert_eq!(
        checked,
        serde_json::json!(true),
        "the answer given is chosen"
    );
    if hands != Hands::NoJavaScript {
        b.wait_for_text("#hydrated", "interactive")
            .await
            .expect("hydrated");
    }
    match hands {
        // an answered question changes by its key once it holds the focus (the chosen
        // option, as Tab reaches it)
        Hands::Keyboard => b
            .client
            .find(Locator::Css("#q-better-B"))
            .await
            .expect("the chosen option")
            .send_keys("a")
            .await
            .expect("a"),
        _ => choose(&b, hands, "q-better-A", "a").await,
    }
    submit(&b, hands).await;
    wait_for(&b, "#answered", "the list again").await;
    b.wait_contains("#answered tbody tr:nth-child(1) .unit-answers", "better: A")
        .await;
    b.click("#finish").await.expect("finish");
    b.wait_contains("body", "DONE42").await;
    b.close().await;
    let out = designs::export_responses(&db, study).await.expect("export");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    let firsts = lines.iter().filter(|l| l["answer"] == l["pair"][0]).count();
    assert_eq!(firsts, 1, "the revised pair answers A, the others B: {out}");
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn an_answer_revised_by_mouse_on_a_laptop_sqlite() {
    a_participant_revises_an_answer(Store::Sqlite, Hands::Mouse, LAPTOP).await;
}

#[tokio::test]
async fn an_answer_revised_by_keyboard_on_a_phone_sqlite() {
    a_participant_revises_an_answer(Store::Sqlite, Hands::Keyboard, PHONE).await;
}

#[tokio::test]
async fn an_answer_revised_without_javascript_on_a_phone_postgres() {
    a_participant_revises_an_answer(Store::Postgres, Hands::NoJavaScript, PHONE).await;
}

/// An attention unit of a pairwise study in the browser (one miss ends the survey): it comes
/// as the third unit, shown as given, and a participant who misses it gets the screen-out
/// code there; one who answers it right goes on to the last pair and the completion code,
/// and the export holds the pairs' answers, not the check's.
async fn an_attention_unit_in_the_browser(
    store: Store,
    hands: Hands,
    size: (u32, u32),
    pass: bool,
) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, path) = designed(&db, Design::Pair).await;
    designs::import_attention_text(
        &db,
        study,
        "attention.jsonl",
        "{\"question\": \"better\", \"pair\": [\"J2\", \"J1\"], \"answer\": \"J2\"}\n",
    )
    .await
    .expect("attention");
    sqlx::query("UPDATE studies SET gold_failures = 1, screenout_code = 'OUT-7' WHERE id = $1")
        .bind(study)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("settings");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start_sized(size.0, size.1).await.expect("browser");
    join_and_start(&b, &app.url(&path), hands).await;
    for n in 0..4 {
        wait_for(&b, "#answer-form", "a unit to answer").await;
        b.wait_for_text("#hydrated", "interactive")
            .await
            .expect("hydrated");
        let (a, bb) = (b.text_of("#snippet-A").await, b.text_of("#snippet-B").await);
        let check = n == 2;
        if check {
            assert!(
                a.contains("System.out.println") && bb.contains("return b + a"),
                "the check as given: {a:?} / {bb:?}"
            );
        }
        // the check's right answer is A; the pairs get B
        let (id, key) = if check && pass {
            ("q-better-A", "a")
        } else {
            ("q-better-B", "b")
        };
        choose(&b, hands, id, key).await;
        // the check is not work (the progress stays): the unit's claim says it was taken
        let before = claim_on_screen(&b).await;
        submit(&b, hands).await;
        if check && !pass {
            b.wait_for_text("#completion-code", "OUT-7")
                .await
                .expect("the screen-out code");
            let outcome: Option<String> =
                sqlx::query_scalar("SELECT outcome FROM annotators WHERE study_id = $1")
                    .bind(study)
                    .fetch_one(&db.pool)
                    .await
                    .expect("outcome");
            assert_eq!(outcome.as_deref(), Some("screened_out"));
            break;
        }
        if n == 3 {
            break;
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while claim_on_screen(&b).await == before {
            assert!(std::time::Instant::now() < deadline, "taken ({before:?})");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    if pass {
        wait_for(&b, "#finish", "the finish").await;
        b.click("#finish").await.expect("finish");
        b.wait_contains("body", "DONE42").await;
        let out = designs::export_responses(&db, study).await.expect("export");
        assert_eq!(
            out.lines().count(),
            3,
            "the three pairs, not the check: {out}"
        );
        for l in out.lines() {
            let v: Value = serde_json::from_str(l).expect("json");
            // every pair was answered B: the check (answered A) is not among them
            assert_eq!(v["answer"], v["pair"][1], "{out}");
        }
    }
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn an_attention_unit_missed_by_keyboard_on_a_phone_sqlite() {
    an_attention_unit_in_the_browser(Store::Sqlite, Hands::Keyboard, PHONE, false).await;
}

#[tokio::test]
async fn an_attention_unit_passed_by_mouse_on_a_laptop_postgres() {
    an_attention_unit_in_the_browser(Store::Postgres, Hands::Mouse, LAPTOP, true).await;
}

/// The study page of a designed study: its units' progress, and a link into it made there by
/// an admin (by mouse on a laptop, by keyboard on a phone), through which a participant joins
/// and answers (counted on the page once answered).
async fn the_study_page_makes_a_designed_studys_link(
    store: Store,
    hands: Hands,
    (w, h): (u32, u32),
) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = designed(&db, Design::Pair).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let b = Browser::start_sized(w, h).await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");
    b.wait_contains(
        "#units-progress",
        "0 of 3 units with all their answers (k = 1); 0 answers in all",
    )
    .await;
    let before = b
        .client
        .find_all(Locator::Css("#invites .invite-url"))
        .await
        .map(|v| v.len())
        .unwrap_or(0);
    match hands {
        // the button, focused, and Enter
        Hands::Keyboard => b
            .client
            .find(Locator::Css("#design-invite"))
            .await
            .expect("the button")
            .send_keys("\u{E007}")
            .await
            .expect("Enter"),
        _ => b.click("#design-invite").await.expect("new link"),
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let url = loop {
        let found = b
            .client
            .find_all(Locator::Css("#invites .invite-url"))
            .await
            .unwrap_or_default();
        if found.len() > before {
            break found[0]
                .prop("value")
                .await
                .expect("value")
                .expect("a link");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new link is listed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(url.contains("/join/"), "{url}");
    // a participant joins through it and answers one pair without JavaScript
    let p = Browser::start_without_javascript(390, 844)
        .await
        .expect("browser");
    p.client.goto(&url).await.expect("invite");
    p.join_consent_and_start_without_javascript()
        .await
        .expect("start");
    wait_for(&p, "#answer-form", "a pair").await;
    let first = claim_on_screen(&p).await;
    p.click("#q-better-A").await.expect("A");
    p.click("#submit").await.expect("submit");
    // the next pair's page (the form of the first is still there until the answer is taken)
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while claim_on_screen(&p).await == first {
        assert!(std::time::Instant::now() < deadline, "the answer was taken");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    p.close().await;
    b.wait_contains("#units-progress", "1 answer in all").await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn the_study_page_makes_a_designed_studys_link_sqlite() {
    the_study_page_makes_a_designed_studys_link(Store::Sqlite, Hands::Mouse, LAPTOP).await;
}

#[tokio::test]
async fn the_study_page_makes_a_designed_studys_link_by_keyboard_on_a_phone_postgres() {
    the_study_page_makes_a_designed_studys_link(Store::Postgres, Hands::Keyboard, PHONE).await;
}
