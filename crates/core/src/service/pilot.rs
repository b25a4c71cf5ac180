//! A study's pilot: staff try the survey as a participant through a pilot link, a study in
//! its pilot phase makes pilot links, and the pilot is cleared before the study proper
//! ([`store::pilot`]).

use super::{ServiceError, ServiceResult};
use crate::store::{self, Db};
use natstudy_vocab::ids::{StudyId, UserId};

/// A pilot invite link for one participant into the study's first batch (a staff member
/// trying the survey): its path.
pub async fn try_link(db: &Db, study: StudyId, actor: Option<UserId>) -> ServiceResult<String> {
    let batch = store::monitor::batches(db, study)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ServiceError::Invalid("build a batch first: the survey shows a batch's items".into())
        })?;
    let token = store::invites::create_pilot_invite(db, study, batch.id, 1, actor).await?;
    Ok(format!("/join/{token}"))
}

/// Deletes the pilot's participants and their votes: (participants, votes).
pub async fn clear(db: &Db, study: StudyId, actor: Option<UserId>) -> ServiceResult<(i64, i64)> {
    Ok(store::pilot::clear(db, study, actor).await?)
}
