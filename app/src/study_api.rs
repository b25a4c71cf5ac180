//! Server functions of the studies and the study pages: the list of studies, a study's
//! creation and detail, settings, uploads, batches, invites, monitoring and drop-outs.
//! Researchers read; admins act.

use leptos::prelude::*;
use server_fn::codec::Json;

#[cfg(feature = "ssr")]
use natstudy_types::StudySettingsForm;
use natstudy_types::{
    AnnotatorId, BatchId, GeneratedPreview, HomeStudies, InviteId, JobId, Monitor, MyStudy,
    ResultsView, ScoringView, StudyDetail, StudyId, StudySummary,
};

#[cfg(feature = "ssr")]
use crate::auth::{backend, current_user, internal, require, require_study};
#[cfg(feature = "ssr")]
use natstudy_types::Role;

/// The live state of a study (admins and researchers).
#[server(endpoint = "studies/monitor")]
pub async fn get_monitor(study: StudyId) -> Result<Monitor, ServerFnError> {
    require_study(study, Role::STAFF).await?;
    backend()?.monitor(study).await.map_err(internal)
}

/// The settings form's paid-crowd fields (named `crowd[…]`), as typed: empty numbers are
/// none.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CrowdFields {
    pub items_per_participant: Option<String>,
    pub partial_after_minutes: Option<String>,
    pub partial_code: Option<String>,
    pub completion_url: Option<String>,
    pub screenout_code: Option<String>,
    pub screenout_url: Option<String>,
    pub speeder_seconds: Option<String>,
    pub gold_failures: Option<String>,
    /// The pilot phase's checkbox (`on` when ticked).
    pub pilot: Option<String>,
}

/// Saves a study's settings (admins).
#[server(endpoint = "studies/settings")]
pub async fn save_settings(
    study: StudyId,
    ratings_per_item: i64,
    guideline: String,
    blind_operator: Option<String>,
    blind_bug_id: Option<String>,
    randomise_sides: Option<String>,
    completion_code: Option<String>,
    min_rated_for_code: Option<i64>,
    consent_text: Option<String>,
    screener_json: Option<String>,
    crowd: Option<CrowdFields>,
) -> Result<(), ServerFnError> {
    let CrowdFields {
        items_per_participant,
        partial_after_minutes,
        partial_code,
        completion_url,
        screenout_code,
        screenout_url,
        speeder_seconds,
        gold_failures,
        pilot,
    } = crowd.unwrap_or_default();
    let actor = require_study(study, Role::ADMINS).await?;
    let on = |v: &Option<String>| v.as_deref().is_some_and(|s| s == "on" || s == "true");
    // an empty number field is none
    let number = |what: &str, v: Option<String>| -> Result<Option<i64>, ServerFnError> {
        match v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| ServerFnError::new(format!("{what}: a whole number, or empty"))),
        }
    };
    let form = StudySettingsForm {
        ratings_per_item,
        guideline,
        blind_operator: on(&blind_operator),
        blind_bug_id: on(&blind_bug_id),
        randomise_sides: on(&randomise_sides),
        completion_code: completion_code.unwrap_or_default(),
        min_rated_for_code: min_rated_for_code.unwrap_or(1),
        consent_text: consent_text.unwrap_or_default(),
        screener_json: screener_json
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "[]".into()),
        items_per_participant: number("items per participant", items_per_participant)?,
        partial_after_minutes: number("minutes before the partial code", partial_after_minutes)?,
        partial_code: partial_code.unwrap_or_default(),
        completion_url: completion_url.unwrap_or_default(),
        screenout_code: screenout_code.unwrap_or_default(),
        screenout_url: screenout_url.unwrap_or_default(),
        speeder_seconds: number("speeder seconds", speeder_seconds)?,
        gold_failures: number("attention failures", gold_failures)?,
        pilot: on(&pilot),
    };
    backend()?
        .update_settings(&actor, study, form)
        .await
        .map_err(internal)
}

