//! What a participant may send: every field bounded and well-formed before it reaches the
//! store. Participants are strangers from crowd platforms; nothing they send is trusted.

use crate::ids::{AnnotatorId, ItemId, StudyId};
use crate::store::assign::VoteInput;
use app::model::{ScreenerQuestion, VoteForm};

use super::error::{ServiceError, ServiceResult};

/// A submit token is what the rating page is given: 32 lowercase hex digits.
pub const TOKEN_LEN: usize = 32;
/// The longest comment kept with a vote, in characters.
pub const MAX_COMMENT: usize = 4000;
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

/// A time on item the browser sent, if it is a measurement: finite, from zero to a day
/// ([`crate::formats::survey::MAX_TIME_SECS`]); anything else is stored as unmeasured.
pub fn measured_time(t: Option<f64>) -> Option<f64> {
    t.filter(|t| (0.0..=crate::formats::survey::MAX_TIME_SECS).contains(t))
}

/// Whether a start time the browser sent (ms since the epoch) can be when the item was shown:
/// not in the future (a minute's clock skew allowed) and not more than a day before `now`.
pub fn plausible_start(started_at_ms: i64, now_ms: i64) -> bool {
    const DAY_MS: i64 = 86_400_000;
    started_at_ms <= now_ms.saturating_add(60_000) && started_at_ms >= now_ms.saturating_sub(DAY_MS)
}

/// Checks a vote's free-form fields (the answers' range is the store's check).
pub fn check_vote(vote: &VoteForm) -> ServiceResult<()> {
    let token_ok = vote.token.len() == TOKEN_LEN
        && vote
            .token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !token_ok {
        return Err(ServiceError::Invalid(format!(
            "token: must be the {TOKEN_LEN} hex digits the page was given"
        )));
    }
    if vote.comment.chars().count() > MAX_COMMENT {
        return Err(ServiceError::Invalid(format!(
            "comment: at most {MAX_COMMENT} characters"
        )));
    }
    Ok(())
}

/// Records a participant's vote: its fields checked, consent given, then durably stored
/// (the store refuses what would exceed k or was never handed to the annotator), with the
/// participant's next item claimed in the same commit (`None`: nothing left to rate).
pub async fn submit_vote(
    db: &crate::db::Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: VoteForm,
) -> ServiceResult<Option<crate::store::assign::Handed>> {
    check_vote(&vote)?;
    let now = crate::db::now_ms();
    let input = VoteInput {
        cr: vote.cr,
        cc: vote.cc,
        comment: vote.comment,
        time_secs: measured_time(vote.time_secs),
        started_at: vote.started_at.filter(|t| plausible_start(*t, now)),
        context_opened: vote.context_opened,
        token: vote.token,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(token: &str, comment: &str) -> VoteForm {
        VoteForm {
            cr: 1,
            cc: 1,
            comment: comment.into(),
            time_secs: None,
            started_at: None,
            context_opened: false,
            token: token.into(),
        }
    }

    #[test]
    fn tokens_are_what_the_page_generates() {
        assert!(check_vote(&vote(&fresh_token(), "")).is_ok());
        assert!(check_vote(&vote("x", "")).is_err());
        assert!(check_vote(&vote(&"A".repeat(32), "")).is_err());
        assert!(check_vote(&vote(&"a".repeat(1_900_000), "")).is_err());
        assert!(check_vote(&vote(&fresh_token(), &"c".repeat(MAX_COMMENT + 1))).is_err());
        assert!(check_vote(&vote(&fresh_token(), &"c".repeat(MAX_COMMENT))).is_ok());
    }

    #[test]
    fn times_beyond_a_day_or_not_finite_are_unmeasured() {
        assert_eq!(measured_time(Some(12.5)), Some(12.5));
        assert_eq!(measured_time(Some(0.0)), Some(0.0));
        assert_eq!(measured_time(Some(86_400.0)), Some(86_400.0));
        for bad in [86_400.5, 1e308, f64::MAX, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(measured_time(Some(bad)), None, "{bad}");
        }
        let now = 1_700_000_000_000;
        assert!(plausible_start(now - 30_000, now));
        assert!(plausible_start(now + 59_000, now), "a little clock skew");
        assert!(!plausible_start(now + 3_600_000, now), "an hour ahead");
        assert!(!plausible_start(now - 2 * 86_400_000, now), "two days ago");
        assert!(!plausible_start(i64::MIN, now) && !plausible_start(i64::MAX, now));
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
