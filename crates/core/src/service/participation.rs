//! What a participant may send: every field bounded and well-formed before it reaches the
//! store. Participants are strangers from crowd platforms; nothing they send is trusted.

use natstudy_types::{ScreenerQuestion, VoteForm};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

use super::error::{ServiceError, ServiceResult};

/// A submit token is what the rating page is given: 32 lowercase hex digits.
pub use crate::domain::vote::{MAX_COMMENT, TOKEN_LEN};
/// The longest crowd-worker id, in characters.
pub const MAX_PID: usize = 128;
/// Screener answers: at most this many, with names and values of at most these lengths.
pub const MAX_ANSWERS: usize = 50;
pub const MAX_ANSWER_NAME: usize = 64;
pub const MAX_ANSWER_VALUE: usize = 200;

/// A fresh submit token for the rating page.
pub fn fresh_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; TOKEN_LEN / 2];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Records a participant's vote: its fields checked, consent given, then durably stored
/// (the store refuses what would exceed k or was never handed to the annotator), with the
/// participant's next item claimed in the same commit (`None`: nothing left to rate).
pub async fn submit_vote(
    db: &crate::store::Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: VoteForm,
) -> ServiceResult<Option<crate::store::assign::Handed>> {
    let now = crate::db::now_ms();
    let input =
        crate::domain::Vote::parse(vote, now).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    // refused before the participant's consent, in the vote's own check; the next item is
    // claimed with the vote (the answer carries it)
    let (_, next) = crate::store::assign::submit_then_next(
        db,
        study,
        annotator,
        item,
        &input,
        now,
        crate::store::assign::Consent::Required,
    )
    .await?;
    Ok(next)
}

/// The crowd identity a participant came with, checked: each id as [`check_pid`], the
/// platform one of those natstudy knows (`prolific`, `mturk`, `sona`, `generic`), kept only
/// with a participant id.
pub fn check_identity(
    c: &natstudy_types::CrowdIdentity,
) -> ServiceResult<crate::store::invites::Identity> {
    let pid = check_pid(c.pid.as_deref())?;
    let study = check_pid(c.study.as_deref()).map_err(|_| {
        ServiceError::Invalid(format!("study id: at most {MAX_PID} printable characters"))
    })?;
    let session = check_pid(c.session.as_deref()).map_err(|_| {
        ServiceError::Invalid(format!(
            "session id: at most {MAX_PID} printable characters"
        ))
    })?;
    let platform = match c
        .platform
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        None => None,
        Some(p) => Some(crate::store::Platform::parse(p).ok_or_else(|| {
            ServiceError::Invalid("platform: prolific, mturk, sona or generic".into())
        })?),
    };
    Ok(crate::store::invites::Identity {
        // a participant id without a platform is a generic one
        platform: pid
            .as_ref()
            .map(|_| platform.unwrap_or(crate::store::Platform::Generic)),
        pid,
        study,
        session,
    })
}

/// How many of `joins` (participants) have answered nothing yet.
pub async fn unanswered(db: &crate::store::Db, joins: &[AnnotatorId]) -> ServiceResult<usize> {
    Ok(crate::store::survey::unanswered(db, joins).await?)
}

/// A crowd-worker id: printable, at most [`MAX_PID`] characters; empty is none.
pub fn check_pid(pid: Option<&str>) -> ServiceResult<Option<String>> {
    let Some(p) = pid.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if p.chars().count() > MAX_PID || p.chars().any(char::is_control) {
        return Err(ServiceError::Invalid(format!(
            "pid: at most {MAX_PID} printable characters"
        )));
    }
    Ok(Some(p.to_owned()))
}

