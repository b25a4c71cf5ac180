//! Patch review: the plausible patches to review, their tasks, the reviewers' verdicts and the
//! admins' decisions.

use std::collections::HashMap;

use sqlx::Row;

use super::imports::{already, mark, Outcome};
use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_engine::formats::results::ReviewRecord;
use natstudy_engine::review::{AutoReason, Verdict};
use natstudy_vocab::ids::{ReviewTaskId, StudyId, UserId};

/// A plausible result with a patch, and what the automatic checks need about its target.
#[derive(Debug, Clone)]
pub struct ReviewInput {
    pub tool: String,
    pub target: String,
    pub patch: String,
    /// The target's buggy method: the bug's, or the transformation's.
    pub buggy: String,
    /// The bug's original method and its developer-fixed method, when known.
    pub bug_source: String,
    pub bug_fixed: Option<String>,
    /// `npr_results.csv`'s `developer_patch`: the fix as a method or a unified diff.
    pub developer_patch: Option<String>,
    pub file_path: String,
    pub file_source: Option<String>,
    /// Whether the target is a transformation (else the original bug).
    pub transformed: bool,
}

/// The study's plausible results that carry a patch, in import order.
pub async fn inputs(db: &Db, study: StudyId) -> StoreResult<Vec<ReviewInput>> {
    let rows = sqlx::query(
        "SELECT n.id AS nid, n.tool, n.target, n.patch, n.developer_patch, b.source AS buggy, b.source AS bug_source, b.fixed_source, \
                b.file_path, b.file_source, 0 AS transformed \
         FROM npr_results n JOIN bugs b ON b.study_id = n.study_id AND b.bug_key = n.target \
         WHERE n.study_id = $1 AND n.status = 1 AND n.patch IS NOT NULL AND n.patch <> '' \
         UNION ALL \
         SELECT n.id AS nid, n.tool, n.target, n.patch, n.developer_patch, i.source AS buggy, b.source AS bug_source, b.fixed_source, \
                b.file_path, b.file_source, 1 AS transformed \
         FROM npr_results n JOIN items i ON i.study_id = n.study_id AND i.item_key = n.target \
         JOIN bugs b ON b.id = i.bug_id \
         WHERE n.study_id = $1 AND n.status = 1 AND n.patch IS NOT NULL AND n.patch <> '' \
         ORDER BY nid",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ReviewInput {
                tool: r.try_get("tool")?,
                target: r.try_get("target")?,
                patch: r.try_get("patch")?,
                buggy: r.try_get("buggy")?,
                bug_source: r.try_get("bug_source")?,
                bug_fixed: r.try_get("fixed_source")?,
                developer_patch: r.try_get("developer_patch")?,
                file_path: r.try_get("file_path")?,
                file_source: r.try_get("file_source")?,
                transformed: r.try_get::<i64, _>("transformed")? != 0,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::Db)
}

/// A task to create: the patch as a method, the automatic decision, and the task (by tool) of
/// another tool's identical patch of the same target.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    pub tool: String,
    pub target: String,
    pub buggy: String,
    pub patched: String,
    pub fixed: Option<String>,
    pub k: u32,
    pub auto: Option<AutoReason>,
    pub auto_note: String,
    pub same_as_tool: Option<String>,
}

/// The id of the study's task of `tool` on `target`, if there is one.
async fn task_id(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    study: StudyId,
    tool: &str,
    target: &str,
) -> StoreResult<Option<i64>> {
    Ok(
        sqlx::query(
            "SELECT id FROM review_tasks WHERE study_id = $1 AND tool = $2 AND target = $3",
        )
        .bind(study)
        .bind(tool)
        .bind(target)
        .fetch_optional(&mut **tx)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?,
    )
}

