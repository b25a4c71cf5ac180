//! Server functions of the participant's survey. The annotator is always taken from the
//! session (an invited participant) or the signed-in account, never from the request.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use natstudy_types::AnnotatorId;
use natstudy_types::{AnnotateState, ItemId, StudyId, VoteForm};

#[cfg(feature = "ssr")]
use crate::auth::PARTICIPANT_KEY;

#[cfg(feature = "ssr")]
async fn me(study: StudyId) -> Result<AnnotatorId, ServerFnError> {
    use crate::auth::{backend, internal};
    // the signed-in account (this also applies the session's lifetime rules)
    let user = crate::auth::current_user().await?;
    let session = crate::auth::session().await?;
    let participant: Option<AnnotatorId> = session.get(PARTICIPANT_KEY).await.ok().flatten();
    match backend()?
        .annotator_in(study, participant, user.as_ref())
        .await
        .map_err(internal)?
    {
        Some(a) => Ok(a),
        None => {
            if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
                resp.set_status(axum::http::StatusCode::FORBIDDEN);
            }
            Err(ServerFnError::new(NOT_A_PARTICIPANT))
        }
    }
}

/// What a request of the survey is told when the session names no participant of the study
/// (it ended, or another browser): the rating page then offers the resume code's form.
pub const NOT_A_PARTICIPANT: &str = "you are not a participant of this study";

/// What an invite link leads to, so the landing page can say at once when it is not valid.
/// `identity`: the crowd platform's ids the link carries (a known platform id continues its
/// participant on any device, even on a link whose places are all taken).
#[server(endpoint = "invite")]
pub async fn invite_status(
    token: String,
    identity: Option<natstudy_types::CrowdIdentity>,
) -> Result<natstudy_types::InviteStatus, ServerFnError> {
    crate::auth::current_user().await?;
    let session = crate::auth::session().await?;
    let current: Option<AnnotatorId> = session.get(PARTICIPANT_KEY).await.ok().flatten();
    crate::auth::backend()?
        .invite_status(&token, current, &identity.unwrap_or_default())
        .await
        .map_err(crate::auth::internal)
}

/// Joins a study through an invite link and signs the new participant in.
#[server(endpoint = "join")]
pub async fn join_study(
    token: String,
    pid: Option<String>,
    platform: Option<String>,
    ext_study: Option<String>,
    ext_session: Option<String>,
) -> Result<(), ServerFnError> {
    use crate::auth::{backend, internal};
    let nonempty = |v: Option<String>| v.filter(|p| !p.trim().is_empty());
    let identity = natstudy_types::CrowdIdentity {
        platform: nonempty(platform),
        pid: nonempty(pid),
        study: nonempty(ext_study),
        session: nonempty(ext_session),
    };
    // the session's lifetime rules first: an expired session starts afresh
    crate::auth::current_user().await?;
    let session = crate::auth::session().await?;
    let current: Option<AnnotatorId> = session.get(PARTICIPANT_KEY).await.ok().flatten();
    let client = crate::auth::client_ip().await;
    let entry = backend()?
        .join(&token, &identity, current, client)
        .await
        .map_err(internal)?;
    if current != Some(entry.annotator) {
        become_participant(entry.annotator).await?;
    }
    // (coming back — Back, the link opened again — the same participant continues)
    // a review-only invite leads to the patch review, any other to the survey
    leptos_axum::redirect(&entry.page());
    Ok(())
}

/// The session becomes the participant's: a new session id (no fixation), the participant
/// remembered, the session's lifetime started.
#[cfg(feature = "ssr")]
async fn become_participant(annotator: AnnotatorId) -> Result<(), ServerFnError> {
    let session = crate::auth::session().await?;
    crate::auth::renew_id(&session).await?;
    session
        .insert(PARTICIPANT_KEY, annotator)
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))?;
    crate::auth::start(&session).await
}

/// Continues a participant on this device with their resume code: the session becomes that
/// participant's and the page goes to their survey (or their patch review).
#[server(endpoint = "resume")]
pub async fn resume_participant(code: String) -> Result<(), ServerFnError> {
    use crate::auth::{backend, internal};
    crate::auth::current_user().await?;
    let client = crate::auth::client_ip().await;
    let Some(entry) = backend()?.resume(&code, client).await.map_err(internal)? else {
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(axum::http::StatusCode::NOT_FOUND);
        }
        return Err(ServerFnError::new(
            "no participant has this resume code: check it, letter by letter",
        ));
    };
    become_participant(entry.annotator).await?;
    leptos_axum::redirect(&entry.page());
    Ok(())
}

