//! The queue: the next item (a live lease, a planned assignment, or a new lease on an item with
//! room), lease renewal and reclaim, releasing and moving an annotator's work, progress.

use sqlx::Row;

use super::*;
use crate::db::Dialect;
use crate::store::group_commit::jobs::grouped;
use crate::store::group_commit::shared::Shared;
use crate::store::{audit, Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, BatchId, ItemId, StudyId, UserId};

/// An item handed to an annotator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handed {
    pub assignment: i64,
    pub item: ItemId,
    pub batch: BatchId,
    pub original_left: bool,
    pub lease_expires_at: Option<i64>,
}

pub(super) fn handed(r: &sqlx::any::AnyRow) -> StoreResult<Handed> {
    Ok(Handed {
        assignment: r.try_get("id")?,
        item: r.try_get("item_id")?,
        batch: r.try_get("batch_id")?,
        original_left: r.try_get::<i64, _>("original_left")? != 0,
        lease_expires_at: r.try_get("lease_expires_at")?,
    })
}

/// The annotator's next item: a live lease (renewed), else the first planned assignment, else
/// a new lease on an item of one of their batches with room left (fewer than k ratings —
/// online or imported — plus planned and live-leased claims), never one they already have or
/// rated. Claims on items that became full are released first. Runs in a group commit: the
/// lease is durable when this returns.
pub async fn next_item(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
) -> StoreResult<Option<Handed>> {
    grouped(db, study, move |conn, shared| {
        Box::pin(next_item_in(conn, shared, study, annotator, now, false))
    })
    .await
}

/// Whether the annotator let a lease lapse without ever answering: a claim of theirs ran out
/// (leased or released after its expiry, `$2` now; a release by staff clears the expiry) and
/// they have no vote. Such an annotator gets no new lease: 15 joins that took a 3-item study's
/// items, let them lapse and asked again took them again ahead of the real participant, each
/// claim restarting the hold.
const LAPSED_UNANSWERED_SQL: &str =
    "SELECT 1 FROM annotators an WHERE an.id = $1 AND an.done_count = 0 \
     AND EXISTS (SELECT 1 FROM assignments a WHERE a.annotator_id = $1 AND a.status IN ($3, $4) \
     AND a.lease_expires_at IS NOT NULL AND a.lease_expires_at <= $2)";

/// A candidate for a new lease: its place in its batch's order and what the lease needs.
struct Candidate {
    rank: i64,
    same_bug: bool,
    item: ItemId,
    batch: BatchId,
    lease_secs: i64,
    seed: i64,
    /// Of a fixed-group batch: the claim adds to the annotator's fixed-group count.
    fixed: bool,
}

/// Candidates the queue looks at per batch: enough to step over an item of the bug the
/// annotator just rated.
const CANDIDATES: i64 = 8;

/// The queue's one rule, as SQL: item `$item` has room when its ratings (online or imported)
/// and its live claims — planned (`$assigned`) or leased (`$leased`) until after `$now` —
/// number fewer than k (`$k`), of those that count (`counted`: not a pilot's, not an excluded
/// participant's, whose ratings would not count either). The candidates, the claim and the queue's front all ask it.
macro_rules! has_room {
    ($item:literal, $assigned:literal, $leased:literal, $now:literal, $k:literal) => {
        concat!(
            "(SELECT COUNT(*) FROM votes v WHERE v.item_id = ",
            $item,
            " AND v.counted = 1) + (SELECT COUNT(*) FROM assignments c WHERE c.item_id = ",
            $item,
            " AND c.status IN (",
            $assigned,
            ", ",
            $leased,
            ") AND (c.status = ",
            $assigned,
            " OR c.lease_expires_at > ",
            $now,
            ") AND (SELECT ca.counted FROM annotators ca WHERE ca.id = c.annotator_id) = 1) < ",
            $k
        )
    };
}

/// The checks of a candidate `bi` (see [`CANDIDATES_SQL`]): it has room ([`has_room!`]), and
/// the annotator (`$annotator`) has no claim on it but a released one (`$released`) and no
/// vote. Room first: the items a claim steps over are mostly those others' claims filled (in
/// a start-up burst, every claim of a group steps over the items the group's earlier claims
/// filled), and for them the first check is the only one asked.
macro_rules! candidate_checks {
    ($annotator:literal, $released:literal, $assigned:literal, $leased:literal, $now:literal, $k:literal) => {
        concat!(
            has_room!("bi.item_id", $assigned, $leased, $now, $k),
            " AND (SELECT COUNT(*) FROM assignments m WHERE m.item_id = bi.item_id AND m.annotator_id = ",
            $annotator,
            " AND m.status <> ",
            $released,
            ") = 0 AND (SELECT COUNT(*) FROM votes mv WHERE mv.item_id = bi.item_id AND mv.annotator_id = ",
            $annotator,
            ") = 0"
        )
    };
}

