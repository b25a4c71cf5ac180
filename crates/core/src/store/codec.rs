//! How the store's values are written in SQL. Enums: each is a `TEXT` column with a fixed set
//! of words (the migrations' `CHECK` lists), and [`text_enum!`] is the one place an enum's words
//! are spelled. Queries bind the enum (`.bind(AssignmentStatus::Done)`) and decode it from rows;
//! no query spells a status word itself. Nullable reals: bound as [`OptReal`], never as a bare
//! `Option<f64>` (see there).

/// Declares an enum stored as text: `as_str`, `parse`, `Display`, and sqlx `Type`, `Encode`
/// and `Decode` for `Any` (SQLite and PostgreSQL alike). A word that is not one of the enum's
/// is a decode error, never a panic.
macro_rules! text_enum {
    ($(#[$doc:meta])* pub enum $name:ident { $($(#[$vdoc:meta])* $variant:ident = $word:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The word stored in the database.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)*
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($word => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <&str as sqlx::Type<sqlx::Any>>::type_info()
            }
        }

        impl<'q> sqlx::Encode<'q, sqlx::Any> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&self.as_str(), buf)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(
                value: <sqlx::Any as sqlx::Database>::ValueRef<'r>,
            ) -> Result<Self, sqlx::error::BoxDynError> {
                let word = <&str as sqlx::Decode<'r, sqlx::Any>>::decode(value)?;
                $name::parse(word).ok_or_else(|| {
                    format!(concat!("not a ", stringify!($name), ": {:?}"), word).into()
                })
            }
        }
    };
}

pub(crate) use text_enum;

text_enum! {
    /// Where an assignment (an annotator's claim on an item) stands.
    pub enum AssignmentStatus {
        /// Planned for the annotator (fixed groups, or moved from another annotator).
        Assigned = "assigned",
        /// Handed out by the dynamic queue until `lease_expires_at`.
        Leased = "leased",
        /// Rated.
        Done = "done",
        /// Given back: released by an admin, moved, expired or no longer needed.
        Released = "released",
    }
}

text_enum! {
    /// A background job's state.
    pub enum JobState {
        Queued = "queued",
        Running = "running",
        Done = "done",
        Failed = "failed",
        /// Stopped on request: it stored nothing.
        Stopped = "stopped",
    }
}

text_enum! {
    /// What a background job does (only these can be run again).
    pub enum JobKind {
        /// Scores the study's methods with a language model.
        Score = "score",
        /// Compiles (and tests) every item of the study.
        Verify = "verify",
    }
}

text_enum! {
    /// How a participant's work ended (`annotators.outcome`), which says what they are paid.
    pub enum Outcome {
        /// Did the work asked (N ratings, or every item they could ever be given): the
        /// completion code.
        Completed = "completed",
        /// Waited for items held by others longer than the study asks, then stopped: the
        /// partial code.
        Partial = "partial",
        /// Stopped before the work asked, or rated fewer items than the code needs: no code.
        Returned = "returned",
        /// Turned away by the screener: the screen-out code.
        ScreenedOut = "screened_out",
    }
}

text_enum! {
    /// The crowd platform that sent a participant (`annotators.platform`), which names the
    /// ids they came with.
    pub enum Platform {
        /// `PROLIFIC_PID`, `STUDY_ID`, `SESSION_ID`.
        Prolific = "prolific",
        /// `workerId`, `hitId`, `assignmentId`.
        Mturk = "mturk",
        /// SONA's `id`.
        Sona = "sona",
        /// A generic `pid`.
        Generic = "generic",
    }
}

/// A nullable `DOUBLE PRECISION` value as a statement binds it (a vote's time on item).
///
/// Bind this, never a bare `Option<f64>`: sqlx 0.8's `Any` driver sends a `None::<f64>` to
/// PostgreSQL as a `float4` NULL (its `AnyArguments::convert_to` swaps the NULLs of `f32` and
/// `f64`; upstream sqlx issue 4284). PostgreSQL prepares a statement once per connection, with
/// the parameter types of its first execution, so after one unmeasured vote every measured vote
/// on that connection sent 8 bytes for a 4-byte parameter and was refused ("incorrect binary
/// data format in bind parameter 12"). `OptReal` sends its NULL as the `float8` a value is, on
/// either store (SQLite types its NULLs not at all). `the_null_real_is_sent_as_its_value_is`
/// fails when sqlx changes the mapping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptReal(pub Option<f64>);

