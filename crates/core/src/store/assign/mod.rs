//! Batches, assignments, leases and votes: the invariant that no item ever gets more than k
//! completed ratings, whatever the interleaving, lives here.
//!
//! Every check-then-write runs in `Db::begin_write(study)`, which serialises writers of a study
//! (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock on the study id), or in a group
//! commit (`db::group_commit`). On PostgreSQL the groups of several instances run at the same
//! time (they hold the study's lock shared), so the survey's own checks are serialised per
//! item: a claim locks its candidates and checks the room again before it writes
//! (`queue.rs`), a vote on an expired lease locks its item and reads again (`votes.rs`).

use sqlx::Row;

use super::{AssignmentStatus, Db, StoreError, StoreResult};
use natstudy_engine::assignment;
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

#[macro_use]
mod sql;
mod batches;
mod hold;
mod progress;
mod queue;
mod release;
#[macro_use]
mod vote_sql;
mod votes;

pub use batches::*;
pub use hold::*;
pub use progress::*;
pub use queue::*;
pub use release::*;
pub use votes::*;

/// Annotators `S1..Sn` of the study (created when missing), in code order.
pub async fn ensure_pool(db: &Db, study: StudyId, n: usize) -> StoreResult<Vec<AnnotatorId>> {
    let mut tx = db.begin_write(study).await?;
    let ids = pool_in(&mut tx, study, n, crate::db::now_ms()).await?;
    tx.commit().await?;
    Ok(ids)
}

/// [`ensure_pool`] inside a write transaction (a batch's own: `batches::Joining`).
pub(crate) async fn pool_in(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    n: usize,
    now: i64,
) -> StoreResult<Vec<AnnotatorId>> {
    let mut ids = Vec::with_capacity(n);
    for i in 1..=n {
        let code = format!("S{i}");
        sqlx::query("INSERT INTO annotators (study_id, code, created_at) VALUES ($1, $2, $3) ON CONFLICT (study_id, code) DO NOTHING")
            .bind(study)
            .bind(&code)
            .bind(now)
            .execute(&mut *conn)
            .await?;
        let id = sqlx::query("SELECT id FROM annotators WHERE study_id = $1 AND code = $2")
            .bind(study)
            .bind(&code)
            .fetch_one(&mut *conn)
            .await?
            .try_get(0)?;
        ids.push(id);
    }
    Ok(ids)
}

pub async fn annotator_id(db: &Db, study: StudyId, code: &str) -> StoreResult<AnnotatorId> {
    sqlx::query("SELECT id FROM annotators WHERE study_id = $1 AND code = $2")
        .bind(study)
        .bind(code)
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("annotator {code}")))
}

