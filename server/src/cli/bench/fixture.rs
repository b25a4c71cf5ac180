//! What the benchmarks stand on: a database (a temporary one unless `--database-url`),
//! percentiles, and the database's raw durable commit rate as the anchor (`natstudy_core::bench`
//! holds the study and the measurements that reach the data).

use std::time::Duration;

use anyhow::Result;

use crate::cli::Global;
use natstudy_core::service::Db;

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

/// Prints the database's raw durable commit rate, measured now, beside the votes/s just
/// measured: the ratio the vote path is judged by.
pub(crate) async fn commit_anchor(db: &Db, votes_per_s: f64) -> Result<()> {
    let commits = natstudy_core::bench::durable_commit_rate(db, Duration::from_secs(3)).await?;
    println!(
        "durable commits on the same database (one insert a transaction, one writer): {commits:.0}/s; \
         (votes/s × 2 transactions) / commits/s = {:.2}",
        votes_per_s * 2.0 / commits.max(1e-9)
    );
    Ok(())
}