/// Screener answers against the study's questions: only known names, at most one answer
/// each, and where a question lists options, one of them.
pub fn check_answers(
    answers: Vec<(String, String)>,
    questions: &[ScreenerQuestion],
) -> ServiceResult<Vec<(String, String)>> {
    if answers.len() > MAX_ANSWERS {
        return Err(ServiceError::Invalid(format!(
            "screener: at most {MAX_ANSWERS} answers"
        )));
    }
    let mut out = Vec::with_capacity(answers.len());
    for (name, value) in answers {
        if name.chars().count() > MAX_ANSWER_NAME || value.chars().count() > MAX_ANSWER_VALUE {
            return Err(ServiceError::Invalid(format!(
                "screener: names of at most {MAX_ANSWER_NAME} and answers of at most {MAX_ANSWER_VALUE} characters"
            )));
        }
        let Some(q) = questions.iter().find(|q| q.name == name) else {
            return Err(ServiceError::Invalid(format!(
                "screener: no question `{name}`"
            )));
        };
        if !q.options.is_empty() && !q.options.contains(&value) {
            return Err(ServiceError::Invalid(format!(
                "screener: `{name}` takes one of its options"
            )));
        }
        out.push((name, value));
    }
    // every question is required
    if let Some(q) = questions.iter().find(|q| {
        !out.iter()
            .any(|(n, v)| *n == q.name && !v.trim().is_empty())
    }) {
        return Err(ServiceError::Invalid(format!(
            "screener: please answer `{}`",
            q.label
        )));
    }
    Ok(out)
}

/// The participant's consent, with their screener answers checked against the study's
/// questions.
pub async fn consent(
    db: &crate::store::Db,
    study: StudyId,
    annotator: AnnotatorId,
    answers: Vec<(String, String)>,
) -> ServiceResult<()> {
    let settings = crate::store::survey::study_settings(db, study).await?;
    let questions = super::screener::of(&settings.screener_json);
    let answers = check_answers(answers, &questions)?;
    // an answer the study screens out turns the participant away: recorded with the answers
    let screened_out = answers.iter().any(|(name, value)| {
        questions
            .iter()
            .any(|q| q.name == *name && q.screen_out.contains(value))
    });
    let obj: serde_json::Map<String, serde_json::Value> = answers
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect();
    let json = serde_json::Value::Object(obj).to_string();
    if screened_out {
        return Ok(crate::store::survey::screen_out(db, study, annotator, &json).await?);
    }
    Ok(crate::store::survey::consent(db, study, annotator, &json).await?)
}

/// The participant has read the guideline.
pub async fn guideline_seen(
    db: &crate::store::Db,
    study: StudyId,
    annotator: AnnotatorId,
) -> ServiceResult<()> {
    Ok(crate::store::survey::guideline_seen(db, study, annotator).await?)
}

/// The participant ends their work: answers are final, and the outcome decides their code
/// ([`super::outcome::outcome_on_finish`]: no completion code before the N items asked while
/// items may still come to them — held by them, free now, or held by others). The server
/// decides this, whatever route asked: a hand-made finish after 1 of 4 items is `Returned`.
pub async fn finish(
    db: &crate::store::Db,
    study: StudyId,
    annotator: AnnotatorId,
) -> ServiceResult<()> {
    let standing = crate::store::survey::standing_issuing_resume_code(db, study, annotator).await?;
    if standing.annotator.finished {
        return Ok(());
    }
    let now = crate::db::now_ms();
    // work may come: held by them, free for them now, or held by others (a request that asks
    // to finish early gets no completion code while any of it is there); a designed study's
    // work is its units
    let (done, may_come) = if crate::store::designs::design(db, study).await?.is_some() {
        let done = crate::store::units::answered(db, study, annotator).await?;
        let quota_met = standing
            .settings
            .crowd
            .items_per_participant
            .is_some_and(|n| done >= n);
        let k = standing.settings.ratings_per_item;
        let may_come = !quota_met
            && crate::store::units::work_may_come(db, study, annotator, k, now)
                .await?
                .is_some();
        (done, may_come)
    } else {
        let may_come = crate::store::assign::work_left(db, study, annotator, now).await?
            || crate::store::survey::work_may_come(db, study, annotator, now)
                .await?
                .is_some();
        (standing.progress.0, may_come)
    };
    let outcome = super::outcome::outcome_on_finish(
        &standing.settings,
        done,
        may_come,
        standing.annotator.waiting_since,
        now,
    );
    Ok(crate::store::survey::finish(db, study, annotator, outcome).await?)
}