/// Imports uploaded files (admins): `kind` is `items` (bugs + transformations), `votes`, `npr`,
/// `ce` or `bugs` (one zip of buggy/fixed checkouts with `pairs.csv`, its bytes as base64);
/// `files` are (file name, content).
#[server(endpoint = "studies/import", input = Json)]
pub async fn import_upload(
    study: StudyId,
    kind: String,
    files: Vec<(String, String)>,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .import_upload(&actor, study, &kind, files)
        .await
        .map_err(internal)
}

/// Builds a batch (admins).
#[server(endpoint = "studies/batch")]
pub async fn create_batch(
    study: StudyId,
    name: String,
    strategy: String,
    level: Option<String>,
    sample: Option<String>,
    pool: Option<String>,
    seed: Option<String>,
    verified: Option<String>,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    let num = |v: Option<String>| v.and_then(|s| s.trim().parse::<u64>().ok());
    backend()?
        .create_batch(
            &actor,
            study,
            name.trim(),
            &strategy,
            level.filter(|l| !l.is_empty()),
            num(sample).map(|n| n as usize),
            num(pool).unwrap_or(0) as usize,
            num(seed).unwrap_or(1),
            verified.is_some_and(|v| !v.is_empty()),
        )
        .await
        .map_err(internal)
}

/// A new invite link into a batch, or (no batch) into a designed study's survey (admins).
#[server(endpoint = "studies/invite")]
pub async fn create_invite(
    study: StudyId,
    batch: Option<BatchId>,
    cap: i64,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .create_invite(&actor, study, batch, cap)
        .await
        .map_err(internal)
}

/// Releases an annotator's unrated items (admins).
#[server(endpoint = "studies/release")]
pub async fn release_annotator(
    study: StudyId,
    annotator: AnnotatorId,
) -> Result<u64, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .release_annotator(&actor, study, annotator)
        .await
        .map_err(internal)
}

/// A pilot invite link for one participant, to try the survey as one (staff): its path.
#[server(endpoint = "studies/pilot-link")]
pub async fn pilot_link(study: StudyId) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?.pilot_link(&actor, study).await.map_err(internal)
}

/// Deletes the pilot's participants and their ratings (admins): (participants, ratings).
#[server(endpoint = "studies/clear-pilot")]
pub async fn clear_pilot(study: StudyId) -> Result<(i64, i64), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .clear_pilot(&actor, study)
        .await
        .map_err(internal)
}

/// Excludes a participant from the analysis (`exclude`), or includes them again, with a
/// reason kept in the audit log (staff): what happened, in words.
#[server(endpoint = "studies/exclusion")]
pub async fn set_exclusion(
    study: StudyId,
    annotator: AnnotatorId,
    exclude: bool,
    reason: String,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    let moved = backend()?
        .set_exclusion(&actor, study, annotator, exclude, &reason)
        .await
        .map_err(internal)?;
    Ok(match (moved, exclude) {
        (Some(n), true) => format!(
            "Excluded: {} left out of k and of every figure.",
            crate::text::count(n as i64, "vote")
        ),
        (Some(n), false) => format!(
            "Included again: {} count again.",
            crate::text::count(n as i64, "vote")
        ),
        (None, true) => "Already excluded: nothing changed.".to_owned(),
        (None, false) => "Not excluded: nothing changed.".to_owned(),
    })
}

/// Marks an item as an attention (gold) item with the judgement expected of it, or clears
/// it (admins): what happened, in words.
#[server(endpoint = "studies/attention")]
pub async fn set_attention_item(
    study: StudyId,
    item: String,
    expect: String,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    let item = item.trim().to_owned();
    backend()?
        .set_attention_item(&actor, study, &item, &expect)
        .await
        .map_err(internal)?;
    Ok(match expect.as_str() {
        "none" => format!("{item} is no longer an attention item."),
        e => format!("{item} is an attention item: expected {e}."),
    })
}

/// Sets a batch's lease in minutes, for the claims made from now on (admins).
#[server(endpoint = "studies/batch-lease")]
pub async fn set_batch_lease(
    study: StudyId,
    batch: BatchId,
    minutes: i64,
) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .set_batch_lease(&actor, study, batch, minutes)
        .await
        .map_err(internal)
}

/// Releases the items held by every participant idle for `minutes` (admins): (holders, items).
#[server(endpoint = "studies/release-idle")]
pub async fn release_idle(study: StudyId, minutes: i64) -> Result<(u64, u64), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .release_idle(&actor, study, minutes)
        .await
        .map_err(internal)
}

