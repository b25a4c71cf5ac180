//! Background jobs: a row per job that the instance running it updates, so every instance (and
//! every browser polling any of them) sees the same progress.

use sqlx::Row;

use super::{Db, StoreResult};
use crate::db::now_ms;
use app::model::JobRow;

pub async fn create(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    kind: &str,
    label: &str,
) -> StoreResult<i64> {
    let now = now_ms();
    let id: i64 = sqlx::query(
        "INSERT INTO jobs (study_id, kind, label, state, started_by, started_at, updated_at) \
         VALUES ($1, $2, $3, 'running', $4, $5, $5) RETURNING id",
    )
    .bind(study)
    .bind(kind)
    .bind(label)
    .bind(actor)
    .bind(now)
    .fetch_one(&db.pool)
    .await?
    .try_get(0)?;
    Ok(id)
}

pub async fn progress(db: &Db, job: i64, done: u64, total: u64) -> StoreResult<()> {
    sqlx::query("UPDATE jobs SET done = $2, total = $3, updated_at = $4 WHERE id = $1")
        .bind(job)
        .bind(done as i64)
        .bind(total as i64)
        .bind(now_ms())
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Ends a job: `done` or `failed`, with a message for people.
pub async fn finish(db: &Db, job: i64, state: &str, message: &str) -> StoreResult<()> {
    sqlx::query("UPDATE jobs SET state = $2, message = $3, updated_at = $4 WHERE id = $1")
        .bind(job)
        .bind(state)
        .bind(message)
        .bind(now_ms())
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// The study's jobs, newest first.
pub async fn list(db: &Db, study: i64) -> StoreResult<Vec<JobRow>> {
    let rows = sqlx::query(
        "SELECT id, kind, label, state, done, total, message, started_at, updated_at FROM jobs \
         WHERE study_id = $1 ORDER BY id DESC LIMIT 20",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(JobRow {
                id: r.try_get("id")?,
                kind: r.try_get("kind")?,
                label: r.try_get("label")?,
                state: r.try_get("state")?,
                done: r.try_get("done")?,
                total: r.try_get("total")?,
                message: r.try_get("message")?,
                started_at_ms: r.try_get("started_at")?,
                updated_at_ms: r.try_get("updated_at")?,
            })
        })
        .collect()
}
