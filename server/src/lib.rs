//! natstudy: the server, the command line and the domain.
//!
//! - `formats`, `engine`: pure modules (plain data in, plain data out; no axum, sqlx or leptos).
//! - `db`, `store`: the database and every query.
//! - `web`: the HTTP server around the `app` crate's pages.
//! - `cli`: the `natstudy` command.

pub mod cli;
pub mod db;
pub mod demo;
pub mod engine;
pub mod formats;
pub mod generate;
pub mod password;
pub mod report_view;
pub mod service;
pub mod store;
pub mod web;
