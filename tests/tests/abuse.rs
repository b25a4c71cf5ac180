//! A public study under abuse: each attack of the "safe to run a public study" issue,
//! reproduced against a real server (SQLite and PostgreSQL where a database is involved) and
//! shown to be harmless now.

use std::time::{Duration, Instant};

use natstudy::web::limits::ClientIpHeader;
use natstudy_core::store::{assign, JobState};
use natstudy_tests::participants::{participant, rate_step, vote};
use natstudy_tests::{
    cli, fresh_db, on_both_stores, open_queue, reference_dir, Role, ServerProcess, Store, TestApp,
};
use natstudy_vocab::ids::{BatchId, JobId, StudyId};
use reqwest::StatusCode;

const PW: &str = "a-long-password";

/// The tests that load the machine and time a visitor meanwhile (the floods, the trickled
/// bodies, the preview of a long method) run one at a time: each measures its own load, not
/// another's.
static LOADED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn study_small(file: &str) -> std::path::PathBuf {
    reference_dir().join("study-small").join(file)
}

/// A study with the reference items (and optionally its votes), a dynamic batch and an invite.
async fn reference_study(
    db: &natstudy_core::service::Db,
    with_votes: bool,
) -> (StudyId, BatchId, String) {
    let study = natstudy_tests::reference_study(db, "A", with_votes)
        .await
        .expect("study");
    let (batch, token) = open_queue(db, study, 1000).await.expect("queue");
    (study, batch, token)
}

async fn count(db: &natstudy_core::service::Db, sql: &str) -> i64 {
    use sqlx::Row;
    sqlx::query(sql)
        .fetch_one(&db.pool)
        .await
        .expect(sql)
        .try_get(0)
        .expect("count")
}

// ---------------------------------------------------------------------------------------------
// 1. A 30-byte model that claims a trillion unigrams

#[tokio::test]
async fn a_model_bomb_leaves_the_server_answering() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| c.max_upload_bytes = 64 << 10)
        .await
        .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let (study, _, _) = reference_study(&db, false).await;
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let upload = |name: &str, bytes: Vec<u8>| app.upload_model(&c, study, name, bytes);
    let bomb = b"\\data\\\nngram 1=1000000000000\n".to_vec();
    let r = upload("bomb.arpa", bomb.clone()).await.expect("upload");
    assert!(r.status().is_redirection(), "stored: {}", r.status());
    // the same name again never replaces it
    let r = upload("bomb.arpa", b"\\data\\\n".to_vec())
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_eq!(
        std::fs::read(app.models_dir.join("bomb.arpa")).expect("kept"),
        bomb
    );
    // not a model, and over the upload limit: refused, nothing left behind
    let r = upload("page.arpa", b"<html></html>".to_vec())
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let r = upload("big.arpa", vec![b' '; 200 << 10])
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let left: Vec<String> = std::fs::read_dir(&app.models_dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(left, ["bomb.arpa"], "no temporary files stay");

    // scoring with the bomb fails as a job, and the server goes on answering
    let job: JobId = c
        .post(app.url("/api/studies/score"))
        .form(&[("study", study.to_string()), ("model", "bomb.arpa".into())])
        .send()
        .await
        .expect("score")
        .json()
        .await
        .expect("job id");
    let deadline = Instant::now() + Duration::from_secs(30);
    let message = loop {
        let jobs = natstudy_core::store::jobs::list(&db, study)
            .await
            .expect("jobs");
        let j = jobs.iter().find(|j| j.id == job).expect("job");
        if j.state == JobState::Failed {
            break j.message.clone();
        }
        assert!(Instant::now() < deadline, "job never failed: {j:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(message.contains("declared 1000000000000"), "{message}");
    let me: serde_json::Value = c
        .post(app.url("/api/whoami"))
        .send()
        .await
        .expect("server still answers")
        .json()
        .await
        .expect("json");
    assert_eq!(me["username"], "ada");
    drop(app);
    guard.drop_now(db).await;
}

// ---------------------------------------------------------------------------------------------
// 2. A flood of wrong passwords

/// A `natstudy serve` process (with `args`) over a fresh data directory holding one admin
/// account; the directory lives as long as the first value.
async fn served_with_an_admin(args: &[&str]) -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().expect("dir");
    let url = natstudy_core::service::Db::sqlite_url_in(dir.path()).expect("url");
    let db = natstudy_core::service::Db::connect(&url).await.expect("db");
    natstudy_core::service::accounts::add_user(&db, None, "admin", PW, Role::Admin)
        .await
        .expect("admin");
    db.close().await;
    let server = ServerProcess::start(dir.path(), args).expect("server");
    (dir, server)
}

#[tokio::test]
async fn a_login_flood_is_throttled_and_memory_stays_flat() {
    let _alone = LOADED.lock().await;
    let (_dir, server) = served_with_an_admin(&[]).await;
    let client = reqwest::Client::new();
    let started = Instant::now();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(200));
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let (client, gate, url) = (client.clone(), gate.clone(), server.url("/api/login"));
        tasks.push(tokio::spawn(async move {
            let _p = gate.acquire().await.expect("gate");
            let r = client
                .post(url)
                .form(&[("username", "admin"), ("password", &format!("guess-{i}"))])
                .send()
                .await
                .expect("answered");
            let retry = r.headers().get("retry-after").is_some();
            (r.status(), retry)
        }));
    }
    let (mut refused, mut throttled) = (0, 0);
    for t in tasks {
        let (status, retry) = t.await.expect("task");
        match status {
            StatusCode::UNAUTHORIZED => refused += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(retry, "429 carries Retry-After");
                throttled += 1
            }
            other => panic!("unexpected {other}"),
        }
    }
    let peak_mib = server.peak_rss_kib().expect("rss") / 1024;
    eprintln!(
        "login flood: 1000 attempts at 200 parallel in {:.1} s: {refused} answered 401, {throttled} answered 429; server peak RSS {peak_mib} MiB",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(refused + throttled, 1000, "every attempt answered");
    assert!(
        throttled >= 900,
        "guessing is throttled: {throttled} of 1000"
    );
    assert!(refused <= 30, "at most a burst is verified: {refused}");
    assert!(peak_mib < 300, "peak RSS {peak_mib} MiB");
    // the right password is also held back while the flood's window lasts
    let r = client
        .post(server.url("/api/login"))
        .form(&[("username", "admin"), ("password", PW)])
        .send()
        .await
        .expect("login");
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// The same flood from 200 addresses at once (behind a proxy that appends them), each guessing
/// another name, so no throttle holds them back: every attempt is a hash. The hashes' working
/// memory is a few kept buffers (one per core), so two such floods leave the server's peak
/// memory where one left it; a legitimate visitor is answered within a second throughout.
#[tokio::test]
async fn a_login_flood_from_many_addresses_keeps_memory_bounded() {
    let _alone = LOADED.lock().await;
    let (_dir, server) = served_with_an_admin(&["--client-ip-header", "x-forwarded-for"]).await;
    let client = reqwest::Client::new();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // a legitimate visitor, all along
    let watcher = {
        let (client, url, stop) = (client.clone(), server.url("/login"), stop.clone());
        tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = Instant::now();
                let r = client
                    .get(&url)
                    .header("x-forwarded-for", "192.0.2.1")
                    .send()
                    .await
                    .expect("answered");
                assert!(r.status().is_success(), "{}", r.status());
                slowest = slowest.max(t.elapsed());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            slowest
        })
    };
    let mut peaks = Vec::new();
    let started = Instant::now();
    for round in 0..2 {
        let mut tasks = Vec::new();
        for i in 0..200u32 {
            let (client, url) = (client.clone(), server.url("/api/login"));
            tasks.push(tokio::spawn(async move {
                client
                    .post(url)
                    .header(
                        "x-forwarded-for",
                        format!("10.{round}.{}.{}", i / 250, i % 250 + 1),
                    )
                    .form(&[
                        ("username", format!("nobody-{round}-{i}")),
                        ("password", "a-guess-of-a-password".into()),
                    ])
                    .send()
                    .await
                    .expect("answered")
                    .status()
            }));
        }
        for t in tasks {
            let status = t.await.expect("task");
            assert!(
                status == StatusCode::UNAUTHORIZED || status == StatusCode::TOO_MANY_REQUESTS,
                "{status}"
            );
        }
        peaks.push(server.peak_rss_kib().expect("rss") / 1024);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let slowest = watcher.await.expect("watcher");
    eprintln!(
        "login flood from 200 addresses, twice, in {:.1} s: server peak RSS {} then {} MiB; slowest page for a visitor {} ms",
        started.elapsed().as_secs_f64(),
        peaks[0],
        peaks[1],
        slowest.as_millis()
    );
    assert!(peaks[1] < 300, "peak RSS {peaks:?} MiB");
    assert!(
        peaks[1] <= peaks[0] + 20,
        "a second flood does not grow the peak: {peaks:?} MiB"
    );
    assert!(
        slowest < Duration::from_secs(1),
        "a visitor waited {slowest:?}"
    );
}

/// Joins through an invite link are counted per client address (the trusted proxy's header
/// here): past the burst a client gets 429 with Retry-After and a reason, a wrong token counts
/// as a join (guessing is as slow), another address joins as before, and a refused join leaves
/// no participant behind.
#[tokio::test]
async fn joins_are_throttled_per_client() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (study, _, token) = reference_study(&db, false).await;
    let app = TestApp::start_with(db.clone(), |c| {
        // two proxies: the client's address is the second entry from the right
        c.client_ip_header = Some(ClientIpHeader::new("x-forwarded-for", 2));
        c.joins.per_ip_burst = 3;
        c.joins.per_ip_refill = Duration::from_secs(60);
    })
    .await
    .expect("app");
    let join = |from: &'static str, token: String| {
        let (c, url) = (app.client(), app.url("/api/join"));
        async move {
            c.post(url)
                .header("x-forwarded-for", format!("{from}, 10.0.0.254"))
                .form(&[("token", token)])
                .send()
                .await
                .expect("answered")
        }
    };
    for i in 0..3 {
        let r = join("203.0.113.7", token.clone()).await;
        assert!(r.status().is_success(), "join {i}: {}", r.status());
    }
    let r = join("203.0.113.7", token.clone()).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let body = r.text().await.expect("body");
    assert!(body.contains("try again"), "{body}");
    let r = join("203.0.113.7", "not-a-token".into()).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS, "a guess counts");
    let r = join("198.51.100.1", token.clone()).await;
    assert!(r.status().is_success(), "another client: {}", r.status());
    let joined = count(
        &db,
        &format!(
            "SELECT COUNT(*) FROM annotators WHERE study_id = {}",
            study.0
        ),
    )
    .await;
    assert_eq!(
        joined, 4,
        "three from the first client, one from the second"
    );
    drop(app);
    guard.drop_now(db).await;
}

