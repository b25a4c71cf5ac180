//! A vote as the rating form sends it: the one wire type of a vote, taken whole by the
//! `annotate/vote` server function (its fields are the form's field names) and parsed once, by
//! the server's `domain::Vote::parse`.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A vote as the rating form sends it. Every field may be missing or malformed on the wire:
/// what cannot be read is `None` (or `false`, or empty) here, and the parse decides whether the
/// vote stands without it. The fields read text as well as numbers, because a form posts text
/// and the server function takes this struct flattened into its arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VoteForm {
    /// "Does the transformation reduce code readability?" (1–4).
    #[serde(deserialize_with = "lenient")]
    pub cr: Option<u8>,
    /// "Does the transformation break the coding conventions?" (1–4).
    #[serde(deserialize_with = "lenient")]
    pub cc: Option<u8>,
    pub comment: String,
    /// Seconds on the item as the page measured them.
    #[serde(deserialize_with = "lenient")]
    pub time_secs: Option<f64>,
    /// When the page showed the item (ms since the epoch).
    #[serde(deserialize_with = "lenient")]
    pub started_at: Option<i64>,
    /// Whether the participant opened the project context.
    #[serde(deserialize_with = "flag")]
    pub context_opened: bool,
    /// The submit token the page was given (a resent submit is one vote).
    pub token: String,
}

/// A value a form may send as text or a client as a number: `None` when it is missing, empty
/// or does not parse.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
{
    struct Lenient<T>(PhantomData<T>);
    impl<'de, T: FromStr> Visitor<'de> for Lenient<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number, a flag, or text holding one")
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Option<T>, E> {
            Ok(s.trim().parse().ok())
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Option<T>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Option<T>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Option<T>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Option<T>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Option<T>, D2::Error> {
            d.deserialize_any(self)
        }
    }
    d.deserialize_any(Lenient(PhantomData))
}

/// A flag a form sends as `true` (anything else, or nothing, is `false`).
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(lenient::<D, bool>(d)? == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_numbers_both_read() {
        let from_json: VoteForm = serde_json::from_str(
            r#"{"cr":3,"cc":"2","time_secs":"7.5","started_at":1800000000000,"context_opened":"true","token":"t"}"#,
        )
        .expect("json");
        assert_eq!(
            (from_json.cr, from_json.cc, from_json.time_secs),
            (Some(3), Some(2), Some(7.5))
        );
        assert_eq!(from_json.started_at, Some(1_800_000_000_000));
        assert!(from_json.context_opened);
    }

    #[test]
    fn what_cannot_be_read_is_missing_not_an_error() {
        let f: VoteForm =
            serde_json::from_str(r#"{"cr":"x","time_secs":"","context_opened":"yes"}"#)
                .expect("json");
        assert_eq!(f, VoteForm::default());
    }
}
