//! The use cases as the pages reach them: one signature each (ssr only, feature `backend`).
//!
//! The app's server functions call these traits through the handle the server provides as
//! Leptos context (`Arc<dyn Backend>`); `natstudy-core` implements them (`core::api`), so
//! neither the app nor the core depends on the other, and no adapter sits between them.

use std::sync::Arc;

use crate::{
    AnnotateState, AnnotatorId, BatchId, Entry, FileContext, GenerateRequest, GeneratedPreview,
    InviteId, ItemId, JobId, Monitor, MyStudy, ResultsView, ReviewItem, ReviewOverview,
    ReviewTaskId, Role, ScoringView, StudyDetail, StudyId, StudySettingsForm, StudySummary, User,
    UserId, UserRow, VoteForm,
};

/// What can go wrong behind the handle, in terms a page can show.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BackendError {
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    /// Too many attempts; try again after this many seconds (HTTP 429 with `Retry-After`).
    #[error("too many attempts: try again in {0} s")]
    TooMany(u64),
    /// The detail is for the log (the server logs it where it arose); clients see a generic text.
    #[error("internal error")]
    Internal(String),
}

/// How long sessions may live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionPolicy {
    /// A session ends this long after sign-in or join, however active.
    pub max_age_secs: i64,
    /// A session ends after this long without a request (use slides it).
    pub idle_secs: i64,
}

/// A member of a study: (username, `owner` or `member`).
pub type Member = (String, String);

/// Accounts and sessions: signing in, the session's user, study access, the accounts page.
#[async_trait::async_trait]
pub trait AccountsBackend: Send + Sync + 'static {
    /// The `Set-Cookie` value that marks this browser as one that signed in to `username`
    /// (its later attempts skip the per-account throttle strangers share).
    fn device_cookie(&self, username: &str) -> String;
    /// The account and its session epoch if `password` is right for `username` (and the
    /// account is enabled). Throttled per client address, per account and address, and —
    /// unless `device` (the browser's device token) shows it signed in before — per account
    /// (`TooMany`).
    async fn authenticate(
        &self,
        username: &str,
        password: &str,
        client: Option<std::net::IpAddr>,
        device: Option<&str>,
    ) -> Result<Option<(User, i64)>, BackendError>;
    /// The enabled account with this id, if a session of `epoch` is still valid for it.
    async fn session_user(&self, id: UserId, epoch: i64) -> Result<Option<User>, BackendError>;
    fn session_policy(&self) -> SessionPolicy;
    /// Whether `user` may see and act on `study` (admins: every study; others: members).
    async fn may_access(&self, user: &User, study: StudyId) -> Result<bool, BackendError>;
    async fn list_users(&self) -> Result<Vec<UserRow>, BackendError>;
    async fn add_user(
        &self,
        actor: &User,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserId, BackendError>;
    /// Changes an account's role (its sessions end).
    async fn set_role(&self, actor: &User, username: &str, role: Role) -> Result<(), BackendError>;
    /// Sets an account's password (its sessions end).
    async fn reset_password(
        &self,
        actor: &User,
        username: &str,
        password: &str,
    ) -> Result<(), BackendError>;
    /// Disables or enables an account (disabling ends its sessions).
    async fn set_disabled(
        &self,
        actor: &User,
        username: &str,
        disabled: bool,
    ) -> Result<(), BackendError>;
    /// The studies in which this account is an annotator, each with how far it is there.
    async fn my_studies(&self, user: &User) -> Result<Vec<MyStudy>, BackendError>;
    /// The survey study of a participant who joined by an invite (or resumed by code) on this
    /// browser, with how far they are there; `None` for a review-only participant or an
    /// unknown one.
    async fn participant_study(
        &self,
        participant: AnnotatorId,
    ) -> Result<Option<MyStudy>, BackendError>;
}