/// Moves an annotator's unrated items to another (by code) (admins).
#[server(endpoint = "studies/move")]
pub async fn move_annotator(
    study: StudyId,
    annotator: AnnotatorId,
    to: String,
) -> Result<u64, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .move_annotator(&actor, study, annotator, to.trim())
        .await
        .map_err(internal)
}

/// The study's results: tables and charts (admins and researchers).
#[server(endpoint = "studies/results")]
pub async fn get_results(study: StudyId) -> Result<ResultsView, ServerFnError> {
    require_study(study, Role::STAFF).await?;
    backend()?.results(study).await.map_err(internal)
}

/// The transformations the engine proposes for the study's bugs, with their diffs (admins and
/// researchers). `operators`: names, `studied` or `all`; `model`: a file of the models
/// directory that ranks RenameVariable-2's names (the built-in dictionary when empty).
#[server(endpoint = "studies/propose")]
pub async fn propose_transformations(
    study: StudyId,
    operators: String,
    all_sites: Option<String>,
    model: Option<String>,
) -> Result<Vec<GeneratedPreview>, ServerFnError> {
    require_study(study, Role::STAFF).await?;
    let request = natstudy_types::GenerateRequest {
        operators,
        all_sites: all_sites
            .as_deref()
            .is_some_and(|s| s == "on" || s == "true"),
        model: model.filter(|m| !m.is_empty()),
    };
    backend()?
        .propose_transformations(study, &request)
        .await
        .map_err(internal)
}

/// Why each operator did or did not apply to the study's bugs: applications kept and refused
/// sites by rule (admins and researchers).
#[server(endpoint = "studies/explain", input = Json)]
pub async fn explain_generation(
    study: StudyId,
    request: natstudy_types::GenerateRequest,
) -> Result<Vec<natstudy_types::OperatorWhy>, ServerFnError> {
    require_study(study, Role::STAFF).await?;
    backend()?
        .explain_generation(study, &request)
        .await
        .map_err(internal)
}

/// Adds the selected proposals as items (admins and researchers).
#[server(endpoint = "studies/add-transformations", input = Json)]
pub async fn add_transformations(
    study: StudyId,
    request: natstudy_types::GenerateRequest,
    keys: Vec<String>,
) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?
        .add_transformations(&actor, study, &request, keys)
        .await
        .map_err(internal)
}

/// The models the server holds and the study's background jobs (admins and researchers).
#[server(endpoint = "studies/scoring")]
pub async fn get_scoring(study: StudyId) -> Result<ScoringView, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?.scoring(&actor, study).await.map_err(internal)
}

/// Deletes a model uploaded for the study (its staff; admins any model). Scores computed
/// with it stay.
#[server(endpoint = "studies/model-delete")]
pub async fn delete_model(study: StudyId, name: String) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?
        .delete_model(&actor, study, &name)
        .await
        .map_err(internal)
}

/// Scores the study's methods with a model as a background job (admins and researchers).
#[server(endpoint = "studies/score")]
pub async fn start_scoring(
    study: StudyId,
    model: String,
    log10: Option<String>,
) -> Result<JobId, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    let log10 = log10.as_deref().is_some_and(|s| s == "on" || s == "true");
    backend()?
        .start_scoring(&actor, study, &model, log10)
        .await
        .map_err(internal)
}

/// Compiles every item of the study in its file as a background job (admins and researchers).
#[server(endpoint = "studies/verify")]
pub async fn start_verify(study: StudyId) -> Result<JobId, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?
        .start_verify(&actor, study)
        .await
        .map_err(internal)
}

/// The study's members: (username, owner|member) (admins and the study's researchers).
#[server(endpoint = "studies/members")]
pub async fn get_members(study: StudyId) -> Result<Vec<(String, String)>, ServerFnError> {
    require_study(study, Role::STAFF).await?;
    backend()?.members(study).await.map_err(internal)
}

