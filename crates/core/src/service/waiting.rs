//! Whether a participant with nothing to do now waits for work held by others — items of the
//! naturalness study, units of a designed one — and when the partial code is offered.

use natstudy_types::Waiting;

use crate::store::{self, Db, StoreError};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// Whether the participant, with nothing to rate now, waits for items held by others
/// ([`store::survey::work_may_come`]) — never once they rated the N items asked — noting when
/// the wait began (its first sight), and when the partial code is offered.
pub(super) async fn waiting(
    db: &Db,
    settings: &store::survey::StudySettings,
    (study, annotator): (StudyId, AnnotatorId),
    done: i64,
    since: Option<i64>,
    now: i64,
    designed_k: Option<i64>,
) -> Result<Option<Waiting>, StoreError> {
    let crowd = &settings.crowd;
    if crowd.items_per_participant.is_some_and(|n| done >= n) {
        return Ok(None);
    }
    let until = match designed_k {
        Some(k) => store::units::work_may_come(db, study, annotator, k, now).await?,
        None => store::survey::work_may_come(db, study, annotator, now).await?,
    };
    let Some(until) = until else {
        return Ok(None);
    };
    let since = match since {
        Some(t) => t,
        None => {
            store::survey::set_waiting(db, study, annotator, Some(now)).await?;
            now
        }
    };
    let secs = |ms: i64| u64::try_from(ms.max(0) / 1000).unwrap_or(0);
    let partial_at = super::outcome::partial_from(crowd, since);
    Ok(Some(Waiting {
        required: crowd
            .items_per_participant
            .and_then(|n| u64::try_from(n).ok()),
        free_in_secs: secs(until - now),
        partial_offered: partial_at.is_some_and(|at| at <= now),
        partial_in_secs: partial_at.filter(|&at| at > now).map(|at| secs(at - now)),
    }))
}
