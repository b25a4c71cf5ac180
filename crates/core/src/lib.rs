//! natstudy's core: the domain, the database, the store and the services.
//!
//! The store is private: the web adapter and the command line (the `natstudy` crate) reach the
//! data only through [`service`], so the rules a service holds hold on every path. The
//! integration tests reach the store through the `testing` feature, nothing else does.
//!
//! - `db`: the connection pool, the dialect and the migrations; `store`: every query.
//! - `domain`: the rules of a vote, independent of storage.
//! - `service`: the use cases, one function each, returning [`service::ServiceError`].
//! - `present`: the mapping of store rows and engine results to wire types, text and LaTeX.
//! - `api`: [`api::Core`], the implementation of the pages' use cases
//!   (`natstudy_types::backend`): each method a service call, or the use case itself where only
//!   the pages need it.

pub mod api;
pub mod bench;
pub mod db;
pub mod demo;
pub mod domain;
pub mod password;
pub mod present;
pub mod priority;
pub mod service;
#[cfg(feature = "testing")]
pub mod store;
// without `testing`, what only the integration tests call is unused here
#[cfg(not(feature = "testing"))]
#[allow(dead_code)]
pub(crate) mod store;
