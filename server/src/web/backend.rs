//! The server's implementation of `app::backend::Backend`: delegation to the services and
//! the store, mapping to wire types, and the one mapping of service errors to backend errors.

use std::net::IpAddr;
use std::sync::Arc;

use app::backend::{Backend, BackendError, BackendHandle, Entry, Member, SessionPolicy};
use app::model::{
    AnnotateState, GenerateRequest, GeneratedPreview, Monitor, Role, ScoringView, StudyDetail,
    StudySettingsForm, StudySummary, User, UserRow, VoteForm,
};

use crate::db::Db;
use crate::ids::{AnnotatorId, BatchId, ItemId, JobId, StudyId, UserId};
use crate::present;
use crate::service::jobs::JobRunner;
use crate::service::throttle::Throttle;
use crate::service::{self, ServiceError};

/// The limits the domain applies to web callers.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    pub models_dir: std::path::PathBuf,
    pub session: SessionPolicy,
    pub login: service::throttle::LoginLimits,
    pub joins: service::throttle::JoinLimits,
    pub jobs: service::jobs::JobLimits,
    pub reports: Arc<service::reports::ReportCache>,
    pub verify: crate::engine::verify::CompilerConfig,
    /// The most bytes an uploaded dataset zip may hold uncompressed (its kept entries).
    pub max_zip_content: u64,
    /// The most bytes of models one study may upload.
    pub model_quota: u64,
    /// Signs device tokens (`service::devices`).
    pub devices: service::devices::DeviceKey,
    /// Cookies only over HTTPS.
    pub secure_cookies: bool,
}

/// The domain as the pages reach it.
#[derive(Clone, Debug)]
pub struct DomainBackend {
    db: Db,
    models_dir: std::path::PathBuf,
    /// Each model loaded once and shared by score jobs and generator previews.
    models: Arc<service::models::ModelCache>,
    /// The most bytes of models one study may upload.
    model_quota: u64,
    throttle: Throttle,
    devices: service::devices::DeviceKey,
    secure_cookies: bool,
    session: SessionPolicy,
    jobs: JobRunner,
    reports: Arc<service::reports::ReportCache>,
    verify: crate::engine::verify::CompilerConfig,
    survey: Arc<service::annotate::SurveyCache>,
    max_zip_content: u64,
}

impl DomainBackend {
    /// The backend, with its background work started (the job reaper, throttle pruning).
    pub fn handle(db: Db, config: &BackendConfig) -> BackendHandle {
        let jobs = JobRunner::new(db.clone(), config.jobs);
        jobs.spawn_reaper();
        let throttle = Throttle::new(config.login, config.joins);
        tokio::spawn({
            let throttle = throttle.clone();
            async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    throttle.prune();
                }
            }
        });
        Arc::new(DomainBackend {
            db,
            models_dir: config.models_dir.clone(),
            models: Arc::new(service::models::ModelCache::new(
                config.models_dir.clone(),
                2,
            )),
            model_quota: config.model_quota,
            throttle,
            devices: config.devices.clone(),
            secure_cookies: config.secure_cookies,
            session: config.session,
            jobs,
            reports: config.reports.clone(),
            verify: config.verify.clone(),
            survey: Default::default(),
            max_zip_content: config.max_zip_content,
        })
    }

    /// A model of the models directory by file name, loaded once and shared.
    async fn model(
        &self,
        name: Option<&str>,
    ) -> Result<Option<Arc<crate::engine::lm::Scorer>>, BackendError> {
        match name {
            None => Ok(None),
            Some(name) => self.models.get(name).await.map(Some).map_err(|e| match e {
                ServiceError::NotFound(what) => BackendError::NotFound(what),
                ServiceError::Invalid(why) => BackendError::Invalid(format!("model {name}: {why}")),
                other => map(other),
            }),
        }
    }

    /// A slot of the instance's background work for a generator preview or addition: they
    /// count as jobs (`--max-jobs`); a caller that waits too long is told to come back.
    async fn job_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, BackendError> {
        self.jobs
            .slot(std::time::Duration::from_secs(60))
            .await
            .ok_or(BackendError::TooMany(30))
    }
}