/// The participant's survey: invites, joining and resuming, consent, rating, leases.
#[async_trait::async_trait]
pub trait SurveyBackend: Send + Sync + 'static {
    /// What an invite link leads to (anyone may ask); `identity`: the crowd platform's ids
    /// the link carries (a known platform id continues its participant).
    async fn invite_status(
        &self,
        token: &str,
        current: Option<AnnotatorId>,
        identity: &crate::CrowdIdentity,
    ) -> Result<crate::InviteStatus, BackendError>;
    /// Joins a study through an invite: a new de-identified participant. `pid` is a
    /// crowd-worker id to keep (never shown unless exported on request). `current` is the
    /// session's participant, if any: one who comes back through the same invite continues as
    /// the same participant. Throttled per client address (`TooMany`).
    async fn join(
        &self,
        token: &str,
        identity: &crate::CrowdIdentity,
        current: Option<AnnotatorId>,
        client: Option<std::net::IpAddr>,
    ) -> Result<Entry, BackendError>;
    /// The participant a resume code continues (`None`: no such code). Throttled per client
    /// address (`TooMany`).
    async fn resume(
        &self,
        code: &str,
        client: Option<std::net::IpAddr>,
    ) -> Result<Option<Entry>, BackendError>;
    /// The annotator this caller is in `study`: the session's participant, or the signed-in
    /// user's annotator record there.
    async fn annotator_in(
        &self,
        study: StudyId,
        participant: Option<AnnotatorId>,
        user: Option<&User>,
    ) -> Result<Option<AnnotatorId>, BackendError>;
    /// Where the annotator stands, with the item to rate, or `revise` (an item they rated or
    /// a unit they answered), or — when the queue has nothing more — `page` (from 1) of the
    /// list of rated items.
    async fn annotate_state(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        revise: Option<crate::Revise>,
        page: Option<u32>,
    ) -> Result<AnnotateState, BackendError>;
    /// The part of an item's method file shown under Context, when the annotator may see the
    /// item (it is planned for them, held by them, or rated by them); `None` without a file.
    async fn item_context(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        item: ItemId,
    ) -> Result<Option<FileContext>, BackendError>;
    /// Records consent with the screener answers (name, value).
    async fn consent(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        answers: Vec<(String, String)>,
    ) -> Result<(), BackendError>;
    async fn guideline_seen(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<(), BackendError>;
    /// Records a vote and answers with where the annotator stands next (the queue's next item),
    /// so the page needs no second request; `None` when the vote was kept but the next state
    /// could not be read (the page then asks for it).
    async fn submit_vote(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        item: ItemId,
        vote: VoteForm,
    ) -> Result<Option<AnnotateState>, BackendError>;
    /// Stores the annotator's answers to a designed study's unit (idempotent on its token),
    /// durably, before the next unit is shown; the answer carries that next state as
    /// [`Self::submit_vote`]'s does.
    async fn submit_answers(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        answer: crate::AnswerForm,
    ) -> Result<Option<AnnotateState>, BackendError>;
    async fn finish(&self, study: StudyId, annotator: AnnotatorId) -> Result<(), BackendError>;
    /// Keeps the annotator's leases alive while the rating page is open.
    async fn renew_leases(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<(), BackendError>;
}

/// A study's staff: studies, members, settings, imports, batches and invites, the monitor and the results.
#[async_trait::async_trait]
pub trait StudyBackend: Send + Sync + 'static {
    /// The study's members.
    async fn members(&self, study: StudyId) -> Result<Vec<Member>, BackendError>;
    /// Adds (or re-roles) a member: `role` is `owner` or `member`.
    async fn add_member(
        &self,
        actor: &User,
        study: StudyId,
        username: &str,
        role: &str,
    ) -> Result<(), BackendError>;
    async fn remove_member(
        &self,
        actor: &User,
        study: StudyId,
        username: &str,
    ) -> Result<(), BackendError>;
    /// Whether a study of this id exists (the pages under `/studies/{id}` answer 404 when not).
    async fn study_exists(&self, study: StudyId) -> Result<bool, BackendError>;
    /// The studies `user` may see (admins: all).
    async fn list_studies(&self, user: &User) -> Result<Vec<StudySummary>, BackendError>;
    async fn create_study(
        &self,
        actor: &User,
        name: &str,
        description: &str,
    ) -> Result<StudyId, BackendError>;
    async fn study_detail(&self, id: StudyId) -> Result<Option<StudyDetail>, BackendError>;
    async fn monitor(&self, study: StudyId) -> Result<Monitor, BackendError>;
    /// The analysis of the study's current votes, with charts.
    async fn results(&self, study: StudyId) -> Result<ResultsView, BackendError>;
    async fn update_settings(
        &self,
        actor: &User,
        study: StudyId,
        settings: StudySettingsForm,
    ) -> Result<(), BackendError>;
    /// Imports uploaded files: `kind` is items (two files), votes, npr or ce. Returns a message.
    async fn import_upload(
        &self,
        actor: &User,
        study: StudyId,
        kind: &str,
        files: Vec<(String, String)>,
    ) -> Result<String, BackendError>;
    #[allow(clippy::too_many_arguments)]
    async fn create_batch(
        &self,
        actor: &User,
        study: StudyId,
        name: &str,
        strategy: &str,
        level: Option<String>,
        sample: Option<usize>,
        pool: usize,
        seed: u64,
        verified_only: bool,
    ) -> Result<String, BackendError>;
    /// A new invite link path into a batch, or (none) into a designed study's survey.
    async fn create_invite(
        &self,
        actor: &User,
        study: StudyId,
        batch: Option<BatchId>,
        cap: i64,
    ) -> Result<String, BackendError>;
    async fn release_annotator(
        &self,
        actor: &User,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<u64, BackendError>;
    /// A pilot invite link for one participant (a staff member trying the survey): its path.
    async fn pilot_link(&self, actor: &User, study: StudyId) -> Result<String, BackendError>;
    /// Deletes the pilot's participants and their votes: (participants, votes).
    async fn clear_pilot(&self, actor: &User, study: StudyId) -> Result<(i64, i64), BackendError>;
    /// Excludes the participant from the analysis (`exclude`) or includes them again, with a
    /// reason: how many of their votes moved (`None`: they already were so).
    async fn set_exclusion(
        &self,
        actor: &User,
        study: StudyId,
        annotator: AnnotatorId,
        exclude: bool,
        reason: &str,
    ) -> Result<Option<u64>, BackendError>;
    /// Marks an item as an attention (gold) item with its expected judgement (`natural`,
    /// `unnatural`), or clears it (`none`).
    async fn set_attention_item(
        &self,
        actor: &User,
        study: StudyId,
        item: &str,
        expect: &str,
    ) -> Result<(), BackendError>;
    async fn move_annotator(
        &self,
        actor: &User,
        study: StudyId,
        from: AnnotatorId,
        to_code: &str,
    ) -> Result<u64, BackendError>;
    /// Sets a batch's lease (minutes) for the claims made from now on.
    async fn set_batch_lease(
        &self,
        actor: &User,
        study: StudyId,
        batch: BatchId,
        minutes: i64,
    ) -> Result<(), BackendError>;
    /// Releases the items of every holder idle for `minutes`: (holders, items).
    async fn release_idle(
        &self,
        actor: &User,
        study: StudyId,
        minutes: i64,
    ) -> Result<(u64, u64), BackendError>;
    /// Closes an invite link of the study.
    async fn close_invite(
        &self,
        actor: &User,
        study: StudyId,
        invite: InviteId,
    ) -> Result<(), BackendError>;
}

/// A study's background work: generating transformations, language models and scoring, verification, jobs.
#[async_trait::async_trait]
pub trait StudyWorkBackend: Send + Sync + 'static {
    /// Asks a queued or running job of the study to stop (it stores nothing).
    async fn stop_job(&self, actor: &User, study: StudyId, job: JobId) -> Result<(), BackendError>;
    /// Runs a failed or stopped job again (as a new job); returns its id.
    async fn retry_job(
        &self,
        actor: &User,
        study: StudyId,
        job: JobId,
    ) -> Result<JobId, BackendError>;
    /// The engine's transformations of the study's bugs that are not items yet.
    async fn propose_transformations(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<GeneratedPreview>, BackendError>;
    /// Why each operator did or did not apply to the study's bugs.
    async fn explain_generation(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<crate::OperatorWhy>, BackendError>;
    /// Adds proposed transformations (by key) as items. Returns a message.
    async fn add_transformations(
        &self,
        actor: &User,
        study: StudyId,
        request: &GenerateRequest,
        keys: Vec<String>,
    ) -> Result<String, BackendError>;
    /// The models the server holds (which the actor may delete) and the study's background
    /// jobs.
    async fn scoring(&self, actor: &User, study: StudyId) -> Result<ScoringView, BackendError>;
    /// Deletes a model file: staff of the study that uploaded it, or an admin.
    async fn delete_model(
        &self,
        actor: &User,
        study: StudyId,
        name: &str,
    ) -> Result<(), BackendError>;
    /// Verifies every item of the study (javac, as the server is set up) as a background job.
    async fn start_verify(&self, actor: &User, study: StudyId) -> Result<JobId, BackendError>;
    /// Starts scoring the study's methods with a model in the background; returns the job.
    async fn start_scoring(
        &self,
        actor: &User,
        study: StudyId,
        model: &str,
        log10: bool,
    ) -> Result<JobId, BackendError>;
}

/// Patch review: the reviewers' queue and verdicts, review invites, the admins' overview and rulings.
#[async_trait::async_trait]
pub trait ReviewBackend: Send + Sync + 'static {
    /// The reviewer's next patch of the study (held for them), if any is left. A reviewer is
    /// named by [`crate::auth::require_reviewer`].
    async fn review_next(
        &self,
        reviewer: &str,
        study: StudyId,
    ) -> Result<Option<ReviewItem>, BackendError>;
    /// Records a reviewer's verdict (`correct`, `wrong` or `unsure`) with an optional note.
    async fn review_submit(
        &self,
        reviewer: &str,
        study: StudyId,
        task: ReviewTaskId,
        verdict: &str,
        note: &str,
    ) -> Result<(), BackendError>;
    /// The reviewer name of a session participant who joined `study` through a review-only
    /// invite (`None` for anyone else).
    async fn review_participant(
        &self,
        study: StudyId,
        participant: AnnotatorId,
    ) -> Result<Option<String>, BackendError>;
    /// A new review-only invite link path (`/join/TOKEN`) for at most `cap` reviewers.
    async fn create_review_invite(
        &self,
        actor: &User,
        study: StudyId,
        cap: i64,
    ) -> Result<String, BackendError>;
    /// Builds the study's review tasks (`k` reviewers each); says what it did.
    async fn review_create(
        &self,
        actor: &User,
        study: StudyId,
        k: u32,
    ) -> Result<String, BackendError>;
    /// The patch review for the study's admins.
    async fn review_overview(&self, study: StudyId) -> Result<ReviewOverview, BackendError>;
    /// An admin's ruling: `correct`, `wrong`, `clear` or `send-back`.
    async fn review_rule(
        &self,
        actor: &User,
        study: StudyId,
        tool: &str,
        target: &str,
        ruling: &str,
    ) -> Result<(), BackendError>;
}

/// The domain operations the pages need, by area. Implementations check nothing about roles:
/// the server functions do (see `auth`), so every check sits next to the action it guards.
pub trait Backend:
    AccountsBackend + SurveyBackend + StudyBackend + StudyWorkBackend + ReviewBackend
{
}

impl<T> Backend for T where
    T: AccountsBackend + SurveyBackend + StudyBackend + StudyWorkBackend + ReviewBackend
{
}

/// The handle as it is stored in context.
pub type BackendHandle = Arc<dyn Backend>;
