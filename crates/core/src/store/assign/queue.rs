//! The queue: the next item (a live lease, a planned assignment, or a new lease on an item with
//! room). How long a claim is held is `hold.rs`; staff's releases and moves `release.rs`; an
//! annotator's progress `progress.rs`; the SQL fragments `sql.rs`.

use sqlx::Row;

use super::*;
use crate::db::Dialect;
use crate::store::group_commit::jobs::grouped;
use crate::store::group_commit::shared::Shared;
use crate::store::{Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, BatchId, ItemId, StudyId};

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
pub(super) const LAPSED_UNANSWERED_SQL: &str =
    "SELECT 1 FROM annotators an WHERE an.id = $1 AND an.done_count = 0 \
     AND EXISTS (SELECT 1 FROM assignments a WHERE a.annotator_id = $1 AND a.status IN ($3, $4) \
     AND a.lease_expires_at IS NOT NULL AND a.lease_expires_at <= $2)";

/// A candidate for a new lease: what the choice and the lease need.
struct Candidate {
    same_bug: bool,
    item: ItemId,
    batch: BatchId,
    lease_secs: i64,
    seed: i64,
    /// Of a fixed-group batch: the claim adds to the annotator's fixed-group count.
    fixed: bool,
}

/// Candidates the queue looks at per batch, its front's window: the first items with room
/// that the annotator may take, among which they get the next in their own order
/// ([`own_order`]) — another bug than the one just rated first. The window keeps the queue
/// filling items to k from its front (no item past the window is handed out while the window
/// has room), and the participants who share the front items meet them in orders of their
/// own: with the queue's order alone, the first k participants got the same items in the same
/// order, each item at the same place in every session.
pub const QUEUE_WINDOW: i64 = 4;

/// The window when every item of [`QUEUE_WINDOW`] is of the bug just rated (avoid-same-bug):
/// enough to step over them.
const WIDER_WINDOW: i64 = 8;

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
            .bind(QUEUE_WINDOW)
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
        // the best first: another bug than the last rated, then the annotator's own order
        candidates.sort_by_key(|c| (c.same_bug, own_order(c.seed as u64, annotator, c.item)));
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
        let is_same_bug = |r: &sqlx::any::AnyRow| {
            avoid && last_bug.is_some() && r.try_get::<i64, _>("bug_id").ok() == last_bug
        };
        // the window came along with the annotator's batches, or is asked for now; when all
        // of it is of the bug just rated, the wider window is asked for
        let came: Option<&[&sqlx::any::AnyRow]> =
            found.filter(|&(b, _)| b == batch).map(|(_, rows)| rows);
        let all_same = |rows: &[&sqlx::any::AnyRow]| {
            rows.len() as i64 >= QUEUE_WINDOW && rows.iter().all(|r| is_same_bug(r))
        };
        let limits: &[i64] = match came {
            Some(rows) if !all_same(rows) => &[],
            Some(_) => &[WIDER_WINDOW],
            None => &[QUEUE_WINDOW, WIDER_WINDOW],
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
            let rows: Vec<&sqlx::any::AnyRow> = fetched.iter().collect();
            if (fetched.len() as i64) < limit || !all_same(&rows) {
                break;
            }
        }
        let rows: Vec<&sqlx::any::AnyRow> = match came {
            Some(rows) if limits.is_empty() => rows.to_vec(),
            _ => fetched.iter().collect(),
        };
        for r in rows {
            out.push(Candidate {
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
            .bind(QUEUE_WINDOW)
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
            .bind(QUEUE_WINDOW)
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
