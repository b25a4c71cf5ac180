//! The service layer's one error type, and the policy that maps it: what a client may read
//! (`Invalid`, `NotFound`, `Conflict`, `Forbidden`, `TooMany`) versus what only the log keeps
//! (`Internal`: its detail is logged where it is turned into a client answer, never sent).

use crate::store::StoreError;
use natstudy_engine::formats::FormatError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Forbidden(String),
    /// Too many attempts: try again after this many seconds.
    #[error("too many attempts: try again in {0} s")]
    TooMany(u64),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type ServiceResult<T> = Result<T, ServiceError>;

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(what) => ServiceError::Conflict(format!("{what} already exists")),
            StoreError::NotFound(what) => ServiceError::NotFound(what),
            StoreError::Invalid(why) => ServiceError::Invalid(why),
            StoreError::Forbidden(why) => ServiceError::Forbidden(why),
            StoreError::Db(e) => ServiceError::Internal(e.into()),
        }
    }
}

impl From<FormatError> for ServiceError {
    fn from(e: FormatError) -> Self {
        ServiceError::Invalid(e.to_string())
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        ServiceError::Internal(e.into())
    }
}

impl From<crate::password::PasswordError> for ServiceError {
    fn from(e: crate::password::PasswordError) -> Self {
        use crate::password::PasswordError;
        match e {
            PasswordError::Hash(_) => ServiceError::Internal(anyhow::anyhow!("{e}")),
            PasswordError::Busy => ServiceError::TooMany(5),
            other => ServiceError::Invalid(other.to_string()),
        }
    }
}

impl From<tokio::task::JoinError> for ServiceError {
    fn from(e: tokio::task::JoinError) -> Self {
        ServiceError::Internal(anyhow::anyhow!("worker failed: {e}"))
    }
}
