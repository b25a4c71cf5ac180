//! Loads a study's votes, results and scores as the analysis engine's plain data.

use std::collections::HashMap;

use sqlx::Row;

use super::{Db, StoreResult};
use natstudy_engine::analysis::{Item, LeftOut, LeftOutParticipant, ReviewTask, StudyData, Vote};
use natstudy_engine::formats::Level;
use natstudy_vocab::ids::{ItemId, StudyId};

/// The study's data as the analysis reads it: the votes that count (none of an excluded
/// participant: [`super::exclusions`]).
pub async fn study_data(db: &Db, study: StudyId) -> StoreResult<StudyData> {
    study_data_with(db, study, false).await
}

/// [`study_data`], with the excluded participants' votes put back when `include_excluded`
/// (`report --include-excluded`); the report names them either way.
pub async fn study_data_with(
    db: &Db,
    study: StudyId,
    include_excluded: bool,
) -> StoreResult<StudyData> {
    let bugs: Vec<String> = sqlx::query("SELECT bug_key FROM bugs WHERE study_id = $1 ORDER BY id")
        .bind(study)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    let mut index: HashMap<ItemId, usize> = HashMap::new();
    let mut items = Vec::new();
    for r in sqlx::query(
        "SELECT i.id, i.item_key, b.bug_key, i.level, i.operator, i.gold_unnatural FROM items i JOIN bugs b ON b.id = i.bug_id \
         WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    {
        let level: String = r.try_get("level")?;
        let level = Level::parse(&level).ok_or_else(|| sqlx::Error::Decode(format!("unknown level {level}").into()))?;
        index.insert(r.try_get("id")?, items.len());
        items.push(Item { key: r.try_get("item_key")?, bug: r.try_get("bug_key")?, level, operator: r.try_get("operator")?,
            gold_unnatural: r.try_get::<Option<i64>, _>("gold_unnatural")?.map(|g| g != 0) });
    }
    let mut votes = Vec::new();
    for r in sqlx::query(
        "SELECT v.item_id, a.code, v.cr, v.cc, v.time_secs FROM votes v JOIN annotators a ON a.id = v.annotator_id \
         JOIN items i ON i.id = v.item_id WHERE i.study_id = $1 \
         AND (v.counted = 1 OR ($2 = 1 AND a.pilot = 0)) ORDER BY v.id",
    )
    .bind(study)
    .bind(i64::from(include_excluded))
    .fetch_all(&db.pool)
    .await?
    {
        let item_id: ItemId = r.try_get("item_id")?;
        let Some(&item) = index.get(&item_id) else { continue };
        votes.push(Vote {
            item,
            annotator: r.try_get("code")?,
            cr: r.try_get::<i64, _>("cr")? as u8,
            cc: r.try_get::<i64, _>("cc")? as u8,
            time_secs: r.try_get("time_secs")?,
        });
    }
    let npr =
        sqlx::query("SELECT tool, target, status FROM npr_results WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&db.pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get::<i64, _>(2)? as u8)))
            .collect::<Result<_, sqlx::Error>>()?;
    let ce = sqlx::query(
        "SELECT model, target, cross_entropy FROM ce_scores WHERE study_id = $1 ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
    .collect::<Result<_, sqlx::Error>>()?;
    let reviews = review_tasks(&super::reviews::tasks(db, study).await?);
    let k = super::assign::ratings_per_item(db, study).await?;
    Ok(StudyData {
        bugs,
        items,
        votes,
        npr,
        ce,
        reviews,
        ratings_per_item: usize::try_from(k).ok(),
        left_out: LeftOut {
            participants: super::exclusions::excluded(db, study)
                .await?
                .into_iter()
                .map(|e| LeftOutParticipant {
                    annotator: e.code,
                    reason: e.reason,
                    votes: usize::try_from(e.votes).unwrap_or(0),
                })
                .collect(),
            included: include_excluded,
        },
    })
}

/// The review tasks as the analysis reads them: a duplicate points at its original's index, an
/// automatic decision an admin sent back counts as none.
pub fn review_tasks(rows: &[super::reviews::TaskRow]) -> Vec<ReviewTask> {
    let index: HashMap<natstudy_vocab::ids::ReviewTaskId, usize> =
        rows.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
    // the tasks' sources and notes stay in `rows`: only what the decision reads is copied
    rows.iter()
        .map(|t| ReviewTask {
            same_as: t.same_as.and_then(|id| index.get(&id).copied()),
            auto: t.auto.filter(|_| !t.sent_back),
            verdicts: t.verdicts.iter().map(|(r, v, _)| (r.clone(), *v)).collect(),
            k: t.k as usize,
            adjudicated: t.adjudicated,
            tool: t.tool.clone(),
            target: t.target.clone(),
        })
        .collect()
}

/// The ids of a study's targets: bug ids and transformation ids.
pub async fn target_keys(
    db: &Db,
    study: StudyId,
) -> StoreResult<std::collections::HashSet<String>> {
    let rows = sqlx::query(
        "SELECT bug_key FROM bugs WHERE study_id = $1 UNION ALL SELECT item_key FROM items WHERE study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| r.try_get::<String, _>(0))
        .collect::<Result<_, _>>()?)
}

/// Every (target id, source) of a study: bugs and transformations, for language-model scoring.
pub async fn sources(db: &Db, study: StudyId) -> StoreResult<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT bug_key, source FROM bugs WHERE study_id = $1 UNION ALL SELECT item_key, source FROM items WHERE study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    pairs(&rows)
}

/// The characters of every source of a study (bugs and transformations): what a scoring's
/// estimate reads, summed by the database rather than every source read into memory.
pub async fn source_chars(db: &Db, study: StudyId) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE((SELECT SUM(LENGTH(source)) FROM bugs WHERE study_id = $1), 0) \
         + COALESCE((SELECT SUM(LENGTH(source)) FROM items WHERE study_id = $1), 0)",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await?)
}

/// The study's cross-entropies under one model's name, in the order they were stored.
pub async fn ce_of_model(
    db: &Db,
    study: StudyId,
    name: &str,
) -> StoreResult<Vec<natstudy_engine::formats::results::CeRecord>> {
    let rows = sqlx::query(
        "SELECT model, target, cross_entropy FROM ce_scores WHERE study_id = $1 AND model = $2 ORDER BY id",
    )
    .bind(study)
    .bind(name)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(natstudy_engine::formats::results::CeRecord {
                model: r.try_get(0)?,
                target: r.try_get(1)?,
                cross_entropy: r.try_get(2)?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// Rows of (key, text) as pairs.
fn pairs(rows: &[sqlx::any::AnyRow]) -> StoreResult<Vec<(String, String)>> {
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The developer-fixed methods: bug key → the fix, item key → the fix carried over to it
/// (only where known).
pub async fn fixed_sources(db: &Db, study: StudyId) -> StoreResult<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT bug_key, fixed_source FROM bugs WHERE study_id = $1 AND fixed_source IS NOT NULL \
         UNION ALL SELECT item_key, fixed_source FROM items WHERE study_id = $1 AND fixed_source IS NOT NULL",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    pairs(&rows)
}
