//! The server's implementation of `natstudy_types::backend::Backend`, one file per area (accounts, the
//! survey, a study's staff, its background work, patch review): each method one call into a
//! service, mapped to wire types; here the handle, its configuration, and the one mapping of
//! service errors to backend errors.

use std::net::IpAddr;
use std::sync::Arc;

use natstudy_types::backend::{BackendError, BackendHandle, Member, SessionPolicy};
use natstudy_types::Entry;
use natstudy_types::{
    AnnotateState, FileContext, GenerateRequest, GeneratedPreview, Monitor, MyStudy, Role,
    ScoringView, StudyDetail, StudySettingsForm, StudySummary, User, UserRow, VoteForm,
};

use crate::present;
use crate::service::jobs::JobRunner;
use crate::service::throttle::Throttle;
use crate::service::Db;
use crate::service::{self, ServiceError};
use natstudy_vocab::ids::{
    AnnotatorId, BatchId, InviteId, ItemId, JobId, ReviewTaskId, StudyId, UserId,
};

/// The limits the domain applies to web callers.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    pub models_dir: std::path::PathBuf,
    pub session: SessionPolicy,
    pub login: service::throttle::LoginLimits,
    pub joins: service::throttle::JoinLimits,
    pub jobs: service::jobs::JobLimits,
    pub reports: Arc<service::reports::ReportCache>,
    pub verify: natstudy_engine::verify::CompilerConfig,
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
pub struct Core {
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
    verify: natstudy_engine::verify::CompilerConfig,
    survey: Arc<service::annotate::SurveyCache>,
    max_zip_content: u64,
}

impl Core {
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
        // each study's longest hold follows its participants' times on item
        tokio::spawn(service::lease_hold::keep_fresh(
            db.clone(),
            std::time::Duration::from_secs(300),
        ));
        Arc::new(Core {
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
    ) -> Result<Option<Arc<natstudy_engine::lm::Scorer>>, BackendError> {
        match name {
            None => Ok(None),
            Some(name) => self.models.get(name).await.map(Some).map_err(|e| match e {
                ServiceError::NotFound(what) => BackendError::NotFound(what),
                ServiceError::Invalid(why) => BackendError::Invalid(format!("model {name}: {why}")),
                other => map(other),
            }),
        }
    }

    /// A slot of the instance's background work for a generator preview or addition of
    /// `study`: they count as its jobs (`--max-jobs`, a study's share of them); a caller that
    /// waits too long is told to come back.
    async fn job_slot(&self, study: StudyId) -> Result<crate::service::jobs::Slot, BackendError> {
        self.jobs
            .slot(study, std::time::Duration::from_secs(60))
            .await
            .ok_or(BackendError::TooMany(30))
    }
}

impl Core {
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

mod accounts;
mod review;
mod study;
mod survey;
mod work;