/// The first items of a batch's order ($1), from rank $9 on, without k ratings that annotator
/// $2 may take at time $3 and whose ratings and others' claims leave room under k ($4): a range
/// of the index `batch_items_queue (batch_id, rated_full, queue_rank)`, each row checked
/// through the per-item indexes of votes and assignments. Every check is a scalar subquery, not
/// `NOT EXISTS`: PostgreSQL turns `NOT EXISTS` into an anti-join and, with statistics from
/// when the tables were small, scanned the annotator's votes through the second column of
/// `(item_id, annotator_id)` for every row — a cost that grew with the study.
const CANDIDATES_SQL: &str = concat!(
    "SELECT bi.item_id, bi.queue_rank, i.bug_id FROM batch_items bi JOIN items i ON i.id = bi.item_id \
     WHERE bi.batch_id = $1 AND bi.rated_full = 0 AND bi.queue_rank >= $9 AND ",
    candidate_checks!("$2", "$5", "$6", "$7", "$3", "$4"),
    " ORDER BY bi.queue_rank LIMIT $8"
);

/// [`CANDIDATES_SQL`] on PostgreSQL, where another instance's group may be claiming at the same
/// time: each candidate that passes the checks is also locked for this transaction (the item's
/// advisory lock, taken only after the checks — `CASE` keeps that order — and without waiting:
/// an item another group holds is stepped over, like a full one). The claim then checks the
/// item's room again in a statement of its own ([`CLAIM_SQL`]): this statement's snapshot may
/// predate the commit of the group that held the lock just before.
const CANDIDATES_PG_SQL: &str = concat!(
    "SELECT bi.item_id, bi.queue_rank, i.bug_id FROM batch_items bi JOIN items i ON i.id = bi.item_id \
     WHERE bi.batch_id = $1 AND bi.rated_full = 0 AND bi.queue_rank >= $9 AND CASE WHEN ",
    candidate_checks!("$2", "$5", "$6", "$7", "$3", "$4"),
    " THEN ",
    crate::store::group_commit::item_lock!("pg_try_advisory_xact_lock", "bi.item_id"),
    " ELSE false END ORDER BY bi.queue_rank LIMIT $8"
);

/// The place after the last of annotator `$annotator`'s assignments in their order, from the
/// end of each status's range of the annotator's index (`assignments_annotator_order
/// (annotator_id, status, position, id)`; on SQLite `assignments_annotator`, which ends in the
/// rowid): four lookups, one per status (`$assigned`, `$leased`, `$done`, `$released`:
/// every status there is, by the table's `CHECK`), each the last entry of a range read
/// backwards — `ORDER BY … LIMIT 1`, which no statistics turn into an aggregate over the
/// whole range, as PostgreSQL does with `MAX` on a table it believes small. `MAX(position)` over the
/// annotator alone went through every assignment they ever had — status is the index's second
/// column — so each claim cost more than the one before: in a pool of 10 annotators who each
/// rate half of 20,000 items, 10,000 entries a claim by the end.
macro_rules! next_position {
    ($annotator:literal, $assigned:literal, $leased:literal, $done:literal, $released:literal) => {
        concat!(
            "(SELECT COALESCE(MAX(p), -1) + 1 FROM (",
            last_position!($annotator, $assigned),
            " AS p UNION ALL ",
            last_position!($annotator, $leased),
            " UNION ALL ",
            last_position!($annotator, $done),
            " UNION ALL ",
            last_position!($annotator, $released),
            ") AS ends)"
        )
    };
}

/// The last position among annotator `$annotator`'s assignments of status `$status` (NULL:
/// none), for [`next_position!`]: the end of one range of the annotator's index, read backwards.
macro_rules! last_position {
    ($annotator:literal, $status:literal) => {
        concat!(
            "SELECT (SELECT position FROM assignments WHERE annotator_id = ",
            $annotator,
            " AND status = ",
            $status,
            " ORDER BY position DESC LIMIT 1)"
        )
    };
}

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

/// [`max_hold_ms`] in SQL (the bounds are the constants').
macro_rules! max_hold {
    ($lease:literal) => {
        concat!(
            "(CASE WHEN 3000 * ",
            $lease,
            " > 7200000 THEN 7200000 WHEN 3000 * ",
            $lease,
            " < 1800000 THEN 1800000 ELSE 3000 * ",
            $lease,
            " END)"
        )
    };
}