/// Joins that answer nothing count against their address: with three standing unanswered, the
/// address's next join is refused (429); once one of them answers, one more may join.
async fn unanswered_joins_count_against_their_address(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _, token) = reference_study(&db, false).await;
    let app = TestApp::start_with(db.clone(), |c| c.joins.unanswered = 3)
        .await
        .expect("app");
    let join = || {
        let (c, url, token) = (app.client(), app.url("/api/join"), token.clone());
        async move {
            c.post(url)
                .form(&[("token", token)])
                .send()
                .await
                .expect("answered")
                .status()
        }
    };
    let first = participant(&app.base, study, &token).await;
    for _ in 0..2 {
        assert!(join().await.is_success());
    }
    assert_eq!(
        join().await,
        StatusCode::TOO_MANY_REQUESTS,
        "three stand unanswered"
    );
    let (item, submit) = rate_step(&app.base, &first, study).await.expect("an item");
    let r = vote(&app.base, &first, study, item, &submit, "").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(join().await.is_success(), "one answered: room for one more");
    assert_eq!(join().await, StatusCode::TOO_MANY_REQUESTS);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(unanswered_joins_count_against_their_address =>
    unanswered_joins_count_against_their_address_sqlite,
    unanswered_joins_count_against_their_address_postgres);

/// Behind one trusted proxy that appends to `X-Forwarded-For` (nginx's
/// `$proxy_add_x_forwarded_for`), a client that writes a new address of its own at the header's
/// left end each time is still one client: the address the proxy appended is the one counted.
#[tokio::test]
async fn a_forged_forwarded_address_escapes_no_throttle() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    reference_study(&db, false).await;
    let app = TestApp::start_with(db.clone(), |c| {
        c.client_ip_header = Some(ClientIpHeader::new("x-forwarded-for", 1));
        c.joins.per_ip_burst = 3;
        c.joins.per_ip_refill = Duration::from_secs(60);
    })
    .await
    .expect("app");
    let mut statuses = Vec::new();
    for i in 0..10 {
        let r = app
            .client()
            .post(app.url("/api/join"))
            .header("x-forwarded-for", format!("198.51.100.{i}, 203.0.113.9"))
            .form(&[("token", "not-a-token")])
            .send()
            .await
            .expect("answered");
        statuses.push(r.status());
    }
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!(refused, 7, "three guesses, then throttled: {statuses:?}");
    drop(app);
    guard.drop_now(db).await;
}

/// Slowloris: clients that open connections and send their request heads a byte at a time
/// take every connection the server allows; a participant's request is still answered within
/// a second (the oldest connection without a request under way makes room), and each dripping
/// client is cut once its head has taken longer than the limit, however steadily it drips.
#[tokio::test]
async fn slow_clients_cannot_hold_the_connections() {
    use tokio::io::AsyncWriteExt;
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.connections.max = 4;
        c.connections.header = Duration::from_millis(800);
    })
    .await
    .expect("app");
    let mut attackers = Vec::new();
    for _ in 0..4 {
        let mut s = tokio::net::TcpStream::connect(app.addr)
            .await
            .expect("connect");
        attackers.push(tokio::spawn(async move {
            // a byte every 50 ms, never the end of the head; Ok(true) once the server closed
            let head = b"GET / HTTP/1.1\r\nx-padding: "
                .iter()
                .chain([b'a'; 4096].iter());
            for b in head {
                if s.write_all(&[*b]).await.is_err() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // the whole padding went through: the server never cut this client
            false
        }));
    }
    // every connection is taken by a dripping head: the participant's request does not wait
    // for one to time out — the oldest head-less connection is closed to make room — and is
    // answered within a second
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = Instant::now();
    let r = app.client().get(app.url("/")).send().await.expect("served");
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "the participant waited {:?} behind dripping clients",
        asked.elapsed()
    );
    for a in attackers {
        let closed = tokio::time::timeout(Duration::from_secs(60), a)
            .await
            .expect("a dripping client was cut before its head ended")
            .expect("task");
        assert!(closed, "a dripping client was never cut");
    }
    drop(app);
    guard.drop_now(db).await;
}

/// Clients that send a request body a byte at a time (each byte well within the idle limit)
/// cannot hold the connections: a stranger's sign-in page is answered within a second
/// throughout the flood (the slowest body is cut to make room), and every dripping body fails
/// once it falls below its pace. The server's address here stands for many: 4 slots, 8 drips.
#[tokio::test]
async fn dripped_request_bodies_cannot_hold_the_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.connections.max = 4;
        c.connections.body_pace = natstudy::transport::body_pace::BodyPace {
            grace: Duration::from_secs(2),
            min_bytes_per_sec: 64,
        };
    })
    .await
    .expect("app");
    let drip = |addr| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let head = b"POST /api/login HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 4000\r\n\r\n";
        if s.write_all(head).await.is_err() {
            return true;
        }
        for _ in 0..100 {
            if s.write_all(b"a").await.is_err() {
                return true;
            }
            let mut buf = [0u8; 64];
            // the server answered (not a sign-in) or closed: cut
            let answer = tokio::time::timeout(Duration::from_millis(250), s.read(&mut buf));
            if answer.await.is_ok() {
                return true;
            }
        }
        false
    };
    let mut drips = Vec::new();
    for _ in 0..8 {
        drips.push(tokio::spawn(drip(app.addr)));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // a stranger asks for the sign-in page every 300 ms while the drips go on
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let asked = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            app.client().get(app.url("/login")).send(),
        )
        .await
        .expect("answered")
        .expect("page");
        assert_eq!(r.status(), StatusCode::OK);
        slowest = slowest.max(asked.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        slowest < Duration::from_secs(1),
        "the sign-in page took {slowest:?} during the flood"
    );
    for d in drips {
        let cut = tokio::time::timeout(Duration::from_secs(60), d)
            .await
            .expect("every drip ends")
            .expect("task");
        assert!(cut, "a dripping body was never cut");
    }
    drop(app);
    guard.drop_now(db).await;
}

