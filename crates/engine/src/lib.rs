//! Pure engines: plain data in, plain data out. Nothing here touches the web, the database or
//! the UI, so each engine is tested alone and reused by the CLI and the server. The statistics,
//! the n-gram model and the transformations are crates of their own (re-exported here as
//! `stats`, `lm` and `transform`), so that a change to one does not rebuild the others.
//!
//! Invariant, held by this crate's `Cargo.toml`: no axum, sqlx, leptos or tokio.

pub mod analysis;
pub mod assignment;
pub mod bugs;
pub mod design;
pub mod diff;
pub mod formats;
pub mod generate;
pub mod ngram_names;
pub mod plots;
pub mod review;
pub mod verify;

pub use natstudy_lm as lm;
pub use natstudy_stats as stats;
pub use natstudy_transform as transform;
pub use natstudy_vocab as vocab;

pub use ngram_names::NgramNames;
