//! Patch review in headless Chromium: NPR results with patches, an admin builds the review
//! queue in the page, two reviewers — an annotator account that is a member of the study, and
//! a stranger through a review-only invite link — review with the keyboard only, the admin
//! decides the one disagreement, and the results page shows Cohen's kappa and the robustness
//! figures the decisions changed.

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, reference_dir, reference_study, Role, Store, TestApp};

const ADA: (&str, &str, &str) = ("ada", "a-long-password", "ada (admin)");
const RUTH: (&str, &str, &str) = ("ruth", "a-long-password", "ruth (annotator)");

/// Reviews the open patches in order with one key each on the review page already open,
/// checking the target shown.
async fn review(b: &Browser, verdicts: &[(&str, &str)]) {
    for (i, (target, key)) in verdicts.iter().enumerate() {
        b.wait_contains("#review-target", target).await;
        b.wait_contains("#review-progress", &format!("{i} reviewed"))
            .await;
        // the tool is never named; the patch and the fix are shown as diffs
        let page = b.text_of("main").await;
        assert!(
            !page.contains("fixtool"),
            "the tool's name is hidden: {page}"
        );
        assert!(b.client.find(Locator::Css("#patch-diff")).await.is_ok());
        // a staff page like the others: nothing serious or critical for axe (the first task)
        if i == 0 {
            let serious = b.axe_serious().await.expect("axe");
            assert!(serious.is_empty(), "the review page: {serious:?}");
        }
        // the diffs wrap in their box: the page never scrolls sideways, on a phone too
        let overflow = b.sideways().await.expect("js");
        assert!(overflow <= 0.0, "{target}: scrolls sideways by {overflow}");
        b.press(key).await.expect("keys");
    }
    b.wait_contains("#review-done", "Nothing left to review")
        .await;
}