/// Creates the tasks that do not exist yet, in one transaction: (created, already there).
pub async fn create(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    tasks: &[NewTask],
) -> StoreResult<(usize, usize)> {
    let mut tx = db.begin_write(study).await?;
    let now = now_ms();
    let mut ids: HashMap<(&str, &str), i64> = HashMap::new();
    let (mut created, mut existing) = (0, 0);
    for t in tasks {
        let found: Option<i64> = task_id(&mut tx, study, &t.tool, &t.target).await?;
        if let Some(id) = found {
            existing += 1;
            ids.insert((&t.tool, &t.target), id);
            continue;
        }
        let same_as = match &t.same_as_tool {
            Some(tool) => match ids.get(&(tool.as_str(), t.target.as_str())) {
                Some(id) => Some(*id),
                None => task_id(&mut tx, study, tool, &t.target).await?,
            },
            None => None,
        };
        let id: i64 = sqlx::query(
            "INSERT INTO review_tasks (study_id, tool, target, buggy, patched, fixed, k, same_as, auto_reason, auto_note, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
        )
        .bind(study)
        .bind(&t.tool)
        .bind(&t.target)
        .bind(&t.buggy)
        .bind(&t.patched)
        .bind(&t.fixed)
        .bind(i64::from(t.k))
        .bind(same_as)
        .bind(t.auto.map(AutoReason::as_str))
        .bind(&t.auto_note)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
        ids.insert((&t.tool, &t.target), id);
        created += 1;
    }
    if created > 0 {
        audit::record(
            &mut *tx,
            actor,
            Some(study),
            "review.create",
            &format!("{created} tasks"),
        )
        .await?;
        super::studies::data_changed(&mut tx, study).await?;
    }
    tx.commit().await?;
    Ok((created, existing))
}

/// A task with everything the analysis and the pages read.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    pub id: ReviewTaskId,
    pub tool: String,
    pub target: String,
    pub buggy: String,
    pub patched: String,
    pub fixed: Option<String>,
    pub k: u32,
    pub same_as: Option<ReviewTaskId>,
    pub auto: Option<AutoReason>,
    pub auto_note: String,
    pub sent_back: bool,
    pub adjudicated: Option<bool>,
    /// (reviewer, verdict, note) in the order given.
    pub verdicts: Vec<(String, Verdict, String)>,
}

/// Every review task of a study with its verdicts, in creation order.
pub async fn tasks(db: &Db, study: StudyId) -> StoreResult<Vec<TaskRow>> {
    let decode = |what: &str, s: String| sqlx::Error::Decode(format!("unknown {what} {s}").into());
    let mut out: Vec<TaskRow> = Vec::new();
    let mut index: HashMap<ReviewTaskId, usize> = HashMap::new();
    for r in sqlx::query(
        "SELECT id, tool, target, buggy, patched, fixed, k, same_as, auto_reason, auto_note, sent_back, adjudicated \
         FROM review_tasks WHERE study_id = $1 ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    {
        let auto = match r.try_get::<Option<String>, _>("auto_reason")? {
            Some(s) => Some(AutoReason::parse(&s).ok_or_else(|| decode("auto_reason", s))?),
            None => None,
        };
        let id: ReviewTaskId = r.try_get("id")?;
        index.insert(id, out.len());
        out.push(TaskRow {
            id,
            tool: r.try_get("tool")?,
            target: r.try_get("target")?,
            buggy: r.try_get("buggy")?,
            patched: r.try_get("patched")?,
            fixed: r.try_get("fixed")?,
            k: u32::try_from(r.try_get::<i64, _>("k")?).unwrap_or(2),
            same_as: r.try_get("same_as")?,
            auto,
            auto_note: r.try_get("auto_note")?,
            sent_back: r.try_get::<i64, _>("sent_back")? != 0,
            adjudicated: r.try_get::<Option<i64>, _>("adjudicated")?.map(|a| a != 0),
            verdicts: Vec::new(),
        });
    }
    for r in sqlx::query(
        "SELECT v.task_id, v.reviewer, v.verdict, v.note FROM review_verdicts v \
         JOIN review_tasks t ON t.id = v.task_id WHERE t.study_id = $1 ORDER BY v.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    {
        let task: ReviewTaskId = r.try_get("task_id")?;
        let verdict: String = r.try_get("verdict")?;
        let verdict = Verdict::parse(&verdict).ok_or_else(|| decode("verdict", verdict))?;
        if let Some(&i) = index.get(&task) {
            out[i]
                .verdicts
                .push((r.try_get("reviewer")?, verdict, r.try_get("note")?));
        }
    }
    Ok(out)
}

/// Records reviewers' verdicts from a file, all or nothing: a reviewer's verdict on a task is
/// written once, or replaced by a later file (a revised verdict).
pub async fn import_verdicts(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    rows: &[ReviewRecord],
) -> StoreResult<Outcome> {
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, "reviews", digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    let now = now_ms();
    let mut written = 0;
    for v in rows {
        let task = task_id(&mut tx, study, &v.tool, &v.target)
            .await?
            .ok_or_else(|| {
                StoreError::NotFound(format!("review task {} / {}", v.tool, v.target))
            })?;
        let r = sqlx::query(
            "INSERT INTO review_verdicts (task_id, reviewer, verdict, note, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (task_id, reviewer) DO UPDATE SET verdict = excluded.verdict, note = excluded.note, created_at = excluded.created_at",
        )
        .bind(task)
        .bind(&v.reviewer)
        .bind(v.verdict.as_str())
        .bind(&v.note)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        written += r.rows_affected() as usize;
    }
    mark(&mut tx, study, actor, "reviews", digest, written).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported { rows: written })
}

