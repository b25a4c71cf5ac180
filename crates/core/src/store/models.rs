//! Uploaded models: which study uploaded each file of the shared models folder, and its size.

use sqlx::Row;

use super::{audit, Db, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{StudyId, UserId};

/// A reservation's name begins with a dot (no model's name does): a row of the study's
/// uploads under way, its `bytes` what the upload may still write, `uploaded_at` when it last
/// grew.
const RESERVED: &str = ".upload-";

/// A reservation that has not grown for this long (ms) belongs to an upload whose server went
/// away: it no longer counts, and the next reservation removes it.
pub const STALE_RESERVATION_MS: i64 = 3_600_000;

/// What counts against the study's quota at `now`: its models and its live reservations.
const COUNTED: &str = "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM models \
     WHERE study_id = $1 AND (name NOT LIKE '.upload-%' OR uploaded_at > $2)";

/// The bytes of the models the study uploaded and of its uploads under way.
pub async fn bytes_of(db: &Db, study: StudyId) -> StoreResult<u64> {
    let n: i64 = sqlx::query(COUNTED)
        .bind(study)
        .bind(now_ms() - STALE_RESERVATION_MS)
        .fetch_one(&db.pool)
        .await?
        .try_get(0)?;
    Ok(n.max(0) as u64)
}

/// Starts a reservation of quota for an upload, of nothing yet: its key. Stale reservations of
/// the study go.
pub async fn reserve(db: &Db, study: StudyId, suffix: &str) -> StoreResult<String> {
    let key = format!("{RESERVED}{suffix}");
    let now = now_ms();
    let mut tx = db.begin_write(study).await?;
    sqlx::query(
        "DELETE FROM models WHERE study_id = $1 AND name LIKE '.upload-%' AND uploaded_at <= $2",
    )
    .bind(study)
    .bind(now - STALE_RESERVATION_MS)
    .execute(&mut *tx)
    .await?;
    sqlx::query("INSERT INTO models (name, study_id, bytes, uploaded_at) VALUES ($1, $2, 0, $3)")
        .bind(&key)
        .bind(study)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(key)
}

/// Grows the reservation `key` to `bytes` if the study's models and reservations stay within
/// `quota`; whether it did. Serialised with every other writer of the study's quota (the
/// study's write lock), so parallel uploads never reserve the same room twice.
pub async fn grow(db: &Db, study: StudyId, key: &str, bytes: u64, quota: u64) -> StoreResult<bool> {
    let now = now_ms();
    let mut tx = db.begin_write(study).await?;
    let counted: i64 = sqlx::query(COUNTED)
        .bind(study)
        .bind(now - STALE_RESERVATION_MS)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    let held: Option<i64> = sqlx::query("SELECT bytes FROM models WHERE name = $1")
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?;
    let Some(held) = held else {
        return Ok(false);
    };
    let after = (counted - held).max(0) as u64 + bytes;
    if after > quota {
        return Ok(false);
    }
    sqlx::query("UPDATE models SET bytes = $2, uploaded_at = $3 WHERE name = $1")
        .bind(key)
        .bind(i64::try_from(bytes).unwrap_or(i64::MAX))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// Ends a reservation (the upload failed, or was recorded).
pub async fn release(db: &Db, study: StudyId, key: &str) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    sqlx::query("DELETE FROM models WHERE name = $1")
        .bind(key)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
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
    let rows = sqlx::query(
        "SELECT name FROM models WHERE study_id = $1 AND name NOT LIKE '.upload-%' ORDER BY name",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| r.try_get(0).map_err(Into::into))
        .collect()
}

/// Records an upload (a row left by a deleted file of the same name is replaced), in place of
/// its reservation, if it had one.
pub async fn add(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    (name, reservation): (&str, Option<&str>),
    bytes: u64,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    sqlx::query("DELETE FROM models WHERE name = $1 OR name = $2")
        .bind(name)
        .bind(reservation.unwrap_or(name))
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
