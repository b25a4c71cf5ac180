//! An acknowledged vote is never lost, not even when the server is killed (`kill -9`) while
//! participants vote as fast as they can: every vote the server answered 200 is in the
//! database afterwards, and a restarted server serves the same participants (SQLite and
//! PostgreSQL, the server run as a separate process).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use natstudy_tests::participants::{participant, state, try_vote};
use natstudy_tests::{fresh_db, on_both_stores, open_queue, reference_study, ServerProcess, Store};
use natstudy_vocab::ids::{ItemId, StudyId};
use reqwest::StatusCode;

/// (participant code, item) of every vote the server acknowledged.
type Acks = Arc<Mutex<Vec<(String, ItemId)>>>;

/// Votes as fast as the server answers until it goes away; records what it acknowledged.
async fn vote_until_killed(base: String, study: StudyId, c: reqwest::Client, acks: Acks) {
    let mut n = 0u32;
    loop {
        let Ok(st) = state(&base, &c, study).await else {
            return; // the server is gone
        };
        let code = st["code"].as_str().unwrap_or_default().to_owned();
        let rate = &st["step"]["Rate"];
        let (Some(item), Some(token)) = (rate["item"].as_i64(), rate["token"].as_str()) else {
            return; // nothing left to rate
        };
        n += 1;
        match try_vote(&base, &c, study, ItemId(item), token, &format!("vote {n}")).await {
            Ok(r) if r.status() == StatusCode::OK => {
                acks.lock().expect("acks").push((code, ItemId(item)));
            }
            Ok(_) => {}
            Err(_) => return, // no answer: not acknowledged
        }
    }
}

/// A thread of a process, from `/proc/PID/task/TID/stat`.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct Thread {
    name: String,
    /// The process's first thread.
    main: bool,
    nice: i32,
    /// CPU time so far (clock ticks, user and system).
    cpu: u64,
}

#[cfg(target_os = "linux")]
fn threads_of(pid: u32) -> Vec<Thread> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks") {
        let e = e.expect("task");
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue; // the thread ended
        };
        // `tid (name) state …`: the name may hold spaces, the fields after it do not
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            panic!("stat: {stat}");
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // fields from the third: utime is the 14th, stime the 15th, nice the 19th
        let num = |n: usize| fields[n - 3].parse::<i64>().expect("a number");
        out.push(Thread {
            name: stat[open + 1..close].to_owned(),
            main: e.file_name().to_string_lossy() == pid.to_string(),
            nice: num(19) as i32,
            cpu: (num(14) + num(15)) as u64,
        });
    }
    out
}

/// Checks that every runtime worker runs `steps` nice steps below the main thread; returns
/// the main thread's nice value.
#[cfg(target_os = "linux")]
fn assert_runtime_lowered(threads: &[Thread], steps: i32) -> i32 {
    let base = threads
        .iter()
        .find(|t| t.main)
        .expect("the main thread")
        .nice;
    let workers: Vec<_> = threads
        .iter()
        .filter(|t| t.name == "tokio-rt-worker")
        .collect();
    assert!(!workers.is_empty(), "threads: {threads:?}");
    assert!(
        workers.iter().all(|t| t.nice == (base + steps).min(19)),
        "{steps} steps: {threads:?}"
    );
    base
}

