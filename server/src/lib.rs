//! natstudy: the web adapter and the command line around `natstudy-core`.
//!
//! - `web`: the HTTP server around the `app` crate's pages; its server functions reach the
//!   domain through core's services.
//! - `cli`: the `natstudy` command, each subcommand a service call.
//! - `survey_client`: a participant over HTTP, for the load benchmark.
//!
//! The data is reached only through `natstudy_core::service`: core's store is private, so the
//! compiler holds that rule (`cargo build -p natstudy`).

pub mod cli;
pub mod survey_client;
pub mod transport;
pub mod web;
