//! The server's implementation of `app::backend::Backend`: domain operations over the store.

use std::sync::Arc;

use app::backend::{Backend, BackendError, BackendHandle};
use app::model::{Role, StudyDetail, StudySummary, User, UserRow};

use crate::db::Db;
use crate::store::{self, StoreError};

/// The domain as the pages reach it.
#[derive(Clone, Debug)]
pub struct DomainBackend {
    db: Db,
}

impl DomainBackend {
    pub fn handle(db: Db) -> BackendHandle {
        Arc::new(DomainBackend { db })
    }
}

fn map(e: StoreError) -> BackendError {
    match e {
        StoreError::Conflict(what) => BackendError::Conflict(format!("{what} already exists")),
        StoreError::NotFound(what) => BackendError::NotFound(what),
        StoreError::Invalid(why) => BackendError::Invalid(why),
        StoreError::Forbidden(why) => BackendError::Forbidden(why),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "database error");
            BackendError::Internal("database error".into())
        }
    }
}

fn join<T>(r: Result<T, tokio::task::JoinError>) -> Result<T, BackendError> {
    r.map_err(|e| BackendError::Internal(format!("worker failed: {e}")))
}

/// Adds an account: validates the name, hashes off the async threads, records the action.
pub async fn add_user(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    password: &str,
    role: Role,
) -> Result<i64, BackendError> {
    validate_username(username)?;
    let pw = password.to_owned();
    let hash = join(tokio::task::spawn_blocking(move || crate::password::hash(&pw)).await)?
        .map_err(|e| BackendError::Invalid(e.to_string()))?;
    let id = store::users::insert(db, username, &hash, role)
        .await
        .map_err(map)?;
    store::audit::record(
        &db.pool,
        actor.map(|a| a.id),
        None,
        "user.add",
        &format!("{username} ({role})"),
    )
    .await
    .map_err(map)?;
    Ok(id)
}

pub fn validate_username(name: &str) -> Result<(), BackendError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(BackendError::Invalid(
            "username must be 1–64 characters: letters, digits, _ - . @".into(),
        ))
    }
}

#[async_trait::async_trait]
impl Backend for DomainBackend {
    #[tracing::instrument(skip(self, password))]
    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<User>, BackendError> {
        let creds = store::users::credentials(&self.db, username)
            .await
            .map_err(map)?;
        let (hash, user) = match creds {
            Some(c) if !c.disabled => (c.password_hash.unwrap_or_default(), Some(c.user)),
            _ => (crate::password::dummy_hash().to_owned(), None),
        };
        let pw = password.to_owned();
        let ok =
            join(tokio::task::spawn_blocking(move || crate::password::verify(&pw, &hash)).await)?;
        Ok(user.filter(|_| ok))
    }

    async fn user(&self, id: i64) -> Result<Option<User>, BackendError> {
        store::users::by_id(&self.db, id).await.map_err(map)
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, BackendError> {
        store::users::list(&self.db).await.map_err(map)
    }

    #[tracing::instrument(skip(self, password))]
    async fn add_user(
        &self,
        actor: &User,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<i64, BackendError> {
        add_user(&self.db, Some(actor), username, password, role).await
    }

    async fn list_studies(&self) -> Result<Vec<StudySummary>, BackendError> {
        store::studies::list(&self.db).await.map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn create_study(
        &self,
        actor: &User,
        name: &str,
        description: &str,
    ) -> Result<i64, BackendError> {
        if name.is_empty() || name.len() > 200 {
            return Err(BackendError::Invalid(
                "a study needs a name of 1–200 characters".into(),
            ));
        }
        store::studies::create(&self.db, Some(actor.id), name, description)
            .await
            .map_err(map)
    }

    async fn study_detail(&self, id: i64) -> Result<Option<StudyDetail>, BackendError> {
        store::studies::detail(&self.db, id).await.map_err(map)
    }
}
