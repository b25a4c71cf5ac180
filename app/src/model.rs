//! Wire types shared by the server functions and the pages: `natstudy-types`, which the
//! services speak too (they do not depend on this crate).

pub use natstudy_types::*;