/// The study's k, read inside a write transaction (so a change of k cannot interleave).
async fn k_in(conn: &mut sqlx::AnyConnection, study: StudyId) -> StoreResult<i64> {
    Ok(
        sqlx::query("SELECT ratings_per_item FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
            .try_get(0)?,
    )
}

/// The study's items per participant (N; `None`: all they can be given).
async fn per_participant_in(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
) -> StoreResult<Option<i64>> {
    Ok(
        sqlx::query("SELECT items_per_participant FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
            .try_get(0)?,
    )
}

/// Whose fixed-group count ([`recount_fixed`]) is counted again.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Whose {
    Annotator(AnnotatorId),
    /// Every annotator of the study.
    Study(StudyId),
}

/// The annotator's assignments in fixed-group batches that are not released, counted, as the
/// value of `annotators.fixed_count` (the progress bar's total for fixed groups; `$1` the
/// annotator's id as SQL, `$2`.. bound by [`recount_fixed`]).
macro_rules! fixed_count_of {
    ($annotator:literal) => {
        concat!(
            "(SELECT COUNT(*) FROM assignments a JOIN batches b ON b.id = a.batch_id \
             WHERE a.annotator_id = ",
            $annotator,
            " AND b.strategy = $2 AND a.status IN ($3, $4, $5))"
        )
    };
}

/// Counts again the fixed-group count (`annotators.fixed_count`, migration 0016) of `whose`,
/// in the caller's transaction, after a change of which assignments it holds other than a
/// claim: a plan made, items moved, claims released. A claim keeps it itself, in its group
/// (`Shared::claimed_fixed`); a vote does not change it. These changes are rare and done under
/// the study's write lock: counting the plan there keeps every survey page from counting it.
pub(crate) async fn recount_fixed(conn: &mut sqlx::AnyConnection, whose: Whose) -> StoreResult<()> {
    let (sql, id) = match whose {
        Whose::Annotator(a) => (
            concat!(
                "UPDATE annotators SET fixed_count = ",
                fixed_count_of!("annotators.id"),
                " WHERE id = $1"
            ),
            a.get(),
        ),
        Whose::Study(s) => (
            concat!(
                "UPDATE annotators SET fixed_count = ",
                fixed_count_of!("annotators.id"),
                " WHERE study_id = $1"
            ),
            s.get(),
        ),
    };
    sqlx::query(sql)
        .bind(id)
        .bind(Strategy::FixedGroups)
        .bind(AssignmentStatus::Done)
        .bind(AssignmentStatus::Assigned)
        .bind(AssignmentStatus::Leased)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Sets back where `whose` claims begin to look (`annotators.own_from`, migration 0017;
/// see `queue.rs`'s `own_to!`) to the beginning of the batch, in the caller's transaction:
/// after anything that may give an item before it room for the annotator again — their claims
/// released (the item is theirs no more), a change of k, a vote import or a new batch (an item
/// with k ratings may have room again).
pub(crate) async fn forget_own(conn: &mut sqlx::AnyConnection, whose: Whose) -> StoreResult<()> {
    let (sql, id) = match whose {
        Whose::Annotator(a) => (
            "UPDATE annotators SET own_from = NULL WHERE id = $1 AND own_from IS NOT NULL",
            a.get(),
        ),
        Whose::Study(s) => (
            "UPDATE annotators SET own_from = NULL WHERE study_id = $1 AND own_from IS NOT NULL",
            s.get(),
        ),
    };
    sqlx::query(sql).bind(id).execute(&mut *conn).await?;
    Ok(())
}

/// After claims of `whose` were released, in the same transaction: their fixed-group count
/// is counted again ([`recount_fixed`]) and where their claims begin to look is set back
/// ([`forget_own`]).
pub(crate) async fn claims_released(
    conn: &mut sqlx::AnyConnection,
    whose: Whose,
) -> StoreResult<()> {
    recount_fixed(conn, whose).await?;
    forget_own(conn, whose).await
}

/// Releases the annotator's open claims (planned or leased) on items that already have k
/// ratings — imported votes count, and k may have been lowered — or that the annotator already
/// rated (an imported vote), so they are never handed out again and nobody loops on an item
/// the vote would refuse.
async fn release_full(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
    k: i64,
) -> StoreResult<u64> {
    let n = sqlx::query(
        "UPDATE assignments SET status = $4, lease_expires_at = NULL \
         WHERE annotator_id = $1 AND status IN ($5, $6) \
         AND batch_id IN (SELECT id FROM batches WHERE study_id = $2) \
         AND ((SELECT COUNT(*) FROM votes v WHERE v.item_id = assignments.item_id AND v.counted = 1) >= $3 \
              OR EXISTS (SELECT 1 FROM votes mv WHERE mv.item_id = assignments.item_id \
                         AND mv.annotator_id = assignments.annotator_id))",
    )
    .bind(annotator)
    .bind(study)
    .bind(k)
    .bind(AssignmentStatus::Released)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    claims_released(conn, Whose::Annotator(annotator)).await?;
    Ok(n)
}

/// Gives the annotator's open claims (planned or leased, not rated) back to the pool, in the
/// caller's transaction; returns how many.
pub(crate) async fn release_open(
    conn: &mut sqlx::AnyConnection,
    annotator: AnnotatorId,
) -> StoreResult<u64> {
    let n = sqlx::query(
        "UPDATE assignments SET status = $2, lease_expires_at = NULL WHERE annotator_id = $1 AND status IN ($3, $4)",
    )
    .bind(annotator)
    .bind(AssignmentStatus::Released)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    claims_released(conn, Whose::Annotator(annotator)).await?;
    Ok(n)
}

/// The study's k (ratings per item).
pub async fn ratings_per_item(db: &Db, study: StudyId) -> StoreResult<i64> {
    Ok(
        sqlx::query("SELECT ratings_per_item FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(&db.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
            .try_get(0)?,
    )
}

/// An item's place in its batch's order (`batch_items.queue_rank`): a hash of the batch's seed
/// and the item (SplitMix64's finaliser), so the queue's order is fixed, seeded and spread over
/// bugs.
pub(super) fn queue_rank(seed: u64, item: ItemId) -> i64 {
    let mut z = seed ^ (item.get() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 1) as i64
}

/// The annotator's own order among the candidates at the queue's front (the batch's order
/// drawn again from the annotator's seed): the participants who share the front items meet
/// them each in another order, so an item's place in a session is not the same for all.
pub fn own_order(seed: u64, annotator: AnnotatorId, item: ItemId) -> i64 {
    queue_rank(assignment::annotator_seed(seed, annotator.get()), item)
}

/// Keeps the queue's index current for every item of the study (after votes were imported,
/// a batch was created, or k changed), in the caller's transaction.
pub(crate) async fn refresh_full_study(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE batch_items SET rated_full = CASE WHEN \
         (SELECT COUNT(*) FROM votes v WHERE v.item_id = batch_items.item_id AND v.counted = 1) \
         >= (SELECT ratings_per_item FROM studies WHERE id = $1) THEN 1 ELSE 0 END \
         WHERE batch_id IN (SELECT id FROM batches WHERE study_id = $1)",
    )
    .bind(study)
    .execute(&mut *conn)
    .await?;
    forget_own(conn, Whose::Study(study)).await
}

/// Which side shows the original, randomised per participant and item when the study asks
/// for it (recorded on the assignment), else always left.
fn original_left(seed: u64, annotator: AnnotatorId, item: ItemId) -> i64 {
    let h = assignment::annotator_seed(seed, annotator.get())
        ^ (item.get() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    i64::from(h.rotate_left(17) & 1 == 0)
}

/// Refuses an annotator id that is not of this study.
async fn annotator_of(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
) -> StoreResult<()> {
    sqlx::query("SELECT 1 FROM annotators WHERE id = $1 AND study_id = $2")
        .bind(annotator)
        .bind(study)
        .fetch_optional(&mut *conn)
        .await?
        .map(|_| ())
        .ok_or_else(|| StoreError::NotFound(format!("annotator {annotator} in this study")))
}
