//! Batches: which items, which annotators, and for fixed groups every planned assignment.

use sqlx::Row;

use super::*;
use crate::store::{audit, Db, StoreError, StoreResult};
use natstudy_engine::assignment::{self, PlanItem};
use natstudy_vocab::ids::{AnnotatorId, BatchId, ItemId, StudyId, UserId};

crate::store::codec::text_enum! {
    /// How a batch hands out items.
    pub enum Strategy {
        /// Pool split into groups of k; each item rated by one whole group.
        FixedGroups = "fixed_groups",
        /// Annotators ask for the next item; the server leases one with room left.
        DynamicQueue = "dynamic_queue",
    }
}

impl Strategy {
    /// A strategy as people type it: its stored word or the short `fixed` / `dynamic`.
    pub fn from_input(s: &str) -> Option<Strategy> {
        match s {
            "fixed" => Some(Strategy::FixedGroups),
            "dynamic" => Some(Strategy::DynamicQueue),
            _ => Strategy::parse(s),
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
    /// Only items `natstudy verify` found to compile (and, when tested, to pass the tests as
    /// their original does).
    pub verified_only: bool,
}

#[derive(Debug, Clone)]
pub struct BatchSpec {
    pub name: String,
    pub strategy: Strategy,
    pub filter: ItemFilter,
    /// Annotator ids (see [`ensure_pool`]).
    pub annotators: Vec<AnnotatorId>,
    pub seed: u64,
    pub lease_secs: i64,
    pub avoid_same_bug: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchInfo {
    pub id: BatchId,
    pub items: usize,
    pub assignments: usize,
    /// Every item of the batch already had k ratings when it was made: its participants would
    /// get nothing to rate.
    pub full: bool,
}

/// Annotators a batch makes as it is created, after [`BatchSpec::annotators`]: in the batch's
/// own transaction, so a batch that is refused leaves none behind.
#[derive(Debug, Clone, Default)]
pub struct Joining {
    /// The offline pool `S1`…`Sn` ([`ensure_pool`]).
    pub pool: usize,
    /// Accounts enrolled as annotators (their existing link, or a new code).
    pub users: Vec<UserId>,
}

/// Creates a batch from the study's items matching `spec.filter` and, for fixed groups, plans
/// every assignment.
pub async fn create_batch(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    spec: &BatchSpec,
) -> StoreResult<BatchInfo> {
    create_batch_joining(db, study, actor, spec, &Joining::default()).await
}

/// [`create_batch`] with the annotators of `joining` made in the same transaction, after those
/// the spec names: nothing is written unless the whole batch is.
pub async fn create_batch_joining(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    spec: &BatchSpec,
    joining: &Joining,
) -> StoreResult<BatchInfo> {
    let k = ratings_per_item(db, study).await? as usize;
    let rows = sqlx::query(
        "SELECT i.id, i.item_key, i.level, i.operator, p.name AS project, b.bug_key, \
         c.compiles, c.tests_same FROM items i \
         JOIN bugs b ON b.id = i.bug_id JOIN projects p ON p.id = b.project_id \
         LEFT JOIN item_checks c ON c.item_id = i.id WHERE i.study_id = $1 ORDER BY i.id",
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
            && (f.ids.is_empty() || f.ids.contains(&key))
            && (!f.verified_only
                || (r.try_get::<Option<i64>, _>("compiles")? == Some(1)
                    && r.try_get::<Option<i64>, _>("tests_same")? != Some(0)));
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
    let now = crate::db::now_ms();
    let mut tx = db.begin_write(study).await?;
    let mut annotators = spec.annotators.clone();
    annotators.extend(pool_in(&mut tx, study, joining.pool, now).await?);
    for &user in &joining.users {
        annotators.push(crate::store::invites::enrol_user_in(&mut tx, study, user).await?);
    }
    let plan = match spec.strategy {
        Strategy::FixedGroups => assignment::plan_fixed_groups(
            &items,
            &annotators.iter().map(|a| a.get()).collect::<Vec<_>>(),
            k,
            spec.seed,
            spec.avoid_same_bug,
        )
        .map_err(|e| StoreError::Invalid(e.to_string()))?,
        Strategy::DynamicQueue => Vec::new(),
    };
    let batch: BatchId = sqlx::query(
        "INSERT INTO batches (study_id, name, strategy, seed, lease_secs, avoid_same_bug, created_at, item_count) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(study)
    .bind(&spec.name)
    .bind(spec.strategy.as_str())
    .bind(spec.seed as i64)
    .bind(spec.lease_secs)
    .bind(i64::from(spec.avoid_same_bug))
    .bind(now)
    .bind(items.len() as i64)
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| StoreError::conflict_on_unique(e, format!("batch {}", spec.name)))?
    .try_get(0)?;
    for it in &items {
        sqlx::query("INSERT INTO batch_items (batch_id, item_id, queue_rank) VALUES ($1, $2, $3)")
            .bind(batch)
            .bind(it.id)
            .bind(queue_rank(spec.seed, ItemId(it.id)))
            .execute(&mut *tx)
            .await?;
    }
    refresh_full_study(&mut tx, study).await?;
    for (i, a) in annotators.iter().enumerate() {
        sqlx::query(
            "INSERT INTO batch_annotators (batch_id, annotator_id, group_no) VALUES ($1, $2, $3)",
        )
        .bind(batch)
        .bind(*a)
        .bind((i / k.max(1)) as i64)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE annotators SET order_seed = $1 WHERE id = $2")
            .bind(assignment::annotator_seed(spec.seed, a.get()) as i64 & i64::MAX)
            .bind(*a)
            .execute(&mut *tx)
            .await?;
    }
    for p in &plan {
        sqlx::query(
            "INSERT INTO assignments (batch_id, item_id, annotator_id, position, status, original_left, created_at) \
             VALUES ($1, $2, $3, $4, $7, $5, $6)",
        )
        .bind(batch)
        .bind(p.item)
        .bind(p.annotator)
        .bind(p.position)
        .bind(original_left(
            spec.seed,
            AnnotatorId(p.annotator),
            ItemId(p.item),
        ))
        .bind(now)
        .bind(AssignmentStatus::Assigned)
        .execute(&mut *tx)
        .await?;
    }
    if !plan.is_empty() {
        for a in &annotators {
            recount_fixed(&mut tx, Whose::Annotator(*a)).await?;
        }
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
            annotators.len(),
            spec.seed
        ),
    )
    .await?;
    tx.commit().await?;
    let full = !crate::store::invites::batch_has_room(db, batch).await?;
    Ok(BatchInfo {
        id: batch,
        items: items.len(),
        assignments: plan.len(),
        full,
    })
}

/// The id of the study's batch called `name`.
pub async fn batch_id(db: &Db, study: StudyId, name: &str) -> StoreResult<BatchId> {
    sqlx::query("SELECT id FROM batches WHERE study_id = $1 AND name = $2")
        .bind(study)
        .bind(name)
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("batch {name}")))
}
