//! All-or-nothing imports: validated records in one transaction; a file already imported into a
//! study (same kind, same content digest) is a no-op.

use std::collections::HashMap;

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_engine::formats::items::{BugRecord, TransformationRecord};
use natstudy_engine::formats::results::{CeRecord, NprRecord};
use natstudy_engine::formats::survey::SurveyVote;
use natstudy_vocab::ids::{StudyId, UserId};

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Imported { rows: usize },
    AlreadyImported,
}

/// A stable digest of an input: SHA-256 over every part, each followed by a separator.
pub fn digest(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update([0xff]);
    }
    format!("{:x}", h.finalize())
}

pub(super) async fn already(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    study: StudyId,
    kind: &str,
    digest: &str,
) -> StoreResult<bool> {
    Ok(
        sqlx::query("SELECT 1 FROM imports WHERE study_id = $1 AND kind = $2 AND digest = $3")
            .bind(study)
            .bind(kind)
            .bind(digest)
            .fetch_optional(&mut **tx)
            .await?
            .is_some(),
    )
}

pub(super) async fn mark(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    study: StudyId,
    actor: Option<UserId>,
    kind: &str,
    digest: &str,
    rows: usize,
) -> StoreResult<()> {
    mark_noted(tx, study, actor, (kind, digest, None), rows).await
}

async fn mark_noted(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    study: StudyId,
    actor: Option<UserId>,
    (kind, digest, note): ImportMark<'_>,
    rows: usize,
) -> StoreResult<()> {
    sqlx::query("INSERT INTO imports (study_id, kind, digest, rows, imported_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(study)
        .bind(kind)
        .bind(digest)
        .bind(rows as i64)
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
    audit::record(
        &mut **tx,
        actor,
        Some(study),
        &format!("import.{kind}"),
        &match note {
            Some(n) if !n.is_empty() => format!("{rows} rows; {n}"),
            _ => format!("{rows} rows"),
        },
    )
    .await
}

/// What the service derives for each transformation before it is stored: its line data and
/// the developer's fix carried over to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemDerived {
    pub lines: natstudy_engine::transform::LineData,
    pub fixed_source: Option<String>,
}

/// Imports bugs and their transformations (`derived[i]` belongs to `transformations[i]`). A bug or item id already in the study must carry
/// the same content (then it is kept as is); different content is a conflict and nothing is written.
pub async fn items(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    bugs: &[BugRecord],
    transformations: &[TransformationRecord],
    derived: &[ItemDerived],
) -> StoreResult<Outcome> {
    write_items(
        db,
        study,
        actor,
        ("items", digest, None),
        bugs,
        transformations,
        derived,
    )
    .await
}

/// Imports bugs alone (`natstudy import bugs`: from a dataset's checkouts), as `items` does;
/// `report` (what was skipped and why) goes into the audit log with the count.
pub async fn bugs(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    bugs: &[BugRecord],
    report: &str,
) -> StoreResult<Outcome> {
    write_items(
        db,
        study,
        actor,
        ("bugs", digest, Some(report)),
        bugs,
        &[],
        &[],
    )
    .await
}

/// The import of `kind` (`items`, `bugs`) with its digest and a note for the audit log.
type ImportMark<'a> = (&'a str, &'a str, Option<&'a str>);

