//! Excluding a participant from the analysis and including them again, with a reason: the
//! checks around [`store::exclusions`] (which does the work in one transaction).

use super::{ServiceError, ServiceResult};
use crate::store::{self, exclusions::Changed, Db};
use natstudy_vocab::ids::{AnnotatorId, StudyId, UserId};

/// The longest reason, in characters.
pub const MAX_REASON: usize = 500;

/// The reason as stored: trimmed, 1 to [`MAX_REASON`] characters, no control characters.
pub fn reason(text: &str) -> ServiceResult<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ServiceError::Invalid(
            "give a reason: it is kept with the exclusion (who, when, why)".into(),
        ));
    }
    if t.chars().count() > MAX_REASON {
        return Err(ServiceError::Invalid(format!(
            "a reason is at most {MAX_REASON} characters"
        )));
    }
    if t.chars().any(char::is_control) {
        return Err(ServiceError::Invalid(
            "a reason is one line without control characters".into(),
        ));
    }
    Ok(t.to_owned())
}

/// Excludes (`exclude`) or includes again the participant with `reason`, by `actor`: how many
/// of their votes moved (`None`: they already were so).
pub async fn set(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    exclude: bool,
    reason_text: &str,
    actor: Option<UserId>,
) -> ServiceResult<Option<u64>> {
    let why = reason(reason_text)?;
    let changed = if exclude {
        store::exclusions::exclude(db, study, annotator, actor, &why).await?
    } else {
        store::exclusions::include(db, study, annotator, actor, &why).await?
    };
    Ok(match changed {
        Changed::Yes { votes } => Some(votes),
        Changed::Already => None,
    })
}

/// [`set`] for the participant of code `code`.
pub async fn set_by_code(
    db: &Db,
    study: StudyId,
    code: &str,
    exclude: bool,
    reason_text: &str,
    actor: Option<UserId>,
) -> ServiceResult<Option<u64>> {
    let annotator = store::assign::annotator_id(db, study, code).await?;
    set(db, study, annotator, exclude, reason_text, actor).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_one_bounded_line() {
        assert_eq!(reason("  fast clicks \n").expect("a reason"), "fast clicks");
        assert!(reason("   ").is_err());
        assert!(reason("a\u{7}b").is_err());
        assert!(reason("two\nlines").is_err());
        assert!(reason(&"x".repeat(MAX_REASON)).is_ok());
        assert!(reason(&"x".repeat(MAX_REASON + 1)).is_err());
    }
}
