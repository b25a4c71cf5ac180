//! Pure engines: plain data in, plain data out. Nothing here touches the web, the database or
//! the UI, so each engine is tested alone and reused by the CLI and the server.

//!
//! Invariant, held by this crate's `Cargo.toml`: no axum, sqlx, leptos or tokio.

pub mod analysis;
pub mod assignment;
pub mod bugs;
pub mod diff;
pub mod formats;
pub mod generate;
pub mod lm;
pub mod plots;
pub mod review;
pub mod stats;
pub mod transform;
pub mod verify;

pub use natstudy_vocab as vocab;
