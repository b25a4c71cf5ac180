//! Accounts and sessions: signing in, the session's user, study access, the accounts page.

#[allow(unused_imports)]
use super::*;

#[async_trait::async_trait]
impl natstudy_types::backend::AccountsBackend for Core {
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
    async fn my_studies(&self, user: &User) -> Result<Vec<MyStudy>, BackendError> {
        service::participation::studies_of_user(&self.db, user.id)
            .await
            .map_err(map)
    }
    async fn participant_study(
        &self,
        participant: AnnotatorId,
    ) -> Result<Option<MyStudy>, BackendError> {
        service::participation::study_of_participant(&self.db, participant)
            .await
            .map_err(map)
    }
}