/// The flood of the review at its own scale, on a `natstudy serve` process with its default
/// limits: 16 addresses × 256 connections (each address at its share; all 4,096 slots taken)
/// each send a POST body a byte every 10 s. A new visitor's sign-in page, asked every 250 ms
/// on a new connection, is answered within a second throughout (the slowest body makes room),
/// every drip is cut once its body falls below the pace, and the server's peak memory is
/// reported (README).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_flood_from_sixteen_addresses_leaves_room() {
    let _alone = LOADED.lock().await;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // the test holds 4,096 sockets of its own
    let fit = natstudy::transport::connections::fit_to_descriptors(4096 + 512);
    if fit < 4096 + 512 {
        eprintln!("SKIPPED: {fit} open files fit; the flood needs 4,608");
        return;
    }
    let (_dir, server) = served_with_an_admin(&[]).await;
    let idle_mib = server.peak_rss_kib().expect("rss") / 1024;
    let addr: std::net::SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let (addresses, each) = (16u8, 256);
    let started = Instant::now();
    let mut drips = Vec::new();
    for a in 0..addresses {
        for _ in 0..each {
            drips.push(tokio::spawn(async move {
                let socket = tokio::net::TcpSocket::new_v4().expect("socket");
                socket
                    .bind(std::net::SocketAddr::from(([127, 0, 0, 2 + a], 0)))
                    .expect("bind");
                let Ok(mut s) = socket.connect(addr).await else {
                    return None;
                };
                let head = b"POST /api/login HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 4000\r\n\r\n";
                if s.write_all(head).await.is_err() {
                    return Some(Instant::now());
                }
                loop {
                    if s.write_all(b"a").await.is_err() {
                        return Some(Instant::now());
                    }
                    let mut buf = [0u8; 256];
                    // an answer (a refusal) or a close: cut
                    match tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await {
                        Ok(_) => return Some(Instant::now()),
                        Err(_) => continue,
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // a new visitor every 250 ms, each on a connection of its own
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let (mut slowest, mut asked) = (Duration::ZERO, 0);
    while started.elapsed() < Duration::from_secs(25) {
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            client.get(server.url("/login")).send(),
        )
        .await
        .expect("the visitor is answered")
        .expect("page");
        assert_eq!(r.status(), StatusCode::OK);
        slowest = slowest.max(t.elapsed());
        asked += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut cut_after = Vec::new();
    for d in drips {
        let cut = tokio::time::timeout(Duration::from_secs(60), d)
            .await
            .expect("every drip ends")
            .expect("task")
            .expect("every drip connected");
        cut_after.push(cut.duration_since(started));
    }
    let peak_mib = server.peak_rss_kib().expect("rss") / 1024;
    let last_cut = cut_after.iter().max().copied().unwrap_or_default();
    eprintln!(
        "slow-body flood, {addresses} addresses x {each} connections: {asked} visits, the slowest answered in {} ms; every drip cut within {:.1} s; server peak RSS {peak_mib} MiB ({idle_mib} MiB before)",
        slowest.as_millis(),
        last_cut.as_secs_f64()
    );
    assert!(
        slowest < Duration::from_secs(1),
        "a visitor waited {slowest:?} during the flood"
    );
    assert!(peak_mib < 512, "peak RSS {peak_mib} MiB");
}

/// Bodies that trickle cost memory in proportion to their bytes, not their chunks: 256
/// connections (one address's share) each send a server function's body 100 bytes every
/// 0.1 s — inside the pace rule — to `/api/whoami` (public). Each chunk once held an 8 KiB
/// piece of hyper's read buffer until the body was whole: 412 MB in 20 s from 4.8 MiB sent,
/// kept after they closed. Now a body of chunks that stay small is cut, and what a body holds
/// meanwhile is its bytes: the server's peak stays within 200 MB of its start, and it answers
/// a visitor throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_bodies_cost_their_bytes_not_their_chunks() {
    let _alone = LOADED.lock().await;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fit = natstudy::transport::connections::fit_to_descriptors(256 + 256);
    if fit < 256 + 256 {
        eprintln!("SKIPPED: {fit} open files fit; the drips need 512");
        return;
    }
    let (_dir, server) = served_with_an_admin(&[]).await;
    // a first answer, so the idle figure counts what serving costs anyway
    let client = reqwest::Client::new();
    let r = client.get(server.url("/login")).send().await.expect("page");
    assert_eq!(r.status(), StatusCode::OK);
    let idle_kib = server.rss_kib().expect("rss");
    let addr: std::net::SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let started = Instant::now();
    let mut drips = Vec::new();
    for _ in 0..256 {
        drips.push(tokio::spawn(async move {
            // from an address of their own (the visitor's is another): 256 is one address's share
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            socket
                .bind(std::net::SocketAddr::from(([127, 0, 0, 2], 0)))
                .expect("bind");
            let Ok(mut s) = socket.connect(addr).await else {
                return (0usize, None);
            };
            let head = b"POST /api/whoami HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 1000000\r\n\r\n";
            if s.write_all(head).await.is_err() {
                return (0, Some(started.elapsed()));
            }
            let chunk = [b'a'; 100];
            let mut sent = 0usize;
            while started.elapsed() < Duration::from_secs(20) {
                if s.write_all(&chunk).await.is_err() {
                    return (sent, Some(started.elapsed()));
                }
                sent += chunk.len();
                let mut buf = [0u8; 256];
                // an answer (a refusal) or a close: cut
                if let Ok(r) = tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
                    let _ = r;
                    return (sent, Some(started.elapsed()));
                }
            }
            (sent, None)
        }));
    }
    // a visitor every half second meanwhile
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(12) {
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            client.get(server.url("/login")).send(),
        )
        .await
        .expect("the visitor is answered")
        .expect("page");
        assert_eq!(r.status(), StatusCode::OK);
        slowest = slowest.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mut sent = 0usize;
    let mut cut = Vec::new();
    for d in drips {
        let (bytes, at) = tokio::time::timeout(Duration::from_secs(60), d)
            .await
            .expect("every drip ends")
            .expect("task");
        sent += bytes;
        cut.push(at);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let peak_kib = server.peak_rss_kib().expect("rss");
    let after_kib = server.rss_kib().expect("rss");
    let grew_mib = peak_kib.saturating_sub(idle_kib) / 1024;
    let cut_count = cut.iter().filter(|c| c.is_some()).count();
    let last_cut = cut.iter().flatten().max().copied().unwrap_or_default();
    eprintln!(
        "256 trickled bodies, 100 B every 0.1 s: {} KiB sent, {cut_count} cut (the last at {:.1} s); server RSS {} MiB before, peak {} MiB (+{grew_mib}), {} MiB after; slowest visitor {} ms",
        sent / 1024,
        last_cut.as_secs_f64(),
        idle_kib / 1024,
        peak_kib / 1024,
        after_kib / 1024,
        slowest.as_millis()
    );
    assert_eq!(cut_count, 256, "every trickled body is cut");
    assert!(
        grew_mib < 200,
        "the drips grew the server by {grew_mib} MiB"
    );
    assert!(
        slowest < Duration::from_secs(2),
        "a visitor waited {slowest:?}"
    );
}

/// One address cannot take every connection: past its share it is answered 503 with
/// Retry-After at once. Behind a reverse proxy (`--client-ip-header`) every connection is the
/// proxy's, and the share is not applied.
#[tokio::test]
async fn one_address_gets_its_share_of_the_connections() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    for behind_proxy in [false, true] {
        let app = TestApp::start_with(db.clone(), |c| {
            c.connections.per_client = 3;
            if behind_proxy {
                c.client_ip_header = Some(ClientIpHeader::new("x-forwarded-for", 1));
            }
        })
        .await
        .expect("app");
        // three idle connections from loopback
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(
                tokio::net::TcpStream::connect(app.addr)
                    .await
                    .expect("connect"),
            );
        }
        // the server counts a connection once it accepted it: give it the moment it takes
        tokio::time::sleep(Duration::from_millis(200)).await;
        let home = || async {
            app.client()
                .get(app.url("/"))
                .send()
                .await
                .expect("answered")
        };
        let r = home().await;
        if behind_proxy {
            assert_eq!(r.status(), StatusCode::OK, "behind a proxy");
            continue;
        }
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()["retry-after"], "5");
        drop(held);
        // served once the server has seen the others close
        let mut status = StatusCode::SERVICE_UNAVAILABLE;
        for _ in 0..100 {
            status = home().await.status();
            if status == StatusCode::OK {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(status, StatusCode::OK, "closed connections still counted");
    }
    guard.drop_now(db).await;
}

/// A password change or disabling ends the account's sessions; an absolute lifetime caps every
/// session; use slides the inactivity expiry.
async fn sessions_end_when_they_should(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.session_max_secs = 4;
        c.idle_timeout_secs = 2;
    })
    .await
    .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let who = |c: reqwest::Client| {
        let url = app.url("/api/whoami");
        async move {
            let v: serde_json::Value = c
                .post(url)
                .send()
                .await
                .expect("whoami")
                .json()
                .await
                .expect("json");
            v["username"].as_str().map(str::to_owned)
        }
    };
    // use slides the 2 s idle timeout: four requests 0.8 s apart keep the session
    let c = app.signed_in("ada", PW).await.expect("sign in");
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(who(c.clone()).await.as_deref(), Some("ada"), "slides");
    }
    // past the 4 s absolute lifetime it ends however active
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(who(c.clone()).await, None, "absolute lifetime");
    // idle longer than the timeout: ended
    let c = app.signed_in("ada", PW).await.expect("sign in");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(who(c.clone()).await, None, "idle timeout");
    // a password change ends the other sessions
    let c = app.signed_in("ada", PW).await.expect("sign in");
    assert_eq!(who(c.clone()).await.as_deref(), Some("ada"));
    natstudy_core::service::accounts::set_password(&db, None, "ada", "another-long-password")
        .await
        .expect("passwd");
    assert_eq!(who(c.clone()).await, None, "password change");
    // disabling does too, and the account cannot sign in
    let c = app
        .signed_in("ada", "another-long-password")
        .await
        .expect("sign in");
    cli(&db.url, &["user", "disable", "ada"])
        .await
        .expect("disable");
    assert_eq!(who(c).await, None, "disabled");
    assert!(app.signed_in("ada", "another-long-password").await.is_err());
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(sessions_end_when_they_should => sessions_end_when_they_should_sqlite, sessions_end_when_they_should_postgres);

/// Sessions an older natstudy kept in tower-sessions' table (MessagePack records) move into
/// natstudy's own table when a server opens its session store, once: the live one is read
/// back as it was, the expired one and a record that does not decode stay behind, and the old
/// table is gone, so the next server start finds nothing to move.
async fn old_sessions_move_once(store: Store) {
    use natstudy::web::sessions::{port_legacy, DbSessionStore};
    use tower_sessions::cookie::time::{Duration as Span, OffsetDateTime};
    use tower_sessions::session::{Id, Record};
    use tower_sessions::SessionStore;
    let (db, guard) = fresh_db(store).await.expect("db");
    let record = |participant: i64, expires_in: Span| Record {
        id: Id::default(),
        data: [("participant".to_owned(), serde_json::json!(participant))]
            .into_iter()
            .collect(),
        expiry_date: OffsetDateTime::now_utc() + expires_in,
    };
    let (live, expired) = (record(7, Span::hours(1)), record(8, Span::seconds(-1)));
    let (table, ddl, expiry) = match store {
        Store::Sqlite => (
            "tower_sessions",
            vec!["CREATE TABLE tower_sessions (id TEXT PRIMARY KEY NOT NULL, data BLOB NOT NULL, expiry_date INTEGER NOT NULL)"],
            "0",
        ),
        Store::Postgres => (
            "\"tower_sessions\".\"session\"",
            vec![
                "CREATE SCHEMA IF NOT EXISTS \"tower_sessions\"",
                "CREATE TABLE \"tower_sessions\".\"session\" (id TEXT PRIMARY KEY NOT NULL, data BYTEA NOT NULL, expiry_date TIMESTAMPTZ NOT NULL)",
            ],
            "now()",
        ),
    };
    {
        let mut conn = db.write().await.expect("write");
        for sql in ddl {
            sqlx::query(sql)
                .execute(&mut *conn)
                .await
                .expect("old table");
        }
        let rows = [
            (
                live.id.to_string(),
                rmp_serde::to_vec(&live).expect("encode"),
            ),
            (
                expired.id.to_string(),
                rmp_serde::to_vec(&expired).expect("encode"),
            ),
            ("garbage".to_owned(), vec![0xc1, 0x00]),
        ];
        for (id, data) in rows {
            sqlx::query(&format!(
                "INSERT INTO {table} (id, data, expiry_date) VALUES ($1, $2, {expiry})"
            ))
            .bind(id)
            .bind(data)
            .execute(&mut *conn)
            .await
            .expect("old session");
        }
    }
    let sessions = DbSessionStore::open(&db).await.expect("open");
    assert_eq!(
        sessions.load(&live.id).await.expect("load"),
        Some(live.clone())
    );
    assert_eq!(sessions.load(&expired.id).await.expect("load"), None);
    let moved: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(moved, 1, "only the live session moved");
    let old = sqlx::query(&format!("SELECT 1 FROM {table}"))
        .fetch_optional(&db.pool)
        .await
        .map(|row| row.is_some());
    assert!(old.is_err(), "the old table is gone: {old:?}");
    assert_eq!(port_legacy(&db).await.expect("again"), 0);
    // a session ends in the one table
    sessions.delete(&live.id).await.expect("delete");
    assert_eq!(sessions.load(&live.id).await.expect("load"), None);
    drop(sessions);
    guard.drop_now(db).await;
}

on_both_stores!(old_sessions_move_once => old_sessions_move_once_sqlite, old_sessions_move_once_postgres);

/// A web import is bounded by --max-upload-mb, as the README says, not by a default of the
/// web framework's: 3 MiB are read (and answered for what they hold), past the limit 413.
#[tokio::test]
async fn web_imports_are_bounded_by_the_upload_limit() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| c.max_upload_bytes = 4 << 20)
        .await
        .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let (study, _, _) = reference_study(&db, false).await;
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let ce = |bytes: usize| {
        let mut text = String::from("model,target,cross_entropy\n");
        let mut i = 0;
        while text.len() < bytes {
            text.push_str(&format!("m,no-such-target-{i},1.5\n"));
            i += 1;
        }
        serde_json::json!({"study": study, "kind": "ce", "files": [["ce.csv", text]]})
    };
    let r = c
        .post(app.url("/api/studies/import"))
        .json(&ce(3 << 20))
        .send()
        .await
        .expect("import");
    assert_eq!(
        r.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "read and judged"
    );
    let body = r.text().await.expect("body");
    assert!(
        body.contains("ce.csv:2") && body.contains("target"),
        "{}",
        &body[..body.len().min(300)]
    );
    let r = c
        .post(app.url("/api/studies/import"))
        .json(&ce(5 << 20))
        .send()
        .await
        .expect("import");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    drop(app);
    guard.drop_now(db).await;
}