async fn acknowledged_votes_survive_kill_9(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = reference_study(&db, "Durable", false).await.expect("study");
    let (_, invite) = open_queue(&db, study, 1000).await.expect("queue");
    let url = guard.url().expect("url");
    let data = tempfile::tempdir().expect("data dir");
    let mut server = ServerProcess::start(
        data.path(),
        // 64 participants from one address: joins unthrottled
        &["--database-url", &url, "--join-burst", "0"],
    )
    .expect("server");

    let acks: Acks = Arc::default();
    let mut clients = Vec::new();
    for _ in 0..64 {
        clients.push(participant(&server.base, study, &invite).await);
    }
    let voters: Vec<_> = clients
        .into_iter()
        .map(|c| {
            tokio::spawn(vote_until_killed(
                server.base.clone(),
                study,
                c,
                acks.clone(),
            ))
        })
        .collect();
    // kill the server in the middle of the load, once it has acknowledged a good number
    let deadline = Instant::now() + Duration::from_secs(60);
    // (64 voters without pause: the group commit holds dozens of votes a transaction)
    while acks.lock().expect("acks").len() < 150 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // meanwhile, under load: the runtime's threads run below the process, and the thread that
    // commits the writes at its priority (`natstudy_core::priority`): on SQLite the busiest of
    // sqlx's connection threads, on PostgreSQL the group commit's own thread
    #[cfg(target_os = "linux")]
    {
        let threads = threads_of(server.child.id());
        let base = assert_runtime_lowered(&threads, natstudy_core::priority::REQUEST_NICE);
        let writer = match store {
            Store::Sqlite => threads
                .iter()
                .filter(|t| t.name.starts_with("sqlx-sqlite"))
                .max_by_key(|t| t.cpu),
            Store::Postgres => threads.iter().find(|t| t.name == "natstudy-writer"),
        };
        let writer = writer.expect("the writer's thread");
        assert_eq!(writer.nice, base, "threads: {threads:?}");
    }
    server.child.kill().expect("kill -9"); // SIGKILL: no shutdown, no flush
    server.child.wait().expect("reaped");
    for v in voters {
        v.await.expect("voter");
    }
    let acked = acks.lock().expect("acks").clone();
    assert!(
        acked.len() >= 150,
        "only {} votes before the kill",
        acked.len()
    );

    // every acknowledged vote is in the database
    for (code, item) in &acked {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT v.id FROM votes v JOIN annotators a ON a.id = v.annotator_id \
             WHERE a.study_id = $1 AND a.code = $2 AND v.item_id = $3",
        )
        .bind(study)
        .bind(code)
        .bind(*item)
        .fetch_optional(&db.pool)
        .await
        .expect("query");
        assert!(
            found.is_some(),
            "acknowledged vote of {code} on item {item} lost"
        );
    }
    let stored: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM votes v JOIN items i ON i.id = v.item_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    // a vote can be stored and its answer lost with the server: never the other way round
    assert!(
        stored >= acked.len() as i64,
        "{stored} stored < {} acknowledged",
        acked.len()
    );

    // and no item has more than k
    let k = natstudy_core::store::assign::ratings_per_item(&db, study)
        .await
        .expect("k");
    for (item, n) in natstudy_core::store::assign::completed_per_item(&db, study)
        .await
        .expect("counts")
    {
        assert!(n <= k, "item {item} has {n} > {k} ratings");
    }

    // a restarted server takes new votes on the same database
    let server = ServerProcess::start(data.path(), &["--database-url", &url]).expect("restart");
    let c = participant(&server.base, study, &invite).await;
    let st = state(&server.base, &c, study).await.expect("state");
    let rate = &st["step"]["Rate"];
    let item = ItemId(rate["item"].as_i64().expect("an item"));
    let r = try_vote(
        &server.base,
        &c,
        study,
        item,
        rate["token"].as_str().expect("token"),
        "after restart",
    )
    .await
    .expect("answered");
    assert_eq!(r.status(), StatusCode::OK);
    drop(server);
    guard.drop_now(db).await;
}

on_both_stores!(acknowledged_votes_survive_kill_9 => acknowledged_votes_survive_kill_9_sqlite, acknowledged_votes_survive_kill_9_postgres);

/// How far below the process the runtime's threads run is a setting (`--request-nice`): 0
/// runs them at its priority.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_request_threads_priority_is_a_setting() {
    for steps in [0, 3] {
        let data = tempfile::tempdir().expect("data dir");
        let server = ServerProcess::start(data.path(), &["--request-nice", &steps.to_string()])
            .expect("server");
        assert_runtime_lowered(&threads_of(server.child.id()), steps);
    }
}
