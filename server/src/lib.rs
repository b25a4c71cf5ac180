//! natstudy: the server, the command line and the domain.
//!
//! - `engine`, `formats`, `generate`: the pure engines of the `natstudy-engine` crate (plain data
//!   in, plain data out; no axum, sqlx, leptos or tokio), re-exported under their old paths.
//! - `db`, `store`: the database and every query.
//! - `web`: the HTTP server around the `app` crate's pages.
//! - `cli`: the `natstudy` command.

pub mod cli;
pub mod db;
pub mod demo;
pub mod domain;
pub use natstudy_engine::{formats, generate};
pub use natstudy_vocab::ids;
/// The pure engines (the `natstudy-engine` crate, with the statistics, n-gram and
/// transformation crates it re-exports).
pub mod engine {
    pub use natstudy_engine::{
        analysis, assignment, bugs, diff, lm, plots, review, stats, transform, verify, NgramNames,
    };
}
pub mod password;
pub mod present;
pub mod priority;
pub mod service;
pub mod store;
pub mod survey_client;
pub mod web;