/// Where the caller stands in the study, with the item to rate (or to revise: `revise`, an
/// item they rated; `unit`, their claim on a designed study's unit they answered), or `page`
/// (from 1) of the items they rated once the queue has nothing more.
#[server(endpoint = "annotate/state")]
pub async fn get_annotate_state(
    study: StudyId,
    revise: Option<ItemId>,
    page: Option<u32>,
    unit: Option<i64>,
) -> Result<AnnotateState, ServerFnError> {
    let a = me(study).await?;
    let revise = match (revise, unit) {
        (Some(item), _) => Some(natstudy_types::Revise::Item(item)),
        (None, Some(claim)) => Some(natstudy_types::Revise::Unit(claim)),
        (None, None) => None,
    };
    crate::auth::backend()?
        .annotate_state(study, a, revise, page)
        .await
        .map_err(crate::auth::internal)
}

/// The part of an item's method file under Context, asked for when the participant opens
/// it (only for an item planned for them, held by them or rated by them).
#[server(endpoint = "annotate/context")]
pub async fn item_context(
    study: StudyId,
    item: ItemId,
) -> Result<Option<natstudy_types::FileContext>, ServerFnError> {
    let a = me(study).await?;
    crate::auth::backend()?
        .item_context(study, a, item)
        .await
        .map_err(crate::auth::internal)
}

/// Consent and screener answers (`answers`: JSON object of the screener's fields).
#[server(endpoint = "annotate/consent")]
pub async fn give_consent(
    study: StudyId,
    answers: Option<std::collections::BTreeMap<String, String>>,
) -> Result<(), ServerFnError> {
    let a = me(study).await?;
    let answers: Vec<(String, String)> = answers.unwrap_or_default().into_iter().take(50).collect();
    crate::auth::backend()?
        .consent(study, a, answers)
        .await
        .map_err(crate::auth::internal)
}

/// The participant has read the guideline and starts rating.
#[server(endpoint = "annotate/start")]
pub async fn start_rating(study: StudyId) -> Result<(), ServerFnError> {
    let a = me(study).await?;
    crate::auth::backend()?
        .guideline_seen(study, a)
        .await
        .map_err(crate::auth::internal)
}

/// Saves a vote (idempotent on `token`), durably, before the next item is shown; the answer
/// carries that next state (`None`: the vote is kept, ask `annotate/state` for what follows).
#[server(endpoint = "annotate/vote")]
pub async fn submit_vote(
    study: StudyId,
    item: ItemId,
    #[server(flatten)] vote: VoteForm,
) -> Result<Option<AnnotateState>, ServerFnError> {
    let a = me(study).await?;
    crate::auth::backend()?
        .submit_vote(study, a, item, vote)
        .await
        .map_err(crate::auth::internal)
}

/// Ends the participant's work on the study (votes can no longer be revised).
#[server(endpoint = "annotate/finish")]
pub async fn finish_study(study: StudyId) -> Result<(), ServerFnError> {
    let a = me(study).await?;
    crate::auth::backend()?
        .finish(study, a)
        .await
        .map_err(crate::auth::internal)
}

/// The rating page's heartbeat: renews the participant's leases.
#[server(endpoint = "annotate/heartbeat")]
pub async fn heartbeat(study: StudyId) -> Result<(), ServerFnError> {
    let a = me(study).await?;
    crate::auth::backend()?
        .renew_leases(study, a)
        .await
        .map_err(crate::auth::internal)
}

/// Saves the answers to a designed study's unit (idempotent on `token`), durably, before the
/// next unit is shown; the answer carries that next state (`None`: ask `annotate/state`).
/// `answers`: the form's fields by name (`answers[<question>]`, `answers[<question>.best]`, …);
/// `time_secs`: the page's measure, when it has one; `revise` (any value): the answers replace
/// those given before to the unit.
#[server(endpoint = "annotate/answer")]
pub async fn submit_answers(
    study: StudyId,
    claim: i64,
    token: String,
    time_secs: Option<String>,
    answers: Option<std::collections::BTreeMap<String, String>>,
    revise: Option<String>,
) -> Result<Option<AnnotateState>, ServerFnError> {
    let a = me(study).await?;
    // a design holds at most 64 questions; a multiple choice at most 50 options each
    let fields: Vec<(String, String)> = answers
        .unwrap_or_default()
        .into_iter()
        .take(64 * 52)
        .collect();
    let answer = natstudy_types::AnswerForm {
        claim,
        token,
        time_secs: time_secs.and_then(|t| t.trim().parse::<f64>().ok()),
        fields,
        revise: revise.is_some(),
    };
    let revised = answer.revise;
    let next = crate::auth::backend()?
        .submit_answers(study, a, answer)
        .await
        .map_err(crate::auth::internal)?;
    // a revision goes back to the list of units answered (without JavaScript too)
    if revised {
        leptos_axum::redirect(&format!("/annotate/{study}"));
    }
    Ok(next)
}