#[tokio::test]
async fn two_reviewers_review_by_keyboard_and_an_admin_decides() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = reference_study(&db, "patches", true).await.expect("study");
    // fixtool repairs Chart-1 correctly and three of its transformations plausibly
    let items: Vec<serde_json::Value> =
        std::fs::read_to_string(reference_dir().join("study-small/transformations.jsonl"))
            .expect("transformations")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
    let source = |id: &str| {
        items
            .iter()
            .find(|t| t["id"] == id)
            .and_then(|t| t["source"].as_str())
            .expect("item")
            .to_owned()
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["tool", "target", "status", "patch"])
        .expect("csv");
    w.write_record(["fixtool", "Chart-1", "correct", ""])
        .expect("csv");
    for (n, target) in ["naming_1", "naming_2", "naming_3"].iter().enumerate() {
        let src = source(target);
        let mut lines: Vec<&str> = src.lines().collect();
        let extra = format!("        int patched{n} = {n};");
        lines.insert(1, &extra);
        w.write_record(["fixtool", target, "plausible", &lines.join("\n")])
            .expect("csv");
    }
    let npr = String::from_utf8(w.into_inner().expect("csv")).expect("utf8");
    natstudy_core::service::imports::import_results_text(
        &db,
        study,
        None,
        natstudy_core::service::imports::ResultsTable::Npr,
        "npr_results.csv",
        &npr,
    )
    .await
    .expect("npr");
    let app = TestApp::start(db).await.expect("server");
    app.add_user(ADA.0, ADA.1, Role::Admin).await.expect("ada");
    app.add_user(RUTH.0, RUTH.1, Role::Annotator)
        .await
        .expect("reviewer");
    app.add_member(study, RUTH.0).await.expect("member");
    let base = app.url("");
    let id = study.get();
    let b = Browser::start().await.expect("browser");

    // the admin builds the queue in the page
    b.open_as(&base, &format!("/studies/{id}/review/decide"), ADA)
        .await
        .expect("decide page");
    b.click("#review-create-submit").await.expect("build");
    b.wait_contains("#review-create-result", "3 review tasks created")
        .await;
    b.wait_contains("#review-counts", "3 patches: 0 decided, 3 waiting")
        .await;
    b.open_as(&base, &format!("/studies/{id}/results"), ADA)
        .await
        .expect("results");
    b.wait_contains("#table-robustness-all", "1 → 0.00").await;

    // and a review-only invite for a reviewer without an account
    b.goto_hydrated(&app.url(&format!("/studies/{id}/review/decide")))
        .await
        .expect("decide page");
    b.click("#review-invite-submit").await.expect("invite");
    b.wait_contains("#review-invite-link", "/join/").await;
    let link = b.text_of("#review-invite-link").await;

    // two reviewers, keyboard only: they agree on naming_1 (correct) and naming_3 (not
    // equivalent) and disagree on naming_2; the first on a phone
    let rb = Browser::start_sized(390, 844).await.expect("browser");
    rb.open_as(&base, &format!("/studies/{id}/review"), RUTH)
        .await
        .expect("review page");
    // a full load passes the page guard too (a reviewer is an annotator member of the study)
    rb.goto_hydrated(&format!("{base}/studies/{id}/review"))
        .await
        .expect("reload");
    review(
        &rb,
        &[("naming_1", "c"), ("naming_2", "c"), ("naming_3", "w")],
    )
    .await;
    rb.close().await;
    let rb = Browser::start().await.expect("browser");
    rb.goto_hydrated(&link).await.expect("invite");
    rb.wait_contains("main", "review repair tools' patches")
        .await;
    rb.click("#join").await.expect("join");
    review(
        &rb,
        &[("naming_1", "c"), ("naming_2", "w"), ("naming_3", "w")],
    )
    .await;
    // the invited reviewer reaches the review page again, and nothing else of the study
    rb.goto_hydrated(&format!("{base}/studies/{id}/review"))
        .await
        .expect("again");
    rb.wait_contains("#review-done", "Nothing left to review")
        .await;
    rb.client
        .goto(&format!("{base}/studies/{id}/review/decide"))
        .await
        .expect("goto");
    let url = rb.client.current_url().await.expect("url");
    assert_eq!(
        url.path(),
        "/login",
        "the decisions page is not the reviewer's"
    );
    rb.close().await;

    // the admin decides the disagreement
    b.goto_hydrated(&app.url(&format!("/studies/{id}/review/decide")))
        .await
        .expect("page");
    b.wait_contains("#review-counts", "1 disagreements to decide")
        .await;
    b.wait_contains("#disagreements", "fixtool · naming_2")
        .await;
    b.wait_contains("#disagreements", "ruth: correct").await;
    b.wait_contains("#disagreements", "@invite: wrong").await;
    let serious = b.axe_serious().await.expect("axe");
    assert!(serious.is_empty(), "the decisions page: {serious:?}");
    // the decisions page fits a phone too
    b.client.set_window_size(390, 844).await.expect("size");
    let overflow = b.sideways().await.expect("js");
    assert!(overflow <= 0.0, "decisions: scrolls sideways by {overflow}");
    b.click("#disagreements .rule-correct")
        .await
        .expect("decide");
    b.wait_contains(
        "#review-counts",
        "3 decided, 0 waiting for reviewers, 0 disagreements",
    )
    .await;
    b.wait_contains("#no-disagreements", "None.").await;

    // κ over (c,c), (c,w), (w,w): po = 2/3, pe = 4/9, κ = 0.4; naming_1 and naming_2 are now
    // correct, so fixtool keeps 2 of its 3 transformations of Chart-1 correct
    b.goto_hydrated(&app.url(&format!("/studies/{id}/results")))
        .await
        .expect("page");
    b.wait_contains("#table-patch-review", "0.4000").await;
    b.wait_contains("#table-robustness-all", "1 → 0.67").await;
    b.wait_contains("#table-pdm", "fixtool").await;
    b.close().await;
    guard.drop_now(app.db.clone()).await;
}
