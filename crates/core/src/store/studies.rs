//! Studies and their overview counts.

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{StudyId, UserId};

pub const DEFAULT_GUIDELINE: &str = include_str!("../../assets/guideline.md");

/// Creates a study; the acting account (if any) owns it.
pub async fn create(
    db: &Db,
    actor: Option<UserId>,
    name: &str,
    description: &str,
) -> StoreResult<StudyId> {
    create_owned(db, actor, None, name, description).await
}

/// Creates a study owned by `owner` (else by `actor`, when there is one).
pub async fn create_owned(
    db: &Db,
    actor: Option<UserId>,
    owner: Option<UserId>,
    name: &str,
    description: &str,
) -> StoreResult<StudyId> {
    let mut tx = db.begin().await?;
    // the operator's name is hidden from participants unless the study shows it: a name such
    // as "DividingComposedIf" primes the judgement the study measures
    let row = sqlx::query(
        "INSERT INTO studies (name, description, guideline, created_by, created_at, blind_operator) \
         VALUES ($1, $2, $3, $4, $5, 1) RETURNING id",
    )
    .bind(name)
    .bind(description)
    .bind(DEFAULT_GUIDELINE)
    .bind(actor)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| StoreError::conflict_on_unique(e, format!("study {name}")))?;
    let id: StudyId = row.try_get(0)?;
    if let Some(owner) = owner.or(actor) {
        sqlx::query(
            "INSERT INTO study_members (study_id, user_id, role, added_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(id)
        .bind(owner)
        .bind(super::members::MemberRole::Owner)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
    }
    audit::record(&mut *tx, actor, Some(id), "study.create", name).await?;
    tx.commit().await?;
    Ok(id)
}

/// The id of the study called `name`.
pub async fn id_by_name(db: &Db, name: &str) -> StoreResult<StudyId> {
    let row = sqlx::query("SELECT id FROM studies WHERE name = $1")
        .bind(name)
        .fetch_optional(&db.pool)
        .await?;
    match row {
        Some(r) => Ok(r.try_get(0)?),
        None => Err(StoreError::NotFound(format!("study {name}"))),
    }
}

const SUMMARY_SQL: &str = "SELECT s.id, s.name, s.description, s.ratings_per_item, \
    (SELECT COUNT(*) FROM bugs b WHERE b.study_id = s.id) AS bugs, \
    (SELECT COUNT(*) FROM items i WHERE i.study_id = s.id) AS items, \
    (SELECT COUNT(*) FROM votes v JOIN items i ON i.id = v.item_id WHERE i.study_id = s.id AND v.counted = 1) AS votes, \
    (SELECT COUNT(*) FROM annotators a WHERE a.study_id = s.id AND a.counted = 1) AS annotators \
    FROM studies s";

/// A study with its headline counts.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyCounts {
    pub id: StudyId,
    pub name: String,
    pub description: String,
    pub ratings_per_item: i64,
    pub bugs: i64,
    pub items: i64,
    pub votes: i64,
    pub annotators: i64,
}

/// An item as the study page lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemListing {
    pub key: String,
    pub bug: String,
    pub operator: String,
    pub level: String,
    pub summary: String,
    pub votes: i64,
}

fn counts(r: &sqlx::any::AnyRow) -> Result<StudyCounts, sqlx::Error> {
    Ok(StudyCounts {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        ratings_per_item: r.try_get("ratings_per_item")?,
        bugs: r.try_get("bugs")?,
        items: r.try_get("items")?,
        votes: r.try_get("votes")?,
        annotators: r.try_get("annotators")?,
    })
}

pub async fn list(db: &Db) -> StoreResult<Vec<StudyCounts>> {
    let rows = sqlx::query(&format!("{SUMMARY_SQL} ORDER BY s.name"))
        .fetch_all(&db.pool)
        .await?;
    Ok(rows.iter().map(counts).collect::<Result<_, _>>()?)
}

/// The studies the account owns or is a member of.
pub async fn list_of_member(db: &Db, user: UserId) -> StoreResult<Vec<StudyCounts>> {
    let rows = sqlx::query(&format!(
        "{SUMMARY_SQL} WHERE s.id IN (SELECT study_id FROM study_members WHERE user_id = $1) ORDER BY s.name"
    ))
    .bind(user)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(counts).collect::<Result<_, _>>()?)
}

/// One study with its headline counts.
pub async fn counts_of(db: &Db, id: StudyId) -> StoreResult<Option<StudyCounts>> {
    let row = sqlx::query(&format!("{SUMMARY_SQL} WHERE s.id = $1"))
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
    Ok(row.as_ref().map(counts).transpose()?)
}

/// Items per level: (level, items), by level.
pub async fn level_counts(db: &Db, id: StudyId) -> StoreResult<Vec<(String, i64)>> {
    let rows = sqlx::query(
        "SELECT level, COUNT(*) AS n FROM items WHERE study_id = $1 GROUP BY level ORDER BY level",
    )
    .bind(id)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get("level")?, r.try_get("n")?)))
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The study's first `limit` items with their vote counts, in import order.
pub async fn items(db: &Db, id: StudyId, limit: i64) -> StoreResult<Vec<ItemListing>> {
    let rows = sqlx::query(
        "SELECT i.item_key, b.bug_key, i.operator, i.level, i.summary, \
         (SELECT COUNT(*) FROM votes v WHERE v.item_id = i.id AND v.counted = 1) AS votes \
         FROM items i JOIN bugs b ON b.id = i.bug_id WHERE i.study_id = $1 ORDER BY i.id LIMIT $2",
    )
    .bind(id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(ItemListing {
                key: r.try_get("item_key")?,
                bug: r.try_get("bug_key")?,
                operator: r.try_get("operator")?,
                level: r.try_get("level")?,
                summary: r.try_get("summary")?,
                votes: r.try_get("votes")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// Records that something the study's report reads changed (in the writer's transaction).
pub async fn data_changed(conn: &mut sqlx::AnyConnection, study: StudyId) -> StoreResult<()> {
    sqlx::query("UPDATE studies SET data_version = data_version + 1 WHERE id = $1")
        .bind(study)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The study's data version: it moves on with every change of what its report reads. The
/// sum of its parts (`migrations/postgres/0013_study_versions.sql`), each of which only grows.
pub async fn data_version(db: &Db, study: StudyId) -> StoreResult<i64> {
    sqlx::query(
        "SELECT s.data_version + (SELECT CAST(COALESCE(SUM(v.version), 0) AS BIGINT) \
         FROM study_versions v WHERE v.study_id = s.id) FROM studies s WHERE s.id = $1",
    )
    .bind(study)
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?
    .try_get(0)
    .map_err(StoreError::Db)
}