/// A claim's longest hold in SQL: its batch's `hold_ms` (`$hold`, from the study's time on
/// item) where set, else [`max_hold!`] of its lease.
macro_rules! longest_hold {
    ($hold:literal, $lease:literal) => {
        concat!("COALESCE(", $hold, ", ", max_hold!($lease), ")")
    };
}

/// A lease renewed at `$now`: its length from now, but never past its claim (`$claimed`) plus
/// its longest hold ([`longest_hold!`] of `$hold` and `$lease`).
macro_rules! renewed_until {
    ($now:literal, $lease:literal, $claimed:literal, $hold:literal) => {
        concat!(
            "(CASE WHEN ",
            $now,
            " + 1000 * ",
            $lease,
            " < ",
            $claimed,
            " + ",
            longest_hold!($hold, $lease),
            " THEN ",
            $now,
            " + 1000 * ",
            $lease,
            " ELSE ",
            $claimed,
            " + ",
            longest_hold!($hold, $lease),
            " END)"
        )
    };
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

/// The claim: a new lease for annotator $3 on item $2 of batch $1 until $4 (side $5, time $6),
/// at the end of the annotator's order ([`next_position!`], with the statuses done $10 and
/// released $11), made only if the item's ratings and live claims still leave room under k
/// ($9) — checked again here, in this statement's own snapshot, which on PostgreSQL sees every
/// claim committed by a group that held the item's lock before (the candidates' statement took
/// it). Returns the assignment, or nothing when the item filled up meanwhile. A released
/// assignment of the same pair is taken up again.
const CLAIM_SQL: &str = concat!(
    "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, lease_expires_at, original_left, created_at) \
     SELECT $1, $2, $3, ",
    next_position!("$3", "$8", "$7", "$10", "$11"),
    ", $7, $4, $5, $6 WHERE ",
    has_room!("$2", "$8", "$7", "$6", "$9"),
    " ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = $7, lease_expires_at = excluded.lease_expires_at, \
     batch_id = excluded.batch_id, position = excluded.position, created_at = excluded.created_at RETURNING id"
);

/// Rounds of looking for a new item when every candidate found filled up before it could be
/// claimed (another instance's claims, on PostgreSQL); then the annotator is told there is
/// none for now.
const CLAIM_ROUNDS: usize = 4;

/// The front of batch $1's queue at time $2 (see `Shared::fronts`): the rank of its first item
/// without k ($3) ratings whose ratings and live claims leave room for anyone (NULL: none), and
/// the earliest expiry of a live lease on the items before it (NULL: none). While many
/// annotators hold leases, the queue begins with items taken by others' leases: found once a
/// group instead of stepped over by every claim.
const FRONT_SQL: &str = concat!(
    "WITH f AS (SELECT (SELECT bi.queue_rank FROM batch_items bi \
     WHERE bi.batch_id = $1 AND bi.rated_full = 0 AND ",
    has_room!("bi.item_id", "$4", "$5", "$2", "$3"),
    " ORDER BY bi.queue_rank LIMIT 1) AS front) \
     SELECT f.front, (SELECT MIN(c.lease_expires_at) FROM batch_items bi JOIN assignments c ON c.item_id = bi.item_id \
       WHERE bi.batch_id = $1 AND bi.rated_full = 0 AND (f.front IS NULL OR bi.queue_rank < f.front) \
       AND c.status = $5 AND c.lease_expires_at > $2) AS until FROM f"
);

/// The batch's queue front at `now` (`Shared::fronts`): from the group, or found now. `None`:
/// no item of the batch has room. A group of a few jobs does not look for it (the lowest rank:
/// the candidates' range starts at the beginning, as it would without the front).
async fn queue_front(
    conn: &mut sqlx::AnyConnection,
    shared: &mut Shared,
    batch: BatchId,
    now: i64,
    k: i64,
) -> StoreResult<Option<i64>> {
    if let Some(rank) = shared.front(batch.into(), now) {
        return Ok(rank);
    }
    if !shared.shares_work() {
        return Ok(Some(i64::MIN));
    }
    let r = sqlx::query(FRONT_SQL)
        .bind(batch)
        .bind(now)
        .bind(k)
        .bind(AssignmentStatus::Assigned)
        .bind(AssignmentStatus::Leased)
        .fetch_one(&mut *conn)
        .await?;
    let rank = r.try_get::<Option<i64>, _>("front")?;
    let until = r.try_get::<Option<i64>, _>("until")?.unwrap_or(i64::MAX);
    shared.keep_front(batch.into(), rank, until);
    Ok(rank)
}

/// Where annotator `$annotator`'s claims in batch `$batch` begin to look (see [`own_to!`]):
/// the stored `annotators.own_from` when it is of that batch (`own_batch`), else 0 (the
/// beginning).
macro_rules! own_from {
    ($batch:literal, $annotator:literal) => {
        concat!(
            "COALESCE((SELECT x.own_from FROM annotators x WHERE x.id = ",
            $annotator,
            " AND x.own_batch = ",
            $batch,
            "), 0)"
        )
    };
}

/// The rank where annotator `$annotator`'s claims in batch `$batch` may begin to look, found
/// from the stored one (`$from`, NULL: the beginning), as column `own_to`: the first item from
/// there without k ratings that the annotator holds no claim on but a released one (`$released`)
/// — every item before it without k ratings is theirs, so none of them can be their next. The
/// largest rank there is when every item from there is theirs. Queue ranks are not negative.
/// The items read are those the annotator took since the stored rank: it moves on with their
/// claims ([`Shared::keep_own_from`]), so an annotator ahead of everyone else — whose rated
/// items still have room for others — does not step over all of them at every claim.
macro_rules! own_to {
    ($batch:literal, $from:literal, $annotator:literal, $released:literal) => {
        concat!(
            "COALESCE((SELECT p.queue_rank FROM batch_items p WHERE p.batch_id = ",
            $batch,
            " AND p.rated_full = 0 AND p.queue_rank >= COALESCE(",
            $from,
            ", 0) AND (SELECT COUNT(*) FROM assignments m WHERE m.item_id = p.item_id AND m.annotator_id = ",
            $annotator,
            " AND m.status <> ",
            $released,
            ") = 0 ORDER BY p.queue_rank LIMIT 1), 9223372036854775807) AS own_to"
        )
    };
}

/// The annotator $1's open claim in study $2 at time $3 — a live lease ($5) first, else the
/// first planned assignment ($4) — as a row of kind 0 (at most one, with its item's ratings
/// `rated` and the annotator's own `mine`), then the annotator's batches in the study as rows
/// of kind 1, in batch order, each with its `strategy`, the bug of the item the annotator
/// rated ($6) last (`last_bug`, for avoid-same-bug) and where the annotator's claims in it
/// begin to look (`own_from` as stored, `own_to` as found now: [`own_to!`]), then — only when
/// there is no open claim — the first candidates ([`CANDIDATES_SQL`]) of batch $7, if it is
/// one of the annotator's, from rank $8 on — or from the annotator's own rank in it
/// ([`own_from!`]), when that is later — (k $9, released $10, at most $11) as rows of kind 2
/// (`item_id`, `queue_rank`, `bug_id`):
/// the batch whose queue front the group already found (`Shared::front_hint`), so the common
/// claim asks once where it asked twice. Columns a kind does not use are NULL. `$candidates`
/// is the candidates' filter: with or without the item lock of PostgreSQL.
macro_rules! open_or_candidates {
    ($candidates:expr) => {
        concat!(
            "WITH o AS (SELECT a.id, a.item_id, a.batch_id, a.original_left, a.lease_expires_at, a.status, b.lease_secs, \
               (SELECT COUNT(*) FROM votes v WHERE v.item_id = a.item_id AND v.counted = 1) AS rated, \
               (SELECT COUNT(*) FROM votes mv WHERE mv.item_id = a.item_id AND mv.annotator_id = a.annotator_id) AS mine \
               FROM assignments a JOIN batches b ON b.id = a.batch_id WHERE a.annotator_id = $1 AND b.study_id = $2 \
               AND a.status IN ($4, $5) AND (a.status = $4 OR a.lease_expires_at > $3) \
               ORDER BY CASE WHEN a.status = $5 THEN 0 ELSE 1 END, a.position, a.id LIMIT 1) \
             SELECT 0 AS kind, o.id, o.item_id, o.batch_id, o.original_left, \
               o.lease_expires_at, o.status, o.lease_secs, o.rated, o.mine, \
               NULL AS seed, NULL AS avoid_same_bug, NULL AS last_bug, \
               CAST(NULL AS BIGINT) AS queue_rank, CAST(NULL AS BIGINT) AS bug_id, CAST(NULL AS TEXT) AS strategy, \
               CAST(NULL AS BIGINT) AS own_from, CAST(NULL AS BIGINT) AS own_to FROM o \
             UNION ALL \
             SELECT 1, bt.id, NULL, NULL, NULL, NULL, NULL, bt.lease_secs, NULL, NULL, bt.seed, bt.avoid_same_bug, \
               (SELECT i.bug_id FROM items i WHERE i.id = (SELECT a.item_id FROM assignments a \
                WHERE a.annotator_id = $1 AND a.status = $6 ORDER BY a.position DESC, a.id DESC LIMIT 1)), NULL, NULL, bt.strategy, \
               CASE WHEN an.own_batch = bt.id THEN an.own_from END AS own_from, ",
            own_to!(
                "bt.id",
                "CASE WHEN an.own_batch = bt.id THEN an.own_from END",
                "$1",
                "$10"
            ),
            " FROM batch_annotators ba JOIN batches bt ON bt.id = ba.batch_id \
             JOIN annotators an ON an.id = ba.annotator_id \
             WHERE ba.annotator_id = $1 AND bt.study_id = $2 \
             UNION ALL \
             SELECT * FROM (SELECT 2 AS kind, CAST(NULL AS BIGINT) AS id, bi.item_id, CAST(NULL AS BIGINT) AS batch_id, \
               CAST(NULL AS BIGINT) AS original_left, CAST(NULL AS BIGINT) AS lease_expires_at, \
               CAST(NULL AS TEXT) AS status, CAST(NULL AS BIGINT) AS lease_secs, CAST(NULL AS BIGINT) AS rated, \
               CAST(NULL AS BIGINT) AS mine, CAST(NULL AS BIGINT) AS seed, CAST(NULL AS BIGINT) AS avoid_same_bug, \
               CAST(NULL AS BIGINT) AS last_bug, bi.queue_rank, i.bug_id, CAST(NULL AS TEXT) AS strategy, \
               CAST(NULL AS BIGINT) AS own_from, CAST(NULL AS BIGINT) AS own_to FROM batch_items bi JOIN items i ON i.id = bi.item_id \
               WHERE NOT EXISTS (SELECT 1 FROM o) \
               AND EXISTS (SELECT 1 FROM batch_annotators ba JOIN batches bt ON bt.id = ba.batch_id \
                 WHERE ba.batch_id = $7 AND ba.annotator_id = $1 AND bt.study_id = $2) \
               AND bi.batch_id = $7 AND bi.rated_full = 0 AND bi.queue_rank >= CASE WHEN ",
            own_from!("$7", "$1"),
            " > $8 THEN ",
            own_from!("$7", "$1"),
            " ELSE $8 END AND ",
            $candidates,
            " ORDER BY bi.queue_rank LIMIT $11) AS c \
             ORDER BY 1, 2, 14"
        )
    };
}

/// [`open_or_candidates!`] on SQLite.
const OPEN_OR_CANDIDATES_SQL: &str =
    open_or_candidates!(candidate_checks!("$1", "$10", "$4", "$5", "$3", "$9"));

/// [`open_or_candidates!`] on PostgreSQL: each candidate that passes its checks is locked, as
/// in [`CANDIDATES_PG_SQL`].
const OPEN_OR_CANDIDATES_PG_SQL: &str = open_or_candidates!(concat!(
    "CASE WHEN ",
    candidate_checks!("$1", "$10", "$4", "$5", "$3", "$9"),
    " THEN ",
    crate::store::group_commit::item_lock!("pg_try_advisory_xact_lock", "bi.item_id"),
    " ELSE false END"
));

/// The open claim among the rows of [`open_or_candidates!`] (the first, when of kind 0).
fn open_of(rows: &[sqlx::any::AnyRow]) -> StoreResult<Option<&sqlx::any::AnyRow>> {
    match rows.first() {
        Some(r) if r.try_get::<i64, _>("kind")? == 0 => Ok(Some(r)),
        _ => Ok(None),
    }
}

/// [`next_item`] in a group's job; `after_vote` when the annotator's vote was just written in
/// the same job (they answered: no lapse to look for).
pub(super) async fn next_item_in(
    conn: &mut sqlx::AnyConnection,
    shared: &mut Shared,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
    after_vote: bool,
) -> StoreResult<Option<Handed>> {
    let k = match shared.k(study.into()) {
        Some(k) => k,
        None => {
            let k = k_in(conn, study).await?;
            shared.keep_k(study.into(), k);
            k
        }
    };
    // 1. a live lease or a planned assignment, in order. When that claim is void — its item
    // has k ratings (imported votes, a lowered k) or the annotator rated it (an imported vote)
    // — every void claim of the annotator is released and the query runs again, so a void
    // claim is never handed out (and the common case costs one statement, which also brings
    // the annotator's batches for step 2: after a vote there is no open claim).
    let sql = match shared.dialect() {
        Dialect::Postgres => OPEN_OR_CANDIDATES_PG_SQL,
        Dialect::Sqlite => OPEN_OR_CANDIDATES_SQL,
    };
    let mut released = false;
    let (rows, hint) = loop {
        // the batch whose queue front this group found: its first candidates come along
        // (none when the batch has no item with room, or is not the annotator's)
        let hint = shared.front_hint(now);
        let (hint_batch, hint_rank) = match hint {
            Some((batch, rank)) => (batch, rank.unwrap_or(i64::MAX)),
            None => (0, i64::MAX),
        };
        let rows = sqlx::query(sql)
            .bind(annotator)
            .bind(study)
            .bind(now)
            .bind(AssignmentStatus::Assigned)
            .bind(AssignmentStatus::Leased)
            .bind(AssignmentStatus::Done)
            .bind(hint_batch)
            .bind(hint_rank)
            .bind(k)
            .bind(AssignmentStatus::Released)
            .bind(2i64)
            .fetch_all(&mut *conn)
            .await?;
        let void = match open_of(&rows)? {
            Some(r) => r.try_get::<i64, _>("rated")? >= k || r.try_get::<i64, _>("mine")? > 0,
            None => false,
        };
        if !void {
            break (rows, hint);
        }
        if released {
            // released claims are no longer open: a void one cannot come back
            return Err(StoreError::Db(sqlx::Error::Protocol(
                "a released claim is still open".into(),
            )));
        }
        release_full(conn, study, annotator, k).await?;
        shared.forget_fronts();
        shared.forget_own(annotator.into());
        released = true;
    };
    if let Some(r) = open_of(&rows)? {
        let mut h = handed(r)?;
        if r.try_get::<AssignmentStatus, _>("status")? == AssignmentStatus::Leased {
            // renewed, within the claim's longest hold (`max_hold_ms`)
            let until: i64 = sqlx::query_scalar(concat!(
                "UPDATE assignments SET lease_expires_at = ",
                renewed_until!(
                    "$1",
                    "$3",
                    "created_at",
                    "(SELECT b.hold_ms FROM batches b WHERE b.id = assignments.batch_id)"
                ),
                " WHERE id = $2 RETURNING lease_expires_at"
            ))
            .bind(now)
            .bind(h.assignment)
            .bind(r.try_get::<i64, _>("lease_secs")?)
            .fetch_one(&mut *conn)
            .await?;
            h.lease_expires_at = Some(until);
        }
        shared.touch(annotator.into(), now);
        return Ok(Some(h));
    }
    // 2. lease a new item with room left (also picks up released and expired items): per batch
    // of the annotator, the first items in the batch's order among those without k ratings —
    // a range of the queue's index — that the annotator may take and others' claims leave room on
    // (with the bug of the item the annotator rated last, for avoid-same-bug)
    if !after_vote {
        let lapsed = sqlx::query(LAPSED_UNANSWERED_SQL)
            .bind(annotator)
            .bind(now)
            .bind(AssignmentStatus::Leased)
            .bind(AssignmentStatus::Released)
            .fetch_optional(&mut *conn)
            .await?;
        if lapsed.is_some() {
            return Ok(None);
        }
    }
    // the work a participant is asked for (N): done, they get no new lease (step 2 runs
    // only without an open claim, so their claims are their votes)
    if shared.per_participant(study.into()).is_none() {
        let n = per_participant_in(conn, study).await?;
        shared.keep_per_participant(study.into(), n);
    }
    if let Some(Some(n)) = shared.per_participant(study.into()) {
        let done: i64 = sqlx::query_scalar("SELECT done_count FROM annotators WHERE id = $1")
            .bind(annotator)
            .fetch_one(&mut *conn)
            .await?;
        if done + shared.done_in_group(annotator.into()) >= n {
            return Ok(None);
        }
    }
    let kind = |r: &&sqlx::any::AnyRow| r.try_get::<i64, _>("kind").ok();
    let batches: Vec<&sqlx::any::AnyRow> = rows.iter().filter(|r| kind(r) == Some(1)).collect();
    let found: Vec<&sqlx::any::AnyRow> = rows.iter().filter(|r| kind(r) == Some(2)).collect();
    // the first round may use the candidates that came along; a later one (the first round's
    // all filled up meanwhile) asks again
    let mut first = hint.map(|(batch, _)| (BatchId(batch), &found[..]));
    for _ in 0..CLAIM_ROUNDS {
        let mut candidates =
            candidates(conn, shared, &batches, first.take(), annotator, now, k).await?;
        if candidates.is_empty() {
            return Ok(None);
        }
        // the best first: another bug than the last rated, then the batch's order
        candidates.sort_by_key(|c| (c.same_bug, c.rank));
        for c in candidates {
            let until = now + 1000 * c.lease_secs;
            let left = original_left(c.seed as u64, annotator, c.item);
            let id: Option<i64> = sqlx::query(CLAIM_SQL)
                .bind(c.batch)
                .bind(c.item)
                .bind(annotator)
                .bind(until)
                .bind(left)
                .bind(now)
                .bind(AssignmentStatus::Leased)
                .bind(AssignmentStatus::Assigned)
                .bind(k)
                .bind(AssignmentStatus::Done)
                .bind(AssignmentStatus::Released)
                .fetch_optional(&mut *conn)
                .await?
                .map(|r| r.try_get(0))
                .transpose()?;
            let Some(id) = id else {
                // another instance's group filled it since the candidates were read
                continue;
            };
            if c.fixed {
                shared.claimed_fixed(annotator.into(), now);
            } else {
                shared.touch(annotator.into(), now);
            }
            return Ok(Some(Handed {
                assignment: id,
                item: c.item,
                batch: c.batch,
                original_left: left != 0,
                lease_expires_at: Some(until),
            }));
        }
    }
    Ok(None)
}

/// The candidates for the annotator's next new lease, from each of their batches (`batches`:
/// rows of kind 1 of [`open_or_candidates!`]; `found`: a batch's first candidates, rows of
/// kind 2 that came with them, used instead of asking again). On PostgreSQL each is locked
/// for this transaction ([`CANDIDATES_PG_SQL`]).
async fn candidates(
    conn: &mut sqlx::AnyConnection,
    shared: &mut Shared,
    batches: &[&sqlx::any::AnyRow],
    found: Option<(BatchId, &[&sqlx::any::AnyRow])>,
    annotator: AnnotatorId,
    now: i64,
    k: i64,
) -> StoreResult<Vec<Candidate>> {
    let sql = match shared.dialect() {
        Dialect::Postgres => CANDIDATES_PG_SQL,
        Dialect::Sqlite => CANDIDATES_SQL,
    };
    let mut out = Vec::new();
    for b in batches {
        let batch: BatchId = b.try_get("id")?;
        let avoid = b.try_get::<i64, _>("avoid_same_bug")? != 0;
        let last_bug: Option<i64> = b.try_get("last_bug")?;
        // no item with room: nothing to hand out from this batch until a lease expires
        let Some(front) = queue_front(conn, shared, batch, now, k).await? else {
            continue;
        };
        // every item before `own` without k ratings is the annotator's: none can be next
        let own: i64 = b.try_get("own_to")?;
        if b.try_get::<Option<i64>, _>("own_from")? != Some(own) {
            shared.keep_own_from(batch.into(), annotator.into(), own, now);
        }
        let front = front.max(own);
        // the first two usually decide (one of them is of another bug than the last rated);
        // only when both are of that bug is the longer list asked for — the same choice
        let is_same_bug = |r: &sqlx::any::AnyRow| {
            avoid && last_bug.is_some() && r.try_get::<i64, _>("bug_id").ok() == last_bug
        };
        let came: Option<&[&sqlx::any::AnyRow]> =
            found.filter(|&(b, _)| b == batch).map(|(_, rows)| rows);
        // the two that came along decide unless both are of that bug
        let limits: &[i64] = match came {
            Some(rows) if (rows.len() as i64) < 2 || !rows.iter().all(|r| is_same_bug(r)) => &[],
            Some(_) => &[CANDIDATES],
            None => &[2, CANDIDATES],
        };
        let mut fetched = Vec::new();
        for &limit in limits {
            fetched = sqlx::query(sql)
                .bind(batch)
                .bind(annotator)
                .bind(now)
                .bind(k)
                .bind(AssignmentStatus::Released)
                .bind(AssignmentStatus::Assigned)
                .bind(AssignmentStatus::Leased)
                .bind(limit)
                .bind(front)
                .fetch_all(&mut *conn)
                .await?;
            if (fetched.len() as i64) < limit || !fetched.iter().all(is_same_bug) {
                break;
            }
        }
        let rows: Vec<&sqlx::any::AnyRow> = match came {
            Some(rows) if limits.is_empty() => rows.to_vec(),
            _ => fetched.iter().collect(),
        };
        for r in rows {
            out.push(Candidate {
                rank: r.try_get("queue_rank")?,
                same_bug: is_same_bug(r),
                item: r.try_get("item_id")?,
                batch,
                lease_secs: b.try_get("lease_secs")?,
                seed: b.try_get("seed")?,
                fixed: b.try_get::<Strategy, _>("strategy")? == Strategy::FixedGroups,
            });
        }
    }
    Ok(out)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's plan for the queue's candidates: a range of the queue's index in its order —
    /// no scan of the batch, no sort of it.
    #[tokio::test]
    async fn candidates_come_from_the_queue_index_in_order() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let plan = sqlx::query(&format!("EXPLAIN QUERY PLAN {CANDIDATES_SQL}"))
            .bind(1i64)
            .bind(1i64)
            .bind(0i64)
            .bind(5i64)
            .bind(AssignmentStatus::Released)
            .bind(AssignmentStatus::Assigned)
            .bind(AssignmentStatus::Leased)
            .bind(CANDIDATES)
            .bind(0i64)
            .fetch_all(&db.pool)
            .await
            .expect("plan");
        assert_from_the_index(&plan, "", "");
        // the candidates that come along with the annotator's batches: the same range
        let plan = sqlx::query(&format!("EXPLAIN QUERY PLAN {OPEN_OR_CANDIDATES_SQL}"))
            .bind(1i64)
            .bind(1i64)
            .bind(0i64)
            .bind(AssignmentStatus::Assigned)
            .bind(AssignmentStatus::Leased)
            .bind(AssignmentStatus::Done)
            .bind(1i64)
            .bind(0i64)
            .bind(5i64)
            .bind(AssignmentStatus::Released)
            .bind(2i64)
            .fetch_all(&db.pool)
            .await
            .expect("plan");
        assert_from_the_index(&plan, "CO-ROUTINE c", "SCAN c");
    }

    /// SQLite's plan for the claim's place at the end of the annotator's order: one lookup
    /// per status at the end of its range of the annotator's index, no range over every
    /// assignment the annotator ever had (`status` is the index's second column).
    #[tokio::test]
    async fn the_claim_finds_the_end_of_the_order_by_lookups() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let plan = sqlx::query(&format!("EXPLAIN QUERY PLAN {CLAIM_SQL}"))
            .bind(1i64)
            .bind(1i64)
            .bind(1i64)
            .bind(0i64)
            .bind(1i64)
            .bind(0i64)
            .bind(AssignmentStatus::Leased)
            .bind(AssignmentStatus::Assigned)
            .bind(5i64)
            .bind(AssignmentStatus::Done)
            .bind(AssignmentStatus::Released)
            .fetch_all(&db.pool)
            .await
            .expect("plan");
        let details: Vec<String> = plan
            .iter()
            .map(|r| r.try_get::<String, _>("detail").expect("detail"))
            .collect();
        let all = details.join("\n");
        let by_status = details
            .iter()
            .filter(|d| {
                d.starts_with("SEARCH assignments USING COVERING INDEX assignments_annotator")
                    && d.ends_with(" (annotator_id=? AND status=?)")
            })
            .count();
        assert_eq!(by_status, 4, "{all}");
        assert!(
            !details
                .iter()
                .any(|d| d.starts_with("SEARCH assignments") && d.ends_with(" (annotator_id=?)")),
            "{all}"
        );
        assert!(
            !all.contains("SCAN assignments") && !all.contains("TEMP B-TREE"),
            "{all}"
        );
    }

    /// The plan's lines, from the line that starts with `from` (the first line: `""`) up to
    /// the line `to`, searched in the queue's index, in its order: no scan of the batch, no
    /// sort.
    fn assert_from_the_index(plan: &[sqlx::any::AnyRow], from: &str, to: &str) {
        let details: Vec<String> = plan
            .iter()
            .map(|r| r.try_get::<String, _>("detail").expect("detail"))
            .collect();
        let all = details.join("\n");
        let part: Vec<&String> = details
            .iter()
            .skip_while(|d| !d.starts_with(from))
            .take_while(|d| d.as_str() != to)
            .collect();
        let text = part
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            part.iter().any(|d| d.starts_with(
                "SEARCH bi USING INDEX batch_items_queue (batch_id=? AND rated_full=? AND queue_rank>?)"
            )),
            "{all}"
        );
        assert!(!text.contains("TEMP B-TREE"), "{all}");
        assert!(!all.contains("SCAN bi"), "{all}");
    }
}