async fn write_items(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    (kind, digest, note): ImportMark<'_>,
    bugs: &[BugRecord],
    transformations: &[TransformationRecord],
    derived: &[ItemDerived],
) -> StoreResult<Outcome> {
    if derived.len() != transformations.len() {
        return Err(StoreError::Invalid(
            "line data for every transformation".into(),
        ));
    }
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, kind, digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    let mut projects: HashMap<&str, i64> = HashMap::new();
    for b in bugs {
        if projects.contains_key(b.project.as_str()) {
            continue;
        }
        sqlx::query("INSERT INTO projects (study_id, name) VALUES ($1, $2) ON CONFLICT (study_id, name) DO NOTHING")
            .bind(study)
            .bind(&b.project)
            .execute(&mut *tx)
            .await?;
        let id: i64 = sqlx::query("SELECT id FROM projects WHERE study_id = $1 AND name = $2")
            .bind(study)
            .bind(&b.project)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        projects.insert(&b.project, id);
    }
    let mut bug_ids: HashMap<&str, i64> = HashMap::new();
    let mut written = 0usize;
    for b in bugs {
        let existing = sqlx::query(
            "SELECT id, source, fixed_source FROM bugs WHERE study_id = $1 AND bug_key = $2",
        )
        .bind(study)
        .bind(&b.bug_id)
        .fetch_optional(&mut *tx)
        .await?;
        let id = match existing {
            Some(r) => {
                let source: String = r.try_get("source")?;
                if source != b.source {
                    return Err(StoreError::Conflict(format!(
                        "bug {} with a different source",
                        b.bug_id
                    )));
                }
                let id: i64 = r.try_get("id")?;
                let fixed: Option<String> = r.try_get("fixed_source")?;
                match (&fixed, &b.fixed_source) {
                    // a later file may bring the developer's fix of a bug already here
                    (None, Some(new)) => {
                        written += 1;
                        sqlx::query("UPDATE bugs SET fixed_source = $1 WHERE id = $2")
                            .bind(new)
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    }
                    (Some(old), Some(new)) if old != new => {
                        return Err(StoreError::Conflict(format!(
                            "bug {} with a different fixed_source",
                            b.bug_id
                        )));
                    }
                    _ => {}
                }
                id
            }
            None => {
                written += 1;
                let lines = serde_json::to_string(&b.buggy_lines).unwrap_or_else(|_| "[]".into());
                sqlx::query(
                    "INSERT INTO bugs (study_id, project_id, bug_key, file_path, method, source, file_source, fixed_source, buggy_lines, encoding) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                )
                .bind(study)
                .bind(projects[b.project.as_str()])
                .bind(&b.bug_id)
                .bind(&b.file)
                .bind(&b.method)
                .bind(&b.source)
                .bind(&b.file_source)
                .bind(&b.fixed_source)
                .bind(lines)
                .bind(&b.encoding)
                .fetch_one(&mut *tx)
                .await?
                .try_get(0)?
            }
        };
        bug_ids.insert(&b.bug_id, id);
    }
    for (t, d) in transformations.iter().zip(derived) {
        let existing =
            sqlx::query("SELECT source FROM items WHERE study_id = $1 AND item_key = $2")
                .bind(study)
                .bind(&t.id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(r) = existing {
            let source: String = r.try_get(0)?;
            if source != t.source {
                return Err(StoreError::Conflict(format!(
                    "transformation {} with a different source",
                    t.id
                )));
            }
            continue;
        }
        let bug = *bug_ids
            .get(t.bug_id.as_str())
            .ok_or_else(|| StoreError::NotFound(format!("bug {}", t.bug_id)))?;
        written += 1;
        sqlx::query(
            "INSERT INTO items (study_id, bug_id, item_key, operator, level, source, summary, gold_unnatural, \
             line_map, touches_buggy, buggy_lines, fixed_source) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(study)
        .bind(bug)
        .bind(&t.id)
        .bind(&t.operator)
        .bind(t.level.as_str())
        .bind(&t.source)
        .bind(&t.summary)
        .bind(t.gold_unnatural.map(i64::from))
        .bind(serde_json::to_string(&d.lines.line_map).unwrap_or_else(|_| "[]".into()))
        .bind(i64::from(d.lines.touches_buggy))
        .bind(serde_json::to_string(&d.lines.buggy_lines).unwrap_or_else(|_| "[]".into()))
        .bind(&d.fixed_source)
        .execute(&mut *tx)
        .await?;
    }
    mark_noted(&mut tx, study, actor, (kind, digest, note), written).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported { rows: written })
}

/// The code an imported participant is stored under: its own namespace (`S3@import`), so an
/// online participant `S3` of the same study is never merged with them. A code that is already
/// in that namespace (a survey.json natstudy exported) is kept.
pub fn imported_code(participant: &str) -> String {
    if participant.ends_with(IMPORTED) {
        participant.to_owned()
    } else {
        format!("{participant}{IMPORTED}")
    }
}

/// The ending of imported participants' codes.
pub const IMPORTED: &str = natstudy_engine::formats::IMPORTED_SUFFIX;

/// The annotator of an imported participant (made when new, in the imported namespace:
/// [`imported_code`]); refused when the code is an online participant's.
pub(super) async fn imported_annotator(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    study: StudyId,
    participant: &str,
    now: i64,
) -> StoreResult<i64> {
    let code = imported_code(participant);
    sqlx::query("INSERT INTO annotators (study_id, code, created_at, imported) VALUES ($1, $2, $3, 1) ON CONFLICT (study_id, code) DO NOTHING")
        .bind(study)
        .bind(&code)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    let row = sqlx::query("SELECT id, imported FROM annotators WHERE study_id = $1 AND code = $2")
        .bind(study)
        .bind(&code)
        .fetch_one(&mut **tx)
        .await?;
    if row.try_get::<i64, _>(1)? == 0 {
        return Err(StoreError::Conflict(format!(
            "participant {code} (an annotator of this study who is not imported)"
        )));
    }
    Ok(row.try_get(0)?)
}

/// Imports votes in the replication layout; annotators are created from participant codes, in
/// the imported namespace ([`imported_code`]).
pub async fn votes(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    votes: &[SurveyVote],
) -> StoreResult<Outcome> {
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, "votes", digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    let items: HashMap<String, i64> =
        sqlx::query("SELECT item_key, id FROM items WHERE study_id = $1")
            .bind(study)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()?;
    let mut annotators: HashMap<&str, i64> = HashMap::new();
    let now = now_ms();
    for v in votes {
        if !annotators.contains_key(v.participant.as_str()) {
            let id = imported_annotator(&mut tx, study, &v.participant, now).await?;
            annotators.insert(&v.participant, id);
        }
    }
    let mut written = 0;
    for v in votes {
        let item = *items.get(&v.item).ok_or_else(|| {
            StoreError::NotFound(format!("item {} (import the items first)", v.item))
        })?;
        let annotator = annotators[v.participant.as_str()];
        let token = format!("import:{digest}");
        let r = sqlx::query(
            "INSERT INTO votes (item_id, annotator_id, cr, cc, time_secs, submitted_at, revision) VALUES ($1, $2, $3, $4, $5, $6, 1) \
             ON CONFLICT (item_id, annotator_id) DO NOTHING",
        )
        .bind(item)
        .bind(annotator)
        .bind(i64::from(v.cr))
        .bind(i64::from(v.cc))
        .bind(crate::store::OptReal(v.time_secs))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "a vote of {} on {}",
                v.participant, v.item
            )));
        }
        sqlx::query(
            "INSERT INTO vote_revisions (item_id, annotator_id, revision, submit_token, cr, cc, time_secs, submitted_at) \
             VALUES ($1, $2, 1, $3, $4, $5, $6, $7)",
        )
        .bind(item)
        .bind(annotator)
        .bind(format!("{token}:{}", v.item))
        .bind(i64::from(v.cr))
        .bind(i64::from(v.cc))
        .bind(crate::store::OptReal(v.time_secs))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        written += 1;
    }
    mark(&mut tx, study, actor, "votes", digest, written).await?;
    super::assign::refresh_full_study(&mut tx, study).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported { rows: written })
}

