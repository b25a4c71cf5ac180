//! The command line refuses what the page refuses: each rule the web's services hold is run
//! through both the page's server function and `natstudy`, with the same words, and neither
//! writes anything when it refuses.

use natstudy_tests::{cli, fresh_db, on_both_stores, Role, Store, TestApp};

const PW: &str = "a-long-password";

async fn invites_of(db: &natstudy_core::service::Db) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM invites")
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

/// An invite's cap: a review invite admits 1 to 1,000 reviewers and a survey invite 1 to
/// 100,000 participants, on the page and on the command line alike.
async fn invite_caps_hold_on_the_page_and_the_command_line(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = natstudy_tests::small::study(&db, "Rules").await;
    let batch: natstudy_vocab::ids::BatchId =
        sqlx::query_scalar("SELECT id FROM batches WHERE study_id = $1")
            .bind(study)
            .fetch_one(&db.pool)
            .await
            .expect("the batch");
    let batch_name: String = sqlx::query_scalar("SELECT name FROM batches WHERE id = $1")
        .bind(batch)
        .fetch_one(&db.pool)
        .await
        .expect("name");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let before = invites_of(&db).await;
    let (s, b) = (study.to_string(), batch.to_string());
    for (endpoint, form, args, words) in [
        (
            "/api/review/invite",
            vec![("study", s.clone()), ("cap", "5000".to_owned())],
            vec!["--review", "--cap", "5000"],
            "an invite admits 1 to 1000 reviewers, not 5000",
        ),
        (
            "/api/studies/invite",
            vec![
                ("study", s.clone()),
                ("batch", b.clone()),
                ("cap", "0".to_owned()),
            ],
            vec!["--batch", batch_name.as_str(), "--cap", "0"],
            "an invite admits 1 to 100000 participants, not 0",
        ),
        (
            "/api/studies/invite",
            vec![
                ("study", s.clone()),
                ("batch", b.clone()),
                ("cap", "100001".to_owned()),
            ],
            vec!["--batch", batch_name.as_str(), "--cap", "100001"],
            "an invite admits 1 to 100000 participants, not 100001",
        ),
    ] {
        let r = c
            .post(app.url(endpoint))
            .form(&form)
            .send()
            .await
            .expect("page");
        assert!(
            !r.status().is_success(),
            "{endpoint} {form:?}: {}",
            r.status()
        );
        let page = r.text().await.expect("text");
        assert!(page.contains(words), "{endpoint}: {page}");
        let mut all = vec!["invite", "create", "--study", "Rules"];
        all.extend(&args);
        let err = cli(&db.url, &all).await.expect_err("the command refuses");
        assert!(format!("{err:#}").contains(words), "{args:?}: {err:#}");
        assert_eq!(invites_of(&db).await, before, "{args:?}: nothing written");
    }
    // within the rules both make the link
    let r = c
        .post(app.url("/api/review/invite"))
        .form(&[("study", s.as_str()), ("cap", "1000")])
        .send()
        .await
        .expect("page");
    assert!(r.status().is_success(), "{}", r.status());
    cli(
        &db.url,
        &[
            "invite", "create", "--study", "Rules", "--review", "--cap", "1000",
        ],
    )
    .await
    .expect("a review invite of 1000");
    assert_eq!(invites_of(&db).await, before + 2);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(invite_caps_hold_on_the_page_and_the_command_line => invite_caps_hold_on_the_page_and_the_command_line_sqlite, invite_caps_hold_on_the_page_and_the_command_line_postgres);
