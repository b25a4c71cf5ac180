//! Generating items and running background jobs, on SQLite and PostgreSQL: the study's bugs
//! come back as records, proposals continue the study's numbering and are added once, and a
//! scoring job records its progress and result where every instance can read it, its progress
//! writes never holding up its work.

use natstudy_tests::{fresh_db, read_jsonl, Store};

async fn proposals_and_jobs(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let r = natstudy_tests::reference_dir().join("study-small");
    let study = natstudy_core::store::studies::create(&db, None, "G", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items(
        &db,
        study,
        &r.join("bugs.jsonl"),
        &r.join("transformations.jsonl"),
    )
    .await
    .expect("items");

    let bugs = natstudy_core::store::generation::bugs(&db, study)
        .await
        .expect("bugs");
    assert_eq!(bugs.len(), 60);
    assert!(bugs
        .iter()
        .all(|b| b.file_source.is_some() && !b.buggy_lines.is_empty()));
    let (next, seen) = natstudy_core::store::generation::existing(&db, study)
        .await
        .expect("existing");
    // the reference repeats some sources: distinct (bug, source) pairs
    let distinct: std::collections::HashSet<(String, String)> =
        std::fs::read_to_string(r.join("transformations.jsonl"))
            .expect("read")
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("json");
                (
                    v["bug_id"].as_str().unwrap_or("").to_owned(),
                    v["source"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
    assert_eq!(seen, distinct);
    let statements = next[&natstudy_engine::formats::Level::Statement];

    let (_, proposals) = natstudy_core::service::generation::propose(
        &db,
        study,
        "ReverseIf,SwitchRelation",
        false,
        None,
    )
    .await
    .expect("propose");
    assert!(proposals.len() >= 60, "{} proposals", proposals.len());
    let keys: Vec<String> = proposals
        .iter()
        .filter(|p| p.generated.record.operator == "ReverseIf")
        .map(|p| p.key.clone())
        .collect();
    let added = natstudy_core::service::generation::add_proposals(
        &db,
        study,
        None,
        "ReverseIf,SwitchRelation",
        false,
        None,
        &keys,
    )
    .await
    .expect("add");
    assert_eq!(
        added,
        natstudy_core::store::imports::Outcome::Imported { rows: keys.len() }
    );
    // numbered after the study's statement items, in order
    let op: String =
        sqlx::query_scalar("SELECT operator FROM items WHERE study_id = $1 AND item_key = $2")
            .bind(study)
            .bind(format!("statement_{statements}"))
            .fetch_one(&db.pool)
            .await
            .expect("the first added item");
    assert_eq!(op, "ReverseIf");
    // added ones are no longer proposed; adding them again is refused
    let (_, again) =
        natstudy_core::service::generation::propose(&db, study, "ReverseIf", false, None)
            .await
            .expect("propose again");
    assert!(again.is_empty());
    let err = natstudy_core::service::generation::add_proposals(
        &db,
        study,
        None,
        "ReverseIf",
        false,
        None,
        &keys,
    )
    .await
    .expect_err("stale keys");
    assert!(err.to_string().contains("no longer proposed"), "{err}");

    // a job: progress and result are stored
    let job = natstudy_core::store::jobs::create(
        &db,
        study,
        None,
        natstudy_core::store::JobKind::Score,
        "score with m.arpa",
        "{}",
    )
    .await
    .expect("job");
    // its model loading: 5 GB of 13.5 GB read, no step yet
    let load = natstudy_core::store::jobs::Progress {
        load_read: 4_987_654_321,
        load_of: 13_476_839_424,
        ..Default::default()
    };
    natstudy_core::store::jobs::progress(&db, job, load)
        .await
        .expect("progress");
    let jobs = natstudy_core::store::jobs::list(&db, study)
        .await
        .expect("list");
    assert_eq!((jobs[0].state.as_str(), jobs[0].total), ("running", 0));
    assert_eq!(
        (jobs[0].load_read, jobs[0].load_of),
        (4_987_654_321, 13_476_839_424)
    );
    let pace = natstudy_core::store::jobs::Progress {
        done: 10,
        total: 40,
        tokens: 5_000,
        counting_ms: 20_000,
        eta_ms: Some(60_000),
        load_read: 13_476_839_424,
        load_of: 13_476_839_424,
    };
    natstudy_core::store::jobs::progress(&db, job, pace)
        .await
        .expect("progress");
    let jobs = natstudy_core::store::jobs::list(&db, study)
        .await
        .expect("list");
    assert_eq!(
        (jobs[0].state.as_str(), jobs[0].done, jobs[0].total),
        ("running", 10, 40)
    );
    assert_eq!(
        (jobs[0].tokens, jobs[0].counting_ms, jobs[0].eta_ms),
        (5_000, 20_000, Some(60_000))
    );
    natstudy_core::store::jobs::finish(
        &db,
        job,
        natstudy_core::store::JobState::Done,
        "scored 40 methods",
    )
    .await
    .expect("finish");
    let jobs = natstudy_core::store::jobs::list(&db, study)
        .await
        .expect("list");
    assert_eq!(
        (jobs[0].state.as_str(), jobs[0].message.as_str()),
        ("done", "scored 40 methods")
    );
    // an ended job expects nothing more; its pace stays
    assert_eq!((jobs[0].tokens, jobs[0].eta_ms), (5_000, None));
    guard.drop_now(db).await;
}

#[tokio::test]
async fn proposals_and_jobs_sqlite() {
    proposals_and_jobs(Store::Sqlite).await;
}

#[tokio::test]
async fn proposals_and_jobs_postgres() {
    proposals_and_jobs(Store::Postgres).await;
}

/// A job's work that holds a write transaction across several progress ticks — SQLite's one
/// write connection, and on PostgreSQL the lock on the job's own row — ends when its
/// transaction does: the progress writes wait beside it, then land. (Written from the work's
/// own task, each tick's write waited with the work suspended: on SQLite the pool's 30 s
/// timeout at every tick, a scoring job stalled for minutes; on PostgreSQL, behind the work's
/// own row lock, for ever.) A finished job then reads n of n; a failed one keeps its count.
async fn progress_beside_the_work(store: Store) {
    use natstudy_core::service::jobs::{
        with_progress, with_progress_to_the_end, Counters, JobKind, PROGRESS_EVERY,
    };
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_core::store::studies::create(&db, None, "S", "")
        .await
        .expect("study");
    let jobs = natstudy_core::store::jobs::list;
    let job = natstudy_core::store::jobs::create(&db, study, None, JobKind::Score, "score", "{}")
        .await
        .expect("job");
    let counters = Counters::default();
    counters.total.store(10, Ordering::Relaxed);
    let work = async {
        let mut tx = db.begin_write(study).await?;
        sqlx::query("UPDATE jobs SET label = $1 WHERE id = $2")
            .bind("scoring")
            .bind(job)
            .execute(&mut *tx)
            .await?;
        counters.done.store(4, Ordering::Relaxed);
        tokio::time::sleep(PROGRESS_EVERY * 4).await;
        tx.commit().await
    };
    tokio::time::timeout(
        Duration::from_secs(10),
        with_progress(&db, job, &counters, work),
    )
    .await
    .expect("the work ends with its transaction")
    .expect("work");
    let row = &jobs(&db, study).await.expect("jobs")[0];
    assert_eq!(
        (row.label.as_str(), row.done, row.total),
        ("scoring", 4, 10)
    );
    // the work's last step after the last tick: a success reads all done
    let work = async {
        counters.done.store(9, Ordering::Relaxed);
        Ok::<_, ()>(10)
    };
    let n = with_progress_to_the_end(&db, job, &counters, work, |n| *n).await;
    assert_eq!(n, Ok(10));
    let row = &jobs(&db, study).await.expect("jobs")[0];
    assert_eq!((row.done, row.total), (10, 10));
    // a failure does not
    counters.done.store(3, Ordering::Relaxed);
    let work = async {
        tokio::time::sleep(PROGRESS_EVERY * 2).await;
        Err::<u64, _>("failed")
    };
    let n = with_progress_to_the_end(&db, job, &counters, work, |n| *n).await;
    assert_eq!(n, Err("failed"));
    let row = &jobs(&db, study).await.expect("jobs")[0];
    assert_eq!((row.done, row.total), (3, 10));
    guard.drop_now(db).await;
}

#[tokio::test]
async fn progress_beside_the_work_sqlite() {
    progress_beside_the_work(Store::Sqlite).await;
}

#[tokio::test]
async fn progress_beside_the_work_postgres() {
    progress_beside_the_work(Store::Postgres).await;
}

/// Stopping a job. A queued job stops at once and its work never runs, even once a slot
/// frees; a running one is flagged, its runner reads the flag with its next progress write and
/// the job ends `stopped`. Over HTTP only the study's staff may stop it, an ended job is a
/// conflict, and a stopped job runs again.
async fn stopping_jobs(store: Store) {
    use natstudy_core::service::jobs::{
        stop, with_progress, Counters, JobKind, JobLimits, JobRunner, PROGRESS_EVERY,
    };
    use natstudy_core::store::JobState;
    use natstudy_tests::{Role, TestApp};
    use reqwest::StatusCode;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    const PW: &str = "a-long-password";
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let rita = app
        .add_user("rita", PW, Role::Researcher)
        .await
        .expect("rita");
    app.add_user("sam", PW, Role::Researcher)
        .await
        .expect("sam");
    let study = natstudy_core::store::studies::create_owned(&db, None, Some(rita), "A", "")
        .await
        .expect("study");
    let row = |job| {
        let db = db.clone();
        async move {
            natstudy_core::store::jobs::list(&db, study)
                .await
                .expect("jobs")
                .into_iter()
                .find(|j| j.id == job)
                .expect("job")
        }
    };
    let params = r#"{"model":"ref.arpa","log10":false}"#;
    let new_job =
        || natstudy_core::store::jobs::create(&db, study, None, JobKind::Score, "score", params);

    // queued behind a held slot: stopped at once, its work never runs
    let runner = JobRunner::new(
        db.clone(),
        JobLimits {
            concurrent: 1,
            ..Default::default()
        },
    );
    let held = runner
        .slot(study, Duration::from_secs(1))
        .await
        .expect("slot");
    let queued = new_job().await.expect("job");
    let ran = Arc::new(AtomicBool::new(false));
    runner.spawn(queued, study, {
        let ran = ran.clone();
        async move { ran.store(true, Ordering::SeqCst) }
    });
    assert_eq!(
        stop(&db, study, queued).await.expect("stop"),
        JobState::Stopped
    );
    let j = row(queued).await;
    assert_eq!(j.state, JobState::Stopped);
    assert!(j.message.contains("before it started"), "{}", j.message);
    drop(held);
    tokio::time::sleep(PROGRESS_EVERY * 2).await;
    assert!(
        !ran.load(Ordering::SeqCst),
        "a stopped job's work never runs"
    );
    assert_eq!(row(queued).await.state, JobState::Stopped);

    // running: the stop asked over HTTP reaches the work through its progress writes
    let running = new_job().await.expect("job");
    assert!(natstudy_core::store::jobs::start(&db, running)
        .await
        .expect("start"));
    let counters = Counters::default();
    counters.total.store(1_000, Ordering::Relaxed);
    let work = async {
        while !counters.stopping() {
            counters.done.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err::<(), _>("stopped")
    };
    let post = |c: &reqwest::Client, job: natstudy_vocab::ids::JobId, what: &str| {
        c.post(app.url(&format!("/api/studies/jobs/{what}")))
            .form(&[("study", study.to_string()), ("job", job.to_string())])
            .send()
    };
    let sam = app.signed_in("sam", PW).await.expect("sam");
    let rita_c = app.signed_in("rita", PW).await.expect("rita");
    let asks = async {
        tokio::time::sleep(PROGRESS_EVERY * 2).await;
        // another study's researcher may not; the study's own may
        let r = post(&sam, running, "stop").await.expect("post");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(!row(running).await.stop_requested);
        let r = post(&rita_c, running, "stop").await.expect("post");
        assert_eq!(r.status(), StatusCode::OK);
        assert!(row(running).await.stop_requested);
    };
    let (ended, ()) = tokio::time::timeout(
        Duration::from_secs(20),
        futures_util::future::join(with_progress(&db, running, &counters, work), asks),
    )
    .await
    .expect("the work sees the stop");
    assert_eq!(ended, Err("stopped"));
    let (state, message) = counters.ended_by("never".into());
    assert_eq!(state, JobState::Stopped);
    assert!(message.contains("nothing stored"), "{message}");
    natstudy_core::store::jobs::finish(&db, running, state, &message)
        .await
        .expect("finish");
    // an ended job does not stop again; another study's job is not found
    let r = post(&rita_c, running, "stop").await.expect("post");
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let other = natstudy_core::store::studies::create(&db, None, "B", "")
        .await
        .expect("B");
    assert!(matches!(
        stop(&db, other, queued).await,
        Err(natstudy_core::service::ServiceError::NotFound(_))
    ));
    // and a stopped job runs again, to its end
    std::fs::copy(
        natstudy_tests::reference_dir()
            .join("lm")
            .join("model.arpa"),
        app.models_dir.join("ref.arpa"),
    )
    .expect("model");
    let again: natstudy_vocab::ids::JobId = post(&rita_c, running, "retry")
        .await
        .expect("retry")
        .json()
        .await
        .expect("job id");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while row(again).await.state != JobState::Done {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            row(again).await.message
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // an n-gram scoring told to stop stores nothing either
    let r = natstudy_tests::reference_study(&db, "R", false)
        .await
        .expect("study");
    let model = natstudy_core::service::models::load_model(&app.models_dir.join("ref.arpa"))
        .await
        .expect("model");
    let asked = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = asked.clone();
    let stopped = natstudy_core::service::scoring::score_study(
        &db,
        r,
        None,
        Arc::new(model),
        "ngram-stopped",
        Default::default(),
        false,
        |_| {},
        Arc::new(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            false
        }),
    )
    .await;
    let stopped = stopped.map(|s| s.methods);
    natstudy_tests::assert_stopped_storing_nothing(&db, r, "ngram-stopped", &stopped).await;
    // each thread stops after the method it is on, not at the end of the study's methods
    let methods = natstudy_core::store::analysis::sources(&db, r)
        .await
        .expect("sources");
    let asked = asked.load(Ordering::Relaxed);
    assert!(
        asked > 0 && asked < methods.len() as u64 / 4,
        "{asked} of {}",
        methods.len()
    );
    // a job asked to stop while its model loaded scores nothing once loaded
    let loading = natstudy_core::store::jobs::create(&db, r, None, JobKind::Score, "score", params)
        .await
        .expect("job");
    assert!(natstudy_core::store::jobs::start(&db, loading)
        .await
        .expect("start"));
    assert_eq!(
        stop(&db, r, loading).await.expect("stop"),
        JobState::Running
    );
    let models = Arc::new(natstudy_core::service::models::ModelCache::new(
        app.models_dir.clone(),
        1,
    ));
    natstudy_core::service::scoring::run_scoring(
        db.clone(),
        loading,
        r,
        None,
        (models, "ref.arpa".into()),
        false,
    )
    .await;
    let j = natstudy_core::store::jobs::list(&db, r)
        .await
        .expect("jobs")
        .into_iter()
        .find(|j| j.id == loading)
        .expect("job");
    assert_eq!(j.state, JobState::Stopped, "{}", j.message);
    assert!(j.message.contains("at 0 of 0"), "{}", j.message);
    let none = natstudy_core::service::scoring::ce_of_model(&db, r, "ref")
        .await
        .expect("rows");
    assert!(none.is_empty());
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn stopping_jobs_sqlite() {
    stopping_jobs(Store::Sqlite).await;
}

#[tokio::test]
async fn stopping_jobs_postgres() {
    stopping_jobs(Store::Postgres).await;
}

/// The study's transformations as `export --what items` writes them.
async fn exported_items(url: &str, study: &str, dir: &std::path::Path) -> Vec<serde_json::Value> {
    let out = dir.join(study);
    let out_s = out.display().to_string();
    natstudy_tests::cli(
        url,
        &[
            "export", "--study", study, "--what", "items", "--out", &out_s,
        ],
    )
    .await
    .expect("export");
    read_jsonl(&out.join("transformations.jsonl"))
}

/// Line data are data (#16): the engine's transformations of the reference bugs, imported,
/// come back in the items export with the line map the engine reported, and every buggy line
/// of the transformed method is one the transformation left as it was or wrote in place of a
/// buggy line; a bug's fix follows a transformation that misses its lines, and does not follow
/// one that rewrites them.
#[tokio::test]
async fn line_maps_and_the_fixed_side_are_stored_and_exported() {
    use natstudy_tests::cli;
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let url = db.url.clone();
    let r = natstudy_tests::reference_dir().join("study-small");
    let dir = tempfile::tempdir().expect("dir");
    let generated = dir.path().join("generated.jsonl");
    let p = |x: &std::path::Path| x.display().to_string();
    cli(
        &url,
        &[
            "transform",
            "--bugs",
            &p(&r.join("bugs.jsonl")),
            "--out",
            &p(&generated),
        ],
    )
    .await
    .expect("transform");
    cli(&url, &["study", "create", "lines"])
        .await
        .expect("study");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "lines",
            &p(&r.join("bugs.jsonl")),
            &p(&generated),
        ],
    )
    .await
    .expect("import");
    let engine: std::collections::HashMap<String, serde_json::Value> = read_jsonl(&generated)
        .into_iter()
        .map(|v| (v["id"].as_str().unwrap_or("").to_owned(), v))
        .collect();
    let bugs: std::collections::HashMap<String, serde_json::Value> =
        read_jsonl(&r.join("bugs.jsonl"))
            .into_iter()
            .map(|v| (v["bug_id"].as_str().unwrap_or("").to_owned(), v))
            .collect();
    let exported = exported_items(&url, "lines", dir.path()).await;
    assert!(exported.len() > 100, "{} items", exported.len());
    for item in &exported {
        let id = item["id"].as_str().expect("id");
        let g = &engine[id];
        assert_eq!(
            item["line_map"], g["line_map"],
            "{id}: the engine's line map"
        );
        assert_eq!(item["touches_buggy"], g["touches_buggy"], "{id}");
        assert_eq!(
            item["touches_buggy"], true,
            "{id}: only buggy-line applications by default"
        );
        // each transformed buggy line is an unchanged buggy line or one written in its place
        let bug = &bugs[item["bug_id"].as_str().expect("bug")];
        let original: Vec<&str> = bug["source"].as_str().expect("src").lines().collect();
        let buggy: Vec<u64> = bug["buggy_lines"]
            .as_array()
            .expect("lines")
            .iter()
            .filter_map(|v| v.as_u64())
            .collect();
        let transformed: Vec<&str> = item["source"].as_str().expect("src").lines().collect();
        let changed: std::collections::HashSet<u64> = item["line_map"]
            .as_array()
            .expect("map")
            .iter()
            .flat_map(|h| h["transformed"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_u64())
            .collect();
        let lines = item["buggy_lines"].as_array().expect("buggy lines");
        assert!(!lines.is_empty(), "{id}");
        for l in lines.iter().filter_map(|v| v.as_u64()) {
            assert!(l >= 1 && l as usize <= transformed.len(), "{id}: line {l}");
            let text = transformed[l as usize - 1];
            assert!(
                changed.contains(&l)
                    || buggy
                        .iter()
                        .any(|b| original.get(*b as usize - 1) == Some(&text)),
                "{id}: line {l} ({text:?}) is neither rewritten nor a buggy line"
            );
        }
    }
    // the fixed side: a fix on the last line follows a change of the first, not one of its own line
    let bug = r#"{"bug_id": "F-1", "project": "P", "file": "F.java", "method": "f", "source": "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y - z;\n}\n", "fixed_source": "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y + z;\n}\n", "buggy_lines": [4]}"#;
    let item = |id: &str, src: &str| {
        serde_json::json!({"id": id, "bug_id": "F-1", "operator": "SwitchEqualExp", "level": "expression", "source": src, "summary": "s"}).to_string()
    };
    let items = [
        item(
            "expression_1",
            "int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y - z;\n}\n",
        ),
        item(
            "expression_2",
            "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return -z + y;\n}\n",
        ),
    ]
    .join("\n");
    let study = natstudy_core::store::studies::create(&db, None, "fixed", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(
        &db,
        study,
        None,
        ("bugs.jsonl", bug),
        ("t.jsonl", &items),
    )
    .await
    .expect("items");
    let exported = exported_items(&url, "fixed", dir.path()).await;
    assert_eq!(
        exported[0]["fixed_source"],
        "int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y + z;\n}\n"
    );
    assert!(
        exported[1].get("fixed_source").is_none(),
        "the fix and the change clash"
    );
    assert_eq!(exported[1]["buggy_lines"], serde_json::json!([4]));
    assert_eq!(exported[0]["touches_buggy"], false);
    guard.drop_now(db).await;
}
