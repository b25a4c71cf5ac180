//! Who may act on a study: the one rule, applied to decoded, typed ids. Every study-scoped use
//! case that a route or server function reaches checks it here, whatever the path looked like
//! (the page guard's check on the raw path is only a second one).

use natstudy_types::{Role, User};

use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::Db;
use natstudy_vocab::ids::StudyId;

/// Whether `user` may act on `study`: admins on every study, any other account on the studies
/// it owns or is a member of.
pub async fn may_access(db: &Db, user: &User, study: StudyId) -> ServiceResult<bool> {
    if user.role == Role::Admin {
        return Ok(true);
    }
    Ok(store::members::is_member(db, study, user.id).await?)
}

/// Staff work on a study (its pages, downloads, charts, model uploads): an admin, or a
/// researcher who is a member of the study. Anything else is [`ServiceError::Forbidden`]; a
/// study that does not exist is [`ServiceError::NotFound`] — said only to those who would be
/// allowed on it, so its existence is no one else's to learn.
pub async fn require_staff(db: &Db, user: &User, study: StudyId) -> ServiceResult<()> {
    if !Role::STAFF.contains(&user.role) || !may_access(db, user, study).await? {
        tracing::warn!(user = %user.username, %study, "refused: not staff of the study");
        return Err(ServiceError::Forbidden(
            "this account may not act on this study".into(),
        ));
    }
    match store::survey::study_settings(db, study).await {
        Ok(_) => Ok(()),
        Err(store::StoreError::NotFound(_)) => Err(ServiceError::NotFound("study".into())),
        Err(e) => Err(e.into()),
    }
}
