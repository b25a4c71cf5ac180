//! How long a claim may be held: a study's hold from its measured times on item, each batch's
//! hold, and renewing the leases of a page that stays open.

use sqlx::Row;

use super::*;
use crate::store::group_commit::jobs::grouped;
use crate::store::{Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, BatchId, StudyId};

/// How long one claim's lease can be kept alive, in ms, by a page that stays open (its
/// heartbeat) or asks again, before the study has a measured time on item to go by: three times
/// the batch's lease, at least half an hour and at most two. A participant who reads slowly
/// keeps the item; a page left open — or a stranger's script that joins and beats without ever
/// answering — lets go of it, and the item goes to someone else. The same as SQL over a lease
/// length `$lease` (seconds).
pub fn max_hold_ms(lease_secs: i64) -> i64 {
    lease_secs
        .saturating_mul(3000)
        .clamp(MIN_HOLD_MS, MAX_HOLD_MS)
}
const MIN_HOLD_MS: i64 = 30 * 60 * 1000;
const MAX_HOLD_MS: i64 = 2 * 60 * 60 * 1000;

/// The longest hold once the study's time on item is known (`hold_ms`, from twice its 99th
/// percentile): never shorter than the lease itself, nor longer than two hours. The same as
/// the SQL of [`set_study_hold`].
pub fn study_hold_ms(from_times_ms: i64, lease_secs: i64) -> i64 {
    from_times_ms
        .max(lease_secs.saturating_mul(1000))
        .min(MAX_HOLD_MS)
}

/// Sets every batch's longest hold in the study from its time on item: `from_times_ms` (twice
/// the 99th percentile, in ms) within [`study_hold_ms`]'s bounds for each batch's lease, or no
/// hold of its own (`None`: too few measured votes yet).
pub async fn set_study_hold(
    db: &Db,
    study: StudyId,
    from_times_ms: Option<i64>,
) -> StoreResult<u64> {
    Ok(sqlx::query(
        "UPDATE batches SET hold_ms = CASE WHEN $2 IS NULL THEN NULL \
         WHEN $2 < 1000 * lease_secs THEN 1000 * lease_secs \
         WHEN $2 > 7200000 THEN 7200000 ELSE $2 END \
         WHERE study_id = $1",
    )
    .bind(study)
    .bind(from_times_ms)
    .execute(&mut *db.write().await?)
    .await?
    .rows_affected())
}

/// The measured times on item (seconds) of the study's votes: what its longest hold goes by.
pub async fn measured_times(db: &Db, study: StudyId) -> StoreResult<Vec<f64>> {
    Ok(sqlx::query_scalar(
        "SELECT v.time_secs FROM votes v JOIN items i ON i.id = v.item_id \
         WHERE i.study_id = $1 AND v.time_secs IS NOT NULL",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?)
}

/// The studies that have batches (whose leases a hold bounds).
pub async fn studies_with_batches(db: &Db) -> StoreResult<Vec<StudyId>> {
    Ok(
        sqlx::query_scalar("SELECT DISTINCT study_id FROM batches ORDER BY study_id")
            .fetch_all(&db.pool)
            .await?,
    )
}

/// The longest hold of each batch of the study (`None`: the lease's rule, no time to go by).
pub async fn study_holds(db: &Db, study: StudyId) -> StoreResult<Vec<(BatchId, Option<i64>)>> {
    let rows = sqlx::query("SELECT id, hold_ms FROM batches WHERE study_id = $1 ORDER BY id")
        .bind(study)
        .fetch_all(&db.pool)
        .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}

/// Renews the annotator's live leases in the study (the page is still open), in a group
/// commit like every claim, each within its claim's longest hold ([`max_hold_ms`]). Expired
/// leases stay expired.
pub async fn renew_leases(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
) -> StoreResult<u64> {
    grouped(db, study, move |conn, _shared| {
        Box::pin(async move {
            Ok(sqlx::query(concat!(
                "UPDATE assignments SET lease_expires_at = (SELECT ",
                renewed_until!("$1", "b.lease_secs", "assignments.created_at", "b.hold_ms"),
                " FROM batches b WHERE b.id = assignments.batch_id) \
                 WHERE annotator_id = $2 AND status = $4 AND lease_expires_at > $1 \
                 AND batch_id IN (SELECT id FROM batches WHERE study_id = $3)",
            ))
            .bind(now)
            .bind(annotator)
            .bind(study)
            .bind(AssignmentStatus::Leased)
            .execute(&mut *conn)
            .await?
            .rows_affected())
        })
    })
    .await
}
