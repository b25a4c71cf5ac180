//! The domain's own types, parsed once at the edge: a service turns what a client sent into
//! them (every rule of a field in one function), and the store records only what was parsed.

pub mod score;
pub mod shown;
pub mod vote;

pub use vote::{InvalidVote, Vote};
