//! Typed row ids. Each kind of record has its own id type, so a study id cannot be passed where
//! an item id is expected. On the wire they are plain numbers (`serde(transparent)`); with the
//! `sqlx` feature (the server's) they bind and decode as the database's `BIGINT`.

use std::fmt;
use std::str::FromStr;

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        pub struct $name(pub i64);

        impl $name {
            /// The number as stored.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map($name)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }
    )*};
}

ids! {
    /// A study.
    StudyId;
    /// An item: one original/transformed pair of a study.
    ItemId;
    /// An annotator of a study: an account's record there or an invited participant.
    AnnotatorId;
    /// An account.
    UserId;
    /// An annotation batch.
    BatchId;
    /// A background job.
    JobId;
    /// An invite link of a study.
    InviteId;
    /// A patch review task: one plausible patch for its reviewers.
    ReviewTaskId;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_numbers_on_the_wire_and_in_text() {
        let id = StudyId(42);
        assert_eq!(serde_json::to_string(&id).expect("json"), "42");
        assert_eq!(serde_json::from_str::<StudyId>("42").expect("json"), id);
        assert_eq!(id.to_string(), "42");
        assert_eq!("42".parse::<StudyId>().expect("number"), id);
        assert!("x".parse::<ItemId>().is_err());
    }
}
