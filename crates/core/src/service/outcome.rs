//! How a participant's work ends: the outcome that decides their code.

use crate::store;

/// When a participant waiting since `since` (ms) is offered the partial code (`None`: the
/// study offers none).
pub fn partial_from(crowd: &store::survey::CrowdSettings, since: i64) -> Option<i64> {
    match (crowd.partial_after_minutes, &crowd.partial_code) {
        (Some(m), Some(_)) => Some(since.saturating_add(m.saturating_mul(60_000))),
        _ => None,
    }
}

/// The outcome of a participant who finishes now, having rated `done` items: the work asked
/// (N ratings, or every item they could be given and at least the code's minimum) is
/// `Completed`; stopping while items held by others may still come is `Partial` once the
/// study's wait has passed (`waiting_since`), else `Returned`.
pub fn outcome_on_finish(
    settings: &store::survey::StudySettings,
    done: i64,
    may_come: bool,
    waiting_since: Option<i64>,
    now: i64,
) -> store::Outcome {
    let crowd = &settings.crowd;
    if crowd.items_per_participant.is_some_and(|n| done >= n) {
        return store::Outcome::Completed;
    }
    if may_come {
        let partial = waiting_since
            .and_then(|since| partial_from(crowd, since))
            .is_some_and(|at| at <= now);
        return if partial {
            store::Outcome::Partial
        } else {
            store::Outcome::Returned
        };
    }
    if done >= settings.min_rated_for_code {
        store::Outcome::Completed
    } else {
        store::Outcome::Returned
    }
}