/// DNS rebinding: a page of another site whose name resolves to the loopback server sends
/// its own name as `Host`. Such requests are refused before anything runs (the demo's
/// published passwords included); the addresses and `localhost` are served, and so are the
/// names the operator gave.
#[tokio::test]
async fn requests_for_unknown_host_names_are_refused() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.allowed_hosts = natstudy::web::limits::HostPolicy::parse("study.example.org");
    })
    .await
    .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let login = |host: &'static str| {
        let (c, url) = (app.client(), app.url("/api/login"));
        async move {
            c.post(url)
                .header("host", host)
                .form(&[("username", "ada"), ("password", PW)])
                .send()
                .await
                .expect("answered")
                .status()
        }
    };
    assert_eq!(
        login("rebind.attacker.test").await,
        StatusCode::MISDIRECTED_REQUEST
    );
    assert_eq!(
        login("rebind.attacker.test:3000").await,
        StatusCode::MISDIRECTED_REQUEST
    );
    for served in ["study.example.org", "localhost:3000", "127.0.0.1"] {
        let status = login(served).await;
        assert!(
            status.is_success() || status.is_redirection(),
            "{served}: {status}"
        );
    }
    // two Host headers, an allowed one first: refused, whichever a proxy in front would read
    for hosts in [
        ["study.example.org", "rebind.attacker.test"],
        ["rebind.attacker.test", "study.example.org"],
        ["127.0.0.1", "127.0.0.1"],
    ] {
        let head = format!(
            "GET /login HTTP/1.1\r\nHost: {}\r\nHost: {}\r\nConnection: close\r\n\r\n",
            hosts[0], hosts[1]
        );
        let answer = raw_request(app.addr, head.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "{hosts:?}: {}",
            answer.lines().next().unwrap_or_default()
        );
    }
    let one = raw_request(
        app.addr,
        b"GET /login HTTP/1.1\r\nHost: study.example.org\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(one.starts_with("HTTP/1.1 200"), "{one:.200}");
    drop(app);
    guard.drop_now(db).await;
}

/// Sends `request` as it is on a new connection and reads the answer to its end.
async fn raw_request(addr: std::net::SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("send");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

// ---------------------------------------------------------------------------------------------
// 3. Oversized participant input

async fn participant_input_is_bounded(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let (study, _, token) = reference_study(&db, false).await;
    let c = participant(&app.base, study, &token).await;
    let (item, good) = rate_step(&app.base, &c, study).await.expect("an item");
    let sizes = async || {
        count(
            &db,
            "SELECT COALESCE(SUM(LENGTH(submit_token) + LENGTH(comment)), 0) FROM vote_revisions",
        )
        .await
    };
    // the 1.9 MB token of the issue: over the body limit, refused before it is read
    let r = vote(&app.base, &c, study, item, &"a".repeat(1_900_000), "").await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // a long token under the body limit: not what the page generates
    let r = vote(&app.base, &c, study, item, &"a".repeat(100_000), "").await;
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let r = vote(&app.base, &c, study, item, &good, &"c".repeat(4001)).await;
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(sizes().await, 0, "nothing stored");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM vote_revisions").await, 0);
    // the page's own token works; revisions are capped
    let r = vote(&app.base, &c, study, item, &good, "fine").await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut last = StatusCode::OK;
    for i in 0..25 {
        let token = format!("{i:032x}");
        last = vote(&app.base, &c, study, item, &token, "again")
            .await
            .status();
        if last != StatusCode::OK {
            assert_eq!(i, natstudy_core::store::assign::MAX_REVISIONS - 1, "cap");
            break;
        }
    }
    assert_eq!(last, StatusCode::CONFLICT, "revisions are capped");
    // a crowd id and screener answers are bounded too
    let r = app
        .client()
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str()), ("pid", &"p".repeat(5000))])
        .send()
        .await
        .expect("join");
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let other = app.client();
    other
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join");
    let s = study.to_string();
    for form in [
        vec![("study", s.as_str()), ("answers[years]", "forty")],
        vec![("study", s.as_str()), ("answers[unknown]", "1-3")],
    ] {
        let r = other
            .post(app.url("/api/annotate/consent"))
            .form(&form)
            .send()
            .await
            .expect("consent");
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY, "{form:?}");
    }
    // no vote without consent
    let no_consent = app.client();
    no_consent
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join");
    let r = vote(&app.base, &no_consent, study, item, &good, "").await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(participant_input_is_bounded => participant_input_is_bounded_sqlite, participant_input_is_bounded_postgres);

// ---------------------------------------------------------------------------------------------
// 4. Open redirect after sign-in

#[tokio::test]
async fn redirects_stay_on_this_site() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    for next in [
        "/\t/evil.example",
        "/\n",
        "//evil.example",
        "/\\evil.example",
    ] {
        // as a browser posts the sign-in form (it accepts HTML: the answer is a real redirect)
        let r = app
            .client()
            .post(app.url("/api/login"))
            .header("accept", "text/html")
            .form(&[("username", "ada"), ("password", PW), ("next", next)])
            .send()
            .await
            .expect("answered");
        assert!(r.status().is_redirection(), "{next:?}: {}", r.status());
        assert_eq!(
            r.headers().get("location").and_then(|v| v.to_str().ok()),
            Some("/"),
            "{next:?}"
        );
    }
    let r = app
        .client()
        .post(app.url("/api/login"))
        .header("accept", "text/html")
        .form(&[("username", "ada"), ("password", PW), ("next", "/studies")])
        .send()
        .await
        .expect("answered");
    assert_eq!(
        r.headers().get("location").and_then(|v| v.to_str().ok()),
        Some("/studies")
    );
    drop(app);
    guard.drop_now(db).await;
}

// ---------------------------------------------------------------------------------------------
// 5. Exactly k whatever the order: imported votes, lowered k

async fn counts_stay_exact(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, batch, _) = reference_study(&db, true).await;
    // survey.json gives every item 5 votes; with k = 7 each has room for 2 online ratings
    let k = 7;
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.ratings_per_item = k;
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("k");
    // online annotators S1..S12 (S6..S10 also voted in survey.json) join the batch
    let pool = assign::ensure_pool(&db, study, 12).await.expect("pool");
    for a in &pool {
        sqlx::query("INSERT INTO batch_annotators (batch_id, annotator_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(batch)
            .bind(*a)
            .execute(&mut *db.write().await.expect("write"))
            .await
            .expect("join batch");
    }
    let vote = |token: String| natstudy_tests::test_vote(&token, 2, 2, Some(3.0));
    // every annotator rates until nothing is left; none is ever refused
    let mut online = 0;
    for a in &pool {
        for step in 0..1000 {
            let now = natstudy_core::db::now_ms();
            let Some(h) = assign::next_item(&db, study, *a, now).await.expect("next") else {
                break;
            };
            assign::submit(&db, study, *a, h.item, &vote(format!("{a}-{step}")), now)
                .await
                .expect("a handed item is never refused");
            online += 1;
        }
    }
    assert!(online > 0, "some items had room");
    let counts = assign::completed_per_item(&db, study)
        .await
        .expect("counts");
    let over: Vec<_> = counts.iter().filter(|(_, n)| *n > k).collect();
    assert!(over.is_empty(), "items over k: {over:?}");
    assert!(counts.iter().all(|(_, n)| *n == k), "every item reached k");

    // lowering k while leases are out: nobody loops on an item the server then refuses
    let (study2, batch2, _) = {
        let s = natstudy_core::store::studies::create(&db, None, "B", "")
            .await
            .expect("study");
        natstudy_core::service::imports::import_items(
            &db,
            s,
            &study_small("bugs.jsonl"),
            &study_small("transformations.jsonl"),
        )
        .await
        .expect("items");
        let (b, _) = open_queue(&db, s, 1000).await.expect("queue");
        (s, b, ())
    };
    let pool2 = assign::ensure_pool(&db, study2, 3).await.expect("pool");
    for a in &pool2 {
        sqlx::query("INSERT INTO batch_annotators (batch_id, annotator_id) VALUES ($1, $2)")
            .bind(batch2)
            .bind(*a)
            .execute(&mut *db.write().await.expect("write"))
            .await
            .expect("join batch");
    }
    let now = natstudy_core::db::now_ms();
    // A rates one item; B and C hold leases
    let first = assign::next_item(&db, study2, pool2[0], now)
        .await
        .expect("next")
        .expect("item");
    assign::submit(&db, study2, pool2[0], first.item, &vote("a0".into()), now)
        .await
        .expect("vote");
    let held_b = assign::next_item(&db, study2, pool2[1], now)
        .await
        .expect("next")
        .expect("item");
    // k drops to 1: every item with a vote is full
    let mut settings = natstudy_core::service::studies::settings(&db, study2)
        .await
        .expect("settings");
    settings.ratings_per_item = 1;
    natstudy_core::service::studies::update_settings(&db, study2, None, &settings)
        .await
        .expect("lower k");
    // B's lease is on an empty item (still valid) or released; either way B never loops
    let mut seen = std::collections::HashSet::new();
    for (i, a) in pool2.iter().enumerate() {
        for step in 0..500 {
            let now = natstudy_core::db::now_ms();
            let Some(h) = assign::next_item(&db, study2, *a, now).await.expect("next") else {
                break;
            };
            assert!(
                seen.insert(h.item) || h.item == held_b.item,
                "annotator {i} handed a full item again"
            );
            assign::submit(&db, study2, *a, h.item, &vote(format!("l{a}-{step}")), now)
                .await
                .expect("a handed item is never refused after k dropped");
        }
    }
    let counts = assign::completed_per_item(&db, study2)
        .await
        .expect("counts");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
    guard.drop_now(db).await;
}