/// Adds a researcher (or any account) to the study as `owner` or `member` (admins).
#[server(endpoint = "studies/members/add")]
pub async fn add_member(
    study: StudyId,
    username: String,
    role: Option<String>,
) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .add_member(
            &actor,
            study,
            username.trim(),
            role.as_deref().unwrap_or("member"),
        )
        .await
        .map_err(internal)
}

/// Removes a member from the study (admins).
#[server(endpoint = "studies/members/remove")]
pub async fn remove_member(study: StudyId, username: String) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .remove_member(&actor, study, username.trim())
        .await
        .map_err(internal)
}

/// Stops a queued or running background job of the study; it stores nothing (admins and the
/// study's researchers).
#[server(endpoint = "studies/jobs/stop")]
pub async fn stop_job(study: StudyId, job: JobId) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?
        .stop_job(&actor, study, job)
        .await
        .map_err(internal)
}

/// Runs a failed or stopped background job again (admins and the study's researchers).
#[server(endpoint = "studies/jobs/retry")]
pub async fn retry_job(study: StudyId, job: JobId) -> Result<JobId, ServerFnError> {
    let actor = require_study(study, Role::STAFF).await?;
    backend()?
        .retry_job(&actor, study, job)
        .await
        .map_err(internal)
}

/// Closes an invite link of the study: it admits no one new (admins).
#[server(endpoint = "studies/invite/close")]
pub async fn close_invite(study: StudyId, invite: InviteId) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .close_invite(&actor, study, invite)
        .await
        .map_err(internal)
}

/// The studies (admins and researchers).
#[server(endpoint = "studies/list")]
pub async fn list_studies() -> Result<Vec<StudySummary>, ServerFnError> {
    let user = require(Role::STAFF).await?;
    backend()?.list_studies(&user).await.map_err(internal)
}

/// The studies the signed-in account annotates in (any role).
#[server(endpoint = "studies/mine")]
pub async fn my_studies() -> Result<Vec<MyStudy>, ServerFnError> {
    let user = require(Role::ANYONE).await?;
    backend()?.my_studies(&user).await.map_err(internal)
}

/// What the start page lists for whoever asks: a staff account's studies, and the studies
/// this browser rates in: the signed-in account's, and that of the participant the session
/// joined (or resumed) as, which is all a visitor has. One call, so the page makes its one
/// resource up front (a resource made inside a `Suspend` does not hydrate reliably).
#[server(endpoint = "studies/start")]
pub async fn start_studies() -> Result<HomeStudies, ServerFnError> {
    let backend = backend()?;
    let user = current_user().await?;
    let participant: Option<natstudy_types::AnnotatorId> = crate::auth::session()
        .await?
        .get(crate::auth::PARTICIPANT_KEY)
        .await
        .ok()
        .flatten();
    let (staff, mut rating) = match &user {
        Some(u) => (
            if u.role.is_staff() {
                Some(backend.list_studies(u).await.map_err(internal)?)
            } else {
                None
            },
            backend.my_studies(u).await.map_err(internal)?,
        ),
        None => (None, Vec::new()),
    };
    if let Some(p) = participant {
        if let Some(s) = backend.participant_study(p).await.map_err(internal)? {
            // (an account that joined its own study by an invite: listed once, as the account)
            if !rating.iter().any(|r| r.id == s.id) {
                rating.push(s);
            }
        }
    }
    Ok(HomeStudies { staff, rating })
}

/// Creates a study (admins only).
#[server(endpoint = "studies/create")]
pub async fn create_study(name: String, description: String) -> Result<StudyId, ServerFnError> {
    let actor = require(Role::ADMINS).await?;
    let id = backend()?
        .create_study(&actor, name.trim(), description.trim())
        .await
        .map_err(internal)?;
    leptos_axum::redirect(&format!("/studies/{id}"));
    Ok(id)
}

/// One study with its items and audit log (admins and researchers).
#[server(endpoint = "studies/detail")]
pub async fn get_study(id: StudyId) -> Result<StudyDetail, ServerFnError> {
    crate::auth::require_study(id, Role::STAFF).await?;
    backend()?
        .study_detail(id)
        .await
        .map_err(internal)?
        .ok_or_else(|| {
            internal(natstudy_types::backend::BackendError::NotFound(format!(
                "study {id}"
            )))
        })
}
