//! Uploaded models: which study uploaded each file of the shared models folder, and its size.

use sqlx::Row;

use super::{audit, Db, StoreResult};
use crate::db::now_ms;
use crate::ids::{StudyId, UserId};

/// The bytes of the models the study uploaded.
pub async fn bytes_of(db: &Db, study: StudyId) -> StoreResult<u64> {
    let n: i64 = sqlx::query(
        "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM models WHERE study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await?
    .try_get(0)?;
    Ok(n.max(0) as u64)
}

/// The study that uploaded the model, if any (a model placed by hand, or whose study was
/// deleted, has none).
pub async fn owner(db: &Db, name: &str) -> StoreResult<Option<StudyId>> {
    let row = sqlx::query("SELECT study_id FROM models WHERE name = $1")
        .bind(name)
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => r.try_get::<Option<StudyId>, _>(0)?,
        None => None,
    })
}

/// The names of the models the study uploaded.
pub async fn names_of(db: &Db, study: StudyId) -> StoreResult<Vec<String>> {
    let rows = sqlx::query("SELECT name FROM models WHERE study_id = $1 ORDER BY name")
        .bind(study)
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| r.try_get(0).map_err(Into::into))
        .collect()
}

/// Records an upload (a row left by a deleted file of the same name is replaced).
pub async fn add(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    name: &str,
    bytes: u64,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    sqlx::query("DELETE FROM models WHERE name = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO models (name, study_id, bytes, uploaded_by, uploaded_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(name)
    .bind(study)
    .bind(bytes as i64)
    .bind(actor)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "model.upload",
        &format!("{name} ({bytes} bytes)"),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Forgets a deleted model.
pub async fn remove(db: &Db, name: &str, actor: Option<UserId>, study: StudyId) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    sqlx::query("DELETE FROM models WHERE name = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    audit::record(&mut *tx, actor, Some(study), "model.delete", name).await?;
    tx.commit().await?;
    Ok(())
}