/// The rating page's heartbeat: the participant's leases renewed (up to their maximum hold).
pub async fn renew_leases(
    db: &crate::store::Db,
    study: StudyId,
    annotator: AnnotatorId,
) -> ServiceResult<()> {
    let now = crate::db::now_ms();
    crate::store::assign::renew_leases(db, study, annotator, now).await?;
    crate::store::units::renew(
        db,
        study,
        annotator,
        now,
        natstudy_engine::design::units::HOLD_MS,
        natstudy_engine::design::units::MAX_HOLD_MS,
    )
    .await?;
    Ok(())
}

/// The studies an account takes part in as an annotator, each with how far it is there (as
/// the rating page counts: one query per study, and an account annotates in few).
pub async fn studies_of_user(
    db: &crate::store::Db,
    user: natstudy_vocab::ids::UserId,
) -> ServiceResult<Vec<natstudy_types::MyStudy>> {
    let mut out = Vec::new();
    for s in crate::store::survey::studies_of_user(db, user).await? {
        let (rated, total) = crate::store::assign::progress(db, s.study, s.annotator).await?;
        out.push(natstudy_types::MyStudy {
            id: s.study,
            name: s.name,
            rated,
            total,
            finished: s.finished,
        });
    }
    Ok(out)
}

/// The survey study of a participant (one who joined by invite or resumed by code), with how
/// far they are there; `None` for a review-only participant or an unknown id.
pub async fn study_of_participant(
    db: &crate::store::Db,
    participant: AnnotatorId,
) -> ServiceResult<Option<natstudy_types::MyStudy>> {
    let Some(s) = crate::store::survey::study_of_participant(db, participant).await? else {
        return Ok(None);
    };
    let (rated, total) = crate::store::assign::progress(db, s.study, s.annotator).await?;
    Ok(Some(natstudy_types::MyStudy {
        id: s.study,
        name: s.name,
        rated,
        total,
        finished: s.finished,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rating page's tokens are what a vote must carry (the vote's rules:
    /// `domain::vote`'s tests).
    #[test]
    fn fresh_tokens_make_valid_votes() {
        let form = VoteForm {
            cr: Some(1),
            cc: Some(1),
            token: fresh_token(),
            ..VoteForm::default()
        };
        assert!(crate::domain::Vote::parse(form, 0).is_ok());
    }

    #[test]
    fn pids_and_answers_are_bounded() {
        assert_eq!(check_pid(Some("  ")).ok(), Some(None));
        assert_eq!(check_pid(Some("W-1")).ok(), Some(Some("W-1".into())));
        assert!(check_pid(Some(&"p".repeat(MAX_PID + 1))).is_err());
        assert!(check_pid(Some("a\nb")).is_err());
        let qs = vec![ScreenerQuestion {
            name: "years".into(),
            label: "Years".into(),
            options: vec!["<1".into(), "1-3".into()],
            screen_out: Vec::new(),
        }];
        assert!(check_answers(vec![("years".into(), "1-3".into())], &qs).is_ok());
        assert!(
            check_answers(vec![], &qs).is_err(),
            "every question is required"
        );
        assert!(check_answers(vec![("years".into(), "".into())], &qs).is_err());
        assert!(check_answers(vec![("years".into(), "99".into())], &qs).is_err());
        assert!(check_answers(vec![("other".into(), "x".into())], &qs).is_err());
        assert!(check_answers(vec![("years".into(), "x".repeat(300))], &qs).is_err());
    }
}
