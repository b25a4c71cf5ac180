//! The participant's survey in headless Chromium: invite link → consent → guideline → three
//! items rated with the keyboard only (one with a hidden-tab pause) → reload and resume →
//! double submit → revise → finish. Checks what reaches the database at each step.

use std::time::Duration;

use fantoccini::Locator;
use natstudy_core::service::Db;
use natstudy_core::store::assign::{self, BatchSpec, ItemFilter, Strategy};
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Store, TestApp};
use natstudy_types::StudySettingsForm;

async fn votes(db: &Db) -> Vec<(i64, i64, i64, i64, Option<f64>)> {
    sqlx::query_as("SELECT item_id, cr, cc, revision, time_secs FROM votes ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("votes")
}

async fn revisions(db: &Db) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM vote_revisions")
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

/// On the list of rated items (hydrated): opens the item whose revise link `link` matches and
/// answers it again with both answers 4 — keyboard only — and submits. The revise page says it
/// is a revision; returns its link back to the list.
async fn revise_with_fours(b: &Browser, link: &str) -> String {
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click(link).await.expect("revise");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("revise page");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.wait_contains("#revising", "You are revising your answer")
        .await;
    let back = b
        .client
        .find(Locator::Css("#back-to-list"))
        .await
        .expect("a way back to the list")
        .attr("href")
        .await
        .expect("href")
        .expect("a link");
    b.press("\u{E003}\u{E003}44\u{E007}").await.expect("keys");
    back
}

async fn wait_until<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !f().await {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn participant_rates_with_the_keyboard_resumes_revises_and_finishes() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::small::items(&db, "Survey test").await;
    let spec = BatchSpec {
        name: "b".into(),
        strategy: Strategy::DynamicQueue,
        filter: ItemFilter::default(),
        annotators: vec![],
        seed: 3,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    let batch = assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch")
        .id;
    let token = natstudy_core::store::invites::create_invite(&db, study, batch, 5, None)
        .await
        .expect("invite");
    // a study-specific consent text and screener
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.consent_text = "Custom consent for this study.".into();
    settings.screener_json = r#"[{"name": "java", "label": "Years of Java", "options": ["0-2", "3+"]}, {"name": "team", "label": "Team", "options": []}]"#.into();
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("save settings");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start().await.expect("browser");

    // invite link → consent → guideline
    b.client
        .goto(&app.url(&format!("/join/{token}?pid=W-123")))
        .await
        .expect("goto");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.client
        .find(Locator::Css("#join"))
        .await
        .expect("join")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#consent-submit", "I agree and continue")
        .await
        .expect("consent page");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.wait_for_text("#consent-text", "Custom consent for this study.")
        .await
        .expect("custom consent");
    // nothing is preselected: the participant picks an answer
    b.client
        .find(Locator::Css("#screener-java option[value='0-2']"))
        .await
        .expect("an option")
        .click()
        .await
        .expect("pick");
    b.client
        .find(Locator::Css("#screener-team"))
        .await
        .expect("free-text question")
        .send_keys("payments")
        .await
        .expect("type");
    b.client
        .find(Locator::Css("#consent-submit"))
        .await
        .expect("consent")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#start", "Start rating")
        .await
        .expect("guideline");
    b.client
        .find(Locator::Css("#start"))
        .await
        .expect("start")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#progress", "0 / 3")
        .await
        .expect("first item");
    // the header shows progress on every step: wait for the rating view itself
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("rating view");
    let pid: Option<String> = sqlx::query_scalar("SELECT external_pid FROM annotators")
        .fetch_one(&db.pool)
        .await
        .expect("pid");
    assert_eq!(pid.as_deref(), Some("W-123"));
    let answers: String = sqlx::query_scalar("SELECT screener FROM annotators")
        .fetch_one(&db.pool)
        .await
        .expect("screener");
    let answers: serde_json::Value = serde_json::from_str(&answers).expect("json");
    assert_eq!(
        answers,
        serde_json::json!({"java": "0-2", "team": "payments"})
    );

    // the diff shows the changed tokens and the buggy line
    let changed = b
        .client
        .find_all(Locator::Css("#diff td.code .chg"))
        .await
        .expect("chg");
    let mut texts = Vec::new();
    for c in &changed {
        texts.push(c.text().await.expect("text"));
    }
    assert!(!texts.is_empty(), "changed tokens are highlighted");
    assert!(
        b.client.find(Locator::Css("#diff td.buggy")).await.is_ok(),
        "buggy line marked"
    );

    // item 1: keyboard only. One answer and Enter: the answer stays, the open question is
    // marked and takes the focus, nothing is sent
    b.press("2\u{E007}").await.expect("keys");
    b.wait_for_text(
        "#missing-cc",
        "Please answer this question too: your other answer is kept.",
    )
    .await
    .expect("the open question is pointed to");
    let focused: serde_json::Value = b
        .client
        .execute(
            "return document.activeElement && document.activeElement.id",
            vec![],
        )
        .await
        .expect("focus");
    assert_eq!(
        focused,
        serde_json::json!("cc-1"),
        "focus on the open question"
    );
    let kept: serde_json::Value = b
        .client
        .execute("return document.getElementById('cr-2').checked", vec![])
        .await
        .expect("checked");
    assert_eq!(kept, serde_json::json!(true), "the given answer is kept");
    assert!(votes(&db).await.is_empty(), "nothing sent");
    // Enter on a focused button does what the button does, and does not submit
    b.press("3").await.expect("keys");
    for label in ["Side by side", "Unified"] {
        b.client
            .find(Locator::Css("#mode-toggle"))
            .await
            .expect("toggle")
            .send_keys("\u{E007}")
            .await
            .expect("enter on the toggle");
        b.wait_for_text("#mode-toggle", label)
            .await
            .expect("the toggle toggled");
    }
    assert!(
        votes(&db).await.is_empty(),
        "Enter on a button did not submit"
    );
    b.press("\u{E007}").await.expect("keys");
    b.wait_for_text("#progress", "1 / 3")
        .await
        .expect("saved and next");
    assert_eq!(votes(&db).await.len(), 1);
    assert_eq!((votes(&db).await[0].1, votes(&db).await[0].2), (2, 3));

    // item 2: the tab is hidden for 3 s; that time does not count
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    let started = std::time::Instant::now();
    let hide = "Object.defineProperty(document, 'visibilityState', {value: arguments[0], configurable: true}); \
                document.dispatchEvent(new Event('visibilitychange', {bubbles: true}));";
    b.client
        .execute(hide, vec![serde_json::json!("hidden")])
        .await
        .expect("hide");
    tokio::time::sleep(Duration::from_secs(3)).await;
    b.client
        .execute(hide, vec![serde_json::json!("visible")])
        .await
        .expect("show");
    b.press("14\u{E007}").await.expect("keys");
    b.wait_for_text("#progress", "2 / 3")
        .await
        .expect("second saved");
    let wall = started.elapsed().as_secs_f64();
    let t = votes(&db).await[1].4.expect("time recorded");
    assert!(
        wall >= 3.0 && t < wall - 2.5,
        "time on item {t} s should exclude the 3 s pause (wall {wall} s)"
    );

    // reload mid-batch: resumes at the first unrated item
    b.client.refresh().await.expect("reload");
    b.wait_for_text("#progress", "2 / 3")
        .await
        .expect("resumed");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");

    // item 3: answered, then submitted twice at once: one vote
    b.press("11").await.expect("keys");
    b.client
        .execute(
            "const f = document.querySelector('#vote-form'); f.requestSubmit(); f.requestSubmit();",
            vec![],
        )
        .await
        .expect("double submit");
    b.wait_for_text("#rated tbody tr:nth-child(3) td:nth-child(2)", "1")
        .await
        .expect("review page");
    assert_eq!(votes(&db).await.len(), 3);
    assert_eq!(
        revisions(&db).await,
        3,
        "a resent submit creates no vote and no revision"
    );

    // revise the first vote
    revise_with_fours(&b, "#rated a.revise").await;
    let db2 = db.clone();
    wait_until("revision saved", || {
        let db = db2.clone();
        async move { votes(&db).await.iter().any(|v| v.3 == 2) }
    })
    .await;
    let first = votes(&db).await[0];
    assert_eq!(
        (first.1, first.2, first.3),
        (4, 4, 2),
        "last revision counts"
    );
    assert_eq!(revisions(&db).await, 4, "every revision kept");

    // finish
    b.wait_for_text("#finish", "Finish")
        .await
        .expect("review again");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.client
        .find(Locator::Css("#finish"))
        .await
        .expect("finish")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#thanks h1", "Thank you!")
        .await
        .expect("thanks");
    // the study sets no code: the page says so, and how pay or credit is arranged
    b.wait_contains("#no-code-set", "This study gives no completion code")
        .await;
    b.wait_contains("#no-code-set", "pay or course credit")
        .await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A participant who rated more items than a page holds reads them a page at a time: the
/// first page, then the next by its link; an item revised from the second page brings them
/// back to that page, and the revision is what counts.
#[tokio::test]
async fn rated_items_are_listed_a_page_at_a_time() {
    use natstudy_core::store::my_votes::REVIEW_PAGE;
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let per = REVIEW_PAGE as usize;
    let n = per + 5;
    let study = natstudy_core::store::studies::create(&db, None, "Pages", "")
        .await
        .expect("study");
    let (mut bugs, mut items) = (String::new(), String::new());
    for i in 0..n {
        bugs.push_str(
            &serde_json::json!({"bug_id": format!("B-{i}"), "project": "P", "file": "A.java",
            "method": "m", "source": format!("int m() {{ return {i}; }}\n"), "buggy_lines": [1]})
            .to_string(),
        );
        bugs.push('\n');
        items.push_str(&serde_json::json!({"id": format!("naming_{i}"), "bug_id": format!("B-{i}"),
            "operator": "RenameVariable-1", "level": "naming",
            "source": format!("int m() {{ return {i} + 0; }}\n"), "summary": format!("item number {i}")}).to_string());
        items.push('\n');
    }
    natstudy_core::service::imports::import_items_text(
        &db,
        study,
        None,
        ("b", &bugs),
        ("t", &items),
    )
    .await
    .expect("items");
    let (_, token) = natstudy_tests::open_queue(&db, study, 5)
        .await
        .expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start().await.expect("browser");
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite");
    b.join_consent_and_start().await.expect("the first item");
    // every item rated (through the store, as the survey would)
    let annotator: natstudy_vocab::ids::AnnotatorId =
        sqlx::query_scalar("SELECT id FROM annotators WHERE study_id = $1")
            .bind(study)
            .fetch_one(&db.pool)
            .await
            .expect("the participant");
    let mut order = Vec::new();
    for i in 0..n {
        let h = assign::next_item(&db, study, annotator, natstudy_core::db::now_ms())
            .await
            .expect("next")
            .expect("an item");
        let vote = natstudy_tests::test_vote(&format!("t{i}"), 1, 2, Some(3.0));
        assign::submit(
            &db,
            study,
            annotator,
            h.item,
            &vote,
            natstudy_core::db::now_ms(),
        )
        .await
        .expect("vote");
        order.push(h.item);
    }
    let summary = |item: natstudy_vocab::ids::ItemId| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT summary FROM items WHERE id = $1")
                .bind(item)
                .fetch_one(&db.pool)
                .await
                .expect("summary")
        }
    };

    // the first page
    b.goto_hydrated(&app.url(&format!("/annotate/{study}")))
        .await
        .expect("review");
    b.wait_contains("#rated-range", &format!("Items 1–{per} of {n}"))
        .await;
    b.wait_contains(".pager .page-of", "Page 1 of 2").await;
    let rows = |b: &Browser| {
        let c = b.client.clone();
        async move {
            c.find_all(Locator::Css("#rated tbody tr"))
                .await
                .expect("rows")
                .len()
        }
    };
    assert_eq!(rows(&b).await, per);
    assert_eq!(
        b.text_of("#rated tbody tr:first-child td:first-child")
            .await,
        summary(order[0]).await
    );
    assert!(
        b.client
            .find(Locator::Css(".pager a[rel=prev]"))
            .await
            .is_err(),
        "no earlier page"
    );
    // the next page, by its link
    b.click(".pager a[rel=next]").await.expect("later");
    b.wait_contains("#rated-range", &format!("Items {}–{n} of {n}", per + 1))
        .await;
    b.wait_contains(".pager .page-of", "Page 2 of 2").await;
    assert_eq!(rows(&b).await, n - per);
    assert_eq!(
        b.text_of("#rated tbody tr:first-child td:first-child")
            .await,
        summary(order[per]).await
    );
    // revise its first item: back on the second page, the revision counted
    let back = revise_with_fours(&b, "#rated tbody tr:first-child a.revise").await;
    assert!(
        back.ends_with("?page=2"),
        "back to the page it came from: {back}"
    );
    b.wait_contains("#rated-range", &format!("Items {}–{n} of {n}", per + 1))
        .await;
    let url = b.client.current_url().await.expect("url");
    assert!(url.as_str().ends_with("?page=2"), "{url}");
    let revised: (i64, i64, i64) = sqlx::query_as(
        "SELECT cr, cc, revision FROM votes WHERE annotator_id = $1 AND item_id = $2",
    )
    .bind(annotator)
    .bind(order[per])
    .fetch_one(&db.pool)
    .await
    .expect("vote");
    assert_eq!(revised, (4, 4, 2));
    assert_eq!(
        b.text_of("#rated tbody tr:first-child td:nth-child(2)")
            .await,
        "4"
    );
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A study of the three items (its settings as `configure` leaves them), its server, and a participant in Chromium who joined through
/// its invite, consented and sees the first item.
struct Joined {
    db: Db,
    guard: natstudy_tests::DbGuard,
    study: natstudy_vocab::ids::StudyId,
    token: String,
    app: TestApp,
    b: Browser,
}

/// How a browser test runs: the window's size, the store, and the link (a slow one:
/// Chromium's emulated network, [`SLOW_LINK`]).
#[derive(Debug, Clone, Copy)]
struct Run {
    viewport: (u32, u32),
    store: Store,
    slow: bool,
}

impl From<(u32, u32)> for Run {
    /// SQLite over a fast link.
    fn from(viewport: (u32, u32)) -> Run {
        Run {
            viewport,
            store: Store::Sqlite,
            slow: false,
        }
    }
}

impl Run {
    /// The browser this run asks for.
    async fn browser(self) -> Browser {
        let mut b = Browser::start_sized(self.viewport.0, self.viewport.1)
            .await
            .expect("browser");
        if self.slow {
            b.throttle(SLOW_LINK.0, SLOW_LINK.1)
                .await
                .expect("slow link");
        }
        b
    }
}

/// A slow mobile link: 400 ms each way, 400 kbit/s.
const SLOW_LINK: (u32, u32) = (400, 400);

async fn joined(
    name: &str,
    run: impl Into<Run>,
    configure: impl FnOnce(&mut StudySettingsForm),
) -> Joined {
    let run: Run = run.into();
    let (db, guard) = fresh_db(run.store).await.expect("db");
    let study = natstudy_tests::small::items(&db, name).await;
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    configure(&mut settings);
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("settings");
    let (_, token) = natstudy_tests::open_queue(&db, study, 5)
        .await
        .expect("invite");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = run.browser().await;
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite page");
    b.join_consent_and_start().await.expect("first item");
    Joined {
        db,
        guard,
        study,
        token,
        app,
        b,
    }
}

/// Waits until the item's heading holds the focus (`what`: the wait's name).
async fn heading_focused(b: &Browser, what: &str) {
    wait_until(what, || async {
        b.client
            .execute(
                "return document.activeElement && document.activeElement.id",
                vec![],
            )
            .await
            .expect("focus")
            == "item-heading"
    })
    .await;
}

/// Sends keys to whatever holds the focus (a radio button a click left focused, say).
async fn type_into_focus(b: &Browser, keys: &str) {
    b.client
        .active_element()
        .await
        .expect("focused element")
        .send_keys(keys)
        .await
        .expect("keys");
}

async fn checked(b: &Browser, id: &str) -> bool {
    b.client
        .execute(
            "return document.getElementById(arguments[0]).checked",
            vec![serde_json::json!(id)],
        )
        .await
        .expect("checked")
        == serde_json::json!(true)
}

/// Mouse and keyboard mixed, as participants do: a digit answers the open question that holds
/// the focus, else the first open one, and never overwrites an answer silently. Each sequence
/// stores exactly what was chosen (the issue's: click "2" on readability then press 4 for
/// conventions; choose with the arrow keys then 4; Tab into conventions then 3), and a digit
/// with both answered and nothing in focus changes nothing and says so.
async fn mixed_mouse_and_keyboard_store_exactly_what_was_chosen(viewport: (u32, u32)) {
    let Joined {
        db, guard, app, b, ..
    } = joined("Mixed input", viewport, |_| {}).await;
    let hint = b.text_of("#key-hint").await;
    assert!(hint.contains("open question you are in"), "{hint}");
    // a new study hides the operator's name from participants (no priming)
    assert!(
        b.client.find(Locator::Css("#operator")).await.is_err(),
        "the operator's name is hidden by default"
    );

    // 1. a click on readability "2", then 4 meant for conventions
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    // the first item too starts with the focus on its heading, not on the page's body
    heading_focused(&b, "the first item's heading focused").await;
    b.click("#cr-2").await.expect("click");
    type_into_focus(&b, "4").await;
    assert!(checked(&b, "cr-2").await, "readability stays 2");
    assert!(checked(&b, "cc-4").await, "conventions 4");
    // sent with the keyboard from the bottom of the page: the next item starts at the top,
    // the focus on its heading
    b.client
        .execute("window.scrollTo(0, document.body.scrollHeight)", vec![])
        .await
        .expect("scroll");
    b.press("\u{E007}").await.expect("enter");
    b.wait_for_text("#progress", "1 / 3").await.expect("saved");
    wait_until("the next item at the top, its heading focused", || async {
        let at = b
            .client
            .execute(
                "return [window.scrollY, document.activeElement && document.activeElement.id]",
                vec![],
            )
            .await
            .expect("where");
        at[0].as_f64() == Some(0.0) && at[1] == "item-heading"
    })
    .await;

    // 2. readability chosen with the arrow keys (the focus stays on it), then 4
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.client
        .execute("document.getElementById('cr-1').focus()", vec![])
        .await
        .expect("focus");
    type_into_focus(&b, "\u{E014}").await; // ArrowRight: 1 → 2
    assert!(checked(&b, "cr-2").await, "the arrow chose 2");
    type_into_focus(&b, "4").await;
    assert!(checked(&b, "cr-2").await && checked(&b, "cc-4").await);
    b.press("\u{E007}").await.expect("enter");
    b.wait_for_text("#progress", "2 / 3").await.expect("saved");
    // the item is shown once its heading has the focus (then a focus set here stays)
    heading_focused(&b, "the third item shown").await;

    // 3. Tab into conventions first and press 3; then 1 with nothing in focus answers
    // readability; a further digit changes nothing and says why
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.client
        .execute("document.getElementById('cc-1').focus()", vec![])
        .await
        .expect("focus");
    type_into_focus(&b, "3").await;
    assert!(checked(&b, "cc-3").await, "conventions 3");
    assert!(!checked(&b, "cr-3").await, "readability untouched");
    b.press("1").await.expect("keys");
    assert!(checked(&b, "cr-1").await && checked(&b, "cc-3").await);
    b.press("4").await.expect("keys");
    assert!(
        checked(&b, "cr-1").await && checked(&b, "cc-3").await,
        "no silent overwrite"
    );
    b.wait_contains("#key-note", "Both questions are answered")
        .await;
    // in focus, a digit changes that question, visibly
    b.client
        .execute("document.getElementById('cc-3').focus()", vec![])
        .await
        .expect("focus");
    type_into_focus(&b, "2").await;
    assert!(checked(&b, "cc-2").await);
    b.wait_contains("#key-note", "from 3 to 2").await;
    b.press("\u{E007}").await.expect("enter");
    b.wait_for_text("#progress", "3 / 3").await.expect("saved");

    let stored: Vec<(i64, i64)> = sqlx::query_as("SELECT cr, cc FROM votes ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("votes");
    assert_eq!(stored, vec![(2, 4), (2, 4), (1, 2)]);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A full study hands out no completion code for no work. A participant whose items all got
/// their k ratings from others (here: imported votes) sees that there is nothing to rate, and
/// finishing shows why there is no code; the invite link then says the study is full before
/// anyone consents, its join is refused, and the monitor flags the link.
async fn a_full_study_gives_no_completion_code(viewport: (u32, u32)) {
    let Joined {
        db,
        guard,
        study,
        token,
        app,
        b,
    } = joined("Full study", viewport, |settings| {
        settings.ratings_per_item = 1;
        settings.completion_code = "C0DE-123".into();
    })
    .await;
    // meanwhile every item gets its one rating from elsewhere
    let survey = r#"{"naming": {"1": {"X1": {"CR": 1, "CC": 1, "Time": 3}}, "2": {"X1": {"CR": 2, "CC": 1, "Time": 4}}},
                     "expression": {"1": {"X1": {"CR": 4, "CC": 3, "Time": 5}}}}"#;
    natstudy_core::service::imports::import_votes_text(&db, study, None, "survey.json", survey)
        .await
        .expect("votes");
    b.goto_hydrated(&app.url(&format!("/annotate/{study}")))
        .await
        .expect("reload");
    b.wait_contains("#nothing-to-rate", "nothing for you to rate")
        .await;
    b.click("#finish").await.expect("finish");
    b.wait_for_text("#thanks h1", "Nothing to rate")
        .await
        .expect("the end");
    assert!(
        b.client
            .find(Locator::Css("#completion-code"))
            .await
            .is_err(),
        "no completion code for no work"
    );
    b.wait_contains("#no-code", "no completion code").await;
    b.close().await;

    // a newcomer: told before consenting, and the join is refused
    let fresh = Browser::start().await.expect("browser");
    fresh
        .goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite page");
    fresh
        .wait_contains("#invite-invalid", "This study is full")
        .await;
    assert!(
        fresh.client.find(Locator::Css("#join")).await.is_err(),
        "no Take part button"
    );
    fresh.close().await;
    let r = app
        .client()
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join");
    assert_eq!(r.status(), reqwest::StatusCode::FORBIDDEN);
    assert!(r.text().await.expect("body").contains("full"));
    let listed = natstudy_core::store::monitor::invites(&db, study)
        .await
        .expect("invites");
    assert!(listed[0].full, "the monitor flags the link");
    let joined: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM annotators WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(
        joined,
        1 + 1,
        "the first participant and the importer's X1; nobody new"
    );
    drop(app);
    guard.drop_now(db).await;
}

/// The method's file comes when Context is opened, not with the item: the page holds no line
/// of it until then; opened by mouse on a laptop and with the `c` key on a phone, the file's
/// part loads with the method's lines marked, and the vote records that Context was opened.
async fn the_context_file_comes_when_opened(run: impl Into<Run>) {
    let run: Run = run.into();
    let Joined {
        db, guard, app, b, ..
    } = joined("Context", run, |_| {}).await;
    // what the closed panel says (WebDriver reads only what is shown)
    let file_path = || async {
        b.client
            .execute(
                "return document.querySelector('#context .facts').textContent",
                vec![],
            )
            .await
            .expect("facts")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    // the small study's one item with a file (Lang-1's src/A.java): rate the others until
    // it is on screen
    for _ in 0..3 {
        b.wait_for_text("#hydrated", "interactive")
            .await
            .expect("hydrated");
        if file_path().await.contains("src/A.java") {
            break;
        }
        let progress = b.text_of("#progress").await;
        b.click("#cr-1").await.expect("cr");
        b.click("#cc-1").await.expect("cc");
        b.click("#submit").await.expect("submit");
        wait_until("the next item", || async {
            b.text_of("#progress").await != progress
        })
        .await;
    }
    assert!(file_path().await.contains("src/A.java"));
    assert!(
        b.client.find(Locator::Css("table.file")).await.is_err(),
        "no line of the file before Context is opened"
    );
    let phone = run.viewport == PHONE;
    if phone {
        b.press("c").await.expect("c");
    } else {
        b.click("#context > summary").await.expect("open");
    }
    b.wait_contains("table.file tr.in-method", "int size(int[] values)")
        .await;
    assert!(b.client.find(Locator::Css("#file-later")).await.is_err());
    let marked = b
        .client
        .find_all(Locator::Css("table.file tr.in-method"))
        .await
        .expect("rows")
        .len();
    assert_eq!(marked, 4, "the method's four lines are marked");
    b.click("#cr-2").await.expect("cr");
    b.click("#cc-2").await.expect("cc");
    b.click("#submit").await.expect("submit");
    wait_until("the vote is stored", || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM votes v JOIN items i ON i.id = v.item_id WHERE i.item_key = 'naming_1' AND v.context_opened = 1",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap_or(0)
            == 1
    })
    .await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A reload keeps the answer in progress: the chosen answer and the typed comment of the item
/// on screen come back after a reload of the page, and the vote carries them.
async fn a_reload_keeps_the_answer_in_progress(run: Run) {
    let Joined {
        db, guard, app, b, ..
    } = joined("Reload", run, |_| {}).await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#cr-3").await.expect("cr");
    b.client
        .find(Locator::Css("textarea[name=comment]"))
        .await
        .expect("comment box")
        .send_keys("three nested ifs")
        .await
        .expect("type");
    // three seconds on the item before the reload count after it
    tokio::time::sleep(Duration::from_secs(3)).await;
    let reloaded_at = natstudy_core::db::now_ms();
    b.client.refresh().await.expect("reload");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated again");
    wait_until("the answer is back", || async { checked(&b, "cr-3").await }).await;
    let comment: serde_json::Value = b
        .client
        .execute(
            "return document.querySelector('textarea[name=comment]').value",
            vec![],
        )
        .await
        .expect("comment");
    assert_eq!(comment, serde_json::json!("three nested ifs"));
    b.click("#cc-1").await.expect("cc");
    b.click("#submit").await.expect("submit");
    b.wait_for_text("#progress", "1 / 3").await.expect("saved");
    let stored: (i64, i64, String) = sqlx::query_as("SELECT cr, cc, comment FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("vote");
    assert_eq!(stored, (3, 1, "three nested ifs".to_owned()));
    let (time, started): (Option<f64>, Option<i64>) =
        sqlx::query_as("SELECT time_secs, started_at FROM votes")
            .fetch_one(&db.pool)
            .await
            .expect("time");
    let time = time.expect("a measured time");
    let started = started.expect("a first showing");
    assert!(
        started <= reloaded_at - 3000,
        "started when first shown: {started}, reloaded at {reloaded_at}"
    );
    // the time counts the three seconds before the reload and never more than the item was
    // on screen (the browser and this test read one clock; how long hydration, the clicks and
    // the typing took before the wait depends on the machine's load, so it is not guessed)
    let now = natstudy_core::db::now_ms();
    let since_shown = (now - started) as f64 / 1000.0;
    let since_reload = (now - reloaded_at) as f64 / 1000.0;
    assert!(
        time >= 3.0 && time <= since_shown && time > since_reload,
        "the time before the reload is kept: {time} s ({since_shown} s since first shown, \
         {since_reload} s since the reload)"
    );
    // the next item starts empty: the sent draft is gone
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    assert!(!checked(&b, "cr-3").await);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The end of a study, as a participant who rated everything meets it: the completion code
/// with a Copy button that says what it did (copied, or the code selected where the browser
/// refuses the clipboard), and the invite link opened again says they have finished.
async fn a_finished_participant_copies_the_code_and_the_link_says_so(viewport: (u32, u32)) {
    let Joined {
        db,
        guard,
        token,
        app,
        b,
        ..
    } = joined("Finished", viewport, |settings| {
        settings.completion_code = "C0DE-42".into();
    })
    .await;
    for _ in 0..3 {
        b.wait_for_text("#hydrated", "interactive")
            .await
            .expect("hydrated");
        b.wait_for_text("#submit", "Submit (Enter)")
            .await
            .expect("an item");
        b.press("11\u{E007}").await.expect("answer");
        b.wait_for_text("#hydrated", "interactive")
            .await
            .expect("hydrated");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    b.wait_for_text("#finish", "Finish").await.expect("review");
    b.click("#finish").await.expect("finish");
    b.wait_for_text("#thanks h1", "Thank you!")
        .await
        .expect("thanks");
    b.wait_for_text("#completion-code", "C0DE-42")
        .await
        .expect("the code");
    assert!(
        b.client.find(Locator::Css("#no-code-set")).await.is_err(),
        "a study with a code does not say it has none"
    );
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#copy-code").await.expect("copy");
    wait_until("the copy button says what it did", || async {
        !b.text_of("#copy-status").await.is_empty()
    })
    .await;
    let said = b.text_of("#copy-status").await;
    eprintln!("the copy button said: {said}");
    if said != "Copied." {
        assert!(said.contains("Ctrl+C"), "{said}");
        let selected = b
            .client
            .execute("return String(window.getSelection())", vec![])
            .await
            .expect("selection");
        assert_eq!(
            selected,
            serde_json::json!("C0DE-42"),
            "the code is selected"
        );
    }
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("the invite again");
    b.wait_contains("#invite-continuing", "You have finished this study")
        .await;
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("votes");
    assert_eq!(n, 3);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The outcome of the one participant who finished.
async fn finished_outcome(db: &Db) -> Option<String> {
    sqlx::query_scalar("SELECT outcome FROM annotators WHERE finished_at IS NOT NULL")
        .fetch_one(&db.pool)
        .await
        .expect("outcome")
}

/// `n` other participants each take an item and leave it held.
async fn others_hold(app: &TestApp, study: natstudy_vocab::ids::StudyId, token: &str, n: usize) {
    for _ in 0..n {
        let c = natstudy_tests::participants::participant(&app.base, study, token).await;
        assert!(
            natstudy_tests::participants::rate_step(&app.base, &c, study)
                .await
                .is_some()
        );
    }
}

/// Waits up to `secs` for an element `css` to be on the page (`what` it means, for the
/// failure).
async fn wait_for_element(b: &Browser, css: &str, secs: u64, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while b.client.find(Locator::Css(css)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits up to 20 s for the browser to arrive at an address ending in `suffix`.
async fn wait_for_url_ending(b: &Browser, suffix: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let url = b.client.current_url().await.expect("url");
        if url.as_str().ends_with(suffix) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not sent to …{suffix}: {url}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A paid crowd participant (k = 1, N = 2): with the other items held by two participants who
/// left, the page says "1 of 2 done", offers no Finish, and checks again by itself; when a
/// lease lapses the freed item appears without a reload, and after the second rating Finish
/// gives the completion code and sends the participant back to the platform with it.
async fn a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code(run: Run) {
    let Joined {
        db,
        guard,
        study,
        token,
        app,
        b,
    } = joined("Crowd", run, |settings| {
        settings.ratings_per_item = 1;
        settings.items_per_participant = Some(2);
        settings.completion_code = "C0DE-77".into();
    })
    .await;
    // the way back: a page of this server, so the browser can arrive there
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.completion_url = app.url("/favicon.svg?cc={code}");
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("settings");
    // two others take the other two items and leave
    others_hold(&app, study, &token, 2).await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("an item");
    b.press("11\u{E007}").await.expect("answer");
    b.wait_contains("#waiting-progress", "1 of 2 done").await;
    assert!(
        b.client.find(Locator::Css("#finish")).await.is_err(),
        "no Finish while items may come"
    );
    // a leaver's lease lapses: the page finds the item by itself
    let now = natstudy_core::db::now_ms();
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query(
        "UPDATE assignments SET lease_expires_at = $1, created_at = $2 \
         WHERE status = 'leased' AND item_id NOT IN (SELECT item_id FROM votes)",
    )
    .bind(now - 1)
    .bind(now - 3_600_000)
    .execute(&mut *tx)
    .await
    .expect("lapse");
    tx.commit().await.expect("commit");
    wait_for_element(&b, "#submit", 40, "the freed item never came").await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.press("11\u{E007}").await.expect("answer");
    b.wait_contains("#work-done", "You rated the 2 items").await;
    b.click("#finish").await.expect("finish");
    b.wait_for_text("#completion-code", "C0DE-77")
        .await
        .expect("the code");
    b.wait_contains("#return", "return to the study platform")
        .await;
    wait_for_url_ending(&b, "/favicon.svg?cc=C0DE-77").await;
    let outcome = finished_outcome(&db).await;
    assert_eq!(outcome.as_deref(), Some("completed"));
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A session lost while an item is on screen (its cookie gone: idle too long, or cleared):
/// Submit sends nothing but says so, with the resume code's form; the code continues the
/// participant in the same browser, back on the item with the answer given before, and the
/// vote then goes in.
async fn a_lost_session_keeps_the_answer_until_resumed(run: Run) {
    let Joined {
        db, guard, app, b, ..
    } = joined("Lost session", run, |_| {}).await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    let code = b.text_of("#resume-code").await;
    assert!(!code.is_empty(), "the survey shows the resume code");
    b.click("#cr-3").await.expect("cr");
    b.click("#cc-2").await.expect("cc");
    b.client
        .delete_all_cookies()
        .await
        .expect("the session's cookie gone");
    b.click("#submit").await.expect("submit");
    b.wait_contains("#session-lost", "Your session has ended")
        .await;
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("votes");
    assert_eq!(n, 0, "nothing was stored without the session");
    b.client
        .find(Locator::Css("#session-resume-input"))
        .await
        .expect("the resume form")
        .send_keys(&code)
        .await
        .expect("type the code");
    b.click("#session-resume-submit").await.expect("continue");
    wait_until("back on the item with the answer", || async {
        b.client.find(Locator::Css("#session-lost")).await.is_err()
            && checked(&b, "cr-3").await
            && checked(&b, "cc-2").await
    })
    .await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#submit").await.expect("submit again");
    b.wait_for_text("#progress", "1 / 3").await.expect("saved");
    let stored: (i64, i64) = sqlx::query_as("SELECT cr, cc FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("vote");
    assert_eq!(stored, (3, 2));
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A participant who waited past the study's wait for items others hold is offered, on the
/// page that checks by itself, to stop with the partial code; doing so shows that code,
/// labelled partial, and records the outcome.
async fn a_waiting_participant_stops_with_the_partial_code(run: Run) {
    let Joined {
        db,
        guard,
        study,
        token,
        app,
        b,
    } = joined("Partial", run, |settings| {
        settings.ratings_per_item = 1;
        settings.items_per_participant = Some(3);
        settings.completion_code = "FULL-1".into();
        settings.partial_code = "PART-3".into();
        settings.partial_after_minutes = Some(15);
    })
    .await;
    others_hold(&app, study, &token, 2).await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.press("11\u{E007}").await.expect("answer");
    b.wait_contains("#waiting-progress", "1 of 3 done").await;
    b.wait_contains("#partial-later", "within 15 minutes").await;
    assert!(
        b.client
            .find(Locator::Css("#finish-partial"))
            .await
            .is_err(),
        "no partial code before the wait"
    );
    // the wait began 16 minutes ago
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE annotators SET waiting_since = waiting_since - 960000 WHERE waiting_since IS NOT NULL")
        .execute(&mut *tx)
        .await
        .expect("an older wait");
    tx.commit().await.expect("commit");
    wait_for_element(
        &b,
        "#finish-partial",
        40,
        "the partial code was never offered",
    )
    .await;
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#finish-partial").await.expect("stop");
    b.wait_for_text("#completion-code", "PART-3")
        .await
        .expect("the partial code");
    b.wait_contains("#thanks", "Partial completion code").await;
    let outcome = finished_outcome(&db).await;
    assert_eq!(outcome.as_deref(), Some("partial"));
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A Prolific participant opens the study's link in two browsers (a phone, then a laptop):
/// the platform's id makes them one participant — the second browser continues where the
/// first left off, past consent, and no second place of the invite is used.
async fn a_prolific_id_in_two_browsers_is_one_participant(run: Run) {
    let (db, guard) = fresh_db(run.store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "Prolific").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let link = app.url(&format!(
        "/join/{token}?PROLIFIC_PID=5f00aa11bb22cc33dd44ee55&STUDY_ID=6a1&SESSION_ID=7b2"
    ));
    let first = run.browser().await;
    first.goto_hydrated(&link).await.expect("invite page");
    first.join_consent_and_start().await.expect("first item");
    first.press("11\u{E007}").await.expect("answer");
    first
        .wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("the next item");
    let second = Run {
        viewport: if run.viewport == PHONE { LAPTOP } else { PHONE },
        ..run
    }
    .browser()
    .await;
    second.goto_hydrated(&link).await.expect("invite page");
    second.click("#join").await.expect("join");
    second
        .wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("straight to an item: the same participant, consent given");
    let (participants, used, rated): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM annotators WHERE study_id = $1), \
         (SELECT used FROM invites WHERE study_id = $1), \
         (SELECT COUNT(*) FROM votes)",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!((participants, used, rated), (1, 1, 1));
    let pid: (Option<String>, Option<String>, Option<String>) = sqlx::query_as(
        "SELECT platform, external_pid, external_session FROM annotators WHERE study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("ids");
    assert_eq!(
        pid,
        (
            Some("prolific".into()),
            Some("5f00aa11bb22cc33dd44ee55".into()),
            Some("7b2".into())
        )
    );
    second.press("22\u{E007}").await.expect("answer");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
            .fetch_one(&db.pool)
            .await
            .expect("votes");
        if n == 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the second browser's vote"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    first.close().await;
    second.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// An attention item answered against its expected answer, with the study's rule at one
/// failure: the survey ends there with the screen-out code, and the participant leaves the
/// analysis (the report's n counts no vote of theirs and names them).
async fn an_attention_failure_ends_the_survey_and_leaves_the_analysis(run: Run) {
    let Joined {
        db,
        guard,
        study,
        token: _,
        app,
        b,
    } = joined("Attention", run, |settings| {
        settings.ratings_per_item = 1;
        settings.gold_failures = Some(1);
        settings.screenout_code = "ATTN-0".into();
    })
    .await;
    // every item a check item whose expected answer is natural
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE items SET gold_unnatural = 0 WHERE study_id = $1")
        .bind(study)
        .execute(&mut *tx)
        .await
        .expect("gold");
    tx.commit().await.expect("commit");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    // readability reduced, conventions broken: unnatural
    b.press("33\u{E007}").await.expect("answer");
    b.wait_for_text("#completion-code", "ATTN-0")
        .await
        .expect("the screen-out code");
    let outcome = finished_outcome(&db).await;
    assert_eq!(outcome.as_deref(), Some("screened_out"));
    let data = natstudy_core::store::analysis::study_data(&db, study)
        .await
        .expect("data");
    assert!(data.votes.is_empty(), "their vote is in no figure");
    assert_eq!(data.left_out.participants.len(), 1);
    assert_eq!(data.left_out.participants[0].votes, 1);
    let report = natstudy_engine::analysis::report(&data);
    assert_eq!(report.votes, 0);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The screener turns a participant away: an answer the study screens out ends the survey at
/// consent with the screen-out code, and the page sends them to the screen-out URL with it;
/// they hold no item.
async fn the_screener_turns_a_participant_away(run: Run) {
    let (db, guard) = fresh_db(run.store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "Screened").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.screener_json = r#"[{"name":"years","label":"Years of Java","options":["<1","1-3","3-5"],"screen_out":["<1"]},
        {"name":"role","label":"Your role","options":["student","developer"]}]"#
        .into();
    settings.screenout_code = "OUT-5".into();
    settings.screenout_url = app.url("/favicon.svg?out={code}");
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("settings");
    let b = run.browser().await;
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite page");
    b.join_and_consent("<1", true).await.expect("screened out");
    b.wait_for_text("#completion-code", "OUT-5")
        .await
        .expect("the screen-out code");
    b.wait_contains("#thanks", "there are no items for you to rate")
        .await;
    wait_for_url_ending(&b, "/favicon.svg?out=OUT-5").await;
    let (outcome, claims): (Option<String>, i64) = sqlx::query_as(
        "SELECT outcome, (SELECT COUNT(*) FROM assignments) FROM annotators WHERE study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("recorded");
    assert_eq!(outcome.as_deref(), Some("screened_out"));
    assert_eq!(claims, 0);
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A laptop's window and a phone's: every flow of the survey runs on both.
const LAPTOP: (u32, u32) = (1366, 900);
const PHONE: (u32, u32) = (390, 844);

#[tokio::test]
async fn the_context_file_comes_when_opened_on_a_laptop() {
    the_context_file_comes_when_opened(LAPTOP).await;
}

#[tokio::test]
async fn the_context_file_comes_when_opened_on_a_phone() {
    the_context_file_comes_when_opened(PHONE).await;
}

#[tokio::test]
async fn the_context_file_comes_when_opened_on_postgres_over_a_slow_link() {
    the_context_file_comes_when_opened(Run {
        viewport: PHONE,
        store: Store::Postgres,
        slow: true,
    })
    .await;
}

#[tokio::test]
async fn mixed_mouse_and_keyboard_store_exactly_what_was_chosen_on_a_laptop() {
    mixed_mouse_and_keyboard_store_exactly_what_was_chosen(LAPTOP).await;
}

#[tokio::test]
async fn mixed_mouse_and_keyboard_store_exactly_what_was_chosen_on_a_phone() {
    mixed_mouse_and_keyboard_store_exactly_what_was_chosen(PHONE).await;
}

#[tokio::test]
async fn a_full_study_gives_no_completion_code_on_a_laptop() {
    a_full_study_gives_no_completion_code(LAPTOP).await;
}

#[tokio::test]
async fn a_full_study_gives_no_completion_code_on_a_phone() {
    a_full_study_gives_no_completion_code(PHONE).await;
}

#[tokio::test]
async fn a_reload_keeps_the_answer_in_progress_on_a_laptop() {
    a_reload_keeps_the_answer_in_progress(LAPTOP.into()).await;
}

#[tokio::test]
async fn a_reload_keeps_the_answer_in_progress_on_a_phone() {
    a_reload_keeps_the_answer_in_progress(PHONE.into()).await;
}

#[tokio::test]
async fn a_finished_participant_copies_the_code_and_the_link_says_so_on_a_laptop() {
    a_finished_participant_copies_the_code_and_the_link_says_so(LAPTOP).await;
}

#[tokio::test]
async fn a_finished_participant_copies_the_code_and_the_link_says_so_on_a_phone() {
    a_finished_participant_copies_the_code_and_the_link_says_so(PHONE).await;
}

#[tokio::test]
async fn a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code_on_a_laptop() {
    a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code(LAPTOP.into()).await;
}

#[tokio::test]
async fn a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code_on_a_phone() {
    a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code(PHONE.into()).await;
}

#[tokio::test]
async fn a_lost_session_keeps_the_answer_until_resumed_on_a_laptop() {
    a_lost_session_keeps_the_answer_until_resumed(LAPTOP.into()).await;
}

#[tokio::test]
async fn a_lost_session_keeps_the_answer_until_resumed_on_a_phone() {
    a_lost_session_keeps_the_answer_until_resumed(PHONE.into()).await;
}

#[tokio::test]
async fn a_waiting_participant_stops_with_the_partial_code_on_a_laptop() {
    a_waiting_participant_stops_with_the_partial_code(LAPTOP.into()).await;
}

#[tokio::test]
async fn a_waiting_participant_stops_with_the_partial_code_on_a_phone() {
    a_waiting_participant_stops_with_the_partial_code(PHONE.into()).await;
}

#[tokio::test]
async fn the_screener_turns_a_participant_away_on_a_laptop() {
    the_screener_turns_a_participant_away(LAPTOP.into()).await;
}

#[tokio::test]
async fn the_screener_turns_a_participant_away_on_a_phone() {
    the_screener_turns_a_participant_away(PHONE.into()).await;
}

// The crowd's paths on PostgreSQL, and over a slow link (a phone's, and a laptop's)

#[tokio::test]
async fn a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code_on_postgres_over_a_slow_link(
) {
    a_crowd_participant_waits_for_held_items_then_goes_back_with_the_code(Run {
        viewport: PHONE,
        store: Store::Postgres,
        slow: true,
    })
    .await;
}

#[tokio::test]
async fn a_waiting_participant_stops_with_the_partial_code_on_postgres() {
    a_waiting_participant_stops_with_the_partial_code(Run {
        viewport: LAPTOP,
        store: Store::Postgres,
        slow: false,
    })
    .await;
}

#[tokio::test]
async fn the_screener_turns_a_participant_away_on_postgres_over_a_slow_link() {
    the_screener_turns_a_participant_away(Run {
        viewport: LAPTOP,
        store: Store::Postgres,
        slow: true,
    })
    .await;
}

#[tokio::test]
async fn a_lost_session_keeps_the_answer_until_resumed_on_postgres() {
    a_lost_session_keeps_the_answer_until_resumed(Run {
        viewport: PHONE,
        store: Store::Postgres,
        slow: false,
    })
    .await;
}

#[tokio::test]
async fn a_prolific_id_in_two_browsers_is_one_participant_phone_first() {
    a_prolific_id_in_two_browsers_is_one_participant(PHONE.into()).await;
}

#[tokio::test]
async fn a_prolific_id_in_two_browsers_is_one_participant_on_postgres_laptop_first() {
    a_prolific_id_in_two_browsers_is_one_participant(Run {
        viewport: LAPTOP,
        store: Store::Postgres,
        slow: false,
    })
    .await;
}

#[tokio::test]
async fn an_attention_failure_ends_the_survey_and_leaves_the_analysis_on_a_phone() {
    an_attention_failure_ends_the_survey_and_leaves_the_analysis(PHONE.into()).await;
}

#[tokio::test]
async fn an_attention_failure_ends_the_survey_and_leaves_the_analysis_on_postgres_over_a_slow_link()
{
    an_attention_failure_ends_the_survey_and_leaves_the_analysis(Run {
        viewport: LAPTOP,
        store: Store::Postgres,
        slow: true,
    })
    .await;
}

#[tokio::test]
async fn a_reload_keeps_the_answer_in_progress_on_postgres_over_a_slow_link() {
    a_reload_keeps_the_answer_in_progress(Run {
        viewport: PHONE,
        store: Store::Postgres,
        slow: true,
    })
    .await;
}

/// Without JavaScript, the participant's whole path is plain server-rendered forms: the
/// invite page (not "Loading…"), consent with the screener, the guideline, each item with its
/// diff and both questions, the finish with its code — on a phone and a laptop, on both
/// stores. Every vote reaches the database, the side stored is the side shown.
async fn a_participant_rates_without_javascript(store: Store, (width, height): (u32, u32)) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "No script").await;
    let mut s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    s.completion_code = "NOJS7".into();
    natstudy_core::service::studies::update_settings(&db, study, None, &s)
        .await
        .expect("settings");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start_without_javascript(width, height)
        .await
        .expect("browser");
    let page_text = |b: &Browser| {
        let c = b.client.clone();
        async move {
            c.find(Locator::Css("main"))
                .await
                .expect("main")
                .text()
                .await
                .expect("text")
        }
    };
    for load in 0..3 {
        b.client
            .goto(&app.url(&format!("/join/{token}")))
            .await
            .expect("invite");
        let text = page_text(&b).await;
        assert!(!text.contains("Loading"), "load {load}: {text}");
        assert!(text.contains("No script"), "load {load}: {text}");
    }
    let hydrated = b
        .client
        .find(Locator::Css("#hydrated"))
        .await
        .expect("marker")
        .attr("data-hydrated")
        .await
        .expect("attribute");
    assert_eq!(hydrated.as_deref(), Some("false"), "no script ran");
    b.join_consent_and_start_without_javascript()
        .await
        .expect("to the first item");
    let mut previous = String::new();
    for n in 1..=3 {
        // the next item's page (not the last one's, still on screen while the post goes)
        let mut item = String::new();
        for _ in 0..200 {
            if let Ok(input) = b
                .client
                .find(Locator::Css("#vote-form input[name=item]"))
                .await
            {
                item = input.attr("value").await.ok().flatten().unwrap_or_default();
                if !item.is_empty() && item != previous {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            !item.is_empty() && item != previous,
            "item {n}: a new item's page"
        );
        previous = item;
        let text = page_text(&b).await;
        assert!(!text.contains("Loading"), "item {n}: {text}");
        let rows = b
            .client
            .find_all(Locator::Css("table.diff tbody tr"))
            .await
            .expect("diff rows");
        assert!(!rows.is_empty(), "item {n}: the diff is on the page");
        b.click("#cr-2").await.expect("readability");
        b.click("#cc-3").await.expect("conventions");
        b.click("#vote-form #submit").await.expect("submit");
        wait_until(&format!("item {n}: the vote reaches the database"), || {
            let db = db.clone();
            async move { votes(&db).await.len() == n }
        })
        .await;
    }
    b.wait_for_text("#finish", "Finish").await.expect("finish");
    b.click("#finish").await.expect("finish");
    b.wait_for_text("#completion-code", "NOJS7")
        .await
        .expect("the code");
    let sides: Vec<i64> = sqlx::query_scalar("SELECT original_left FROM votes ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("sides");
    assert_eq!(
        sides,
        vec![1, 1, 1],
        "sides not randomised: the original was on the left"
    );
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A participant who lets the items held for them lapse without rating one gets no new hold
/// (the queue's guard against joins that claim and walk away); coming back, the page says
/// that, not that every item has its ratings (items are free again: another participant gets
/// one).
async fn a_lapsed_hold_is_told_as_it_is(store: Store, (width, height): (u32, u32)) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "Lapsing").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start_without_javascript(width, height)
        .await
        .expect("browser");
    b.client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite");
    b.join_consent_and_start_without_javascript()
        .await
        .expect("to the first item");
    wait_for_element(&b, "#vote-form", 30, "the first item").await;
    let now = natstudy_core::db::now_ms();
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE assignments SET lease_expires_at = $1, created_at = $2")
        .bind(now - 1)
        .bind(now - 3_600_000)
        .execute(&mut *tx)
        .await
        .expect("lapse");
    tx.commit().await.expect("commit");
    b.client
        .goto(&app.url(&format!("/annotate/{study}")))
        .await
        .expect("back");
    b.wait_contains("#hold-lapsed", "went back to other participants")
        .await;
    assert!(
        b.client
            .find(Locator::Css("#nothing-to-rate"))
            .await
            .is_err(),
        "no claim that the study is full"
    );
    b.close().await;
    // the items are free: a new participant gets one
    let other = Browser::start_without_javascript(width, height)
        .await
        .expect("browser");
    other
        .client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite");
    other
        .join_consent_and_start_without_javascript()
        .await
        .expect("to the first item");
    wait_for_element(&other, "#vote-form", 30, "an item for the next participant").await;
    other.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn a_lapsed_hold_is_told_as_it_is_on_a_phone_sqlite() {
    a_lapsed_hold_is_told_as_it_is(Store::Sqlite, (390, 844)).await;
}

#[tokio::test]
async fn a_lapsed_hold_is_told_as_it_is_on_a_laptop_postgres() {
    a_lapsed_hold_is_told_as_it_is(Store::Postgres, (1366, 900)).await;
}

#[tokio::test]
async fn a_participant_rates_without_javascript_on_a_phone_sqlite() {
    a_participant_rates_without_javascript(Store::Sqlite, (390, 844)).await;
}

#[tokio::test]
async fn a_participant_rates_without_javascript_on_a_laptop_postgres() {
    a_participant_rates_without_javascript(Store::Postgres, (1366, 900)).await;
}
