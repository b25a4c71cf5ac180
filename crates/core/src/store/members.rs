//! Who belongs to a study: owners and members (admins reach every study without a row here).

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{StudyId, UserId};

crate::store::codec::text_enum! {
    /// A member's standing in a study.
    pub enum MemberRole {
        Owner = "owner",
        Member = "member",
    }
}

/// Whether the account belongs to the study (as owner or member).
pub async fn is_member(db: &Db, study: StudyId, user: UserId) -> StoreResult<bool> {
    Ok(
        sqlx::query("SELECT 1 FROM study_members WHERE study_id = $1 AND user_id = $2")
            .bind(study)
            .bind(user)
            .fetch_optional(&db.pool)
            .await?
            .is_some(),
    )
}

/// Adds the account (by name) to the study, or changes its standing there.
pub async fn add(
    db: &Db,
    study: StudyId,
    username: &str,
    role: MemberRole,
    actor: Option<UserId>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let user: UserId = sqlx::query("SELECT id FROM users WHERE username = $1")
        .bind(username)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("user {username}")))?
        .try_get(0)?;
    let exists = sqlx::query("SELECT 1 FROM studies WHERE id = $1")
        .bind(study)
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Err(StoreError::NotFound(format!("study {study}")));
    }
    sqlx::query(
        "INSERT INTO study_members (study_id, user_id, role, added_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (study_id, user_id) DO UPDATE SET role = excluded.role",
    )
    .bind(study)
    .bind(user)
    .bind(role.as_str())
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "member.add",
        &format!("{username} ({})", role.as_str()),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Removes the account (by name) from the study.
pub async fn remove(
    db: &Db,
    study: StudyId,
    username: &str,
    actor: Option<UserId>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query(
        "DELETE FROM study_members WHERE study_id = $1 AND user_id = (SELECT id FROM users WHERE username = $2)",
    )
    .bind(study)
    .bind(username)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("member {username}")));
    }
    audit::record(&mut *tx, actor, Some(study), "member.remove", username).await?;
    tx.commit().await?;
    Ok(())
}

/// The study's members as (username, role), owners first.
pub async fn list(db: &Db, study: StudyId) -> StoreResult<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT u.username, m.role FROM study_members m JOIN users u ON u.id = m.user_id \
         WHERE m.study_id = $1 ORDER BY m.role DESC, u.username",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}
