//! Server functions of patch review: reviewers (any account that is a member of the study, an
//! admin, or a participant of the study's review-only invite) take the next patch and give a
//! verdict; admins build the queue, make reviewer invites and decide disagreements.

use leptos::prelude::*;

use natstudy_types::{ReviewItem, ReviewOverview, ReviewTaskId, StudyId};

#[cfg(feature = "ssr")]
use crate::auth::{backend, internal, require_reviewer, require_study};
#[cfg(feature = "ssr")]
use natstudy_types::Role;

/// The caller's next patch to review in the study, held for them (`None`: nothing left).
#[server(endpoint = "review/next")]
pub async fn get_review(study: StudyId) -> Result<Option<ReviewItem>, ServerFnError> {
    let reviewer = require_reviewer(study).await?;
    backend()?
        .review_next(&reviewer, study)
        .await
        .map_err(internal)
}

/// Records the caller's verdict on a patch: `correct`, `wrong` (not equivalent) or `unsure`.
#[server(endpoint = "review/submit")]
pub async fn submit_review(
    study: StudyId,
    task: ReviewTaskId,
    verdict: String,
    note: Option<String>,
) -> Result<(), ServerFnError> {
    let reviewer = require_reviewer(study).await?;
    backend()?
        .review_submit(
            &reviewer,
            study,
            task,
            &verdict,
            note.as_deref().unwrap_or(""),
        )
        .await
        .map_err(internal)
}

/// The study's patch review: open disagreements and automatic decisions (admins).
#[server(endpoint = "review/overview")]
pub async fn get_review_overview(study: StudyId) -> Result<ReviewOverview, ServerFnError> {
    require_study(study, Role::ADMINS).await?;
    backend()?.review_overview(study).await.map_err(internal)
}

/// An admin's ruling on a patch: `correct`, `wrong`, `clear` or `send-back`.
#[server(endpoint = "review/rule")]
pub async fn rule_review(
    study: StudyId,
    tool: String,
    target: String,
    ruling: String,
) -> Result<(), ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .review_rule(&actor, study, &tool, &target, &ruling)
        .await
        .map_err(internal)
}

/// Builds the review tasks from the study's plausible patches, `k` reviewers each (admins).
/// Returns what was done, in words.
#[server(endpoint = "review/create")]
pub async fn create_reviews(study: StudyId, k: u32) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .review_create(&actor, study, k)
        .await
        .map_err(internal)
}

/// A review-only invite link (`/join/TOKEN`) for at most `cap` reviewers (admins).
#[server(endpoint = "review/invite")]
pub async fn create_review_invite(study: StudyId, cap: i64) -> Result<String, ServerFnError> {
    let actor = require_study(study, Role::ADMINS).await?;
    backend()?
        .create_review_invite(&actor, study, cap)
        .await
        .map_err(internal)
}