/// What an admin does with a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruling {
    /// Decide a disagreement (or overrule anything): correct or not.
    Decide(bool),
    /// Withdraw an admin's decision.
    Clear,
    /// Send an automatic decision back to people.
    SendBack,
}

/// Applies an admin's ruling to the task of `tool` on `target`.
pub async fn rule(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    tool: &str,
    target: &str,
    ruling: Ruling,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let q = match ruling {
        Ruling::Decide(correct) => sqlx::query(
            "UPDATE review_tasks SET adjudicated = $1, adjudicated_by = $2, adjudicated_at = $3 \
             WHERE study_id = $4 AND tool = $5 AND target = $6",
        )
        .bind(i64::from(correct))
        .bind(actor)
        .bind(now_ms()),
        Ruling::Clear => sqlx::query(
            "UPDATE review_tasks SET adjudicated = NULL, adjudicated_by = NULL, adjudicated_at = NULL \
             WHERE study_id = $1 AND tool = $2 AND target = $3",
        ),
        Ruling::SendBack => sqlx::query(
            "UPDATE review_tasks SET sent_back = 1, same_as = NULL WHERE study_id = $1 AND tool = $2 AND target = $3",
        ),
    };
    let r = q
        .bind(study)
        .bind(tool)
        .bind(target)
        .execute(&mut *tx)
        .await?;
    if r.rows_affected() == 0 {
        return Err(StoreError::NotFound(format!(
            "review task {tool} / {target}"
        )));
    }
    let what = match ruling {
        Ruling::Decide(true) => "correct",
        Ruling::Decide(false) => "wrong",
        Ruling::Clear => "cleared",
        Ruling::SendBack => "sent back to reviewers",
    };
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "review.rule",
        &format!("{tool} / {target}: {what}"),
    )
    .await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(())
}

/// How long a reviewer holds a task while its page is open.
pub const CLAIM_MS: i64 = 30 * 60 * 1000;

/// A task as its reviewer sees it: the target, the buggy, patched and fixed methods (no tool
/// name, no other verdicts).
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewTaskView {
    pub id: ReviewTaskId,
    pub target: String,
    pub buggy: String,
    pub patched: String,
    pub fixed: Option<String>,
    /// The reviewer's verdicts so far in this study, and the tasks still open to them.
    pub done: i64,
    pub left: i64,
}

/// Tasks people review: originals (not duplicates) without a standing automatic decision or a
/// ruling. `$1` = study.
const REVIEWABLE: &str =
    "t.study_id = $1 AND t.same_as IS NULL AND (t.auto_reason IS NULL OR t.sent_back = 1) \
     AND t.adjudicated IS NULL";

