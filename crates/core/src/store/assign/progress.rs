//! An annotator's progress (done, fixed, queued) and the study's ratings per item.

use sqlx::Row;

use super::*;
use crate::store::{Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// The three columns of an annotator's progress (`done`, `fixed`, `queued`) as scalar
/// subqueries, for a query that binds the annotator as `$1`, the study as `$2` and the dynamic
/// queue's strategy as `$3` ([`bind_progress`]); [`progress_of`] reads them back. None grows
/// with the annotator's history: `done` and `fixed` are counts the annotator's row keeps
/// (`annotators.done_count`, migration 0015, kept by the votes that make assignments done;
/// `annotators.fixed_count`, migration 0016, the assignments of fixed-group batches not
/// released, kept by the claims and counted again by what plans, moves or releases them,
/// [`recount_fixed`]) — counted here, they read the annotator's whole history or plan on every
/// survey page; `queued` adds up the sizes of the annotator's dynamic batches.
macro_rules! progress_columns {
    () => {
        "COALESCE((SELECT an.done_count FROM annotators an WHERE an.id = $1 AND an.study_id = $2), 0) AS done, \
         COALESCE((SELECT an.fixed_count FROM annotators an WHERE an.id = $1 AND an.study_id = $2), 0) AS fixed, \
         (SELECT CAST(COALESCE(SUM(b.item_count), 0) AS BIGINT) FROM batches b JOIN batch_annotators ba ON ba.batch_id = b.id \
          WHERE ba.annotator_id = $1 AND b.study_id = $2 AND b.strategy = $3) AS queued"
    };
}
pub(crate) use progress_columns;

/// Binds `$1`..`$3` of a query with [`progress_columns!`].
pub(crate) fn bind_progress<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    study: StudyId,
    annotator: AnnotatorId,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(annotator).bind(study).bind(Strategy::DynamicQueue)
}

/// (rated, total) from a row with [`progress_columns!`]: total counts the items planned for
/// (or rated by) the annotator in fixed-group batches and every item of their dynamic batches
/// (`batches.item_count`, written when the batch is made: no count of the batch per page).
pub(crate) fn progress_of(r: &sqlx::any::AnyRow) -> StoreResult<(i64, i64)> {
    let done: i64 = r.try_get("done")?;
    let total: i64 = r.try_get::<i64, _>("fixed")? + r.try_get::<i64, _>("queued")?;
    Ok((done, total.max(done)))
}

/// (rated, total) for the annotator's progress bar (see [`progress_of`]).
pub async fn progress(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<(i64, i64)> {
    let q = sqlx::query(concat!("SELECT ", progress_columns!()));
    let r = bind_progress(q, study, annotator)
        .fetch_one(&db.pool)
        .await?;
    progress_of(&r)
}

/// Whether work may still come to the annotator from their own side of the queue: a claim of
/// theirs is open (planned, or leased and live), or an item of one of their batches has room
/// for them — the queue's own checks (`candidate_checks!`: fewer than k ratings and live claims
/// that count, no claim or vote of theirs). An annotator who let a lease lapse without ever
/// answering gets no new lease (`LAPSED_UNANSWERED_SQL`), so no item with room counts for
/// them. What others hold is `survey::work_may_come`. The server's finish asks both before it
/// gives a completion code: a code is for the N items asked or for all the work there was,
/// never because a request asked for one.
pub async fn work_left(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
) -> StoreResult<bool> {
    let held: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a JOIN batches b ON b.id = a.batch_id          WHERE a.annotator_id = $1 AND b.study_id = $2          AND (a.status = $3 OR (a.status = $4 AND a.lease_expires_at > $5))",
    )
    .bind(annotator)
    .bind(study)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .bind(now)
    .fetch_one(&db.pool)
    .await?;
    if held > 0 {
        return Ok(true);
    }
    if lapsed_unanswered(db, annotator, now).await? {
        return Ok(false);
    }
    let k = ratings_per_item(db, study).await?;
    let free: Option<i64> = sqlx::query_scalar(concat!(
        "SELECT bi.item_id FROM batch_annotators ba JOIN batches b ON b.id = ba.batch_id          JOIN batch_items bi ON bi.batch_id = b.id          WHERE ba.annotator_id = $1 AND b.study_id = $2 AND bi.rated_full = 0 AND ",
        candidate_checks!("$1", "$7", "$4", "$5", "$3", "$6"),
        " LIMIT 1"
    ))
    .bind(annotator)
    .bind(study)
    .bind(now)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .bind(k)
    .bind(AssignmentStatus::Released)
    .fetch_optional(&db.pool)
    .await?;
    Ok(free.is_some())
}

/// Whether the annotator let a hold lapse without ever answering (`LAPSED_UNANSWERED_SQL`):
/// no new lease comes to them, and their page says so rather than that the study is full.
pub async fn lapsed_unanswered(db: &Db, annotator: AnnotatorId, now: i64) -> StoreResult<bool> {
    let lapsed = sqlx::query(super::queue::LAPSED_UNANSWERED_SQL)
        .bind(annotator)
        .bind(now)
        .bind(AssignmentStatus::Leased)
        .bind(AssignmentStatus::Released)
        .fetch_optional(&db.pool)
        .await?;
    Ok(lapsed.is_some())
}

/// Completed ratings per item of the study (item id, count), for invariant checks and monitoring.
pub async fn completed_per_item(db: &Db, study: StudyId) -> StoreResult<Vec<(ItemId, i64)>> {
    let rows = sqlx::query(
        "SELECT i.id, (SELECT COUNT(*) FROM votes v WHERE v.item_id = i.id AND v.counted = 1) AS n FROM items i WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}
