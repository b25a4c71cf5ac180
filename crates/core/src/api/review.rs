//! Patch review: the reviewers' queue and verdicts, review invites, the admins' overview and rulings.

#[allow(unused_imports)]
use super::*;

#[async_trait::async_trait]
impl natstudy_types::backend::ReviewBackend for Core {
    #[tracing::instrument(skip(self))]
    async fn review_next(
        &self,
        reviewer: &str,
        study: StudyId,
    ) -> Result<Option<natstudy_types::ReviewItem>, BackendError> {
        service::reviews::next_for(&self.db, study, reviewer)
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self, note))]
    async fn review_submit(
        &self,
        reviewer: &str,
        study: StudyId,
        task: ReviewTaskId,
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
    ) -> Result<natstudy_types::ReviewOverview, BackendError> {
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
}