on_both_stores!(counts_stay_exact => counts_stay_exact_sqlite, counts_stay_exact_postgres);

/// Invites, release and move refuse batches and annotators of another study.
async fn actions_stay_inside_their_study(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (a, batch_a, _) = reference_study(&db, false).await;
    let b = natstudy_core::store::studies::create(&db, None, "Other", "")
        .await
        .expect("study");
    let pool_a = assign::ensure_pool(&db, a, 2).await.expect("pool");
    let err = natstudy_core::store::invites::create_invite(&db, b, batch_a, 5, None)
        .await
        .expect_err("batch of another study");
    assert!(err.to_string().contains("not found"), "{err}");
    assert!(assign::release(&db, b, pool_a[0], None).await.is_err());
    let pool_b = assign::ensure_pool(&db, b, 1).await.expect("pool");
    assert!(assign::move_unrated(&db, b, pool_a[0], pool_b[0], None)
        .await
        .is_err());
    assert!(assign::move_unrated(&db, a, pool_a[0], pool_b[0], None)
        .await
        .is_err());
    guard.drop_now(db).await;
}

on_both_stores!(actions_stay_inside_their_study => actions_stay_inside_their_study_sqlite, actions_stay_inside_their_study_postgres);

// ---------------------------------------------------------------------------------------------
// 6. Background work across a crash

async fn a_job_left_running_by_a_dead_server_fails_and_runs_again(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _, _) = reference_study(&db, false).await;
    // what a killed server leaves: a running job whose heartbeat stopped a while ago
    let params = r#"{"model":"ref.arpa","log10":false}"#;
    let job = natstudy_core::store::jobs::create(
        &db,
        study,
        None,
        natstudy_core::store::JobKind::Score,
        "score with ref.arpa",
        params,
    )
    .await
    .expect("job");
    natstudy_core::store::jobs::progress(
        &db,
        job,
        natstudy_core::store::jobs::Progress::of(3, 357),
    )
    .await
    .expect("progress");
    sqlx::query("UPDATE jobs SET updated_at = $1 WHERE id = $2")
        .bind(natstudy_core::db::now_ms() - 600_000)
        .bind(job)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("age");
    // the restarted server fails it at once, with a reason
    let app = TestApp::start_with(db.clone(), |c| {
        c.jobs.stale_after = Duration::from_secs(5);
        c.jobs.heartbeat = Duration::from_millis(500);
    })
    .await
    .expect("server");
    let deadline = Instant::now() + Duration::from_secs(20);
    let failed = loop {
        let jobs = natstudy_core::store::jobs::list(&db, study)
            .await
            .expect("jobs");
        let j = jobs.into_iter().find(|j| j.id == job).expect("job");
        if j.state == JobState::Failed {
            break j;
        }
        assert!(Instant::now() < deadline, "still {}", j.state);
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(failed.message.contains("interrupted"), "{}", failed.message);
    // it can be run again: the new job is not failed by the reaper while it runs (heartbeat)
    std::fs::copy(
        reference_dir().join("lm").join("model.arpa"),
        app.models_dir.join("ref.arpa"),
    )
    .expect("model");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let again: JobId = c
        .post(app.url("/api/studies/jobs/retry"))
        .form(&[("study", study.to_string()), ("job", job.to_string())])
        .send()
        .await
        .expect("retry")
        .json()
        .await
        .expect("job id");
    assert_ne!(again, job);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let jobs = natstudy_core::store::jobs::list(&db, study)
            .await
            .expect("jobs");
        let j = jobs.into_iter().find(|j| j.id == again).expect("job");
        match j.state.as_str() {
            "done" => break,
            "failed" => panic!("retry failed: {}", j.message),
            _ => {}
        }
        assert!(Instant::now() < deadline, "retry never finished");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let scores = count(&db, "SELECT COUNT(*) FROM ce_scores").await;
    assert!(scores > 0, "the retry stored scores");
    // only a failed job runs again
    let r = c
        .post(app.url("/api/studies/jobs/retry"))
        .form(&[("study", study.to_string()), ("job", again.to_string())])
        .send()
        .await
        .expect("retry");
    assert_eq!(r.status(), StatusCode::CONFLICT);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_job_left_running_by_a_dead_server_fails_and_runs_again => a_job_left_running_by_a_dead_server_fails_and_runs_again_sqlite, a_job_left_running_by_a_dead_server_fails_and_runs_again_postgres);

// ---------------------------------------------------------------------------------------------
// 7. Slow export downloads while participants vote

/// A study whose dataset export is tens of megabytes (more than the kernel's socket buffers
/// hold): one long method, many transformations.
async fn big_study(db: &natstudy_core::service::Db) -> (StudyId, String) {
    let study = natstudy_core::store::studies::create(db, None, "Big", "")
        .await
        .expect("study");
    let body: String = (0..6_000).map(|i| format!("    x += {i};\n")).collect();
    let source = format!("int m(int x) {{\n{body}    return x;\n}}\n");
    let bug = serde_json::json!({"bug_id": "B-1", "project": "P", "file": "A.java", "method": "m",
        "source": source, "buggy_lines": [2]});
    let items: String = (0..200)
        .map(|i| {
            let src = source.replace("return x;", &format!("return x + {i};"));
            serde_json::json!({"id": format!("expression_{i}"), "bug_id": "B-1",
                "operator": "ModifyConstant", "level": "expression", "source": src})
            .to_string()
                + "\n"
        })
        .collect();
    natstudy_core::service::imports::import_items_text(
        db,
        study,
        None,
        ("b", &bug.to_string()),
        ("t", &items),
    )
    .await
    .expect("items");
    let (_, token) = open_queue(db, study, 1000).await.expect("queue");
    (study, token)
}

async fn exports_cannot_starve_voting(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let stall = Duration::from_secs(3);
    let app = TestApp::start_with(db.clone(), |c| {
        c.exports = natstudy::web::download::ExportLimits::new(2, stall);
    })
    .await
    .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let (study, token) = big_study(&db).await;
    let staff = app.signed_in("ada", PW).await.expect("sign in");
    let export = app.url(&format!("/studies/{study}/export/dataset.jsonl"));
    // four downloads that never read their bodies
    let mut stalled = Vec::new();
    let mut busy = 0;
    for _ in 0..4 {
        let r = staff.get(&export).send().await.expect("export");
        match r.status() {
            StatusCode::OK => stalled.push(r),
            StatusCode::SERVICE_UNAVAILABLE => {
                assert!(r.headers().get("retry-after").is_some());
                busy += 1
            }
            other => panic!("export: {other}"),
        }
    }
    assert_eq!(
        (stalled.len(), busy),
        (2, 2),
        "two at once, the rest told to retry"
    );
    // participants vote promptly meanwhile
    let c = participant(&app.base, study, &token).await;
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let t = Instant::now();
        let (item, tok) = rate_step(&app.base, &c, study).await.expect("item");
        let r = vote(&app.base, &c, study, item, &tok, "").await;
        assert_eq!(r.status(), StatusCode::OK);
        slowest = slowest.max(t.elapsed());
    }
    eprintln!("slowest next-item + vote while two exports stall: {slowest:?}");
    assert!(slowest < Duration::from_secs(2), "votes waited {slowest:?}");
    // the stalled exports are cut off after the stall timeout and their slots come back
    tokio::time::sleep(stall + Duration::from_secs(2)).await;
    let r = staff.get(&export).send().await.expect("export");
    assert_eq!(r.status(), StatusCode::OK, "a slot is free again");
    let full = r.bytes().await.expect("a reading client gets it all");
    assert!(full.len() > 10 << 20, "{} bytes", full.len());
    drop(stalled);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(exports_cannot_starve_voting => exports_cannot_starve_voting_sqlite, exports_cannot_starve_voting_postgres);

// ---------------------------------------------------------------------------------------------
// 8. A researcher of another study

