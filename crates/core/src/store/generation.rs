//! What generating items needs from the database: a study's bugs as records, and its items'
//! ids and sources (so numbering continues and nothing already in the study is proposed again).

use std::collections::{BTreeMap, HashSet};

use sqlx::Row;

use super::{Db, StoreResult};
use natstudy_engine::formats::items::BugRecord;
use natstudy_engine::formats::Level;
use natstudy_vocab::ids::StudyId;

/// The study's bugs, in import order.
pub async fn bugs(db: &Db, study: StudyId) -> StoreResult<Vec<BugRecord>> {
    let rows = sqlx::query(
        "SELECT b.bug_key, p.name AS project, b.file_path, b.method, b.source, b.file_source, b.fixed_source, b.buggy_lines, b.encoding \
         FROM bugs b JOIN projects p ON p.id = b.project_id WHERE b.study_id = $1 ORDER BY b.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter().map(bug_record).collect()
}

/// A bug row (columns bug_key, project, file_path, method, source, file_source, fixed_source,
/// buggy_lines, encoding)
/// as its interchange record.
pub fn bug_record(r: &sqlx::any::AnyRow) -> StoreResult<BugRecord> {
    let lines: String = r.try_get("buggy_lines")?;
    Ok(BugRecord {
        bug_id: r.try_get("bug_key")?,
        project: r.try_get("project")?,
        file: r.try_get("file_path")?,
        method: r.try_get("method")?,
        source: r.try_get("source")?,
        file_source: r.try_get("file_source")?,
        fixed_source: r.try_get("fixed_source")?,
        buggy_lines: serde_json::from_str(&lines).unwrap_or_default(),
        encoding: r.try_get("encoding")?,
    })
}

/// The next `{level}_{n}` number per level, and the (bug, source) pairs already items.
pub async fn existing(
    db: &Db,
    study: StudyId,
) -> StoreResult<(BTreeMap<Level, usize>, HashSet<(String, String)>)> {
    let rows = sqlx::query(
        "SELECT i.item_key, b.bug_key, i.source FROM items i JOIN bugs b ON b.id = i.bug_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut next: BTreeMap<Level, usize> = Level::ALL.into_iter().map(|l| (l, 1)).collect();
    let mut seen = HashSet::new();
    for r in &rows {
        let key: String = r.try_get("item_key")?;
        if let Some((level, n)) = key.split_once('_') {
            if let (Some(level), Ok(n)) = (Level::parse(level), n.parse::<usize>()) {
                let e = next.entry(level).or_insert(1);
                *e = (*e).max(n + 1);
            }
        }
        seen.insert((r.try_get("bug_key")?, r.try_get("source")?));
    }
    Ok((next, seen))
}
