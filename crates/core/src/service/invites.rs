//! Invite links: what a link says before anyone joins, joining through one, coming back with
//! a resume code, and the links staff make and close.

use super::{ServiceError, ServiceResult};
use crate::store::Db;
use crate::store::{self, resume_codes::Entry};
use natstudy_types::InviteStatus;
use natstudy_vocab::ids::{AnnotatorId, BatchId, InviteId, StudyId, UserId};

/// The longest invite token looked up (a longer one is no invite).
pub const MAX_TOKEN: usize = 128;
/// How many reviewers one review-only invite may admit.
pub const REVIEW_CAPS: std::ops::RangeInclusive<i64> = 1..=1000;
/// How many participants one survey invite may admit (a crowd study's places).
pub const INVITE_CAPS: std::ops::RangeInclusive<i64> = 1..=100_000;

/// The cap of an invite, checked against its range; the page and the command line share it.
fn check_cap(cap: i64, caps: &std::ops::RangeInclusive<i64>, who: &str) -> ServiceResult<()> {
    if caps.contains(&cap) {
        return Ok(());
    }
    Err(ServiceError::Invalid(format!(
        "an invite admits {} to {} {who}, not {cap}",
        caps.start(),
        caps.end()
    )))
}

/// What an invite link says to the one who opens it (`current`: the participant this browser
/// already is, if any; `identity`: the crowd platform's ids the link carries). A platform id
/// is a participant before it is a place: a known id continues on any device, whether or not
/// the link's places are all taken (the join continues them the same way).
pub async fn status(
    db: &Db,
    token: &str,
    current: Option<AnnotatorId>,
    identity: &store::invites::Identity,
) -> ServiceResult<InviteStatus> {
    if token.len() > MAX_TOKEN {
        return Ok(InviteStatus::Unknown);
    }
    let Some(store::invites::InviteInfo {
        study: id,
        study_name: name,
        cap,
        used,
        review,
        closed,
        full,
    }) = store::invites::invite(db, token).await?
    else {
        return Ok(InviteStatus::Unknown);
    };
    let by_platform = store::invites::platform_participant(db, id, identity).await?;
    let current = by_platform.or(current);
    let continuing = match current {
        Some(me) => store::invites::annotator_in(db, id, Some(me), None)
            .await?
            .is_some(),
        None => false,
    };
    let finished = match (continuing, current) {
        (true, Some(me)) => store::invites::has_finished(db, me).await?,
        _ => false,
    };
    Ok(if closed && !continuing {
        InviteStatus::Closed
    } else if used >= cap && !continuing {
        InviteStatus::UsedUp
    } else if full && !continuing {
        InviteStatus::Full
    } else {
        InviteStatus::Open {
            study: name,
            continuing,
            finished,
            review,
        }
    })
}

/// Joins through a looked-up invite (or continues as `current`).
pub async fn join(
    db: &Db,
    invite: &store::invites::InviteRef,
    identity: &store::invites::Identity,
    current: Option<AnnotatorId>,
) -> ServiceResult<Entry> {
    Ok(store::invites::join_via(db, invite, identity, current).await?)
}

/// A resume code as it is compared (what throttling counts guesses of).
pub fn normalise_resume_code(code: &str) -> String {
    store::resume_codes::normalise_resume_code(code)
}

/// The participant a resume code belongs to, if any.
pub async fn resume(db: &Db, code: &str) -> ServiceResult<Option<Entry>> {
    Ok(store::resume_codes::by_resume_code(db, code).await?)
}

/// A new invite link into a batch: its path (`/join/TOKEN`); at least one place.
pub async fn create(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    actor: Option<UserId>,
) -> ServiceResult<String> {
    batch_invite(db, study, batch, cap, false, actor).await
}

/// A new pilot invite link into a batch, whatever the study's phase: its path.
pub async fn create_pilot(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    actor: Option<UserId>,
) -> ServiceResult<String> {
    batch_invite(db, study, batch, cap, true, actor).await
}

async fn batch_invite(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    pilot: bool,
    actor: Option<UserId>,
) -> ServiceResult<String> {
    check_cap(cap, &INVITE_CAPS, "participants")?;
    let token = if pilot {
        store::invites::create_pilot_invite(db, study, batch, cap, actor).await?
    } else {
        store::invites::create_invite(db, study, batch, cap, actor).await?
    };
    Ok(format!("/join/{token}"))
}

/// Whether some item of the batch has room for another rating (a link into a full batch
/// turns participants away until there is).
pub async fn batch_has_room(db: &Db, batch: BatchId) -> ServiceResult<bool> {
    Ok(store::invites::batch_has_room(db, batch).await?)
}

/// A new invite link into a designed study's survey (whose units go to all its
/// participants; no batch): its path. Refused for a naturalness study (its links lead into a
/// batch).
pub async fn create_for_design(
    db: &Db,
    study: StudyId,
    cap: i64,
    pilot: bool,
    actor: Option<UserId>,
) -> ServiceResult<String> {
    if !super::designs::is_designed(db, study).await? {
        return Err(ServiceError::Invalid(
            "a naturalness study's invite link leads into a batch: name one (--batch)".into(),
        ));
    }
    check_cap(cap, &INVITE_CAPS, "participants")?;
    let token = store::invites::create_design_invite(db, study, cap, pilot, actor).await?;
    Ok(format!("/join/{token}"))
}

/// A new review-only invite link: its path.
pub async fn create_review(
    db: &Db,
    study: StudyId,
    cap: i64,
    actor: Option<UserId>,
) -> ServiceResult<String> {
    check_cap(cap, &REVIEW_CAPS, "reviewers")?;
    let token = store::invites::create_review_invite(db, study, cap, actor).await?;
    Ok(format!("/join/{token}"))
}

/// Closes an invite link: it admits no one new.
pub async fn close(
    db: &Db,
    study: StudyId,
    invite: InviteId,
    actor: Option<UserId>,
) -> ServiceResult<()> {
    Ok(store::monitor::close_invite(db, study, invite, actor).await?)
}

/// The reviewer code of a participant who joined through the study's review-only invite.
pub async fn reviewer_participant(
    db: &Db,
    study: StudyId,
    participant: AnnotatorId,
) -> ServiceResult<Option<String>> {
    Ok(store::invites::reviewer_participant(db, study, participant).await?)
}
