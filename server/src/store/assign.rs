//! Batches, assignments, leases and votes: the invariant that no item ever gets more than k
//! completed ratings, whatever the interleaving, lives here.
//!
//! Every check-then-write runs in `Db::begin_write(study)`, which serialises writers of a study
//! (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock on the study id).

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use crate::engine::assignment::{self, PlanItem};

/// How a batch hands out items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Pool split into groups of k; each item rated by one whole group.
    FixedGroups,
    /// Annotators ask for the next item; the server leases one with room left.
    DynamicQueue,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::FixedGroups => "fixed_groups",
            Strategy::DynamicQueue => "dynamic_queue",
        }
    }
    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "fixed_groups" | "fixed" => Some(Strategy::FixedGroups),
            "dynamic_queue" | "dynamic" => Some(Strategy::DynamicQueue),
            _ => None,
        }
    }
}

/// Which items a batch takes.
#[derive(Debug, Clone, Default)]
pub struct ItemFilter {
    pub level: Option<String>,
    pub operator: Option<String>,
    pub project: Option<String>,
    pub ids: Vec<String>,
    /// A seeded random sample of this many of the matching items.
    pub sample: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct BatchSpec {
    pub name: String,
    pub strategy: Strategy,
    pub filter: ItemFilter,
    /// Annotator ids (see [`ensure_pool`]).
    pub annotators: Vec<i64>,
    pub seed: u64,
    pub lease_secs: i64,
    pub avoid_same_bug: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchInfo {
    pub id: i64,
    pub items: usize,
    pub assignments: usize,
}

/// Annotators `S1..Sn` of the study (created when missing), in code order.
pub async fn ensure_pool(db: &Db, study: i64, n: usize) -> StoreResult<Vec<i64>> {
    let mut ids = Vec::with_capacity(n);
    let now = crate::db::now_ms();
    for i in 1..=n {
        let code = format!("S{i}");
        sqlx::query("INSERT INTO annotators (study_id, code, created_at) VALUES ($1, $2, $3) ON CONFLICT (study_id, code) DO NOTHING")
            .bind(study)
            .bind(&code)
            .bind(now)
            .execute(&db.pool)
            .await?;
        ids.push(annotator_id(db, study, &code).await?);
    }
    Ok(ids)
}

pub async fn annotator_id(db: &Db, study: i64, code: &str) -> StoreResult<i64> {
    sqlx::query("SELECT id FROM annotators WHERE study_id = $1 AND code = $2")
        .bind(study)
        .bind(code)
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("annotator {code}")))
}

/// How often one annotator may revise one vote.
pub const MAX_REVISIONS: i64 = 20;

