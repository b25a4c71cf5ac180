//! The results page is computed once per change of the study's data and shared: by many
//! viewers, by chart downloads, and refreshed after a new vote (SQLite and PostgreSQL).

use std::sync::Arc;

use futures_util::future::join_all;
use natstudy::service::reports::ReportCache;
use natstudy::store::assign::{self, VoteInput};
use natstudy_tests::{fresh_db, on_both_stores, reference_study, Role, Store, TestApp};
use reqwest::StatusCode;

const PW: &str = "a-long-password";

async fn results(c: &reqwest::Client, app: &TestApp, study: &str) -> serde_json::Value {
    let r = c
        .post(app.url("/api/studies/results"))
        .form(&[("study", study)])
        .send()
        .await
        .expect("results");
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.expect("json")
}

async fn results_are_computed_once_per_change(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let cache = Arc::new(ReportCache::default());
    let app = TestApp::start_with(db.clone(), |c| c.reports = cache.clone())
        .await
        .expect("server");
    let study = reference_study(&db, "Cached", true).await.expect("study");
    app.add_user("rita", PW, Role::Admin).await.expect("user");
    let c = app.signed_in("rita", PW).await.expect("sign in");
    let s = study.to_string();

    // eight viewers at once, then chart downloads: one computation
    let views = join_all((0..8).map(|_| results(&c, &app, &s))).await;
    assert_eq!(cache.computed(), 1, "one computation for many viewers");
    assert!(
        views.windows(2).all(|w| w[0] == w[1]),
        "every viewer sees the same"
    );
    let votes = views[0]["votes"].as_i64().expect("votes");
    for chart in ["naturalness_by_level.svg", "naturalness_by_level.png"] {
        let r = c
            .get(app.url(&format!("/studies/{study}/charts/{chart}")))
            .send()
            .await
            .expect("chart");
        assert_eq!(r.status(), StatusCode::OK, "{chart}");
    }
    assert_eq!(cache.computed(), 1, "charts come from the same report");

    // a new vote: k raised to 6 (a change too), one annotator rates one item
    let mut settings = natstudy::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.ratings_per_item = 6;
    natstudy::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("k");
    let pool = assign::ensure_pool(&db, study, 1).await.expect("pool");
    let spec = assign::BatchSpec {
        name: "more".into(),
        strategy: assign::Strategy::DynamicQueue,
        filter: Default::default(),
        annotators: pool.clone(),
        seed: 1,
        lease_secs: 600,
        avoid_same_bug: false,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    let now = natstudy::db::now_ms();
    let h = assign::next_item(&db, study, pool[0], now)
        .await
        .expect("next")
        .expect("an item with room");
    let vote = VoteInput {
        cr: 4,
        cc: 4,
        comment: String::new(),
        time_secs: Some(12.0),
        started_at: None,
        context_opened: false,
        token: "0123456789abcdef0123456789abcdef".into(),
    };
    assign::submit(&db, study, pool[0], h.item, &vote, now)
        .await
        .expect("vote");
    let after = results(&c, &app, &s).await;
    assert_eq!(
        after["votes"].as_i64(),
        Some(votes + 1),
        "the new vote is counted"
    );
    assert_eq!(cache.computed(), 2, "recomputed once for the change");
    let again = results(&c, &app, &s).await;
    assert_eq!(again, after);
    assert_eq!(cache.computed(), 2, "and served from the cache again");

    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(results_are_computed_once_per_change => results_are_computed_once_per_change_sqlite, results_are_computed_once_per_change_postgres);
