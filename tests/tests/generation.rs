//! Generating items and running background jobs, on SQLite and PostgreSQL: the study's bugs
//! come back as records, proposals continue the study's numbering and are added once, and a
//! scoring job records its progress and result where every instance can read it.

use natstudy_tests::{fresh_db, Store};

async fn proposals_and_jobs(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let r = natstudy_tests::reference_dir().join("study-small");
    let study = natstudy::store::studies::create(&db, None, "G", "")
        .await
        .expect("study");
    natstudy::service::import_items(
        &db,
        study,
        &r.join("bugs.jsonl"),
        &r.join("transformations.jsonl"),
    )
    .await
    .expect("items");

    let bugs = natstudy::store::generation::bugs(&db, study)
        .await
        .expect("bugs");
    assert_eq!(bugs.len(), 60);
    assert!(bugs
        .iter()
        .all(|b| b.file_source.is_some() && !b.buggy_lines.is_empty()));
    let (next, seen) = natstudy::store::generation::existing(&db, study)
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
    let statements = next[&natstudy::formats::Level::Statement];

    let (_, proposals) =
        natstudy::service::propose(&db, study, "ReverseIf,SwitchRelation", false, None)
            .await
            .expect("propose");
    assert!(proposals.len() >= 60, "{} proposals", proposals.len());
    let keys: Vec<String> = proposals
        .iter()
        .filter(|p| p.generated.record.operator == "ReverseIf")
        .map(|p| p.key.clone())
        .collect();
    let added = natstudy::service::add_proposals(
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
        natstudy::store::imports::Outcome::Imported { rows: keys.len() }
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
    let (_, again) = natstudy::service::propose(&db, study, "ReverseIf", false, None)
        .await
        .expect("propose again");
    assert!(again.is_empty());
    let err = natstudy::service::add_proposals(&db, study, None, "ReverseIf", false, None, &keys)
        .await
        .expect_err("stale keys");
    assert!(err.to_string().contains("no longer proposed"), "{err}");

    // a job: progress and result are stored
    let job = natstudy::store::jobs::create(&db, study, None, "score", "score with m.arpa", "{}")
        .await
        .expect("job");
    natstudy::store::jobs::progress(&db, job, 10, 40)
        .await
        .expect("progress");
    let jobs = natstudy::store::jobs::list(&db, study).await.expect("list");
    assert_eq!(
        (jobs[0].state.as_str(), jobs[0].done, jobs[0].total),
        ("running", 10, 40)
    );
    natstudy::store::jobs::finish(
        &db,
        job,
        natstudy::store::JobState::Done,
        "scored 40 methods",
    )
    .await
    .expect("finish");
    let jobs = natstudy::store::jobs::list(&db, study).await.expect("list");
    assert_eq!(
        (jobs[0].state.as_str(), jobs[0].message.as_str()),
        ("done", "scored 40 methods")
    );
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
