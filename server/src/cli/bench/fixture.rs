//! What the benchmarks stand on: a database (a temporary one unless `--database-url`), a
//! fresh study, percentiles, and the database's raw durable commit rate as the anchor.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::Global;
use crate::db::now_ms;
use crate::store::Db;

pub(crate) fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The benchmarks' database: `--database-url`, else a temporary SQLite file (removed with
/// the returned folder).
pub(crate) async fn bench_db(g: &Global) -> Result<(Db, Option<tempfile::TempDir>)> {
    match &g.database_url {
        Some(_) => Ok((g.db().await?, None)),
        None => {
            let dir = tempfile::tempdir()?;
            let url = Db::sqlite_url_in(dir.path())?;
            Ok((Db::connect(&url).await?, Some(dir)))
        }
    }
}

/// A fresh study of `items` bugs with one transformation each.
pub(crate) async fn bench_study(db: &Db, items: usize) -> Result<crate::ids::StudyId> {
    let name = format!("bench-{}", now_ms());
    let study = crate::store::studies::create(db, None, &name, "benchmark").await?;
    let mut bugs = String::new();
    let mut trs = String::new();
    for i in 0..items {
        bugs.push_str(&format!(
            "{{\"bug_id\": \"B-{i}\", \"project\": \"P\", \"file\": \"A.java\", \"method\": \"m\", \"source\": \"int m() {{ return {i}; }}\\n\", \"buggy_lines\": [1]}}\n"
        ));
        trs.push_str(&format!(
            "{{\"id\": \"naming_{i}\", \"bug_id\": \"B-{i}\", \"operator\": \"RenameVariable-1\", \"level\": \"naming\", \"source\": \"int m() {{ return {i} + 0; }}\\n\", \"summary\": \"s\"}}\n"
        ));
    }
    crate::service::import_items_text(db, study, None, ("bugs", &bugs), ("t", &trs)).await?;
    Ok(study)
}

/// Prints the database's raw durable commit rate, measured now, beside the votes/s just
/// measured: the ratio the vote path is judged by.
pub(crate) async fn commit_anchor(db: &Db, votes_per_s: f64) -> Result<()> {
    let commits = durable_commit_rate(db, Duration::from_secs(3)).await?;
    println!(
        "durable commits on the same database (one insert a transaction, one writer): {commits:.0}/s; \
         (votes/s × 2 transactions) / commits/s = {:.2}",
        votes_per_s * 2.0 / commits.max(1e-9)
    );
    Ok(())
}

/// The database's raw durable commit rate: one small insert a transaction, committed one after
/// another for `span`, on a scratch table dropped afterwards (the anchor for the vote path).
async fn durable_commit_rate(db: &Db, span: Duration) -> Result<f64> {
    use sqlx::Connection;
    let mut w = db.write().await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bench_commits (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
    )
    .execute(&mut *w)
    .await?;
    sqlx::query("DELETE FROM bench_commits")
        .execute(&mut *w)
        .await?;
    let start = Instant::now();
    let mut n = 0i64;
    while start.elapsed() < span {
        let mut tx = w.begin().await?;
        sqlx::query("INSERT INTO bench_commits (id, at) VALUES ($1, $2)")
            .bind(n)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    sqlx::query("DROP TABLE bench_commits")
        .execute(&mut *w)
        .await?;
    Ok(rate)
}
