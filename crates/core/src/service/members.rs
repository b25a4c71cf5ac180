//! Who belongs to a study: its owners and members (admins reach every study without a row).

use super::{ServiceError, ServiceResult};
use crate::store::Db;
use crate::store::{self, members::MemberRole};
use natstudy_vocab::ids::{StudyId, UserId};

/// The study's members.
pub async fn list(db: &Db, study: StudyId) -> ServiceResult<Vec<(String, String)>> {
    Ok(store::members::list(db, study).await?)
}

/// Adds an account to the study as `role` (`owner` or `member`), or changes its standing.
pub async fn add(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    username: &str,
    role: &str,
) -> ServiceResult<()> {
    let role = MemberRole::parse(role)
        .ok_or_else(|| ServiceError::Invalid("a member is an owner or a member".into()))?;
    Ok(store::members::add(db, study, username, role, actor).await?)
}

/// Takes an account off the study.
pub async fn remove(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    username: &str,
) -> ServiceResult<()> {
    Ok(store::members::remove(db, study, username, actor).await?)
}
