//! Studies: creating one (the one rule for its name), and who belongs to it.

use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::survey::StudySettings;
use crate::store::Db;
use natstudy_types::{ScreenerQuestion, StudySettingsForm};
use natstudy_vocab::ids::{StudyId, UserId};

/// The longest study name, in characters.
pub const MAX_NAME: usize = 200;
/// The longest description, in characters.
pub const MAX_DESCRIPTION: usize = 10_000;

/// Creates a study: its name is trimmed and must then have 1–200 characters; it belongs to
/// `owner` (else to `actor`, when there is one).
pub async fn create(
    db: &Db,
    actor: Option<UserId>,
    owner: Option<UserId>,
    name: &str,
    description: &str,
) -> ServiceResult<StudyId> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ServiceError::Invalid(format!(
            "a study needs a name of 1–{MAX_NAME} characters"
        )));
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(ServiceError::Invalid(format!(
            "a description has at most {MAX_DESCRIPTION} characters"
        )));
    }
    Ok(store::studies::create_owned(db, actor, owner, name, description.trim()).await?)
}

/// The study page's data: counts, items per level, the first 500 items, the last 50 audit lines.
pub async fn detail(db: &Db, study: StudyId) -> ServiceResult<Option<natstudy_types::StudyDetail>> {
    let Some(counts) = store::studies::counts_of(db, study).await? else {
        return Ok(None);
    };
    Ok(Some(crate::present::wire::study_detail(
        counts,
        store::studies::level_counts(db, study).await?,
        store::studies::items(db, study, 500).await?,
        store::audit::for_study(db, study, 50).await?,
    )))
}

/// The longest guideline (markdown), in characters.
pub const MAX_GUIDELINE: usize = 100_000;
/// The longest consent text, in characters.
pub const MAX_CONSENT: usize = 20_000;
/// The longest completion code, in characters.
pub const MAX_COMPLETION_CODE: usize = 200;
/// The longest screener question label, in characters.
pub const MAX_LABEL: usize = 500;

/// The form of stored settings.
pub fn settings_form(s: &StudySettings) -> StudySettingsForm {
    StudySettingsForm {
        ratings_per_item: s.ratings_per_item,
        guideline: s.guideline.clone(),
        blind_operator: s.blind_operator,
        blind_bug_id: s.blind_bug_id,
        randomise_sides: s.randomise_sides,
        completion_code: s.completion_code.clone().unwrap_or_default(),
        min_rated_for_code: s.min_rated_for_code,
        consent_text: s.consent_text.clone(),
        screener_json: s.screener_json.clone(),
        items_per_participant: s.crowd.items_per_participant,
        partial_after_minutes: s.crowd.partial_after_minutes,
        partial_code: s.crowd.partial_code.clone().unwrap_or_default(),
        completion_url: s.crowd.completion_url.clone().unwrap_or_default(),
        screenout_code: s.crowd.screenout_code.clone().unwrap_or_default(),
        screenout_url: s.crowd.screenout_url.clone().unwrap_or_default(),
        speeder_seconds: s.crowd.speeder_seconds,
        gold_failures: s.crowd.gold_failures,
        pilot: s.crowd.pilot,
    }
}

/// The longest completion or screen-out URL, in characters.
pub const MAX_URL: usize = 2_000;

/// A URL a participant is sent to: empty (none), or `http(s)://` with no spaces or control
/// characters, at most [`MAX_URL`] characters; `{code}` marks where the code goes.
fn checked_url(what: &str, url: &str) -> ServiceResult<Option<String>> {
    let url = url.trim();
    if url.is_empty() {
        return Ok(None);
    }
    let lower = url.to_ascii_lowercase();
    if url.chars().count() > MAX_URL
        || !(lower.starts_with("https://") || lower.starts_with("http://"))
        || url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '<' || c == '>')
        || url.len() <= "https://".len()
    {
        return Err(ServiceError::Invalid(format!(
            "{what}: an http(s) address of at most {MAX_URL} characters, without spaces \
             ({{code}} marks where the code goes)"
        )));
    }
    Ok(Some(url.to_owned()))
}

