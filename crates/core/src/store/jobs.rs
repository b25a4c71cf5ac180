//! Background jobs: a row per job that the instance running it updates, so every instance (and
//! every browser polling any of them) sees the same progress.

use sqlx::Row;

use super::{Db, JobKind, JobState, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{JobId, StudyId, UserId};

/// A new job, `queued` until its runner gets a slot; `params` (JSON) say what to run again.
pub async fn create(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    kind: JobKind,
    label: &str,
    params: &str,
) -> StoreResult<JobId> {
    let now = now_ms();
    let id: JobId = sqlx::query(
        "INSERT INTO jobs (study_id, kind, label, state, started_by, started_at, updated_at, params) \
         VALUES ($1, $2, $3, $7, $4, $5, $5, $6) RETURNING id",
    )
    .bind(study)
    .bind(kind)
    .bind(label)
    .bind(actor)
    .bind(now)
    .bind(params)
    .bind(JobState::Queued)
    .fetch_one(&mut *db.write().await?)
    .await?
    .try_get(0)?;
    Ok(id)
}

/// What a running job has done and how fast, as written into its row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// Tokens scored so far (0 where the work does not count tokens).
    pub tokens: u64,
    /// Milliseconds the job has been counting (since its work began, a model's load left out).
    pub counting_ms: u64,
    /// What the job expects still to take; `None` until it can tell.
    pub eta_ms: Option<u64>,
    /// Bytes of its model's tensors read, of all, while the model loads (0 of 0: no load).
    pub load_read: u64,
    pub load_of: u64,
}

impl Progress {
    /// `done` of `total`, with no pace.
    pub fn of(done: u64, total: u64) -> Progress {
        Progress {
            done,
            total,
            ..Default::default()
        }
    }
}

/// Writes the job's progress; a queued job reads as running from then on. The answer says
/// whether someone asked it to stop.
pub async fn progress(db: &Db, job: JobId, p: Progress) -> StoreResult<bool> {
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let stop: Option<i64> = sqlx::query_scalar(
        "UPDATE jobs SET done = $2, total = $3, updated_at = $4, \
         state = CASE WHEN state = $5 THEN $6 ELSE state END, \
         tokens = $7, counting_ms = $8, eta_ms = $9, load_read = $10, load_of = $11 \
         WHERE id = $1 RETURNING stop_requested",
    )
    .bind(job)
    .bind(int(p.done))
    .bind(int(p.total))
    .bind(now_ms())
    .bind(JobState::Queued)
    .bind(JobState::Running)
    .bind(int(p.tokens))
    .bind(int(p.counting_ms))
    .bind(p.eta_ms.map(int))
    .bind(int(p.load_read))
    .bind(int(p.load_of))
    .fetch_optional(&mut *db.write().await?)
    .await?;
    Ok(stop.is_some_and(|s| s != 0))
}

/// Whether someone asked the job to stop.
pub async fn stop_requested(db: &Db, job: JobId) -> StoreResult<bool> {
    let flag: Option<i64> = sqlx::query_scalar("SELECT stop_requested FROM jobs WHERE id = $1")
        .bind(job)
        .fetch_optional(&db.pool)
        .await?;
    Ok(flag.is_some_and(|f| f != 0))
}

/// The runner's move of a queued job to `running` once it has a slot: false when the job is
/// no longer queued (stopped while it waited, or failed by the reaper) — its work must not run.
pub async fn start(db: &Db, job: JobId) -> StoreResult<bool> {
    Ok(
        sqlx::query("UPDATE jobs SET state = $2, updated_at = $3 WHERE id = $1 AND state = $4")
            .bind(job)
            .bind(JobState::Running)
            .bind(now_ms())
            .bind(JobState::Queued)
            .execute(&mut *db.write().await?)
            .await?
            .rows_affected()
            == 1,
    )
}

/// Asks a queued or running job of the study to stop: a queued one is `stopped` at once, a
/// running one is flagged for its runner (which reads the flag with its progress writes).
/// Returns the job's state after the request; `None` when the study has no such job, or it
/// has ended.
pub async fn request_stop(db: &Db, study: StudyId, job: JobId) -> StoreResult<Option<JobState>> {
    // every expression of SET reads the row as it was
    Ok(sqlx::query_scalar(
        "UPDATE jobs SET stop_requested = 1, \
         state = CASE WHEN state = $3 THEN $5 ELSE state END, \
         message = CASE WHEN state = $3 THEN $6 ELSE message END, \
         updated_at = CASE WHEN state = $3 THEN $7 ELSE updated_at END \
         WHERE id = $1 AND study_id = $2 AND state IN ($3, $4) RETURNING state",
    )
    .bind(job)
    .bind(study)
    .bind(JobState::Queued)
    .bind(JobState::Running)
    .bind(JobState::Stopped)
    .bind("stopped before it started: nothing stored")
    .bind(now_ms())
    .fetch_optional(&mut *db.write().await?)
    .await?)
}