/// A row of a results table (NPR results, cross-entropy scores): written once per key.
pub trait ResultRow {
    /// The import kind recorded in `imports`.
    const KIND: &'static str;
    /// The insert, which writes nothing when the row's key exists.
    fn insert(
        &self,
        study: StudyId,
    ) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>>;
    /// What a second row with the same key is, for the conflict message.
    fn what(&self) -> String;
}

impl ResultRow for NprRecord {
    const KIND: &'static str = "npr";
    fn insert(
        &self,
        study: StudyId,
    ) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
        sqlx::query(
            "INSERT INTO npr_results (study_id, tool, target, status, patch, developer_patch) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (study_id, tool, target) DO NOTHING",
        )
        .bind(study)
        .bind(&self.tool)
        .bind(&self.target)
        .bind(i64::from(self.status))
        .bind(&self.patch)
        .bind(&self.developer_patch)
    }
    fn what(&self) -> String {
        format!("a result of {} on {}", self.tool, self.target)
    }
}

impl ResultRow for CeRecord {
    const KIND: &'static str = "ce";
    fn insert(
        &self,
        study: StudyId,
    ) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
        sqlx::query(
            "INSERT INTO ce_scores (study_id, model, target, cross_entropy) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (study_id, model, target) DO NOTHING",
        )
        .bind(study)
        .bind(&self.model)
        .bind(&self.target)
        .bind(self.cross_entropy)
    }
    fn what(&self) -> String {
        format!("a score of {} on {}", self.model, self.target)
    }
}

/// Imports a results table (NPR results or cross-entropy scores) in one transaction; a row
/// whose key exists (a tool's second result for a target, a model's second score) is a conflict.
pub async fn results<R: ResultRow>(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    rows: &[R],
) -> StoreResult<Outcome> {
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, R::KIND, digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    for r in rows {
        if r.insert(study).execute(&mut *tx).await?.rows_affected() == 0 {
            return Err(StoreError::Conflict(r.what()));
        }
    }
    mark(&mut tx, study, actor, R::KIND, digest, rows.len()).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported { rows: rows.len() })
}

/// Replaces a model's cross-entropy scores in a study (a new scoring run supersedes the last).
pub async fn replace_ce(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    model: &str,
    rows: &[CeRecord],
) -> StoreResult<usize> {
    let mut tx = db.begin_write(study).await?;
    sqlx::query("DELETE FROM ce_scores WHERE study_id = $1 AND model = $2")
        .bind(study)
        .bind(model)
        .execute(&mut *tx)
        .await?;
    for r in rows {
        sqlx::query("INSERT INTO ce_scores (study_id, model, target, cross_entropy) VALUES ($1, $2, $3, $4)")
            .bind(study)
            .bind(model)
            .bind(&r.target)
            .bind(r.cross_entropy)
            .execute(&mut *tx)
            .await?;
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "lm.score",
        &format!("{model}: {} targets", rows.len()),
    )
    .await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(rows.len())
}