/// A code as stored: trimmed, `None` when empty.
fn code(c: &str) -> Option<String> {
    Some(c.trim().to_owned()).filter(|c| !c.is_empty())
}

/// A study's settings as the admin edits them.
pub async fn settings(db: &Db, study: StudyId) -> ServiceResult<StudySettingsForm> {
    Ok(settings_form(
        &store::survey::study_settings(db, study).await?,
    ))
}

/// Checks and stores a study's settings: k of 1–50, texts within their bounds, a screener of at
/// most 50 questions whose names are letters, digits or `_` (at most 64), with at most 50
/// options of at most 200 characters each — what participants' answers are checked against.
pub async fn update_settings(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    f: &StudySettingsForm,
) -> ServiceResult<()> {
    let settings = checked_settings(f)?;
    Ok(store::monitor::update_settings(db, study, actor, &settings).await?)
}

fn checked_settings(f: &StudySettingsForm) -> ServiceResult<StudySettings> {
    use super::participation::{MAX_ANSWERS, MAX_ANSWER_NAME, MAX_ANSWER_VALUE};
    let invalid = |m: String| Err(ServiceError::Invalid(m));
    if !(1..=50).contains(&f.ratings_per_item) {
        return invalid("ratings per item must be 1–50".into());
    }
    if !(0..=100_000).contains(&f.min_rated_for_code) {
        return invalid("rated items needed for the completion code must be 0–100,000".into());
    }
    if f.items_per_participant
        .is_some_and(|n| !(1..=100_000).contains(&n))
    {
        return invalid(
            "items per participant must be 1–100,000 (or none: all they can be given)".into(),
        );
    }
    if f.partial_after_minutes
        .is_some_and(|m| !(0..=10_080).contains(&m))
    {
        return invalid(
            "minutes before the partial code must be 0–10,080 (a week), or none".into(),
        );
    }
    if f.gold_failures.is_some_and(|n| !(1..=100).contains(&n)) {
        return invalid("attention failures before the screen-out must be 1–100, or none".into());
    }
    if f.speeder_seconds.is_some_and(|s| !(1..=3_600).contains(&s)) {
        return invalid("speeder seconds must be 1–3,600, or none".into());
    }
    if f.partial_after_minutes.is_some() && code(&f.partial_code).is_none() {
        return invalid("a partial code is needed to offer one after a wait".into());
    }
    for (what, text, max) in [
        ("the guideline", &f.guideline, MAX_GUIDELINE),
        ("the consent text", &f.consent_text, MAX_CONSENT),
        (
            "the completion code",
            &f.completion_code,
            MAX_COMPLETION_CODE,
        ),
        ("the partial code", &f.partial_code, MAX_COMPLETION_CODE),
        (
            "the screen-out code",
            &f.screenout_code,
            MAX_COMPLETION_CODE,
        ),
    ] {
        if text.chars().count() > max {
            return invalid(format!("{what} has at most {max} characters"));
        }
    }
    let questions: Vec<ScreenerQuestion> = serde_json::from_str(&f.screener_json).map_err(|e| {
        ServiceError::Invalid(format!(
            "screener: not a list of {{name, label, options}}: {e}"
        ))
    })?;
    if questions.len() > MAX_ANSWERS {
        return invalid(format!("screener: at most {MAX_ANSWERS} questions"));
    }
    for q in &questions {
        if q.name.is_empty()
            || q.name.len() > MAX_ANSWER_NAME
            || !q
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return invalid(format!(
                "screener: each name must be 1–{MAX_ANSWER_NAME} letters, digits or _"
            ));
        }
        if q.label.chars().count() > MAX_LABEL {
            return invalid(format!(
                "screener: a label has at most {MAX_LABEL} characters"
            ));
        }
        if q.options.len() > MAX_ANSWERS
            || q.options
                .iter()
                .any(|o| o.chars().count() > MAX_ANSWER_VALUE)
        {
            return invalid(format!(
                "screener: at most {MAX_ANSWERS} options of at most {MAX_ANSWER_VALUE} characters"
            ));
        }
        if let Some(o) = q.screen_out.iter().find(|o| !q.options.contains(o)) {
            return invalid(format!(
                "screener: `{}` screens out {o:?}, which is not one of its options",
                q.name
            ));
        }
    }
    let crowd = crate::store::survey::CrowdSettings {
        items_per_participant: f.items_per_participant,
        partial_after_minutes: f.partial_after_minutes,
        partial_code: code(&f.partial_code),
        completion_url: checked_url("the completion URL", &f.completion_url)?,
        screenout_code: code(&f.screenout_code),
        screenout_url: checked_url("the screen-out URL", &f.screenout_url)?,
        speeder_seconds: f.speeder_seconds,
        gold_failures: f.gold_failures,
        pilot: f.pilot,
    };
    let code = f.completion_code.trim();
    Ok(StudySettings {
        name: String::new(),
        ratings_per_item: f.ratings_per_item,
        guideline: f.guideline.clone(),
        blind_operator: f.blind_operator,
        blind_bug_id: f.blind_bug_id,
        randomise_sides: f.randomise_sides,
        completion_code: Some(code.to_owned()).filter(|c| !c.is_empty()),
        min_rated_for_code: f.min_rated_for_code,
        consent_text: f.consent_text.clone(),
        screener_json: serde_json::to_string(&questions).unwrap_or_else(|_| "[]".into()),
        crowd,
    })
}

