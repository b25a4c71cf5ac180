//! A study's staff: studies, members, settings, imports, batches and invites, the monitor and the results.

#[allow(unused_imports)]
use super::*;

#[async_trait::async_trait]
impl natstudy_types::backend::StudyBackend for Core {
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
    async fn study_exists(&self, study: StudyId) -> Result<bool, BackendError> {
        service::studies::exists(&self.db, study).await.map_err(map)
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
    async fn monitor(&self, study: StudyId) -> Result<Monitor, BackendError> {
        service::monitor::monitor(&self.db, study)
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self))]
    async fn results(&self, study: StudyId) -> Result<natstudy_types::ResultsView, BackendError> {
        service::reports::results_view(&self.reports, &self.db, study)
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
        use crate::service::imports::Outcome;
        if kind == "bugs" {
            return self.import_bugs_zip(actor, study, files).await;
        }
        let kind = service::imports::ImportKind::parse(kind)
            .ok_or_else(|| BackendError::Invalid(format!("unknown import kind {kind}")))?;
        let outcome =
            service::imports::import_upload(&self.db, study, Some(actor.id), kind, &files).await;
        match outcome.map_err(map)? {
            Outcome::Imported { rows } => Ok(format!("imported {rows} rows")),
            Outcome::AlreadyImported => Ok("already imported: nothing to do".into()),
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
                    natstudy_types::words::count(info.items as i64, "item")
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
                natstudy_types::words::count(info.items as i64, "item")
            )
        } else {
            format!(
                "batch {name}: {}, {} planned{short}",
                natstudy_types::words::count(info.items as i64, "item"),
                natstudy_types::words::count(info.assignments as i64, "assignment")
            )
        })
    }
    async fn create_invite(
        &self,
        actor: &User,
        study: StudyId,
        batch: Option<BatchId>,
        cap: i64,
    ) -> Result<String, BackendError> {
        match batch {
            Some(batch) => {
                service::invites::create(&self.db, study, batch, cap, Some(actor.id)).await
            }
            None => {
                service::invites::create_for_design(&self.db, study, cap, false, Some(actor.id))
                    .await
            }
        }
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
    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn pilot_link(&self, actor: &User, study: StudyId) -> Result<String, BackendError> {
        service::pilot::try_link(&self.db, study, Some(actor.id))
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn clear_pilot(&self, actor: &User, study: StudyId) -> Result<(i64, i64), BackendError> {
        service::pilot::clear(&self.db, study, Some(actor.id))
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self, actor, reason), fields(actor = %actor.username))]
    async fn set_exclusion(
        &self,
        actor: &User,
        study: StudyId,
        annotator: AnnotatorId,
        exclude: bool,
        reason: &str,
    ) -> Result<Option<u64>, BackendError> {
        service::exclusions::set(&self.db, study, annotator, exclude, reason, Some(actor.id))
            .await
            .map_err(map)
    }
    async fn set_attention_item(
        &self,
        _actor: &User,
        study: StudyId,
        item: &str,
        expect: &str,
    ) -> Result<(), BackendError> {
        service::monitor::set_gold(&self.db, study, item, expect)
            .await
            .map_err(map)
    }
    async fn set_batch_lease(
        &self,
        actor: &User,
        study: StudyId,
        batch: BatchId,
        minutes: i64,
    ) -> Result<(), BackendError> {
        service::batches::set_lease(&self.db, study, batch, minutes, Some(actor.id))
            .await
            .map_err(map)
    }
    async fn release_idle(
        &self,
        actor: &User,
        study: StudyId,
        minutes: i64,
    ) -> Result<(u64, u64), BackendError> {
        service::batches::release_idle(&self.db, study, minutes, Some(actor.id))
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
    #[tracing::instrument(skip(self, actor), fields(actor = %actor.username))]
    async fn close_invite(
        &self,
        actor: &User,
        study: StudyId,
        invite: InviteId,
    ) -> Result<(), BackendError> {
        service::invites::close(&self.db, study, invite, Some(actor.id))
            .await
            .map_err(map)
    }
}