async fn researcher_b_gets_nothing_of_study_a(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let (a, _, _) = reference_study(&db, true).await;
    let rb = app
        .add_user("bea", PW, Role::Researcher)
        .await
        .expect("bea");
    let b = natstudy_core::store::studies::create_owned(&db, None, Some(rb), "B's study", "")
        .await
        .expect("study");
    let bea = app.signed_in("bea", PW).await.expect("sign in");
    for path in [
        format!("/studies/{a}"),
        format!("/studies/{a}/results"),
        format!("/studies/{a}/export/votes.csv"),
        format!("/studies/{a}/charts/naturalness.png"),
    ] {
        let status = bea.get(app.url(&path)).send().await.expect("get").status();
        assert_eq!(status, StatusCode::FORBIDDEN, "GET {path}");
    }
    for (path, form) in [
        ("/api/studies/detail", vec![("id", a.to_string())]),
        ("/api/studies/monitor", vec![("study", a.to_string())]),
        ("/api/studies/results", vec![("study", a.to_string())]),
        ("/api/studies/scoring", vec![("study", a.to_string())]),
        ("/api/studies/members", vec![("study", a.to_string())]),
        (
            "/api/studies/score",
            vec![("study", a.to_string()), ("model", "m.arpa".into())],
        ),
        ("/api/studies/verify", vec![("study", a.to_string())]),
        (
            "/api/studies/propose",
            vec![("study", a.to_string()), ("operators", "studied".into())],
        ),
    ] {
        let status = bea
            .post(app.url(path))
            .form(&form)
            .send()
            .await
            .expect("post")
            .status();
        assert_eq!(status, StatusCode::FORBIDDEN, "POST {path}");
    }
    let form = reqwest::multipart::Form::new().part(
        "model",
        reqwest::multipart::Part::bytes(b"\\data\\\n".to_vec()).file_name("shared.arpa"),
    );
    let status = bea
        .post(app.url(&format!("/studies/{a}/models")))
        .multipart(form)
        .send()
        .await
        .expect("upload")
        .status();
    assert_eq!(status, StatusCode::FORBIDDEN, "model upload into A");
    // her own study is hers
    let status = bea
        .get(app.url(&format!("/studies/{b}/export/votes.csv")))
        .send()
        .await
        .expect("get")
        .status();
    assert_eq!(status, StatusCode::OK);
    // an admin makes her a member of A (the study page's members panel): now she may; removed
    // again, she may not
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let ada = app.signed_in("ada", PW).await.expect("sign in");
    let export = app.url(&format!("/studies/{a}/export/votes.csv"));
    let form = [("study", a.to_string()), ("username", "bea".into())];
    let r = ada
        .post(app.url("/api/studies/members/add"))
        .form(&form)
        .send()
        .await
        .expect("add");
    assert_eq!(r.status(), StatusCode::OK);
    let members = natstudy_core::store::members::list(&db, a)
        .await
        .expect("list");
    assert_eq!(members, [("bea".to_owned(), "member".to_owned())]);
    let status = bea.get(&export).send().await.expect("get").status();
    assert_eq!(status, StatusCode::OK);
    // a member researcher may not change the members
    let r = bea
        .post(app.url("/api/studies/members/remove"))
        .form(&form)
        .send()
        .await
        .expect("remove");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = ada
        .post(app.url("/api/studies/members/remove"))
        .form(&form)
        .send()
        .await
        .expect("remove");
    assert_eq!(r.status(), StatusCode::OK);
    let status = bea.get(&export).send().await.expect("get").status();
    assert_eq!(status, StatusCode::FORBIDDEN);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(researcher_b_gets_nothing_of_study_a => researcher_b_gets_nothing_of_study_a_sqlite, researcher_b_gets_nothing_of_study_a_postgres);

// ---------------------------------------------------------------------------------------------
// 9. What pages tell attackers; the demo in production

#[tokio::test]
async fn pages_carry_a_content_security_policy_with_the_scripts_nonce() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let r = app
        .client()
        .get(app.url("/login"))
        .send()
        .await
        .expect("page");
    let csp = r
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .expect("CSP")
        .to_owned();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(csp.contains("object-src 'none'"), "{csp}");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .expect("a nonce")
        .to_owned();
    let html = r.text().await.expect("html");
    assert!(
        html.contains(&format!("nonce=\"{nonce}\"")),
        "the hydration script carries the nonce"
    );
    // every inline script does
    for tag in html.split("<script").skip(1) {
        let open = tag.split('>').next().unwrap_or("");
        assert!(
            open.contains(&format!("nonce=\"{nonce}\"")) || open.contains("src="),
            "inline script without the nonce: <script{open}>"
        );
    }
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn the_demo_never_lands_in_production() {
    // loopback only, unless asked explicitly
    let err = natstudy_tests::cli(
        "sqlite::memory:",
        &["serve", "--demo", "--addr", "0.0.0.0:0"],
    )
    .await
    .expect_err("public demo");
    assert!(err.to_string().contains("loopback"), "{err}");
    // a database with real data is refused (before anything is written)
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    natstudy_core::service::accounts::add_user(&db, None, "alice", PW, Role::Admin)
        .await
        .expect("real admin");
    let err = cli(&db.url, &["serve", "--demo", "--addr", "127.0.0.1:0"])
        .await
        .expect_err("real data");
    assert!(err.to_string().contains("refuses this database"), "{err}");
    assert!(
        natstudy_core::store::users::credentials(&db, "admin")
            .await
            .expect("db")
            .is_none(),
        "no demo account was planted"
    );
    guard.drop_now(db).await;
}

/// Two admins who take each other's role at the same moment (or disable each other) leave one
/// admin: the last-admin check and the change are one transaction under the accounts' lock.
async fn two_admins_demoting_each_other_leave_one(store: Store) {
    use natstudy_core::service::accounts;
    let (db, guard) = fresh_db(store).await.expect("db");
    let mut admins = Vec::new();
    for name in ["ada", "bob"] {
        let id = accounts::add_user(&db, None, name, "a long passphrase 1", Role::Admin)
            .await
            .expect("admin");
        admins.push(natstudy_types::User {
            id,
            username: name.into(),
            role: Role::Admin,
        });
    }
    let (a, b) = (&admins[0], &admins[1]);
    let (r1, r2) = tokio::join!(
        accounts::set_role(&db, Some(a), "bob", Role::Researcher),
        accounts::set_role(&db, Some(b), "ada", Role::Researcher),
    );
    assert!(
        r1.is_ok() != r2.is_ok(),
        "exactly one demotion goes through: {r1:?} {r2:?}"
    );
    let enabled_admins = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0",
        )
        .fetch_one(&db.pool)
        .await
        .expect("count")
    };
    assert_eq!(enabled_admins().await, 1);
    // make both admins again, then each disables the other at once
    for name in ["ada", "bob"] {
        accounts::set_role(&db, None, name, Role::Admin)
            .await
            .expect("admin again");
    }
    let (r1, r2) = tokio::join!(
        accounts::set_disabled(&db, Some(a), "bob", true),
        accounts::set_disabled(&db, Some(b), "ada", true),
    );
    assert!(r1.is_ok() != r2.is_ok(), "{r1:?} {r2:?}");
    assert_eq!(enabled_admins().await, 1);
    guard.drop_now(db).await;
}

on_both_stores!(two_admins_demoting_each_other_leave_one => two_admins_demoting_each_other_leave_one_sqlite, two_admins_demoting_each_other_leave_one_postgres);

// ---------------------------------------------------------------------------------------------
// Imported votes are what they are: their own annotators, and nothing made up about them

/// An online participant `S1` and the `S1` of an imported survey.json are two annotators: the
/// import lands in its own namespace (`S1@import`) instead of adding to the online
/// participant's votes. The vote table leaves what an import does not know empty and marks
/// where each vote came from and whether its time was measured; the monitor shows imported
/// annotators as imported, with their votes.
#[tokio::test]
async fn imported_votes_keep_to_their_own_annotators() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (study, _, token) = reference_study(&db, false).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = participant(&app.base, study, &token).await;
    let (item, submit) = rate_step(&app.base, &c, study).await.expect("an item");
    let r = vote(&app.base, &c, study, item, &submit, "mine").await;
    assert!(r.status().is_success(), "{}", r.status());
    let online: String = sqlx::query_scalar("SELECT code FROM annotators WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db.pool)
        .await
        .expect("code");
    assert_eq!(online, "S1");
    natstudy_core::service::imports::import_votes(
        &db,
        study,
        &natstudy_tests::reference_dir().join("study-small/survey.json"),
    )
    .await
    .expect("import");
    let online_votes = count(
        &db,
        &format!(
            "SELECT COUNT(*) FROM votes v JOIN annotators a ON a.id = v.annotator_id \
             WHERE a.study_id = {} AND a.code = 'S1'",
            study.0
        ),
    )
    .await;
    assert_eq!(
        online_votes, 1,
        "the online participant keeps exactly their vote"
    );
    let imported = count(
        &db,
        &format!(
            "SELECT COUNT(*) FROM annotators WHERE study_id = {} AND imported = 1 AND code LIKE '%@import'",
            study.0
        ),
    )
    .await;
    assert!(
        imported >= 5,
        "imported annotators in their namespace: {imported}"
    );
    // the vote table
    let admin = app.signed_in("ada", PW).await.expect("admin");
    let csv = admin
        .get(app.url(&format!("/studies/{study}/export/votes.csv")))
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (who, submitted, left, context, source, time_source) = (
        col("annotator"),
        col("submitted_at"),
        col("original_left"),
        col("context_opened"),
        col("source"),
        col("time_source"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let mine: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[who] == "S1").collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(&mine[0][source], "survey");
    // no time was sent (as a vote posted before the page is interactive): the server's, from
    // handing the item out to the vote, marked as such
    assert_eq!(&mine[0][time_source], "server", "not blank, not made up");
    let server_time: f64 = mine[0][col("time_secs")].parse().expect("a time");
    assert!((0.0..60.0).contains(&server_time), "{server_time}");
    assert!(!mine[0][submitted].is_empty());
    for r in rows.iter().filter(|r| r[who].ends_with("@import")) {
        assert_eq!(&r[source], "imported");
        assert_eq!(&r[time_source], "imported");
        assert!(
            r[submitted].is_empty() && r[left].is_empty() && r[context].is_empty(),
            "nothing made up: {r:?}"
        );
    }
    // the monitor: imported annotators with their votes, not "0 / 0, never"
    let monitor: serde_json::Value = admin
        .post(app.url("/api/studies/monitor"))
        .form(&[("study", study.to_string())])
        .send()
        .await
        .expect("monitor")
        .json()
        .await
        .expect("json");
    let s1_import = monitor["annotators"]
        .as_array()
        .expect("annotators")
        .iter()
        .find(|a| a["code"] == "S1@import")
        .expect("S1@import");
    assert_eq!(s1_import["imported"], true);
    // the online participant's vote claimed their next item: the monitor shows the lease held
    let s1 = monitor["annotators"]
        .as_array()
        .expect("annotators")
        .iter()
        .find(|a| a["code"] == "S1")
        .expect("S1");
    assert_eq!(s1["leases"], 1, "{s1}");
    assert_eq!(s1_import["leases"], 0);
    assert!(s1_import["done"].as_i64().expect("done") > 0);
    assert_eq!(s1_import["done"], s1_import["total"]);
    drop(app);
    guard.drop_now(db).await;
}

/// Anyone could lock an account out by guessing its password from many addresses (the
/// per-account limit, which they share). Now that limit applies only to devices that never
/// signed in to the account: the owner's browser, which did, signs in every time while
/// strangers from twelve addresses keep guessing; a new device waits like the strangers.
#[tokio::test]
async fn strangers_cannot_lock_an_account_out() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.client_ip_header = Some(ClientIpHeader::new("x-forwarded-for", 1));
    })
    .await
    .expect("server");
    app.add_user("researcher", PW, Role::Researcher)
        .await
        .expect("account");
    let login = |c: &reqwest::Client, from: String, password: &'static str| {
        let (c, url) = (c.clone(), app.url("/api/login"));
        async move {
            c.post(url)
                .header("x-forwarded-for", from)
                .form(&[("username", "researcher"), ("password", password)])
                .send()
                .await
                .expect("answered")
                .status()
        }
    };
    let owner = app.client();
    let first = login(&owner, "198.51.100.7".into(), PW).await;
    assert!(first.is_success() || first.is_redirection(), "{first}");
    // twelve addresses, a few wrong passwords each
    let mut throttled = 0;
    for round in 0..3 {
        for i in 1..=12 {
            let s = login(&app.client(), format!("203.0.113.{i}"), "wrong-password").await;
            throttled += usize::from(s == StatusCode::TOO_MANY_REQUESTS);
            let _ = round;
        }
    }
    assert!(throttled > 0, "the strangers are throttled");
    // the owner's browser signs in every time
    for attempt in 0..8 {
        let s = login(&owner, "198.51.100.7".into(), PW).await;
        assert!(
            s.is_success() || s.is_redirection(),
            "attempt {attempt}: {s}"
        );
    }
    // a browser that never signed in waits like the strangers, even with the right password
    let s = login(&app.client(), "198.51.100.99".into(), PW).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    drop(app);
    guard.drop_now(db).await;
}