impl DomainBackend {
    /// The study page's import of a dataset: a zip (sent as base64) of checkouts with their
    /// `pairs.csv`; the answer names what was imported and what was skipped, and why.
    async fn import_bugs_zip(
        &self,
        actor: &User,
        study: StudyId,
        files: Vec<(String, String)>,
    ) -> Result<String, BackendError> {
        use base64::Engine as _;
        let [(name, text)] = files.as_slice() else {
            return Err(BackendError::Invalid(
                "bugs take one file: a zip of the checkouts with pairs.csv".into(),
            ));
        };
        let zip = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| BackendError::Invalid(format!("{name}: not a zip upload")))?;
        let r = service::bug_import::import_bugs_zip(
            &self.db,
            study,
            Some(actor.id),
            zip,
            self.max_zip_content,
        )
        .await
        .map_err(map)?;
        Ok(r.summary())
    }
}

/// The one mapping of service (and store) errors to what a client may read: internal errors
/// are logged here with their detail and answered with a generic text.
pub fn map(e: impl Into<ServiceError>) -> BackendError {
    match e.into() {
        ServiceError::Invalid(why) => BackendError::Invalid(why),
        ServiceError::NotFound(what) => BackendError::NotFound(what),
        ServiceError::Conflict(what) => BackendError::Conflict(what),
        ServiceError::Forbidden(why) => BackendError::Forbidden(why),
        ServiceError::TooMany(secs) => BackendError::TooMany(secs),
        ServiceError::Internal(e) => {
            tracing::error!(error = %format!("{e:#}"), "internal error");
            BackendError::Internal(e.to_string())
        }
    }
}

#[async_trait::async_trait]
impl Backend for DomainBackend {
    fn device_cookie(&self, username: &str) -> String {
        self.devices.set_cookie(username, self.secure_cookies)
    }

    #[tracing::instrument(skip(self, password, device))]
    async fn authenticate(
        &self,
        username: &str,
        password: &str,
        client: Option<IpAddr>,
        device: Option<&str>,
    ) -> Result<Option<(User, i64)>, BackendError> {
        service::accounts::authenticate(
            &self.db,
            &self.throttle,
            &self.devices,
            client,
            username,
            password,
            device,
        )
        .await
        .map_err(map)
    }

    async fn session_user(&self, id: UserId, epoch: i64) -> Result<Option<User>, BackendError> {
        service::accounts::session_user(&self.db, id, epoch)
            .await
            .map_err(map)
    }

    fn session_policy(&self) -> SessionPolicy {
        self.session
    }

    async fn may_access(&self, user: &User, study: StudyId) -> Result<bool, BackendError> {
        service::access::may_access(&self.db, user, study)
            .await
            .map_err(map)
    }

