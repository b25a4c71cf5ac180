//! The audit log: who did what, when.

use sqlx::Row;

use super::{Db, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{StudyId, UserId};

pub async fn record<'e, E>(
    executor: E,
    user_id: Option<UserId>,
    study_id: Option<StudyId>,
    action: &str,
    detail: &str,
) -> StoreResult<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query(
        "INSERT INTO audit_log (at, user_id, study_id, action, detail) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(now_ms())
    .bind(user_id)
    .bind(study_id)
    .bind(action)
    .bind(detail)
    .execute(executor)
    .await?;
    Ok(())
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub at_ms: i64,
    pub user: Option<String>,
    pub action: String,
    pub detail: String,
}

pub async fn for_study(db: &Db, study_id: StudyId, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    let rows = sqlx::query(
        "SELECT a.at, u.username, a.action, a.detail FROM audit_log a \
         LEFT JOIN users u ON u.id = a.user_id WHERE a.study_id = $1 ORDER BY a.id DESC LIMIT $2",
    )
    .bind(study_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            Ok(AuditEntry {
                at_ms: r.try_get("at")?,
                user: r.try_get("username")?,
                action: r.try_get("action")?,
                detail: r.try_get("detail")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}