/// The runner's heartbeat, while the job is queued or running (the move to `running` is
/// [`start`]'s).
pub async fn heartbeat(db: &Db, job: JobId) -> StoreResult<()> {
    sqlx::query("UPDATE jobs SET updated_at = $2 WHERE id = $1 AND state IN ($3, $4)")
        .bind(job)
        .bind(now_ms())
        .bind(JobState::Queued)
        .bind(JobState::Running)
        .execute(&mut *db.write().await?)
        .await?;
    Ok(())
}

/// Fails every queued or running job whose runner has not beaten for `stale_ms`: the process
/// running it died. Returns how many.
pub async fn fail_stale(db: &Db, now: i64, stale_ms: i64) -> StoreResult<u64> {
    Ok(sqlx::query(
        "UPDATE jobs SET state = $4, message = $2, updated_at = $1, eta_ms = NULL \
         WHERE state IN ($5, $6) AND updated_at < $3",
    )
    .bind(now)
    .bind(format!(
        "interrupted: the server running it stopped (no heartbeat for {} s); run it again",
        stale_ms / 1000
    ))
    .bind(now - stale_ms)
    .bind(JobState::Failed)
    .bind(JobState::Queued)
    .bind(JobState::Running)
    .execute(&mut *db.write().await?)
    .await?
    .rows_affected())
}

/// A job of the study: (kind, state, params).
pub async fn get(
    db: &Db,
    study: StudyId,
    job: JobId,
) -> StoreResult<Option<(JobKind, JobState, String)>> {
    let row = sqlx::query("SELECT kind, state, params FROM jobs WHERE id = $1 AND study_id = $2")
        .bind(job)
        .bind(study)
        .fetch_optional(&db.pool)
        .await?;
    Ok(row
        .map(|r| Ok::<_, sqlx::Error>((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .transpose()?)
}

/// Ends a job: `done` or `failed`, with a message for people.
pub async fn finish(db: &Db, job: JobId, state: JobState, message: &str) -> StoreResult<()> {
    // an ended job expects nothing more
    sqlx::query(
        "UPDATE jobs SET state = $2, message = $3, updated_at = $4, eta_ms = NULL WHERE id = $1",
    )
    .bind(job)
    .bind(state)
    .bind(message)
    .bind(now_ms())
    .execute(&mut *db.write().await?)
    .await?;
    Ok(())
}

/// A background job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub id: JobId,
    pub kind: JobKind,
    pub label: String,
    pub state: JobState,
    pub done: i64,
    pub total: i64,
    pub message: String,
    pub started_at_ms: i64,
    pub updated_at_ms: i64,
    /// Someone asked the job to stop.
    pub stop_requested: bool,
    pub tokens: i64,
    pub counting_ms: i64,
    pub eta_ms: Option<i64>,
    /// Bytes of its model's tensors read, of all, while the model loads.
    pub load_read: i64,
    pub load_of: i64,
}

/// The study's jobs, newest first.
pub async fn list(db: &Db, study: StudyId) -> StoreResult<Vec<JobRecord>> {
    let rows = sqlx::query(
        "SELECT id, kind, label, state, done, total, message, started_at, updated_at, \
         stop_requested, tokens, counting_ms, eta_ms, load_read, load_of FROM jobs \
         WHERE study_id = $1 ORDER BY id DESC LIMIT 20",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(JobRecord {
                id: r.try_get("id")?,
                kind: r.try_get("kind")?,
                label: r.try_get("label")?,
                state: r.try_get("state")?,
                done: r.try_get("done")?,
                total: r.try_get("total")?,
                message: r.try_get("message")?,
                started_at_ms: r.try_get("started_at")?,
                updated_at_ms: r.try_get("updated_at")?,
                stop_requested: r.try_get::<i64, _>("stop_requested")? != 0,
                tokens: r.try_get("tokens")?,
                counting_ms: r.try_get("counting_ms")?,
                eta_ms: r.try_get("eta_ms")?,
                load_read: r.try_get("load_read")?,
                load_of: r.try_get("load_of")?,
            })
        })
        .collect()
}