/// What one response carries is bounded whatever the method's size: a 3,000-line method with
/// one change reaches the participant as its change, its context and its buggy line, the rest
/// summarised as "… N unchanged lines …" (server-rendered too).
#[tokio::test]
async fn a_long_method_reaches_the_page_shortened() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let lines: Vec<String> = (1..=3000).map(|n| format!("    int x{n} = {n};")).collect();
    let method = |body: &[String]| format!("void m() {{\n{}\n}}\n", body.join("\n"));
    let mut changed = lines.clone();
    changed[1499] = "    int y1500 = 1500;".into();
    let bug = serde_json::json!({"bug_id": "B-1", "project": "P", "file": "A.java", "method": "m",
        "source": method(&lines), "buggy_lines": [1501]})
    .to_string();
    let item =
        serde_json::json!({"id": "naming_1", "bug_id": "B-1", "operator": "RenameVariable-1",
        "level": "naming", "source": method(&changed), "summary": "renames `x1500` to `y1500`"})
        .to_string();
    let study = natstudy_core::store::studies::create(&db, None, "Long", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(&db, study, None, ("b", &bug), ("t", &item))
        .await
        .expect("items");
    let (_, token) = open_queue(&db, study, 5).await.expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    let c = participant(&app.base, study, &token).await;
    let state = natstudy_tests::participants::state(&app.base, &c, study)
        .await
        .expect("state");
    let diff = state["step"]["Rate"]["diff"].as_array().expect("a diff");
    assert!(diff.len() <= 2000, "{} rows", diff.len());
    assert!(diff.iter().any(|r| r["kind"] == "changed"), "the change");
    let skips: Vec<&str> = diff
        .iter()
        .filter(|r| r["kind"] == "skip")
        .filter_map(|r| r["old"][0]["text"].as_str())
        .collect();
    assert!(
        skips.iter().any(|s| s.contains("unchanged lines")),
        "{skips:?}"
    );
    let page = c
        .get(app.url(&format!("/annotate/{study}")))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("unchanged lines"),
        "the page shows the summary"
    );
    assert!(page.len() < 2 << 20, "the page is {} bytes", page.len());
    drop(app);
    guard.drop_now(db).await;
}

/// Drawing figures (PDF, 300-dpi PNG) and the paper's zip is CPU work: it takes an export slot
/// (`--max-exports`) like the exports, so staff repeating the download cannot take the
/// server's cores; a table or an SVG (text) needs none.
#[tokio::test]
async fn figures_and_the_paper_zip_take_an_export_slot() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| {
        c.exports = natstudy::web::download::ExportLimits::new(1, Duration::from_secs(30));
    })
    .await
    .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let (study, _) = big_study(&db).await;
    let staff = app.signed_in("ada", PW).await.expect("sign in");
    // the one slot held by an export whose client does not read it
    let held = staff
        .get(app.url(&format!("/studies/{study}/export/dataset.jsonl")))
        .send()
        .await
        .expect("export");
    assert_eq!(held.status(), StatusCode::OK);
    let download = |path: &str| {
        staff
            .get(app.url(&format!("/studies/{study}/{path}")))
            .send()
    };
    for path in [
        "paper.zip",
        "charts/time_by_level.pdf",
        "charts/time_by_level.png",
    ] {
        let r = download(path).await.expect("download");
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert!(r.headers().get("retry-after").is_some(), "{path}");
    }
    for path in ["tables/naturalness.csv", "charts/time_by_level.svg"] {
        let r = download(path).await.expect("download");
        assert_ne!(r.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
    }
    drop(held);
    drop(app);
    guard.drop_now(db).await;
}

/// A `batch create` that is refused — a name taken, an account that does not exist, a filter
/// that matches nothing, fewer annotators than k — leaves no annotator behind: the pool and the
/// enrolments are made in the batch's own transaction. One that succeeds makes them.
async fn a_refused_batch_creates_no_annotator(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    natstudy_tests::reference_study(&db, "Batches", false)
        .await
        .expect("study");
    natstudy_core::service::accounts::add_user(&db, None, "ada", PW, Role::Annotator)
        .await
        .expect("ada");
    let annotators = || count(&db, "SELECT COUNT(*) FROM annotators");
    let create = |args: &'static [&'static str]| {
        let url = db.url.clone();
        async move {
            let mut all = vec!["batch", "create", "--study", "Batches"];
            all.extend_from_slice(args);
            natstudy_tests::cli(&url, &all).await
        }
    };
    create(&["--name", "first", "--pool", "5", "--level", "naming"])
        .await
        .expect("the first batch");
    assert_eq!(annotators().await, 5);
    for refused in [
        &["--name", "first", "--pool", "9"][..],
        &["--name", "second", "--pool", "9", "--users", "ada,nobody"],
        &["--name", "third", "--pool", "9", "--level", "no-such-level"],
        &["--name", "fourth", "--users", "ada"],
    ] {
        let err = create(refused).await.expect_err("refused");
        assert_eq!(
            annotators().await,
            5,
            "{refused:?} ({err:#}) left annotators"
        );
    }
    // fixed groups of k = 5 from 9 + 1 annotators: the pool and the account join together
    create(&[
        "--name",
        "second",
        "--pool",
        "9",
        "--users",
        "ada",
        "--level",
        "expression",
    ])
    .await
    .expect("the second batch");
    assert_eq!(annotators().await, 10);
    guard.drop_now(db).await;
}

on_both_stores!(a_refused_batch_creates_no_annotator => a_refused_batch_creates_no_annotator_sqlite, a_refused_batch_creates_no_annotator_postgres);

/// A GGUF file whose metadata is one array of 33 M bytes (32 MiB on disk, about 1 GiB once
/// candle's reader held it, at every read of its header) is refused at upload with 422 and
/// the reason, and nothing is kept; a GGUF file within the bounds is taken.
#[tokio::test]
async fn a_gguf_file_with_a_huge_metadata_array_is_refused_at_upload() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let study = natstudy_tests::reference_study(&db, "G", false)
        .await
        .expect("study");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let n: u64 = 33_000_000;
    let mut crafted = b"GGUF".to_vec();
    crafted.extend(3u32.to_le_bytes());
    crafted.extend(0u64.to_le_bytes()); // tensors
    crafted.extend(1u64.to_le_bytes()); // metadata entries
    crafted.extend(6u64.to_le_bytes());
    crafted.extend(b"x.blob");
    crafted.extend(9u32.to_le_bytes()); // an array
    crafted.extend(0u32.to_le_bytes()); // of bytes
    crafted.extend(n.to_le_bytes());
    crafted.resize(crafted.len() + n as usize, 7);
    let r = app
        .upload_model(&c, study, "blob.gguf", crafted)
        .await
        .expect("answered");
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = r.text().await.expect("text");
    assert!(
        text.contains("blob.gguf") && text.contains("an array of 33000000 elements"),
        "{text}"
    );
    assert!(!text.contains(".part"), "the hidden file's name: {text}");
    let kept: Vec<_> = std::fs::read_dir(&app.models_dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(kept.is_empty(), "{kept:?}");
    let good = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/nlm/tests/data/gguf/llama-q4_0.gguf"),
    )
    .expect("reference gguf");
    let r = app
        .upload_model(&c, study, "tiny.gguf", good)
        .await
        .expect("answered");
    assert!(r.status().is_redirection(), "{}", r.status());
    drop(app);
    guard.drop_now(db).await;
}