/// The Rust type whose NULL sqlx's `Any` driver sends to PostgreSQL as `float8` (`f32`'s:
/// swapped with `f64`'s).
type Float8Null = f32;

impl sqlx::Type<sqlx::Any> for OptReal {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <f64 as sqlx::Type<sqlx::Any>>::type_info()
    }
}

impl<'q> sqlx::Encode<'q, sqlx::Any> for OptReal {
    fn encode_by_ref(
        &self,
        buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        match self.0 {
            Some(v) => <f64 as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&v, buf),
            None => <Option<Float8Null> as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&None, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PostgreSQL parameter types a binding of `values` is sent with (from the converted
    /// arguments' `Debug`: sqlx keeps them crate-private).
    fn pg_types(bind: impl FnOnce(&mut sqlx::any::AnyArguments<'static>)) -> String {
        let mut args = sqlx::any::AnyArguments::default();
        bind(&mut args);
        let pg: sqlx::postgres::PgArguments = args.convert_to().expect("convert");
        let debug = format!("{pg:?}");
        let from = debug.find("types: ").expect("types") + "types: ".len();
        let to = debug[from..].find("], ").expect("end of types") + from + 1;
        debug[from..to].to_owned()
    }

    /// A vote's time on item goes to PostgreSQL as one type whether it was measured or not, so
    /// one prepared statement takes both; a bare `Option<f64>` does not (sqlx's swapped NULLs:
    /// when this half fails, sqlx was mended and [`Float8Null`] must become `f64`).
    #[test]
    fn the_null_real_is_sent_as_its_value_is() {
        use sqlx::Arguments;
        let value = pg_types(|a| a.add(OptReal(Some(2.5))).expect("bind"));
        let null = pg_types(|a| a.add(OptReal(None)).expect("bind"));
        assert_eq!(null, value);
        assert!(value.to_lowercase().contains("float8"), "{value}");
        let bare = pg_types(|a| a.add(None::<f64>).expect("bind"));
        assert_ne!(bare, value, "sqlx sends a bare None::<f64> as {bare}");
    }

    /// Every word an enum spells is one the schema's CHECK list allows, in both dialects.
    #[test]
    fn words_match_the_schema() {
        for dialect in ["sqlite", "postgres"] {
            let schema = std::fs::read_to_string(format!(
                "{}/../../migrations/{dialect}/0001_schema.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("schema");
            let check = schema
                .lines()
                .find(|l| l.contains("status IN ('assigned'"))
                .expect("assignments.status CHECK");
            for s in AssignmentStatus::ALL {
                assert!(check.contains(&format!("'{s}'")), "{dialect}: {s}");
                assert_eq!(AssignmentStatus::parse(s.as_str()), Some(*s));
            }
            assert_eq!(check.matches('\'').count() / 2, AssignmentStatus::ALL.len());
        }
        assert_eq!(AssignmentStatus::parse("lost"), None);
        for dialect in ["sqlite", "postgres"] {
            let schema = std::fs::read_to_string(format!(
                "{}/../../migrations/{dialect}/0027_crowd_work.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("0027");
            let check = schema
                .lines()
                .find(|l| l.contains("outcome IN ("))
                .expect("annotators.outcome CHECK");
            for o in Outcome::ALL {
                assert!(check.contains(&format!("'{o}'")), "{dialect}: {o}");
                assert_eq!(Outcome::parse(o.as_str()), Some(*o));
            }
            assert_eq!(check.matches('\'').count() / 2, Outcome::ALL.len());
            let schema = std::fs::read_to_string(format!(
                "{}/../../migrations/{dialect}/0028_crowd_identity.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("0028");
            let check = schema
                .lines()
                .find(|l| l.contains("platform IN ("))
                .expect("annotators.platform CHECK");
            for p in Platform::ALL {
                assert!(check.contains(&format!("'{p}'")), "{dialect}: {p}");
            }
            assert_eq!(check.matches('\'').count() / 2, Platform::ALL.len());
        }
        for s in JobState::ALL {
            assert_eq!(JobState::parse(s.as_str()), Some(*s));
        }
        for k in JobKind::ALL {
            assert_eq!(JobKind::parse(k.as_str()), Some(*k));
        }
    }
}
