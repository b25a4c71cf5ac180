//! `natstudy verify`'s results: per item, whether it compiles in its file and whether its tests
//! behave as the original's (table `item_checks`, one row per item, replaced by each run).

use std::collections::HashMap;

use sqlx::Row;

use super::{Db, StoreResult};
use crate::db::now_ms;
use natstudy_engine::verify::Check;
use natstudy_vocab::ids::{ItemId, StudyId};

/// A bug as verification needs it.
#[derive(Debug, Clone)]
pub struct BugRow {
    pub key: String,
    pub file_path: String,
    pub method: String,
    pub file_source: Option<String>,
    pub encoding: Option<String>,
}

/// An item as verification needs it; `bug` indexes the bugs returned with it.
#[derive(Debug, Clone)]
pub struct ItemRow {
    pub id: ItemId,
    pub key: String,
    pub bug: usize,
    pub source: String,
}

/// The study's bugs and items (only those not checked yet when `unchecked_only`).
pub async fn inputs(
    db: &Db,
    study: StudyId,
    unchecked_only: bool,
) -> StoreResult<(Vec<BugRow>, Vec<ItemRow>)> {
    let rows = sqlx::query(
        "SELECT id, bug_key, file_path, source, file_source, encoding FROM bugs WHERE study_id = $1 ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut index: HashMap<i64, usize> = HashMap::new();
    let mut bugs = Vec::with_capacity(rows.len());
    for r in &rows {
        index.insert(r.try_get("id")?, bugs.len());
        bugs.push(BugRow {
            key: r.try_get("bug_key")?,
            file_path: r.try_get("file_path")?,
            method: r.try_get("source")?,
            file_source: r.try_get("file_source")?,
            encoding: r.try_get("encoding")?,
        });
    }
    let rows = sqlx::query(
        "SELECT i.id, i.item_key, i.bug_id, i.source, c.item_id AS checked FROM items i \
         LEFT JOIN item_checks c ON c.item_id = i.id WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut items = Vec::with_capacity(rows.len());
    for r in &rows {
        if unchecked_only && r.try_get::<Option<i64>, _>("checked")?.is_some() {
            continue;
        }
        let bug: i64 = r.try_get("bug_id")?;
        let Some(&bug) = index.get(&bug) else {
            continue;
        };
        items.push(ItemRow {
            id: r.try_get("id")?,
            key: r.try_get("item_key")?,
            bug,
            source: r.try_get("source")?,
        });
    }
    Ok((bugs, items))
}

fn flag(v: Option<bool>) -> Option<i64> {
    v.map(i64::from)
}

/// Stores the checks (replacing earlier ones), in one transaction.
pub async fn save(db: &Db, checks: &[(ItemId, Check)]) -> StoreResult<()> {
    let now = now_ms();
    let mut tx = db.begin().await?;
    for (item, c) in checks {
        sqlx::query(
            "INSERT INTO item_checks (item_id, compiles, tests_same, message, checked_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (item_id) DO UPDATE SET \
             compiles = excluded.compiles, tests_same = excluded.tests_same, \
             message = excluded.message, checked_at = excluded.checked_at",
        )
        .bind(*item)
        .bind(flag(c.compiles))
        .bind(flag(c.tests_same))
        .bind(&c.message)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Every stored check of a study, by item key.
pub async fn by_item(db: &Db, study: StudyId) -> StoreResult<HashMap<String, Check>> {
    let rows = sqlx::query(
        "SELECT i.item_key, c.compiles, c.tests_same, c.message FROM item_checks c \
         JOIN items i ON i.id = c.item_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        out.insert(r.try_get("item_key")?, check_of(r)?);
    }
    Ok(out)
}

/// A row's check (columns compiles, tests_same, message; NULL message: never checked).
pub fn check_of(r: &sqlx::any::AnyRow) -> StoreResult<Check> {
    let b = |c: &str| -> StoreResult<Option<bool>> {
        Ok(r.try_get::<Option<i64>, _>(c)?.map(|v| v != 0))
    };
    Ok(Check {
        compiles: b("compiles")?,
        tests_same: b("tests_same")?,
        message: r
            .try_get::<Option<String>, _>("message")?
            .unwrap_or_default(),
    })
}

/// A bug as the benchmark export needs it.
#[derive(Debug, Clone)]
pub struct BenchBug {
    pub key: String,
    pub project: String,
    pub file_path: String,
    pub method_name: String,
    pub method: String,
    pub file_source: Option<String>,
    pub encoding: Option<String>,
}

/// An item as the benchmark export needs it.
#[derive(Debug, Clone)]
pub struct BenchItem {
    pub key: String,
    pub operator: String,
    pub level: String,
    pub summary: String,
    pub source: String,
    pub buggy_lines: Vec<usize>,
    pub line_map: Option<serde_json::Value>,
    pub fixed_source: Option<String>,
    pub check: Option<Check>,
}

/// Streams the study's items with their bug (bugs are read once), in item order; `each` may
/// wait (the reading waits with it: an export's writer holds it back).
pub async fn benchmark(
    db: &Db,
    study: StudyId,
    mut each: impl AsyncFnMut(&BenchBug, BenchItem) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    use futures_util::TryStreamExt;
    let rows = sqlx::query(
        "SELECT b.id, b.bug_key, p.name AS project, b.file_path, b.method, b.source, b.file_source, b.encoding \
         FROM bugs b JOIN projects p ON p.id = b.project_id WHERE b.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut bugs: HashMap<i64, BenchBug> = HashMap::with_capacity(rows.len());
    for r in &rows {
        bugs.insert(
            r.try_get("id")?,
            BenchBug {
                key: r.try_get("bug_key")?,
                project: r.try_get("project")?,
                file_path: r.try_get("file_path")?,
                method_name: r.try_get("method")?,
                method: r.try_get("source")?,
                file_source: r.try_get("file_source")?,
                encoding: r.try_get("encoding")?,
            },
        );
    }
    drop(rows);
    let mut items = sqlx::query(
        "SELECT i.bug_id, i.item_key, i.operator, i.level, i.summary, i.source, i.buggy_lines, \
         i.line_map, i.fixed_source, c.compiles, c.tests_same, c.message FROM items i \
         LEFT JOIN item_checks c ON c.item_id = i.id WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut n = 0;
    while let Some(r) = items.try_next().await? {
        let Some(bug) = bugs.get(&r.try_get::<i64, _>("bug_id")?) else {
            continue;
        };
        let json = |c: &str| -> StoreResult<Option<serde_json::Value>> {
            Ok(r.try_get::<Option<String>, _>(c)?
                .and_then(|t| serde_json::from_str(&t).ok()))
        };
        let buggy_lines = json("buggy_lines")?
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let check = match r.try_get::<Option<String>, _>("message")? {
            Some(_) => Some(check_of(&r)?),
            None => None,
        };
        each(
            bug,
            BenchItem {
                key: r.try_get("item_key")?,
                operator: r.try_get("operator")?,
                level: r.try_get("level")?,
                summary: r.try_get("summary")?,
                source: r.try_get("source")?,
                buggy_lines,
                line_map: json("line_map")?,
                fixed_source: r.try_get("fixed_source")?,
                check,
            },
        )
        .await?;
        n += 1;
    }
    Ok(n)
}