/// The studies an account sees: every study for an admin, its own for anyone else.
pub async fn list_for(
    db: &Db,
    user: &natstudy_types::User,
) -> ServiceResult<Vec<natstudy_types::StudySummary>> {
    let studies = if user.role == natstudy_types::Role::Admin {
        store::studies::list(db).await?
    } else {
        store::studies::list_of_member(db, user.id).await?
    };
    Ok(studies
        .into_iter()
        .map(crate::present::wire::study_summary)
        .collect())
}

/// The study called `name` (the command line names studies; the pages number them).
pub async fn id_by_name(db: &Db, name: &str) -> ServiceResult<StudyId> {
    Ok(store::studies::id_by_name(db, name).await?)
}

/// Every study with its headline counts, by name (the command line's list).
pub async fn list_all(db: &Db) -> ServiceResult<Vec<natstudy_types::StudySummary>> {
    Ok(store::studies::list(db)
        .await?
        .into_iter()
        .map(crate::present::wire::study_summary)
        .collect())
}

/// Whether the study exists.
pub async fn exists(db: &Db, study: StudyId) -> ServiceResult<bool> {
    Ok(store::studies::counts_of(db, study).await?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::participation::MAX_ANSWERS;

    fn form() -> StudySettingsForm {
        StudySettingsForm {
            ratings_per_item: 5,
            guideline: "Rate it.".into(),
            blind_operator: true,
            blind_bug_id: false,
            randomise_sides: true,
            completion_code: " C0DE ".into(),
            min_rated_for_code: 1,
            consent_text: String::new(),
            screener_json: r#"[{"name":"java_years","label":"Years","options":["<1","1-3"]}]"#
                .into(),
            items_per_participant: Some(10),
            partial_after_minutes: Some(15),
            partial_code: " PART1 ".into(),
            completion_url: "https://app.prolific.com/submissions/complete?cc={code}".into(),
            screenout_code: "SCRN".into(),
            screenout_url: String::new(),
            speeder_seconds: Some(4),
            gold_failures: Some(2),
            pilot: true,
        }
    }

    #[test]
    fn settings_are_checked_before_they_are_stored() {
        let s = checked_settings(&form()).expect("valid");
        assert_eq!(s.completion_code.as_deref(), Some("C0DE"));
        let refused = |f: StudySettingsForm| match checked_settings(&f) {
            Err(ServiceError::Invalid(m)) => m,
            other => panic!("accepted: {other:?}"),
        };
        let mut f = form();
        f.ratings_per_item = 0;
        assert_eq!(refused(f), "ratings per item must be 1–50");
        let mut f = form();
        f.guideline = "x".repeat(MAX_GUIDELINE + 1);
        assert_eq!(refused(f), "the guideline has at most 100000 characters");
        let mut f = form();
        f.screener_json = r#"[{"name":"a b","label":"","options":[]}]"#.into();
        assert!(refused(f).starts_with("screener: each name"));
        let mut f = form();
        f.screener_json = format!(
            r#"[{{"name":"a","label":"","options":[{}]}}]"#,
            vec!["\"o\""; MAX_ANSWERS + 1].join(",")
        );
        assert!(refused(f).starts_with("screener: at most 50 options"));
        let mut f = form();
        f.screener_json = "{".into();
        assert!(refused(f).starts_with("screener: not a list"));
    }

    /// A crowd study's settings: N, the wait before a partial code (which needs the code), the
    /// codes trimmed, the URLs http(s) without spaces, a screen-out only of a question's options.
    #[test]
    fn crowd_settings_are_checked_before_they_are_stored() {
        let s = checked_settings(&form()).expect("valid").crowd;
        assert_eq!(s.items_per_participant, Some(10));
        assert_eq!(s.partial_code.as_deref(), Some("PART1"));
        assert_eq!(s.screenout_url, None);
        let refused = |f: StudySettingsForm| match checked_settings(&f) {
            Err(ServiceError::Invalid(m)) => m,
            other => panic!("accepted: {other:?}"),
        };
        let mut f = form();
        f.items_per_participant = Some(0);
        assert!(refused(f).starts_with("items per participant must be 1"));
        let mut f = form();
        f.partial_code = "  ".into();
        assert_eq!(
            refused(f),
            "a partial code is needed to offer one after a wait"
        );
        let mut f = form();
        f.gold_failures = Some(0);
        assert!(refused(f).starts_with("attention failures before the screen-out"));
        let mut f = form();
        f.speeder_seconds = Some(0);
        assert!(refused(f).starts_with("speeder seconds must be 1"));
        let mut f = form();
        f.partial_after_minutes = Some(-1);
        assert!(refused(f).starts_with("minutes before the partial code"));
        for bad in [
            "javascript:alert(1)",
            "//evil.example/x",
            "https://a b",
            "https://",
            "https://x\"onmouseover=",
        ] {
            let mut f = form();
            f.completion_url = bad.into();
            assert!(refused(f).starts_with("the completion URL: "), "{bad}");
        }
        let mut f = form();
        f.completion_url = format!("https://{}", "a".repeat(MAX_URL));
        assert!(refused(f).starts_with("the completion URL: "));
        let mut f = form();
        f.screener_json =
            r#"[{"name":"a","label":"A","options":["x","y"],"screen_out":["z"]}]"#.into();
        assert_eq!(
            refused(f),
            "screener: `a` screens out \"z\", which is not one of its options"
        );
        let mut f = form();
        f.screener_json =
            r#"[{"name":"a","label":"A","options":["x","y"],"screen_out":["y"]}]"#.into();
        assert!(checked_settings(&f).is_ok());
    }

    /// The code goes where `{code}` stands, encoded for a query.
    #[test]
    fn the_code_fills_the_url() {
        let url = "https://app.prolific.com/submissions/complete?cc={code}";
        assert_eq!(
            crate::service::urls::fill_code(url, Some("C1A2B3")),
            "https://app.prolific.com/submissions/complete?cc=C1A2B3"
        );
        assert_eq!(
            crate::service::urls::fill_code(url, Some("a b&c")),
            url.replace("{code}", "a%20b%26c")
        );
        assert_eq!(
            crate::service::urls::fill_code("https://x/done", Some("C")),
            "https://x/done"
        );
        assert_eq!(
            crate::service::urls::fill_code(url, None),
            url.replace("{code}", "")
        );
    }
}
