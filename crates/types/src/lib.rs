//! Wire types shared by the services, the server functions and the pages. Plain data, no
//! behaviour that needs a database: these cross the network as JSON.
//!
//! The services build these and the pages show them; neither side owns them, so the services
//! need not depend on the UI crate (an architecture test holds it).

#[cfg(feature = "backend")]
pub mod backend;
pub mod cookie;
mod entry;
mod vote_form;
pub mod words;

mod accounts;
mod diff;
mod review;
mod studies;
mod survey;
mod unit;
mod work;

pub use accounts::*;
pub use diff::*;
pub use entry::Entry;
pub use review::*;
pub use studies::*;
pub use survey::*;
pub use unit::*;
pub use vote_form::VoteForm;
pub use work::*;

pub use natstudy_vocab::ids::{
    AnnotatorId, BatchId, InviteId, ItemId, JobId, ReviewTaskId, StudyId, UserId,
};
pub use natstudy_vocab::Role;