/// The study's k, read inside a write transaction (so a change of k cannot interleave).
async fn k_in(tx: &mut sqlx::Transaction<'static, sqlx::Any>, study: i64) -> StoreResult<i64> {
    Ok(
        sqlx::query("SELECT ratings_per_item FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(&mut **tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
            .try_get(0)?,
    )
}

/// Releases the annotator's open claims (planned or leased) on items that already have k
/// ratings — imported votes count, and k may have been lowered — or that the annotator already
/// rated (an imported vote), so they are never handed out again and nobody loops on an item
/// the vote would refuse.
async fn release_full(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    study: i64,
    annotator: i64,
    k: i64,
) -> StoreResult<u64> {
    Ok(sqlx::query(
        "UPDATE assignments SET status = 'released', lease_expires_at = NULL \
         WHERE annotator_id = $1 AND status IN ('assigned', 'leased') \
         AND batch_id IN (SELECT id FROM batches WHERE study_id = $2) \
         AND ((SELECT COUNT(*) FROM votes v WHERE v.item_id = assignments.item_id) >= $3 \
              OR EXISTS (SELECT 1 FROM votes mv WHERE mv.item_id = assignments.item_id \
                         AND mv.annotator_id = assignments.annotator_id))",
    )
    .bind(annotator)
    .bind(study)
    .bind(k)
    .execute(&mut **tx)
    .await?
    .rows_affected())
}

/// The study's k (ratings per item).
pub async fn ratings_per_item(db: &Db, study: i64) -> StoreResult<i64> {
    Ok(
        sqlx::query("SELECT ratings_per_item FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(&db.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
            .try_get(0)?,
    )
}

/// Creates a batch from the study's items matching `spec.filter` and, for fixed groups, plans
/// every assignment.
pub async fn create_batch(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    spec: &BatchSpec,
) -> StoreResult<BatchInfo> {
    let k = ratings_per_item(db, study).await? as usize;
    let rows = sqlx::query(
        "SELECT i.id, i.item_key, i.level, i.operator, p.name AS project, b.bug_key FROM items i \
         JOIN bugs b ON b.id = i.bug_id JOIN projects p ON p.id = b.project_id WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let f = &spec.filter;
    let mut items = Vec::new();
    for r in rows {
        let (key, level, op, project): (String, String, String, String) = (
            r.try_get("item_key")?,
            r.try_get("level")?,
            r.try_get("operator")?,
            r.try_get("project")?,
        );
        let keep = f.level.as_ref().is_none_or(|l| *l == level)
            && f.operator.as_ref().is_none_or(|o| *o == op)
            && f.project.as_ref().is_none_or(|p| *p == project)
            && (f.ids.is_empty() || f.ids.contains(&key));
        if keep {
            items.push(PlanItem {
                id: r.try_get("id")?,
                bug: r.try_get("bug_key")?,
            });
        }
    }
    if let Some(n) = f.sample {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed);
        items.shuffle(&mut rng);
        items.truncate(n);
        items.sort_by_key(|i| i.id);
    }
    if items.is_empty() {
        return Err(StoreError::NotFound(
            "items matching the batch filter".into(),
        ));
    }
    let plan = match spec.strategy {
        Strategy::FixedGroups => assignment::plan_fixed_groups(
            &items,
            &spec.annotators,
            k,
            spec.seed,
            spec.avoid_same_bug,
        )
        .map_err(|e| StoreError::Invalid(e.to_string()))?,
        Strategy::DynamicQueue => Vec::new(),
    };
    let now = crate::db::now_ms();
    let mut tx = db.begin_write(study).await?;
    let batch: i64 = sqlx::query(
        "INSERT INTO batches (study_id, name, strategy, seed, lease_secs, avoid_same_bug, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(study)
    .bind(&spec.name)
    .bind(spec.strategy.as_str())
    .bind(spec.seed as i64)
    .bind(spec.lease_secs)
    .bind(i64::from(spec.avoid_same_bug))
    .bind(now)
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| StoreError::conflict_on_unique(e, format!("batch {}", spec.name)))?
    .try_get(0)?;
    for it in &items {
        sqlx::query("INSERT INTO batch_items (batch_id, item_id) VALUES ($1, $2)")
            .bind(batch)
            .bind(it.id)
            .execute(&mut *tx)
            .await?;
    }
    for (i, a) in spec.annotators.iter().enumerate() {
        sqlx::query(
            "INSERT INTO batch_annotators (batch_id, annotator_id, group_no) VALUES ($1, $2, $3)",
        )
        .bind(batch)
        .bind(*a)
        .bind((i / k.max(1)) as i64)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE annotators SET order_seed = $1 WHERE id = $2")
            .bind(assignment::annotator_seed(spec.seed, *a) as i64 & i64::MAX)
            .bind(*a)
            .execute(&mut *tx)
            .await?;
    }
    for p in &plan {
        sqlx::query(
            "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, original_left, created_at) \
             VALUES ($1, $2, $3, $4, 'assigned', $5, $6)",
        )
        .bind(batch)
        .bind(p.item)
        .bind(p.annotator)
        .bind(p.position)
        .bind(original_left(spec.seed, p.annotator, p.item))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "batch.create",
        &format!(
            "{} ({}, {} items, {} annotators, seed {})",
            spec.name,
            spec.strategy.as_str(),
            items.len(),
            spec.annotators.len(),
            spec.seed
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(BatchInfo {
        id: batch,
        items: items.len(),
        assignments: plan.len(),
    })
}

/// Which side shows the original, randomised per participant and item when the study asks
/// for it (recorded on the assignment), else always left.
fn original_left(seed: u64, annotator: i64, item: i64) -> i64 {
    let h = assignment::annotator_seed(seed, annotator)
        ^ (item as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    i64::from(h.rotate_left(17) & 1 == 0)
}

/// An item handed to an annotator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handed {
    pub assignment: i64,
    pub item: i64,
    pub batch: i64,
    pub original_left: bool,
    pub lease_expires_at: Option<i64>,
}

fn handed(r: &sqlx::any::AnyRow) -> StoreResult<Handed> {
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
/// rated. Claims on items that became full are released first.
pub async fn next_item(
    db: &Db,
    study: i64,
    annotator: i64,
    now: i64,
) -> StoreResult<Option<Handed>> {
    let mut tx = db.begin_write(study).await?;
    let k = k_in(&mut tx, study).await?;
    release_full(&mut tx, study, annotator, k).await?;
    // 1. a live lease or a planned assignment, in order
    let open = sqlx::query(
        "SELECT a.id, a.item_id, a.batch_id, a.original_left, a.lease_expires_at, a.status, b.lease_secs FROM assignments a \
         JOIN batches b ON b.id = a.batch_id WHERE a.annotator_id = $1 AND b.study_id = $2 \
         AND (a.status = 'assigned' OR (a.status = 'leased' AND a.lease_expires_at > $3)) \
         ORDER BY CASE WHEN a.status = 'leased' THEN 0 ELSE 1 END, a.position, a.id LIMIT 1",
    )
    .bind(annotator)
    .bind(study)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(r) = open {
        let mut h = handed(&r)?;
        if r.try_get::<String, _>("status")? == "leased" {
            let until = now + 1000 * r.try_get::<i64, _>("lease_secs")?;
            sqlx::query("UPDATE assignments SET lease_expires_at = $1 WHERE id = $2")
                .bind(until)
                .bind(h.assignment)
                .execute(&mut *tx)
                .await?;
            h.lease_expires_at = Some(until);
        }
        touch(&mut tx, annotator, now).await?;
        tx.commit().await?;
        return Ok(Some(h));
    }
    // 2. lease a new item with room left (also picks up released and expired items)
    let last_bug: Option<i64> = sqlx::query(
        "SELECT i.bug_id FROM assignments a JOIN items i ON i.id = a.item_id WHERE a.annotator_id = $1 AND a.status = 'done' \
         ORDER BY a.lease_expires_at DESC, a.id DESC LIMIT 1",
    )
    .bind(annotator)
    .fetch_optional(&mut *tx)
    .await?
    .map(|r| r.try_get(0))
    .transpose()?;
    let seed: i64 = sqlx::query("SELECT order_seed FROM annotators WHERE id = $1")
        .bind(annotator)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    let candidates = sqlx::query(
        "SELECT bi.item_id, bi.batch_id, bt.lease_secs, bt.seed, bt.avoid_same_bug, i.bug_id FROM batch_items bi \
         JOIN batches bt ON bt.id = bi.batch_id \
         JOIN batch_annotators ba ON ba.batch_id = bi.batch_id AND ba.annotator_id = $1 \
         JOIN items i ON i.id = bi.item_id \
         WHERE bt.study_id = $2 \
         AND NOT EXISTS (SELECT 1 FROM assignments m WHERE m.item_id = bi.item_id AND m.annotator_id = $1 AND m.status <> 'released') \
         AND NOT EXISTS (SELECT 1 FROM votes mv WHERE mv.item_id = bi.item_id AND mv.annotator_id = $1) \
         AND (SELECT COUNT(*) FROM votes v WHERE v.item_id = bi.item_id) \
           + (SELECT COUNT(*) FROM assignments c WHERE c.item_id = bi.item_id \
              AND (c.status = 'assigned' OR (c.status = 'leased' AND c.lease_expires_at > $3))) < $4 \
         ORDER BY ((bi.item_id * 2654435761 + $5) % 4294967311), bi.item_id LIMIT 50",
    )
    .bind(annotator)
    .bind(study)
    .bind(now)
    .bind(k)
    .bind(seed % 2_147_483_647)
    .fetch_all(&mut *tx)
    .await?;
    let pick = candidates
        .iter()
        .find(|r| {
            let avoid = r.try_get::<i64, _>("avoid_same_bug").unwrap_or(0) != 0;
            !avoid || last_bug.is_none() || r.try_get::<i64, _>("bug_id").ok() != last_bug
        })
        .or(candidates.first());
    let Some(r) = pick else {
        tx.commit().await?;
        return Ok(None);
    };
    let (item, batch, lease_secs, bseed): (i64, i64, i64, i64) = (
        r.try_get("item_id")?,
        r.try_get("batch_id")?,
        r.try_get("lease_secs")?,
        r.try_get("seed")?,
    );
    let until = now + 1000 * lease_secs;
    let left = original_left(bseed as u64, annotator, item);
    let position: i64 = sqlx::query(
        "SELECT COALESCE(MAX(position), -1) + 1 FROM assignments WHERE annotator_id = $1",
    )
    .bind(annotator)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    let id: i64 = sqlx::query(
        "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, lease_expires_at, original_left, created_at) \
         VALUES ($1, $2, $3, $4, 'leased', $5, $6, $7) \
         ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = 'leased', lease_expires_at = excluded.lease_expires_at, \
         batch_id = excluded.batch_id, position = excluded.position RETURNING id",
    )
    .bind(batch)
    .bind(item)
    .bind(annotator)
    .bind(position)
    .bind(until)
    .bind(left)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    touch(&mut tx, annotator, now).await?;
    tx.commit().await?;
    Ok(Some(Handed {
        assignment: id,
        item,
        batch,
        original_left: left != 0,
        lease_expires_at: Some(until),
    }))
}

async fn touch(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    annotator: i64,
    now: i64,
) -> StoreResult<()> {
    sqlx::query("UPDATE annotators SET last_active = $1 WHERE id = $2")
        .bind(now)
        .bind(annotator)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A vote as the browser sends it (the wire type; `token` makes a resent submit one vote).
pub type VoteInput = app::model::VoteForm;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// A new vote (revision 1) or a new revision of it.
    Saved { revision: i64 },
    /// The same submit token was seen before: nothing changed.
    Duplicate { revision: i64 },
}

/// Records a vote, durably, before it is acknowledged. Refuses what would exceed k, what the
/// annotator was never handed, and revisions after the annotator finished.
pub async fn submit(
    db: &Db,
    study: i64,
    annotator: i64,
    item: i64,
    vote: &VoteInput,
    now: i64,
) -> StoreResult<Submitted> {
    if !(1..=4).contains(&vote.cr) || !(1..=4).contains(&vote.cc) {
        return Err(StoreError::Invalid(
            "answers must be on the 1–4 scale".into(),
        ));
    }
    let mut tx = db.begin_write(study).await?;
    let k = k_in(&mut tx, study).await?;
    if let Some(r) = sqlx::query(
        "SELECT revision FROM vote_revisions WHERE annotator_id = $1 AND submit_token = $2",
    )
    .bind(annotator)
    .bind(&vote.token)
    .fetch_optional(&mut *tx)
    .await?
    {
        return Ok(Submitted::Duplicate {
            revision: r.try_get(0)?,
        });
    }
    let a = sqlx::query(
        "SELECT a.id, a.status, a.lease_expires_at, a.original_left, an.finished_at FROM assignments a \
         JOIN annotators an ON an.id = a.annotator_id JOIN batches b ON b.id = a.batch_id \
         WHERE a.item_id = $1 AND a.annotator_id = $2 AND b.study_id = $3",
    )
    .bind(item)
    .bind(annotator)
    .bind(study)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::Forbidden("this item is not assigned to you".into()))?;
    let status: String = a.try_get("status")?;
    let finished: Option<i64> = a.try_get("finished_at")?;
    let assignment: i64 = a.try_get("id")?;
    let original_left: i64 = a.try_get("original_left")?;
    let revision = match status.as_str() {
        "done" => {
            if finished.is_some() {
                return Err(StoreError::Forbidden(
                    "you finished this study: votes can no longer be revised".into(),
                ));
            }
            let r: i64 =
                sqlx::query("SELECT revision FROM votes WHERE item_id = $1 AND annotator_id = $2")
                    .bind(item)
                    .bind(annotator)
                    .fetch_one(&mut *tx)
                    .await?
                    .try_get(0)?;
            if r >= MAX_REVISIONS {
                return Err(StoreError::Conflict(format!(
                    "a vote may have at most {MAX_REVISIONS} revisions"
                )));
            }
            r + 1
        }
        "released" => {
            return Err(StoreError::Forbidden(
                "this item was released from you".into(),
            ))
        }
        _ => {
            let expired = status == "leased"
                && a.try_get::<Option<i64>, _>("lease_expires_at")?
                    .is_none_or(|t| t <= now);
            // ratings so far (online and imported), and others' open claims
            let r = sqlx::query(
                "SELECT (SELECT COUNT(*) FROM votes WHERE item_id = $1) AS rated, \
                 (SELECT COUNT(*) FROM votes WHERE item_id = $1 AND annotator_id = $2) AS mine, \
                 (SELECT COUNT(*) FROM assignments WHERE item_id = $1 AND annotator_id <> $2 \
                  AND (status = 'assigned' OR (status = 'leased' AND lease_expires_at > $3))) AS claims",
            )
            .bind(item)
            .bind(annotator)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            let (rated, mine, claims): (i64, i64, i64) = (
                r.try_get("rated")?,
                r.try_get("mine")?,
                r.try_get("claims")?,
            );
            // (the void claim is released when the annotator next asks for an item)
            if mine > 0 || rated >= k || (expired && rated + claims >= k) {
                return Err(StoreError::Conflict(if mine > 0 {
                    "you already rated this item".into()
                } else {
                    "this item has all its ratings: your lease expired".into()
                }));
            }
            1
        }
    };
    let comment = vote.comment.chars().take(4000).collect::<String>();
    let row = VoteRow {
        item,
        annotator,
        revision,
        vote,
        now,
        original_left,
        comment: &comment,
    };
    // every revision is kept; the vote that counts is the latest
    row.bind(sqlx::query(
        "INSERT INTO vote_revisions (item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at, \
         original_left, context_opened, comment, submit_token) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    ))
    .bind(&vote.token)
    .execute(&mut *tx)
    .await?;
    row.bind(sqlx::query(
        "INSERT INTO votes (item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at, \
         original_left, context_opened, comment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (item_id, annotator_id) DO UPDATE SET revision = excluded.revision, cr = excluded.cr, \
         cc = excluded.cc, time_secs = excluded.time_secs, started_at = excluded.started_at, \
         submitted_at = excluded.submitted_at, context_opened = excluded.context_opened, comment = excluded.comment",
    ))
    .execute(&mut *tx)
    .await?;
    if revision == 1 {
        sqlx::query("UPDATE assignments SET status = 'done', lease_expires_at = $1 WHERE id = $2")
            .bind(now)
            .bind(assignment)
            .execute(&mut *tx)
            .await?;
    }
    touch(&mut tx, annotator, now).await?;
    tx.commit().await?;
    Ok(Submitted::Saved { revision })
}

/// The columns a vote and each of its revisions share, bound in one order.
struct VoteRow<'a> {
    item: i64,
    annotator: i64,
    revision: i64,
    vote: &'a VoteInput,
    now: i64,
    original_left: i64,
    comment: &'a str,
}

impl<'a> VoteRow<'a> {
    /// Binds `item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at,
    /// original_left, context_opened, comment` as `$1`…`$11`.
    fn bind(
        &self,
        q: sqlx::query::Query<'a, sqlx::Any, sqlx::any::AnyArguments<'a>>,
    ) -> sqlx::query::Query<'a, sqlx::Any, sqlx::any::AnyArguments<'a>> {
        q.bind(self.item)
            .bind(self.annotator)
            .bind(self.revision)
            .bind(i64::from(self.vote.cr))
            .bind(i64::from(self.vote.cc))
            .bind(self.vote.time_secs)
            .bind(self.vote.started_at)
            .bind(self.now)
            .bind(self.original_left)
            .bind(i64::from(self.vote.context_opened))
            .bind(self.comment.to_owned())
    }
}

/// Items planned or leased for the annotator and not yet rated go back to the pool.
pub async fn release(db: &Db, study: i64, annotator: i64, actor: Option<i64>) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    annotator_of(&mut tx, study, annotator).await?;
    let n = sqlx::query(
        "UPDATE assignments SET status = 'released', lease_expires_at = NULL WHERE annotator_id = $1 AND status IN ('assigned', 'leased')",
    )
    .bind(annotator)
    .execute(&mut *tx)
    .await?
    .rows_affected();
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

/// Moves the annotator's unrated items to another annotator (skipping items the other already has).
pub async fn move_unrated(
    db: &Db,
    study: i64,
    from: i64,
    to: i64,
    actor: Option<i64>,
) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    annotator_of(&mut tx, study, from).await?;
    annotator_of(&mut tx, study, to).await?;
    let rows = sqlx::query("SELECT id, item_id, batch_id FROM assignments WHERE annotator_id = $1 AND status IN ('assigned', 'leased') ORDER BY position")
        .bind(from)
        .fetch_all(&mut *tx)
        .await?;
    let mut moved = 0;
    let base: i64 = sqlx::query(
        "SELECT COALESCE(MAX(position), -1) + 1 FROM assignments WHERE annotator_id = $1",
    )
    .bind(to)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    for r in rows {
        let (id, item, batch): (i64, i64, i64) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        let has: bool = sqlx::query("SELECT 1 FROM assignments WHERE item_id = $1 AND annotator_id = $2 AND status <> 'released'")
            .bind(item)
            .bind(to)
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
        sqlx::query(
            "UPDATE assignments SET status = 'released', lease_expires_at = NULL WHERE id = $1",
        )
        .bind(id)
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
            "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, created_at) VALUES ($1, $2, $3, $4, 'assigned', $5) \
             ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = 'assigned', lease_expires_at = NULL, position = excluded.position",
        )
        .bind(batch)
        .bind(item)
        .bind(to)
        .bind(base + moved as i64)
        .bind(crate::db::now_ms())
        .execute(&mut *tx)
        .await?;
        moved += 1;
    }
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

/// Refuses an annotator id that is not of this study.
async fn annotator_of(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    study: i64,
    annotator: i64,
) -> StoreResult<()> {
    sqlx::query("SELECT 1 FROM annotators WHERE id = $1 AND study_id = $2")
        .bind(annotator)
        .bind(study)
        .fetch_optional(&mut **tx)
        .await?
        .map(|_| ())
        .ok_or_else(|| StoreError::NotFound(format!("annotator {annotator} in this study")))
}

/// Marks expired leases released (leases already stop counting when they expire; this makes
/// the monitor show them as free).
pub async fn reclaim_expired(db: &Db, study: i64, now: i64) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query(
        "UPDATE assignments SET status = 'released' WHERE status = 'leased' AND lease_expires_at <= $1 \
         AND batch_id IN (SELECT id FROM batches WHERE study_id = $2)",
    )
    .bind(now)
    .bind(study)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(n)
}

/// (rated, total) for the annotator's progress bar: total counts the items planned for (or
/// rated by) the annotator in fixed-group batches and every item of their dynamic batches.
pub async fn progress(db: &Db, study: i64, annotator: i64) -> StoreResult<(i64, i64)> {
    let r = sqlx::query(
        "SELECT \
         (SELECT COUNT(*) FROM assignments a JOIN batches b ON b.id = a.batch_id \
          WHERE a.annotator_id = $1 AND b.study_id = $2 AND a.status = 'done') AS done, \
         (SELECT COUNT(*) FROM assignments a JOIN batches b ON b.id = a.batch_id \
          WHERE a.annotator_id = $1 AND b.study_id = $2 AND b.strategy = 'fixed_groups' AND a.status IN ('done', 'assigned', 'leased')) AS fixed, \
         (SELECT COUNT(*) FROM batch_items bi JOIN batches b ON b.id = bi.batch_id JOIN batch_annotators ba ON ba.batch_id = b.id \
          WHERE ba.annotator_id = $1 AND b.study_id = $2 AND b.strategy = 'dynamic_queue') AS queue",
    )
    .bind(annotator)
    .bind(study)
    .fetch_one(&db.pool)
    .await?;
    let done: i64 = r.try_get("done")?;
    let total: i64 = r.try_get::<i64, _>("fixed")? + r.try_get::<i64, _>("queue")?;
    Ok((done, total.max(done)))
}

/// Completed ratings per item of the study (item id, count), for invariant checks and monitoring.
pub async fn completed_per_item(db: &Db, study: i64) -> StoreResult<Vec<(i64, i64)>> {
    let rows = sqlx::query(
        "SELECT i.id, (SELECT COUNT(*) FROM votes v WHERE v.item_id = i.id) AS n FROM items i WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The id of the study's batch called `name`.
pub async fn batch_id(db: &Db, study: i64, name: &str) -> StoreResult<i64> {
    sqlx::query("SELECT id FROM batches WHERE study_id = $1 AND name = $2")
        .bind(study)
        .bind(name)
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("batch {name}")))
}

/// Renews the annotator's live leases in the study (the page is still open), under the
/// study's write lock like every claim. Expired leases stay expired.
pub async fn renew_leases(db: &Db, study: i64, annotator: i64, now: i64) -> StoreResult<u64> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query(
        "UPDATE assignments SET lease_expires_at = $1 + 1000 * (SELECT lease_secs FROM batches b WHERE b.id = assignments.batch_id) \
         WHERE annotator_id = $2 AND status = 'leased' AND lease_expires_at > $1 \
         AND batch_id IN (SELECT id FROM batches WHERE study_id = $3)",
    )
    .bind(now)
    .bind(annotator)
    .bind(study)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(n)
}
