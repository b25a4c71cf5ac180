//! A study's background work: generating transformations, language models and scoring, verification, jobs.

#[allow(unused_imports)]
use super::*;
use crate::service::jobs::JobKind;

#[async_trait::async_trait]
impl natstudy_types::backend::StudyWorkBackend for Core {
    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn stop_job(&self, actor: &User, study: StudyId, job: JobId) -> Result<(), BackendError> {
        service::jobs::stop(&self.db, study, job)
            .await
            .map(|_| ())
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
    #[tracing::instrument(skip(self))]
    async fn propose_transformations(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<GeneratedPreview>, BackendError> {
        let _slot = self.job_slot(study).await?;
        let model = self.model(request.model.as_deref()).await?;
        let (bugs, proposals) = crate::service::generation::propose(
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
                    diff: crate::present::wire::wire_rows(natstudy_engine::diff::diff_rows(
                        old, &r.source, buggy,
                    )),
                }
            })
            .collect())
    }
    #[tracing::instrument(skip(self))]
    async fn explain_generation(
        &self,
        study: StudyId,
        request: &GenerateRequest,
    ) -> Result<Vec<natstudy_types::OperatorWhy>, BackendError> {
        let _slot = self.job_slot(study).await?;
        crate::service::generation::explain(&self.db, study, &request.operators, request.all_sites)
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self, keys), fields(keys = keys.len()))]
    async fn add_transformations(
        &self,
        actor: &User,
        study: StudyId,
        request: &GenerateRequest,
        keys: Vec<String>,
    ) -> Result<String, BackendError> {
        use crate::service::imports::Outcome;
        if keys.is_empty() {
            return Err(BackendError::Invalid(
                "select at least one transformation".into(),
            ));
        }
        let _slot = self.job_slot(study).await?;
        let model = self.model(request.model.as_deref()).await?;
        match crate::service::generation::add_proposals(
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
    #[tracing::instrument(skip(self, actor))]
    async fn scoring(&self, actor: &User, study: StudyId) -> Result<ScoringView, BackendError> {
        service::models::view(
            &self.db,
            &self.models,
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
    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn start_verify(&self, actor: &User, study: StudyId) -> Result<JobId, BackendError> {
        let options = natstudy_engine::verify::Options {
            compiler: Some(self.verify.clone()),
            tests: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        service::verification::admits(&self.db, study, &options, service::jobs::JOB_BUDGET)
            .await
            .map_err(map)?;
        let job = service::jobs::create(
            &self.db,
            study,
            Some(actor.id),
            JobKind::Verify,
            "verify: compile every item in its file (javac)",
            "{}",
        )
        .await
        .map_err(map)?;
        self.jobs.spawn(
            job,
            study,
            service::verification::run_job(self.db.clone(), job, study, options),
        );
        Ok(job)
    }
    #[tracing::instrument(skip(self))]
    async fn start_scoring(
        &self,
        actor: &User,
        study: StudyId,
        model: &str,
        log10: bool,
    ) -> Result<JobId, BackendError> {
        if service::models::model_kind(&self.models_dir, model).is_none() {
            return Err(BackendError::NotFound(format!("model {model}")));
        }
        service::scoring::admits(
            &self.db,
            &self.models_dir,
            study,
            model,
            service::jobs::JOB_BUDGET,
        )
        .await
        .map_err(map)?;
        let label = format!("score with {model}{}", if log10 { " (log10)" } else { "" });
        let params = serde_json::json!({ "model": model, "log10": log10 }).to_string();
        let job = service::jobs::create(
            &self.db,
            study,
            Some(actor.id),
            JobKind::Score,
            &label,
            &params,
        )
        .await
        .map_err(map)?;
        self.jobs.spawn(
            job,
            study,
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
}
