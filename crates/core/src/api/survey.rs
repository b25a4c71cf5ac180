//! The participant's survey: invites, joining and resuming, consent, rating, leases.

#[allow(unused_imports)]
use super::*;

#[async_trait::async_trait]
impl natstudy_types::backend::SurveyBackend for Core {
    #[tracing::instrument(skip(self, token))]
    async fn invite_status(
        &self,
        token: &str,
        current: Option<AnnotatorId>,
        identity: &natstudy_types::CrowdIdentity,
    ) -> Result<natstudy_types::InviteStatus, BackendError> {
        let identity = service::participation::check_identity(identity).map_err(map)?;
        service::invites::status(&self.db, token, current, &identity)
            .await
            .map_err(map)
    }
    #[tracing::instrument(skip(self, token, identity))]
    async fn join(
        &self,
        token: &str,
        identity: &natstudy_types::CrowdIdentity,
        current: Option<AnnotatorId>,
        client: Option<IpAddr>,
    ) -> Result<Entry, BackendError> {
        // counted before anything is looked up: a wrong token is a guess, and costs the same
        self.throttle.join(client).map_err(BackendError::TooMany)?;
        // an address whose recent joins answered nothing may not join again (they held items)
        let recent = self.throttle.joins_to_check(client);
        if !recent.is_empty() {
            let unanswered = service::participation::unanswered(&self.db, &recent)
                .await
                .map_err(map)?;
            self.throttle
                .unanswered_joins(unanswered)
                .map_err(BackendError::TooMany)?;
        }
        let identity = service::participation::check_identity(identity).map_err(map)?;
        if token.len() > service::invites::MAX_TOKEN {
            return Err(BackendError::NotFound("invite".into()));
        }
        let invite = self
            .survey
            .invite(&self.db, token)
            .await
            .map_err(map)?
            .ok_or_else(|| BackendError::NotFound("invite".into()))?;
        let entry = service::invites::join(&self.db, &invite, &identity, current)
            .await
            .map(present::wire::entry)
            .map_err(map)?;
        if current != Some(entry.annotator) {
            self.throttle.joined(client, entry.annotator);
        }
        Ok(entry)
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
            .map(|e| e.map(present::wire::entry))
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
        revise: Option<natstudy_types::Revise>,
        page: Option<u32>,
    ) -> Result<AnnotateState, BackendError> {
        service::annotate::annotate_state(&self.db, &self.survey, study, annotator, revise, page)
            .await
            .map_err(map)
    }
    async fn item_context(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        item: ItemId,
    ) -> Result<Option<FileContext>, BackendError> {
        service::annotate::item_context(&self.db, &self.survey, study, annotator, item)
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
    #[tracing::instrument(skip(self, answer), fields(claim = answer.claim, token = %answer.token))]
    async fn submit_answers(
        &self,
        study: StudyId,
        annotator: AnnotatorId,
        answer: natstudy_types::AnswerForm,
    ) -> Result<Option<AnnotateState>, BackendError> {
        service::answering::submit(&self.db, study, annotator, answer)
            .await
            .map_err(map)?;
        // the answer is kept: from here on a failure must not read as a lost answer
        match service::annotate::annotate_state(
            &self.db,
            &self.survey,
            study,
            annotator,
            None,
            None,
        )
        .await
        {
            Ok(next) => Ok(Some(next)),
            Err(e) => {
                tracing::warn!(error = %e, "the state after an answer (the page will ask again)");
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
}
