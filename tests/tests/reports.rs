//! The results page is computed once per change of the study's data and shared: by many
//! viewers, by chart downloads, and refreshed after a new vote (SQLite and PostgreSQL).

use std::sync::Arc;

use futures_util::future::join_all;
use natstudy_core::service::reports::ReportCache;
use natstudy_core::store::assign;
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
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.ratings_per_item = 6;
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
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
    let now = natstudy_core::db::now_ms();
    let h = assign::next_item(&db, study, pool[0], now)
        .await
        .expect("next")
        .expect("an item with room");
    let vote = natstudy_tests::test_vote("one more", 4, 4, Some(12.0));
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

/// The results page says first how many items have all k ratings and computes the figures of
/// the votes on those only; an item with fewer is listed as incomplete, with no category.
async fn results_stand_on_complete_items_only(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let study = reference_study(&db, "Partly rated", true)
        .await
        .expect("study");
    app.add_user("rita", PW, Role::Admin).await.expect("user");
    let c = app.signed_in("rita", PW).await.expect("sign in");
    // one item keeps 3 of its 5 ratings (as if two participants had not rated it yet)
    let item: i64 = sqlx::query_scalar(
        "SELECT i.id FROM items i WHERE i.study_id = $1 AND i.item_key = 'naming_1'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("item");
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM votes WHERE item_id = $1 ORDER BY id")
        .bind(item)
        .fetch_all(&db.pool)
        .await
        .expect("votes");
    for id in &ids[..2] {
        sqlx::query("DELETE FROM votes WHERE id = $1")
            .bind(id)
            .execute(&mut *db.write().await.expect("write"))
            .await
            .expect("delete");
    }
    let view = results(&c, &app, &study.to_string()).await;
    // the figures count the complete items' votes; the page says so beside every vote
    assert_eq!(view["votes"], 297 * 5 - 2);
    assert_eq!(view["analysed_votes"], 296 * 5);
    let headline: Vec<String> = serde_json::from_value(view["headline"].clone()).expect("lines");
    assert!(
        headline[0].starts_with("296 of 297 items have all k = 5 ratings"),
        "{headline:?}"
    );
    assert!(
        headline[1].starts_with("1 item with some but not k ratings"),
        "{headline:?}"
    );
    let tables = view["tables"].as_array().expect("tables");
    let incomplete = tables
        .iter()
        .find(|t| t["id"] == "incomplete")
        .expect("the incomplete items' table");
    assert_eq!(
        incomplete["rows"],
        serde_json::json!([["naming_1", "3", "5"]])
    );
    let naturalness = tables
        .iter()
        .find(|t| t["id"] == "naturalness")
        .expect("categories");
    let all_row: Vec<u64> = naturalness["rows"][0]
        .as_array()
        .expect("row")
        .iter()
        .skip(1)
        .map(|c| c.as_str().and_then(|s| s.parse().ok()).expect("count"))
        .collect();
    assert_eq!(
        all_row.iter().sum::<u64>(),
        296,
        "categories of complete items only"
    );
    // the labelled dataset says the same: its votes, no category
    let dataset = c
        .get(app.url(&format!("/studies/{study}/export/dataset.jsonl")))
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("body");
    let row: serde_json::Value = dataset
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json line"))
        .find(|r| r["id"] == "naming_1")
        .expect("the item");
    assert_eq!(row["votes"], 3);
    assert!(row["category"].is_null(), "{row}");
    guard.drop_now(db).await;
}

on_both_stores!(results_stand_on_complete_items_only => results_stand_on_complete_items_only_sqlite, results_stand_on_complete_items_only_postgres);

/// A study's repair results and cross-entropies leave it as `import npr` and `import ce` read
/// them (`export --what npr|ce`, and the same bytes from the study page's downloads), and come
/// back: a study of the same items and votes that imports them reports exactly as the first.
async fn repair_results_and_cross_entropies_round_trip(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    natstudy_tests::reference_study_with_results(&db, "First")
        .await
        .expect("first");
    let second = reference_study(&db, "Second", true).await.expect("second");
    let dir = tempfile::tempdir().expect("dir");
    let path = |f: &str| dir.path().join(f).display().to_string();
    for (what, file) in [("npr", "npr_results.csv"), ("ce", "ce_scores.csv")] {
        let out = path(file);
        natstudy_tests::cli(
            &db.url,
            &["export", "--study", "First", "--what", what, "--out", &out],
        )
        .await
        .expect("export");
        natstudy_tests::cli(&db.url, &["import", what, "--study", "Second", &out])
            .await
            .expect("import");
    }
    let text = std::fs::read_to_string(path("npr_results.csv")).expect("npr");
    assert!(text.starts_with("tool,target,status\n"), "{text:.80}");
    let rows = text.lines().count() - 1;
    let reference = natstudy_tests::reference_dir().join("study-small/npr_results.csv");
    let want = std::fs::read_to_string(reference)
        .expect("reference")
        .lines()
        .count()
        - 1;
    assert_eq!(rows, want, "every result");
    let report = |name: &'static str| {
        let url = db.url.clone();
        let out = dir.path().join(name);
        async move {
            natstudy_tests::cli(
                &url,
                &[
                    "report",
                    "--study",
                    name,
                    "--out",
                    &out.display().to_string(),
                ],
            )
            .await
            .expect("report");
            let text = std::fs::read_to_string(out.join("report.json")).expect("report.json");
            serde_json::from_str::<serde_json::Value>(&text).expect("json")
        }
    };
    let (a, b) = (report("First").await, report("Second").await);
    assert!(
        a["robustness"].as_object().is_some_and(|r| !r.is_empty()),
        "{a}"
    );
    assert!(a["rnc"].as_object().is_some_and(|r| !r.is_empty()), "{a}");
    for key in ["robustness", "rnc", "counts", "fleiss_kappa"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // the study page's downloads are the same bytes
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let first = natstudy_core::store::studies::id_by_name(&db, "First")
        .await
        .expect("id");
    for file in ["npr_results.csv", "ce_scores.csv"] {
        let r = c
            .get(app.url(&format!("/studies/{first}/export/{file}")))
            .send()
            .await
            .expect("download");
        assert_eq!(r.status(), StatusCode::OK, "{file}");
        let got = r.text().await.expect("text");
        assert_eq!(
            got,
            std::fs::read_to_string(path(file)).expect("file"),
            "{file}"
        );
    }
    let _ = second;
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(repair_results_and_cross_entropies_round_trip => repair_results_and_cross_entropies_round_trip_sqlite, repair_results_and_cross_entropies_round_trip_postgres);

/// `survey.json` as the published package's `rq1.py` reads it (#70): the levels in the
/// published order, complete items only (`--all-items` for every one), each rater an `S<n>`
/// whose column (n − 1) mod 5 no other rater of the item has (an imported participant keeps
/// its number; another is numbered, the mapping beside the file), an untimed vote as `NaN`;
/// the file comes back through `import votes`. A study whose raters do not fit five columns
/// is refused with the items named, on the command line and as a download.
async fn survey_json_is_laid_out_as_rq1_reads_it(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let dir = tempfile::tempdir().expect("dir");
    let path = |f: &str| dir.path().join(f).display().to_string();
    let reference = natstudy_tests::reference_dir().join("study-small/survey.json");
    let text = std::fs::read_to_string(reference).expect("survey");
    let mut survey: serde_json::Value = serde_json::from_str(&text).expect("json");
    // naming 1 loses a vote; S7 is P7 (a code without a number); one vote has no time
    let naming = survey["naming"].as_object_mut().expect("naming");
    let first = naming["1"].as_object_mut().expect("item 1");
    let dropped = first.keys().next().cloned().expect("a rater");
    first.remove(&dropped);
    let mut moved = 0;
    for level in survey.as_object_mut().expect("levels").values_mut() {
        for votes in level.as_object_mut().expect("items").values_mut() {
            let votes = votes.as_object_mut().expect("votes");
            if let Some(v) = votes.remove("S7") {
                votes.insert("P7".into(), v);
                moved += 1;
            }
        }
    }
    assert!(moved > 0);
    survey["statement"]["1"]
        .as_object_mut()
        .and_then(|v| v.values_mut().next())
        .expect("a vote")["Time"] = serde_json::Value::Null;
    std::fs::write(path("in.json"), survey.to_string()).expect("write");
    reference_study(&db, "Src", false).await.expect("src");
    let cli = |args: Vec<String>| {
        let url = db.url.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            natstudy_tests::cli(&url, &args).await
        }
    };
    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    cli(words(&format!(
        "import votes --study Src {}",
        path("in.json")
    )))
    .await
    .expect("import");
    cli(words(&format!(
        "export --study Src --what survey --out {}",
        path("survey.json")
    )))
    .await
    .expect("export");
    let out = std::fs::read_to_string(path("survey.json")).expect("out");
    let at = |level: &str| out.find(&format!("\"{level}\"")).expect(level);
    assert!(at("naming") < at("expression") && at("expression") < at("statement"));
    assert_eq!(out.matches("NaN").count(), 1, "the untimed vote");
    let parsed: serde_json::Value =
        serde_json::from_str(&out.replace("NaN", "null")).expect("json");
    assert!(parsed["naming"].get("1").is_none(), "the incomplete item");
    let mut items = 0;
    for level in ["naming", "expression", "statement"] {
        for (n, votes) in parsed[level].as_object().expect("level") {
            let columns: std::collections::BTreeSet<usize> = votes
                .as_object()
                .expect("votes")
                .keys()
                .map(|s| {
                    let k: usize = s.strip_prefix('S').and_then(|k| k.parse().ok()).expect(s);
                    assert!((1..=10).contains(&k), "{s}");
                    (k - 1) % 5
                })
                .collect();
            assert_eq!(columns.len(), 5, "{level} {n}");
            items += 1;
        }
    }
    assert_eq!(items, 297 - 1);
    let mapping = std::fs::read_to_string(path("survey-participants.csv")).expect("mapping");
    assert!(
        mapping.starts_with("participant,code\nS1,S1@import\n"),
        "{mapping}"
    );
    assert!(mapping.contains("\nS7,P7@import\n"), "{mapping}");
    assert_eq!(mapping.lines().count(), 11);

    // back in: every complete item's votes, the untimed one untimed
    reference_study(&db, "Copy", false).await.expect("copy");
    cli(words(&format!(
        "import votes --study Copy {}",
        path("survey.json")
    )))
    .await
    .expect("import the export");
    let copy = natstudy_core::store::studies::id_by_name(&db, "Copy")
        .await
        .expect("id");
    let (all, timed): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COUNT(v.time_secs) FROM votes v JOIN items i ON i.id = v.item_id \
         WHERE i.study_id = $1",
    )
    .bind(copy)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!((all, timed), (296 * 5, 296 * 5 - 1));
    cli(words(&format!(
        "export --study Src --what survey --all-items --out {}",
        path("all.json")
    )))
    .await
    .expect("all items");
    let all: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(path("all.json"))
            .expect("all")
            .replace("NaN", "null"),
    )
    .expect("json");
    assert_eq!(all["naming"]["1"].as_object().map(|v| v.len()), Some(4));

    // raters that share a column: refused, the item named, by the CLI and the download
    let clash = r#"{"naming": {"1": {"S1": {"CR": 1, "CC": 1, "Time": 2}, "S6": {"CR": 1, "CC": 1, "Time": 2},
        "S2": {"CR": 1, "CC": 1, "Time": 2}, "S3": {"CR": 1, "CC": 1, "Time": 2}, "S4": {"CR": 1, "CC": 1, "Time": 2}}}}"#;
    std::fs::write(path("clash.json"), clash).expect("write");
    reference_study(&db, "Clash", false).await.expect("clash");
    cli(words(&format!(
        "import votes --study Clash {}",
        path("clash.json")
    )))
    .await
    .expect("import");
    let err = cli(words("export --study Clash --what survey"))
        .await
        .expect_err("no layout");
    let msg = format!("{err:#}");
    assert!(
        msg.contains("five columns") && msg.contains("naming_1") && msg.contains("--what votes"),
        "{msg}"
    );
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let id = |name: &'static str| {
        let db = db.clone();
        async move {
            natstudy_core::store::studies::id_by_name(&db, name)
                .await
                .expect("id")
        }
    };
    let r = c
        .get(app.url(&format!(
            "/studies/{}/export/survey.json",
            id("Clash").await
        )))
        .send()
        .await
        .expect("download");
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().await.expect("text").contains("naming_1"));
    for (file, want) in [
        ("survey.json", "survey.json"),
        ("survey-participants.csv", "survey-participants.csv"),
    ] {
        let r = c
            .get(app.url(&format!("/studies/{}/export/{file}", id("Src").await)))
            .send()
            .await
            .expect("download");
        assert_eq!(r.status(), StatusCode::OK, "{file}");
        assert_eq!(
            r.text().await.expect("text"),
            std::fs::read_to_string(path(want)).expect("file"),
            "{file}: the page's download is the command's file"
        );
    }
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(survey_json_is_laid_out_as_rq1_reads_it => survey_json_is_laid_out_as_rq1_reads_it_sqlite, survey_json_is_laid_out_as_rq1_reads_it_postgres);
