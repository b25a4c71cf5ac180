//! `natstudy bench http` runs the survey over real HTTP against servers in its process, or
//! against servers running in processes of their own: here a small run to the end of the
//! queue on SQLite, and on PostgreSQL with two instances on one database, analysed after the
//! set-up, and with two `natstudy serve` processes on one database — every item ends with
//! exactly k votes, every participant's request answered.
//! (Its figures are measured by running it, never asserted here.)

use natstudy_tests::{fresh_db, natstudy_bin, ServerProcess, Store};

/// Runs `natstudy [--database-url URL] bench http …` and returns its output.
fn bench_http(url: Option<&str>, extra: &[&str]) -> String {
    let mut cmd = std::process::Command::new(natstudy_bin().expect("natstudy binary"));
    if let Some(url) = url {
        cmd.args(["--database-url", url]);
    }
    cmd.args([
        "bench",
        "http",
        "--participants",
        "24",
        "--items",
        "30",
        "--think",
        "0",
        "--duration",
        "120",
    ])
    .args(extra)
    .env("RUST_LOG", "error");
    let out = cmd.output().expect("run natstudy bench http");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn check(text: &str) {
    // 30 items × k = 5: the participants empty the queue long before the time is up
    assert!(
        text.contains("acknowledged votes: 150 ="),
        "every item rated k times: {text}"
    );
    assert!(text.contains("errors: 0"), "{text}");
    assert!(text.contains("items over k: 0"), "{text}");
    assert!(
        text.contains("joins (invite + consent + guideline): 24 "),
        "{text}"
    );
    assert!(
        text.contains("durable commits on the same database"),
        "{text}"
    );
}

#[test]
fn bench_http_runs_the_survey_to_the_end_on_sqlite() {
    check(&bench_http(None, &[]));
}

#[tokio::test]
async fn bench_http_runs_two_instances_on_one_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let url = guard.url().expect("url");
    let text = tokio::task::spawn_blocking(move || {
        bench_http(Some(&url), &["--instances", "2", "--analyze"])
    })
    .await
    .expect("bench");
    assert!(text.contains("2 instance(s)"), "{text}");
    // planned with statistics, as a running instance is (autovacuum)
    assert!(
        text.contains("Postgres (analysed after the set-up)"),
        "{text}"
    );
    check(&text);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn bench_http_drives_servers_of_their_own_on_one_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let url = guard.url().expect("url");
    let dirs = [
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    ];
    // one after the other: the first migrates the database
    let servers: Vec<ServerProcess> = dirs
        .iter()
        .map(|d| {
            ServerProcess::start(
                d.path(),
                &[
                    "--database-url",
                    &url,
                    "--join-burst",
                    "0",
                    "--max-connections-per-client",
                    "0",
                ],
            )
            .expect("server")
        })
        .collect();
    let list = servers
        .iter()
        .map(|s| s.base.clone())
        .collect::<Vec<_>>()
        .join(",");
    let text = tokio::task::spawn_blocking(move || bench_http(Some(&url), &["--servers", &list]))
        .await
        .expect("bench");
    assert!(text.contains("2 server(s) of their own"), "{text}");
    assert!(text.contains("this process — the load client —"), "{text}");
    check(&text);
    drop(servers);
    guard.drop_now(db).await;
}
