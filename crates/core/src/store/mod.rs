//! The store: every SQL statement natstudy runs, as portable runtime queries over [`Db`].
//! Functions take plain values and return plain rows; they check no permissions.

pub mod analysis;
pub mod assign;
pub mod audit;
pub mod checks;
pub(crate) mod codec;
pub mod designs;
pub mod exclusions;
pub mod export;
pub mod export_results;
pub mod generation;
pub mod group_commit;
pub mod imports;
pub mod invites;
pub mod jobs;
pub mod members;
pub mod models;
pub mod monitor;
pub mod my_votes;
pub mod pilot;
pub mod resume_codes;
pub mod reviews;
pub mod sessions;
pub mod studies;
pub mod survey;
pub mod unit_answers;
pub mod unit_revisions;
pub mod units;
pub mod users;

#[cfg(test)]
pub(crate) use handle::temp_sqlite;
pub use handle::Db;

mod handle;
pub use codec::{AssignmentStatus, JobKind, JobState, OptReal, Outcome, Platform};

/// Errors the store reports in domain terms.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0} already exists")]
    Conflict(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl StoreError {
    /// Maps a unique-constraint violation to [`StoreError::Conflict`].
    pub fn conflict_on_unique(e: sqlx::Error, what: impl Into<String>) -> StoreError {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(what.into())
            }
            _ => StoreError::Db(e),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;