    async fn members(&self, study: StudyId) -> Result<Vec<Member>, BackendError> {
        service::members::list(&self.db, study).await.map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn add_member(
        &self,
        actor: &User,
        study: StudyId,
        username: &str,
        role: &str,
    ) -> Result<(), BackendError> {
        service::members::add(&self.db, study, Some(actor.id), username, role)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn remove_member(
        &self,
        actor: &User,
        study: StudyId,
        username: &str,
    ) -> Result<(), BackendError> {
        service::members::remove(&self.db, study, Some(actor.id), username)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn retry_job(
        &self,
        actor: &User,
        study: StudyId,
        job: JobId,
    ) -> Result<JobId, BackendError> {
        match service::jobs::retry(&self.db, study, job)
            .await
            .map_err(map)?
        {
            service::jobs::Retry::Verify => self.start_verify(actor, study).await,
            service::jobs::Retry::Score { model, log10 } => {
                self.start_scoring(actor, study, &model, log10).await
            }
        }
    }

    async fn my_studies(&self, user: &User) -> Result<Vec<(StudyId, String)>, BackendError> {
        service::participation::studies_of_user(&self.db, user.id)
            .await
            .map_err(map)
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, BackendError> {
        service::accounts::list(&self.db).await.map_err(map)
    }

    #[tracing::instrument(skip(self, password))]
    async fn add_user(
        &self,
        actor: &User,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserId, BackendError> {
        service::accounts::add_user(&self.db, Some(actor), username, password, role)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn set_role(&self, actor: &User, username: &str, role: Role) -> Result<(), BackendError> {
        service::accounts::set_role(&self.db, Some(actor), username, role)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor, password), fields(actor = %actor.username))]
    async fn reset_password(
        &self,
        actor: &User,
        username: &str,
        password: &str,
    ) -> Result<(), BackendError> {
        service::accounts::set_password(&self.db, Some(actor), username, password)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn set_disabled(
        &self,
        actor: &User,
        username: &str,
        disabled: bool,
    ) -> Result<(), BackendError> {
        service::accounts::set_disabled(&self.db, Some(actor), username, disabled)
            .await
            .map_err(map)
    }

    async fn list_studies(&self, user: &User) -> Result<Vec<StudySummary>, BackendError> {
        service::studies::list_for(&self.db, user)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn create_study(
        &self,
        actor: &User,
        name: &str,
        description: &str,
    ) -> Result<StudyId, BackendError> {
        service::studies::create(&self.db, Some(actor.id), None, name, description)
            .await
            .map_err(map)
    }

    async fn study_detail(&self, id: StudyId) -> Result<Option<StudyDetail>, BackendError> {
        service::studies::detail(&self.db, id).await.map_err(map)
    }

    #[tracing::instrument(skip(self, token))]
    async fn invite_status(
        &self,
        token: &str,
        current: Option<AnnotatorId>,
    ) -> Result<app::model::InviteStatus, BackendError> {
        service::invites::status(&self.db, token, current)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, token, pid))]
    async fn join(
        &self,
        token: &str,
        pid: Option<&str>,
        current: Option<AnnotatorId>,
        client: Option<IpAddr>,
    ) -> Result<Entry, BackendError> {
        // counted before anything is looked up: a wrong token is a guess, and costs the same
        self.throttle.join(client).map_err(BackendError::TooMany)?;
        let pid = service::participation::check_pid(pid).map_err(map)?;
        if token.len() > service::invites::MAX_TOKEN {
            return Err(BackendError::NotFound("invite".into()));
        }
        let invite = self
            .survey
            .invite(&self.db, token)
            .await
            .map_err(map)?
            .ok_or_else(|| BackendError::NotFound("invite".into()))?;
        service::invites::join(&self.db, &invite, pid.as_deref(), current)
            .await
            .map(present::entry)
            .map_err(map)
    }

    #[tracing::instrument(skip(self, code))]
    async fn resume(
        &self,
        code: &str,
        client: Option<IpAddr>,
    ) -> Result<Option<Entry>, BackendError> {
        // guessing codes is throttled like guessing passwords: per client address, and per
        // code (as per account name)
        let normal = service::invites::normalise_resume_code(code);
        self.throttle
            .attempt(client, &format!("\u{0}resume:{normal}"), false)
            .map_err(BackendError::TooMany)?;
        service::invites::resume(&self.db, code)
            .await
            .map(|e| e.map(present::entry))
            .map_err(map)
    }

    async fn annotator_in(
        &self,
        study: StudyId,
        participant: Option<AnnotatorId>,
        user: Option<&User>,
    ) -> Result<Option<AnnotatorId>, BackendError> {
        self.survey
            .annotator_in(&self.db, study, participant, user.map(|u| u.id))
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn annotate_state(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        revise: Option<ItemId>,
        page: Option<u32>,
    ) -> Result<AnnotateState, BackendError> {
        service::annotate::annotate_state(&self.db, &self.survey, study, annotator, revise, page)
            .await
            .map_err(map)
    }

    async fn consent(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        answers: Vec<(String, String)>,
    ) -> Result<(), BackendError> {
        service::participation::consent(&self.db, study, annotator, answers)
            .await
            .map_err(map)
    }

    async fn guideline_seen(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<(), BackendError> {
        service::participation::guideline_seen(&self.db, study, annotator)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, vote), fields(token = %vote.token))]
    async fn submit_vote(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        item: ItemId,
        vote: VoteForm,
    ) -> Result<Option<AnnotateState>, BackendError> {
        let claimed = service::participation::submit_vote(&self.db, study, annotator, item, vote)
            .await
            .map_err(map)?;
        // the vote is kept: from here on a failure must not read as a lost vote
        match service::annotate::state_after_vote(&self.db, &self.survey, study, annotator, claimed)
            .await
        {
            Ok(next) => Ok(Some(next)),
            Err(e) => {
                tracing::warn!(error = %e, "the state after a vote (the page will ask again)");
                Ok(None)
            }
        }
    }

    async fn finish(&self, study: StudyId, annotator: AnnotatorId) -> Result<(), BackendError> {
        service::participation::finish(&self.db, study, annotator)
            .await
            .map_err(map)
    }
    async fn renew_leases(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<(), BackendError> {
        service::participation::renew_leases(&self.db, study, annotator)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn results(&self, study: StudyId) -> Result<app::model::ResultsView, BackendError> {
        service::reports::results_view(&self.reports, &self.db, study)
            .await
            .map_err(map)
    }

    async fn monitor(&self, study: StudyId) -> Result<Monitor, BackendError> {
        service::monitor::monitor(&self.db, study)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, settings))]
    async fn update_settings(
        &self,
        actor: &User,
        study: StudyId,
        settings: StudySettingsForm,
    ) -> Result<(), BackendError> {
        service::studies::update_settings(&self.db, study, Some(actor.id), &settings)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, files))]
    async fn import_upload(
        &self,
        actor: &User,
        study: StudyId,
        kind: &str,
        files: Vec<(String, String)>,
    ) -> Result<String, BackendError> {
        use crate::service::Outcome;
        if kind == "bugs" {
            return self.import_bugs_zip(actor, study, files).await;
        }
        let kind = service::ImportKind::parse(kind)
            .ok_or_else(|| BackendError::Invalid(format!("unknown import kind {kind}")))?;
        let outcome = service::import_upload(&self.db, study, Some(actor.id), kind, &files).await;
        match outcome.map_err(map)? {
            Outcome::Imported { rows } => Ok(format!("imported {rows} rows")),
            Outcome::AlreadyImported => Ok("already imported: nothing to do".into()),
        }
    }

    #[tracing::instrument(skip(self, actor))]
    async fn scoring(&self, actor: &User, study: StudyId) -> Result<ScoringView, BackendError> {
        service::models::view(
            &self.db,
            &self.models_dir,
            study,
            actor.role == Role::Admin,
            self.model_quota,
        )
        .await
        .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn delete_model(
        &self,
        actor: &User,
        study: StudyId,
        name: &str,
    ) -> Result<(), BackendError> {
        service::models::delete(
            &self.db,
            &self.models,
            study,
            actor.id,
            actor.role == Role::Admin,
            name,
        )
        .await
        .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn start_scoring(
        &self,
        actor: &User,
        study: StudyId,
        model: &str,
        log10: bool,
    ) -> Result<JobId, BackendError> {
        if service::scoring::model_kind(&self.models_dir, model).is_none() {
            return Err(BackendError::NotFound(format!("model {model}")));
        }
        let label = format!("score with {model}{}", if log10 { " (log10)" } else { "" });
        let params = serde_json::json!({ "model": model, "log10": log10 }).to_string();
        let job = service::jobs::create(&self.db, study, Some(actor.id), "score", &label, &params)
            .await
            .map_err(map)?;
        self.jobs.spawn(
            job,
            service::scoring::run_scoring(
                self.db.clone(),
                job,
                study,
                Some(actor.id),
                (self.models.clone(), model.to_owned()),
                log10,
            ),
        );
        Ok(job)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn start_verify(&self, actor: &User, study: StudyId) -> Result<JobId, BackendError> {
        let job = service::jobs::create(
            &self.db,
            study,
            Some(actor.id),
            "verify",
            "verify: compile every item in its file (javac)",
            "{}",
        )
        .await
        .map_err(map)?;
        let options = crate::engine::verify::Options {
            compiler: Some(self.verify.clone()),
            tests: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        self.jobs.spawn(
            job,
            service::verification::run_job(self.db.clone(), job, study, options),
        );
        Ok(job)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn close_invite(
        &self,
        actor: &User,
        study: StudyId,
        invite: i64,
    ) -> Result<(), BackendError> {
        service::invites::close(&self.db, study, invite, Some(actor.id))
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn review_next(
        &self,
        reviewer: &str,
        study: StudyId,
    ) -> Result<Option<app::model::ReviewItem>, BackendError> {
        service::reviews::next_for(&self.db, study, reviewer)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, note))]
    async fn review_submit(
        &self,
        reviewer: &str,
        study: StudyId,
        task: i64,
        verdict: &str,
        note: &str,
    ) -> Result<(), BackendError> {
        service::reviews::submit(&self.db, study, task, reviewer, verdict, note)
            .await
            .map_err(map)
    }

    async fn review_participant(
        &self,
        study: StudyId,
        participant: AnnotatorId,
    ) -> Result<Option<String>, BackendError> {
        service::invites::reviewer_participant(&self.db, study, participant)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn create_review_invite(
        &self,
        actor: &User,
        study: StudyId,
        cap: i64,
    ) -> Result<String, BackendError> {
        service::invites::create_review(&self.db, study, cap, Some(actor.id))
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn review_create(
        &self,
        actor: &User,
        study: StudyId,
        k: u32,
    ) -> Result<String, BackendError> {
        let options = service::reviews::CreateOptions {
            k,
            ..Default::default()
        };
        let s = service::reviews::create(&self.db, study, Some(actor.id), options)
            .await
            .map_err(map)?;
        Ok(s.describe())
    }

    #[tracing::instrument(skip(self))]
    async fn review_overview(
        &self,
        study: StudyId,
    ) -> Result<app::model::ReviewOverview, BackendError> {
        service::reviews::overview(&self.db, study)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn review_rule(
        &self,
        actor: &User,
        study: StudyId,
        tool: &str,
        target: &str,
        ruling: &str,
    ) -> Result<(), BackendError> {
        let ruling = service::reviews::parse_ruling(ruling).map_err(map)?;
        service::reviews::rule(&self.db, study, Some(actor.id), tool, target, ruling)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    #[tracing::instrument(skip(self))]
    async fn explain_generation(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<app::model::OperatorWhy>, BackendError> {
        let _slot = self.job_slot().await?;
        crate::service::generation::explain(&self.db, study, &request.operators, request.all_sites)
            .await
            .map_err(map)
    }

    async fn propose_transformations(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<GeneratedPreview>, BackendError> {
        let _slot = self.job_slot().await?;
        let model = self.model(request.model.as_deref()).await?;
        let (bugs, proposals) = crate::service::propose(
            &self.db,
            study,
            &request.operators,
            request.all_sites,
            model,
        )
        .await
        .map_err(map)?;
        let lines: std::collections::HashMap<&str, (&str, &[u32])> = bugs
            .iter()
            .map(|b| {
                (
                    b.bug_id.as_str(),
                    (b.source.as_str(), b.buggy_lines.as_slice()),
                )
            })
            .collect();
        Ok(proposals
            .into_iter()
            .map(|p| {
                let r = &p.generated.record;
                let (old, buggy) = lines.get(r.bug_id.as_str()).copied().unwrap_or(("", &[]));
                GeneratedPreview {
                    key: p.key.clone(),
                    bug_id: r.bug_id.clone(),
                    operator: r.operator.clone(),
                    level: r.level.as_str().to_owned(),
                    summary: r.summary.clone(),
                    touches_buggy: p.generated.touches_buggy,
                    diff: crate::present::wire_rows(crate::engine::diff::diff_rows(
                        old, &r.source, buggy,
                    )),
                }
            })
            .collect())
    }

    #[tracing::instrument(skip(self, keys), fields(keys = keys.len()))]
    async fn add_transformations(
        &self,
        actor: &User,
        study: StudyId,
        request: &GenerateRequest,
        keys: Vec<String>,
    ) -> Result<String, BackendError> {
        use crate::service::Outcome;
        if keys.is_empty() {
            return Err(BackendError::Invalid(
                "select at least one transformation".into(),
            ));
        }
        let _slot = self.job_slot().await?;
        let model = self.model(request.model.as_deref()).await?;
        match crate::service::add_proposals(
            &self.db,
            study,
            Some(actor.id),
            &request.operators,
            request.all_sites,
            model,
            &keys,
        )
        .await
        .map_err(map)?
        {
            Outcome::Imported { rows } => Ok(format!("added {rows} items")),
            Outcome::AlreadyImported => Ok("already added: nothing to do".into()),
        }
    }

    #[tracing::instrument(skip(self))]
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
    ) -> Result<String, BackendError> {
        let mut request = service::batches::BatchRequest::new(name, strategy);
        request.filter.level = level;
        request.filter.verified_only = verified_only;
        request.filter.sample = sample;
        request.pool = pool;
        request.seed = seed;
        let info = service::batches::create(&self.db, study, Some(actor.id), request)
            .await
            .map_err(map)?;
        // a sample larger than what matches takes every matching item: say so
        let short = sample
            .filter(|s| *s > info.items)
            .map(|s| {
                format!(
                    " — only {} matched, fewer than the sample of {s} asked for",
                    app::text::count(info.items as i64, "item")
                )
            })
            .unwrap_or_default();
        let short = if info.full {
            format!("{short} — warning: every one of its items already has k ratings, so its participants would get nothing to rate (invites to it turn people away)")
        } else {
            short
        };
        Ok(if info.assignments == 0 {
            format!(
                "batch {name}: {} in a dynamic queue (participants lease items as they go){short}",
                app::text::count(info.items as i64, "item")
            )
        } else {
            format!(
                "batch {name}: {}, {} planned{short}",
                app::text::count(info.items as i64, "item"),
                app::text::count(info.assignments as i64, "assignment")
            )
        })
    }

    async fn create_invite(
        &self,
        actor: &User,
        study: StudyId,
        batch: BatchId,
        cap: i64,
    ) -> Result<String, BackendError> {
        service::invites::create(&self.db, study, batch, cap, Some(actor.id))
            .await
            .map_err(map)
    }

    async fn release_annotator(
        &self,
        actor: &User,
        study: StudyId,
        annotator: AnnotatorId,
    ) -> Result<u64, BackendError> {
        service::batches::release(&self.db, study, annotator, Some(actor.id))
            .await
            .map_err(map)
    }

    async fn move_annotator(
        &self,
        actor: &User,
        study: StudyId,
        from: AnnotatorId,
        to_code: &str,
    ) -> Result<u64, BackendError> {
        service::batches::move_unrated(&self.db, study, from, to_code, Some(actor.id))
            .await
            .map_err(map)
    }
}
