//! Staff's hand on the queue: releasing an annotator's (or every idle annotator's) unrated
//! work, setting a batch's lease, moving work between annotators, reclaiming expired leases.

use sqlx::Row;

use super::*;
use crate::store::{audit, Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, BatchId, StudyId, UserId};

/// Items planned or leased for the annotator and not yet rated go back to the pool.
pub async fn release(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    actor: Option<UserId>,
) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    annotator_of(&mut tx, study, annotator).await?;
    let n = release_open(&mut tx, annotator).await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "annotator.release",
        &format!("annotator {annotator}: {n} items"),
    )
    .await?;
    tx.commit().await?;
    Ok(n)
}

/// Releases the live leases of every holder in the study who has done nothing (no request of
/// theirs) since `idle_since` (ms): the items go back to the queue at once, for others. The
/// (holders, items) released, with one audit row.
pub async fn release_idle(
    db: &Db,
    study: StudyId,
    idle_since: i64,
    now: i64,
    actor: Option<UserId>,
) -> StoreResult<(u64, u64)> {
    let mut tx = db.begin_write(study).await?;
    let holders: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT a.annotator_id FROM assignments a JOIN batches b ON b.id = a.batch_id \
         JOIN annotators an ON an.id = a.annotator_id \
         WHERE b.study_id = $1 AND a.status = $2 AND a.lease_expires_at > $3 \
         AND COALESCE(an.last_active, an.created_at) < $4 ORDER BY a.annotator_id",
    )
    .bind(study)
    .bind(AssignmentStatus::Leased)
    .bind(now)
    .bind(idle_since)
    .fetch_all(&mut *tx)
    .await?;
    let mut items = 0;
    for h in &holders {
        items += release_open(&mut tx, AnnotatorId(*h)).await?;
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "annotator.release_idle",
        &format!(
            "{} holders idle since {idle_since}: {items} items",
            holders.len()
        ),
    )
    .await?;
    tx.commit().await?;
    Ok((holders.len() as u64, items))
}

/// Sets a batch's lease length (seconds) for the claims made from now on; not found unless the
/// batch is the study's.
pub async fn set_lease(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    lease_secs: i64,
    actor: Option<UserId>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query("UPDATE batches SET lease_secs = $1 WHERE id = $2 AND study_id = $3")
        .bind(lease_secs)
        .bind(batch)
        .bind(study)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("batch {batch}")));
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "batch.lease",
        &format!("batch {batch}: {lease_secs} s"),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Moves the annotator's unrated items to another annotator (skipping items the other already has).
pub async fn move_unrated(
    db: &Db,
    study: StudyId,
    from: AnnotatorId,
    to: AnnotatorId,
    actor: Option<UserId>,
) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    annotator_of(&mut tx, study, from).await?;
    annotator_of(&mut tx, study, to).await?;
    let rows = sqlx::query("SELECT id, item_id, batch_id FROM assignments WHERE annotator_id = $1 AND status IN ($2, $3) ORDER BY position")
        .bind(from)
        .bind(AssignmentStatus::Assigned)
        .bind(AssignmentStatus::Leased)
        .fetch_all(&mut *tx)
        .await?;
    let mut moved = 0;
    // the end of the receiving annotator's order, found as a claim finds it
    let base: i64 = sqlx::query(concat!(
        "SELECT ",
        next_position!("$1", "$2", "$3", "$4", "$5")
    ))
    .bind(to)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .bind(AssignmentStatus::Done)
    .bind(AssignmentStatus::Released)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    for r in rows {
        let (id, item, batch): (i64, i64, i64) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        let has: bool = sqlx::query(
            "SELECT 1 FROM assignments WHERE item_id = $1 AND annotator_id = $2 AND status <> $3",
        )
        .bind(item)
        .bind(to)
        .bind(AssignmentStatus::Released)
        .fetch_optional(&mut *tx)
        .await?
        .is_some();
        sqlx::query("UPDATE assignments SET status = $2, lease_expires_at = NULL WHERE id = $1")
            .bind(id)
            .bind(AssignmentStatus::Released)
            .execute(&mut *tx)
            .await?;
        if has {
            continue;
        }
        sqlx::query("INSERT INTO batch_annotators (batch_id, annotator_id) VALUES ($1, $2) ON CONFLICT (batch_id, annotator_id) DO NOTHING")
            .bind(batch)
            .bind(to)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, created_at) VALUES ($1, $2, $3, $4, $6, $5) \
             ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = $6, lease_expires_at = NULL, position = excluded.position",
        )
        .bind(batch)
        .bind(item)
        .bind(to)
        .bind(base + moved as i64)
        .bind(crate::db::now_ms())
        .bind(AssignmentStatus::Assigned)
        .execute(&mut *tx)
        .await?;
        moved += 1;
    }
    claims_released(&mut tx, Whose::Annotator(from)).await?;
    // the receiver's plan grew (and its look stays: it only took items)
    recount_fixed(&mut tx, Whose::Annotator(to)).await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "annotator.move",
        &format!("{moved} items from annotator {from} to {to}"),
    )
    .await?;
    tx.commit().await?;
    Ok(moved)
}

/// Marks expired leases released (leases already stop counting when they expire; this makes
/// the monitor show them as free).
pub async fn reclaim_expired(db: &Db, study: StudyId, now: i64) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query(
        "UPDATE assignments SET status = $3 WHERE status = $4 AND lease_expires_at <= $1 \
         AND batch_id IN (SELECT id FROM batches WHERE study_id = $2)",
    )
    .bind(now)
    .bind(study)
    .bind(AssignmentStatus::Released)
    .bind(AssignmentStatus::Leased)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n > 0 {
        claims_released(&mut tx, Whose::Study(study)).await?;
    }
    tx.commit().await?;
    Ok(n)
}
