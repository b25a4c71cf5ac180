//! Use cases shared by the command line and the web, by area: accounts, studies, batches,
//! participation (and the survey's view, `annotate`), imports, generation, scoring, reports,
//! background jobs. The only place use cases and their rules live; every one returns a
//! [`ServiceError`] (see `error.rs`), which the web maps to HTTP in one place.

pub mod access;
pub mod accounts;
pub mod annotate;
pub mod answering;
pub mod batches;
pub mod bug_import;
pub mod designed_step;
pub mod designs;
pub mod devices;
pub mod error;
pub mod exclusions;
pub mod exports;
pub mod file_window;
pub mod generation;
pub mod imports;
pub mod invites;
pub mod jobs;
pub mod lease_hold;
pub mod members;
pub mod memo;
pub mod models;
pub mod monitor;
pub mod neural;
pub mod outcome;
pub mod paper;
pub mod participants;
pub mod participation;
pub mod pilot;
pub mod reports;
pub mod reviews;
pub mod revising;
pub mod scoring;
pub mod screener;
pub mod sessions;
pub mod studies;
pub mod survey_cache;
pub mod throttle;
pub mod unit_page;
pub mod urls;
pub mod verification;
pub mod waiting;

/// The handle on the data every service takes (the store's: the database and its group commit).
pub use crate::store::Db;
pub use error::{ServiceError, ServiceResult};
