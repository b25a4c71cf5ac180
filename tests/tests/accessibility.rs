//! Accessibility of the participant pages and the results page: axe-core (WCAG 2.x A and AA
//! rules) injected into headless Chromium finds nothing of impact serious or critical — on the
//! invite page, consent, guideline, an item to rate, the list of rated items, the end, the
//! resume and sign-in pages, a study's results page and the staff's pages (the study page, the
//! list of studies, the accounts) — at a laptop's and a phone's size.

use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Role, Store, TestApp};

const PW: &str = "a-long-password";

/// Runs axe on the current page; pushes what it finds, named by `page`, into `found`. A
/// column's heading without a name (a column of buttons) is found too.
async fn check(b: &Browser, page: &str, found: &mut Vec<String>) {
    for v in b.axe_serious().await.expect("axe ran") {
        found.push(format!("{page}: {v}"));
    }
    let unnamed = b
        .client
        .execute(
            "return [...document.querySelectorAll('th')] \
               .filter(th => th.textContent.trim() === '') \
               .map(th => th.closest('table').id + ': column ' + (th.cellIndex + 1))",
            vec![],
        )
        .await
        .expect("js");
    for th in unnamed.as_array().into_iter().flatten() {
        found.push(format!("{page}: a heading without a name ({th})"));
    }
}

async fn survey_pages(width: u32, height: u32) -> Vec<String> {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "Accessible", false)
        .await
        .expect("study");
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.completion_code = "C0DE".into();
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("settings");
    let (_, token) = natstudy_tests::open_queue(&db, study, 5)
        .await
        .expect("invite");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start_sized(width, height).await.expect("browser");
    let mut found = Vec::new();
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite");
    check(&b, "invite", &mut found).await;
    assert_eq!(
        b.client.title().await.expect("title"),
        "Invitation · natstudy"
    );
    b.click("#join").await.expect("join");
    b.wait_for_text("#consent-submit", "I agree and continue")
        .await
        .expect("consent");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    check(&b, "consent", &mut found).await;
    for css in [
        "#screener-years option[value='1-3']",
        "#screener-role option[value='developer']",
    ] {
        b.click(css).await.expect("answer");
    }
    b.click("#consent-submit").await.expect("consent");
    b.wait_for_text("#start", "Start rating")
        .await
        .expect("guideline");
    check(&b, "guideline", &mut found).await;
    b.click("#start").await.expect("start");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("item");
    check(&b, "item", &mut found).await;
    b.click("#cr-2").await.expect("cr");
    b.click("#cc-3").await.expect("cc");
    b.click("#submit").await.expect("submit");
    b.wait_for_text("#progress", &format!("1 / {}", 297))
        .await
        .ok();
    // straight to the list of rated items and the end
    let _ = b
        .goto_hydrated(&app.url(&format!("/annotate/{study}?revise=0")))
        .await;
    b.click("#context > summary").await.ok();
    check(&b, "item with its context open", &mut found).await;
    b.goto_hydrated(&app.url("/resume")).await.expect("resume");
    check(&b, "resume", &mut found).await;
    b.goto_hydrated(&app.url("/login")).await.expect("login");
    check(&b, "sign-in", &mut found).await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
    found
}

async fn results_page(width: u32, height: u32) -> Vec<String> {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "Results", true)
        .await
        .expect("study");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("rita", PW, Role::Admin).await.expect("user");
    let b = Browser::start_sized(width, height).await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}/results"),
        ("rita", PW, "rita (admin)"),
    )
    .await
    .expect("results");
    b.wait_contains("#results-tables", "Naturalness by level")
        .await;
    // every page names itself, not just "natstudy"
    assert_eq!(b.client.title().await.expect("title"), "Results · natstudy");
    let mut found = Vec::new();
    check(&b, "results", &mut found).await;
    // the staff's pages: the start page (their studies), the study page (settings, uploads,
    // batches, invites), the list of studies (with New study) and the accounts (with Add an
    // account)
    for (page, path, title) in [
        ("home", "/".to_owned(), "Home · natstudy"),
        ("study", format!("/studies/{study}"), "Study · natstudy"),
        ("studies", "/studies".to_owned(), "Studies · natstudy"),
        ("users", "/admin/users".to_owned(), "Users · natstudy"),
    ] {
        b.goto_hydrated(&app.url(&path)).await.expect("page");
        assert_eq!(b.client.title().await.expect("title"), title);
        if page == "study" {
            // the monitor's participants a line each (their forms made a phone's rows ~250 px)
            b.wait_contains("#annotators", "imported").await;
            let tallest = b
                .client
                .execute(
                    "return Math.max(...Array.from(document.querySelectorAll('#annotators tbody tr'))\
                     .map(r => r.getBoundingClientRect().height))",
                    vec![],
                )
                .await
                .expect("rows");
            assert!(
                tallest.as_f64().is_some_and(|h| h > 0.0 && h <= 64.0),
                "{width} px: a participant's row is {tallest} px tall"
            );
        }
        check(&b, page, &mut found).await;
        if page == "study" {
            // the generator's preview, a proposal open: its checkboxes labelled, outside
            // the summaries, targets of 24 px, the diff's colours at AA
            b.click("#generate-preview").await.expect("preview");
            b.wait_contains("#generate-count", "proposed").await;
            assert!(
                !b.text_of("#generate-count").await.starts_with("0 "),
                "the preview proposes something"
            );
            b.click("#proposals details summary").await.expect("open");
            b.wait_contains("#proposals details[open] table", "Original")
                .await;
            let small = b
                .client
                .execute(
                    "return [...document.querySelectorAll('#proposals input, #proposals summary, #proposals button')] \
                     .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && (r.width < 24 || r.height < 24)).length",
                    vec![],
                )
                .await
                .expect("js");
            assert_eq!(small, 0, "{width} px: targets under 24 px");
            check(&b, "generator preview", &mut found).await;
        }
    }
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
    found
}

#[tokio::test]
async fn participant_pages_have_no_serious_accessibility_violations() {
    let mut found = survey_pages(1366, 900).await;
    found.extend(
        survey_pages(390, 844)
            .await
            .into_iter()
            .map(|v| format!("phone {v}")),
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[tokio::test]
async fn the_results_and_staff_pages_have_no_serious_accessibility_violations() {
    let mut found = results_page(1366, 900).await;
    found.extend(
        results_page(390, 844)
            .await
            .into_iter()
            .map(|v| format!("phone {v}")),
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}