/// The reviewer's next task: the one they hold, else the first that still needs a verdict and
/// has room (verdicts + others' live holds < k), which they then hold. In the study's write
/// lock, so no task is given to more than k reviewers at once.
pub async fn next_task(
    db: &Db,
    study: StudyId,
    reviewer: &str,
) -> StoreResult<Option<ReviewTaskView>> {
    let mut tx = db.begin_write(study).await?;
    let now = now_ms();
    let held = sqlx::query(&format!(
        "SELECT t.id FROM review_tasks t JOIN review_claims c ON c.task_id = t.id \
         WHERE {REVIEWABLE} AND c.reviewer = $2 AND c.expires_at > $3 \
         AND NOT EXISTS (SELECT 1 FROM review_verdicts v WHERE v.task_id = t.id AND v.reviewer = $2) \
         ORDER BY t.id LIMIT 1"
    ))
    .bind(study)
    .bind(reviewer)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let id: Option<ReviewTaskId> = match held {
        Some(r) => Some(r.try_get(0)?),
        None => sqlx::query(&format!(
            "SELECT t.id FROM review_tasks t WHERE {REVIEWABLE} \
             AND NOT EXISTS (SELECT 1 FROM review_verdicts v WHERE v.task_id = t.id AND v.reviewer = $2) \
             AND (SELECT COUNT(*) FROM review_verdicts v WHERE v.task_id = t.id) \
               + (SELECT COUNT(*) FROM review_claims c WHERE c.task_id = t.id AND c.reviewer <> $2 AND c.expires_at > $3) < t.k \
             ORDER BY t.id LIMIT 1"
        ))
        .bind(study)
        .bind(reviewer)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?,
    };
    let Some(id) = id else {
        tx.commit().await?;
        return Ok(None);
    };
    sqlx::query(
        "INSERT INTO review_claims (task_id, reviewer, expires_at) VALUES ($1, $2, $3) \
         ON CONFLICT (task_id, reviewer) DO UPDATE SET expires_at = excluded.expires_at",
    )
    .bind(id)
    .bind(reviewer)
    .bind(now + CLAIM_MS)
    .execute(&mut *tx)
    .await?;
    let r = sqlx::query("SELECT target, buggy, patched, fixed FROM review_tasks WHERE id = $1")
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
    let done: i64 = sqlx::query(
        "SELECT COUNT(*) FROM review_verdicts v JOIN review_tasks t ON t.id = v.task_id \
         WHERE t.study_id = $1 AND v.reviewer = $2",
    )
    .bind(study)
    .bind(reviewer)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    let left: i64 = sqlx::query(&format!(
        "SELECT COUNT(*) FROM review_tasks t WHERE {REVIEWABLE} \
         AND NOT EXISTS (SELECT 1 FROM review_verdicts v WHERE v.task_id = t.id AND v.reviewer = $2) \
         AND (SELECT COUNT(*) FROM review_verdicts v WHERE v.task_id = t.id) < t.k"
    ))
    .bind(study)
    .bind(reviewer)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    let view = ReviewTaskView {
        id,
        target: r.try_get("target")?,
        buggy: r.try_get("buggy")?,
        patched: r.try_get("patched")?,
        fixed: r.try_get("fixed")?,
        done,
        left,
    };
    tx.commit().await?;
    Ok(Some(view))
}

/// Records a reviewer's verdict on a task of the study. A reviewer may revise their own; a
/// new reviewer gets a place only while the task has fewer than k verdicts.
pub async fn submit_verdict(
    db: &Db,
    study: StudyId,
    task: ReviewTaskId,
    reviewer: &str,
    verdict: Verdict,
    note: &str,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let row = sqlx::query(&format!(
        "SELECT t.k, (SELECT COUNT(*) FROM review_verdicts v WHERE v.task_id = t.id) AS n, \
         (SELECT COUNT(*) FROM review_verdicts v WHERE v.task_id = t.id AND v.reviewer = $3) AS mine, \
         (SELECT COUNT(*) FROM review_claims c WHERE c.task_id = t.id AND c.reviewer = $3 AND c.expires_at > $4) AS held, \
         (SELECT COUNT(*) FROM review_claims c WHERE c.task_id = t.id AND c.reviewer = $3) AS given, \
         (SELECT COUNT(*) FROM review_claims c WHERE c.task_id = t.id AND c.reviewer <> $3 AND c.expires_at > $4 \
            AND NOT EXISTS (SELECT 1 FROM review_verdicts v WHERE v.task_id = t.id AND v.reviewer = c.reviewer)) AS others \
         FROM review_tasks t WHERE {REVIEWABLE} AND t.id = $2"
    ))
    .bind(study)
    .bind(task)
    .bind(reviewer)
    .bind(now_ms())
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("review task {task} open to reviewers")))?;
    let get = |c: &str| row.try_get::<i64, _>(c);
    let (k, n, mine, held, given, others) = (
        get("k")?,
        get("n")?,
        get("mine")?,
        get("held")?,
        get("given")?,
        get("others")?,
    );
    // a newcomer needs a free place: verdicts and others' live holds leave fewer than k
    if mine == 0 && held == 0 && n + others >= k {
        return Err(StoreError::Invalid(
            "this patch already has all its reviews".into(),
        ));
    }
    // a reviewer judges the patches the queue gave them (`next_task`), and revises their own
    // verdicts: no one picks which patches to judge by their ids
    if mine == 0 && given == 0 {
        return Err(StoreError::Forbidden(
            "this patch was not given to you: take the next one from the review page".into(),
        ));
    }
    sqlx::query(
        "INSERT INTO review_verdicts (task_id, reviewer, verdict, note, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (task_id, reviewer) DO UPDATE SET verdict = excluded.verdict, note = excluded.note, created_at = excluded.created_at",
    )
    .bind(task)
    .bind(reviewer)
    .bind(verdict.as_str())
    .bind(note)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM review_claims WHERE task_id = $1 AND reviewer = $2")
        .bind(task)
        .bind(reviewer)
        .execute(&mut *tx)
        .await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(())
}