/// A huge method file (4 MiB: a generated class of 60,000 lines, the method in its middle)
/// makes neither a huge state nor a huge page: a participant is sent the method with the
/// lines around it, bounded, and told which lines they are.
#[tokio::test]
async fn a_huge_context_file_is_sent_as_a_bounded_part() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let method = "    int size(int[] values) {\n        int count = values.length;\n        return count;\n    }\n";
    let mut file = String::from("class A {\n");
    for i in 0..30_000 {
        file.push_str(&format!(
            "    static final int FIELD_{i:06} = {i}; // generated padding\n"
        ));
    }
    file.push_str(method);
    for i in 30_000..60_000 {
        file.push_str(&format!(
            "    static final int FIELD_{i:06} = {i}; // generated padding\n"
        ));
    }
    file.push_str("}\n");
    assert!(file.len() > 3 << 20, "{}", file.len());
    let bug = serde_json::json!({
        "bug_id": "Lang-1", "project": "Lang", "file": "src/A.java", "method": "size",
        "source": method, "file_source": file, "buggy_lines": [2],
    });
    let transformation = serde_json::json!({
        "id": "naming_1", "bug_id": "Lang-1", "operator": "RenameVariable-1", "level": "naming",
        "source": method.replace("count", "c"), "summary": "renames `count` to `c`",
    });
    let study = natstudy_core::store::studies::create(&db, None, "Huge file", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(
        &db,
        study,
        None,
        ("bugs", &format!("{bug}\n")),
        ("t", &format!("{transformation}\n")),
    )
    .await
    .expect("items");
    let (_, token) = natstudy_tests::open_queue(&db, study, 5)
        .await
        .expect("invite");
    let app = TestApp::start(db.clone()).await.expect("server");
    let c = participant(&app.base, study, &token).await;
    let state = natstudy_tests::participants::state(&app.base, &c, study)
        .await
        .expect("state");
    let item = &state["step"]["Rate"];
    // the item comes without its file: the page asks for it when Context is opened
    assert_eq!(item["has_file"], true);
    assert!(item.get("file_source").is_none(), "no file with the item");
    assert_eq!(item["method_line"], 30_002);
    let id = item["item"].clone();
    let ask = |c: reqwest::Client, study: StudyId, id: serde_json::Value| {
        let url = app.url("/api/annotate/context");
        async move {
            c.post(url)
                .form(&[("study", study.to_string()), ("item", id.to_string())])
                .send()
                .await
                .expect("context")
        }
    };
    let r = ask(c.clone(), study, id.clone()).await;
    assert_eq!(r.status(), StatusCode::OK);
    let context: serde_json::Value = r.json().await.expect("json");
    let part = context["text"].as_str().expect("a part of the file");
    assert!(part.len() < 128 * 1024, "{} bytes sent", part.len());
    assert!(
        part.contains("int size(int[] values)"),
        "the method is in it"
    );
    assert_eq!(context["total_lines"], 60_006);
    let first = context["first_line"].as_u64().expect("first line");
    assert!((29_000..30_002).contains(&first), "{first}");
    let page = c
        .get(app.url(&format!("/annotate/{study}")))
        .header("accept", "text/html")
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(page.len() < 256 << 10, "the page is {} bytes", page.len());
    assert!(!page.contains("FIELD_0"), "no line of the file in the page");
    // a participant of another study (naming either study) and a visitor are refused it
    let (elsewhere, other_token) = natstudy_tests::small::study(&db, "Elsewhere").await;
    let other = participant(&app.base, elsewhere, &other_token).await;
    for (who, c, s) in [
        ("another study's participant", other.clone(), study),
        (
            "another study's participant, naming theirs",
            other,
            elsewhere,
        ),
        ("a visitor", app.client(), study),
    ] {
        let r = ask(c, s, id.clone()).await;
        assert!(!r.status().is_success(), "{who}: {}", r.status());
        assert!(!r.text().await.expect("text").contains("FIELD_"), "{who}");
    }
    drop(app);
    guard.drop_now(db).await;
}

/// A preview of every operator at every site of one 240 KiB method (the longest an import
/// takes is 256 KiB) on a `serve` process: it once grew the server by 47 MB a second until
/// the client left. Now the preview estimates its work first (sites × the method's size) and
/// refuses in words what exceeds its budget — before rewriting anything — and any preview
/// stops at its time budget whether or not the client waits: the answer comes within
/// 3 minutes, and the server's memory grows by less than 1 GB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_of_every_site_of_a_long_method_is_bounded() {
    let _alone = LOADED.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let url = natstudy_core::service::Db::sqlite_url_in(dir.path()).expect("url");
    let db = natstudy_core::service::Db::connect(&url).await.expect("db");
    natstudy_core::service::accounts::add_user(&db, None, "admin", PW, Role::Admin)
        .await
        .expect("admin");
    // about 240 KiB of statements of every kind the operators rewrite
    let mut body = String::from("int m(int a, int b) {\n    int s = 0;\n");
    let mut i = 0;
    while body.len() < 240 * 1024 {
        body.push_str(&format!(
            "    int x{i} = a + {i};\n    if (x{i} < b && b != {i}) {{ s = s + x{i}; }}\n    for (int j{i} = 0; j{i} < 3; j{i}++) {{ s += j{i} * 2; }}\n"
        ));
        i += 1;
    }
    body.push_str("    return s;\n}\n");
    let kib = body.len() / 1024;
    let mut changed = body.clone();
    changed = changed.replacen("int s = 0;", "int total = 0;", 1);
    let bug =
        serde_json::json!({"bug_id": "Big-1", "project": "P", "file": "A.java", "method": "m",
        "source": body, "buggy_lines": [3]})
        .to_string();
    let item =
        serde_json::json!({"id": "naming_1", "bug_id": "Big-1", "operator": "RenameVariable-1",
        "level": "naming", "source": changed, "summary": "renames `s`"})
        .to_string();
    let study = natstudy_core::store::studies::create(&db, None, "Big", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(&db, study, None, ("b", &bug), ("t", &item))
        .await
        .expect("items");
    db.close().await;
    let server = ServerProcess::start(dir.path(), &[]).expect("server");
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .expect("client");
    let r = client
        .post(server.url("/api/login"))
        .form(&[("username", "admin"), ("password", PW)])
        .send()
        .await
        .expect("login");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let before_kib = server.rss_kib().expect("rss");
    let asked = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(180),
        client
            .post(server.url("/api/studies/propose"))
            .form(&[
                ("study", study.to_string().as_str()),
                ("operators", "all"),
                ("all_sites", "on"),
            ])
            .send(),
    )
    .await
    .expect("answered within 3 minutes")
    .expect("answer");
    let status = r.status();
    let text = r.text().await.expect("body");
    let took = asked.elapsed();
    let peak_kib = server.peak_rss_kib().expect("rss");
    let grew_mib = peak_kib.saturating_sub(before_kib) / 1024;
    eprintln!(
        "preview of every operator at every site of a {kib} KiB method: {status} in {:.1} s, server +{grew_mib} MiB (peak {} MiB): {}",
        took.as_secs_f64(),
        peak_kib / 1024,
        text.chars().take(300).collect::<String>()
    );
    assert!(
        status.is_success() || text.contains("budget") || text.contains("stopped"),
        "results or a refusal in words: {status} {text}"
    );
    assert!(
        grew_mib < 1024,
        "the preview grew the server by {grew_mib} MiB"
    );
    if !status.is_success() {
        assert!(
            text.contains("choose fewer operators") || text.contains("natstudy transform"),
            "{text}"
        );
    }
}

/// A verification job is estimated before it starts (items × checks, a second each, over the
/// workers) and refused in words when the estimate is past its time budget; within it, it is
/// admitted. The small study's 3 items on one worker: about 3 s.
async fn a_verification_over_its_budget_is_refused_before_it_starts(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::small::items(&db, "Verified").await;
    let options = natstudy_engine::verify::Options {
        compiler: Some(Default::default()),
        tests: None,
        workers: 1,
    };
    let refused =
        natstudy_core::service::verification::admits(&db, study, &options, Duration::from_secs(2))
            .await
            .expect_err("over its budget");
    let said = refused.to_string();
    assert!(
        said.contains("3 items × 1 checks")
            && said.contains("over a job's time budget of 2 s")
            && said.contains("natstudy verify"),
        "{said}"
    );
    natstudy_core::service::verification::admits(&db, study, &options, Duration::from_secs(3))
        .await
        .expect("within its budget");
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs")
        .fetch_one(&db.pool)
        .await
        .expect("jobs");
    assert_eq!(jobs, 0, "nothing started");
    guard.drop_now(db).await;
}

on_both_stores!(a_verification_over_its_budget_is_refused_before_it_starts =>
    a_verification_over_its_budget_is_refused_before_it_starts_sqlite,
    a_verification_over_its_budget_is_refused_before_it_starts_postgres);

/// A neural scoring is estimated before a job is made (its weights' parameters, the study's
/// methods, this machine's cores, at an upper bound of a core's speed) and refused in words
/// when even that is past the budget; within it, it is admitted, and an n-gram model passes.
async fn a_scoring_over_its_budget_is_refused_before_it_starts(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::small::items(&db, "Scored").await;
    let models = tempfile::tempdir().expect("dir");
    let llama = models.path().join("llama");
    std::fs::create_dir_all(&llama).expect("dir");
    let reference = natstudy_tests::reference_dir().join("nlm/models/llama");
    for f in std::fs::read_dir(&reference).expect("reference model") {
        let f = f.expect("entry").path();
        if f.is_file() {
            std::fs::copy(&f, llama.join(f.file_name().expect("name"))).expect("copy");
        }
    }
    std::fs::write(models.path().join("tiny.arpa"), "\\data\\\n").expect("arpa");
    let admits = |model: &'static str, budget: Duration| {
        let (db, dir) = (db.clone(), models.path().to_owned());
        async move { natstudy_core::service::scoring::admits(&db, &dir, study, model, budget).await }
    };
    let refused = admits("llama", Duration::ZERO)
        .await
        .expect_err("over its budget");
    let said = refused.to_string();
    assert!(
        said.contains("with llama takes at least")
            && said.contains("over a job's time budget of 0 s")
            && said.contains("natstudy lm score"),
        "{said}"
    );
    admits("llama", Duration::from_secs(12 * 3600))
        .await
        .expect("within its budget");
    admits("tiny.arpa", Duration::ZERO)
        .await
        .expect("an n-gram model is not estimated");
    guard.drop_now(db).await;
}

on_both_stores!(a_scoring_over_its_budget_is_refused_before_it_starts =>
    a_scoring_over_its_budget_is_refused_before_it_starts_sqlite,
    a_scoring_over_its_budget_is_refused_before_it_starts_postgres);

/// An attention item's id from a hand-made request is bounded as the page's field is: a
/// longer one is refused in words, without being echoed back.
async fn an_attention_item_id_is_bounded(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::small::items(&db, "Gold").await;
    let long = "x".repeat(natstudy_core::service::monitor::MAX_ITEM_ID + 1);
    let said = natstudy_core::service::monitor::set_gold(&db, study, &long, "unnatural")
        .await
        .expect_err("too long")
        .to_string();
    assert!(
        said.contains("at most 1000 characters") && !said.contains(&long),
        "{said}"
    );
    natstudy_core::service::monitor::set_gold(&db, study, "naming_1", "unnatural")
        .await
        .expect("a real id");
    guard.drop_now(db).await;
}

on_both_stores!(an_attention_item_id_is_bounded =>
    an_attention_item_id_is_bounded_sqlite, an_attention_item_id_is_bounded_postgres);
