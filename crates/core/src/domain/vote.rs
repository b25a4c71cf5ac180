//! A vote: the two answers, the comment, the time on item, when the item was shown, whether the
//! context was opened, and the submit token that makes a resent submit one vote. Every check of
//! a vote lives in [`Vote::parse`]; the store takes only a parsed `Vote`, and writes the columns
//! [`COLUMNS`] lists.
//!
//! Adding a column to the votes table (ARCHITECTURE.md's recipe): the migrations (SQLite and
//! PostgreSQL), the form's field (`natstudy_types::VoteForm`), the field here with its rule in
//! `parse` and its entry in [`COLUMNS`], and the input on the rating page. The store's inserts,
//! the revision's upsert and the long export read [`COLUMNS`].

/// A vote as the rating form sends it (the wire type this module parses).
pub use natstudy_types::VoteForm;

/// The longest comment kept with a vote, in characters.
pub const MAX_COMMENT: usize = 4000;
/// A submit token is what the rating page is given: 32 lowercase hex digits.
pub const TOKEN_LEN: usize = 32;
/// The longest time on item taken as measured (a day); beyond, or negative, it is unmeasured.
pub const MAX_TIME_SECS: f64 = natstudy_engine::formats::survey::MAX_TIME_SECS;

/// Why a vote is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidVote {
    #[error("please answer both questions")]
    Unanswered,
    #[error("{question}: answer on the 1–4 scale, not {value}")]
    Answer { question: &'static str, value: u8 },
    #[error("token: must be the {TOKEN_LEN} hex digits the page was given")]
    Token,
    #[error("comment: at most {MAX_COMMENT} characters")]
    Comment,
}

/// A vote every check has passed (only [`Vote::parse`] makes one).
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    cr: u8,
    cc: u8,
    comment: String,
    time_secs: Option<f64>,
    started_at: Option<i64>,
    context_opened: bool,
    token: String,
}

/// A value of one of a vote's columns, as the store binds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    OptInt(Option<i64>),
    OptReal(Option<f64>),
    Text(&'a str),
}

/// One column of `votes` (and of each row of `vote_revisions`) that a vote fills.
pub struct Column {
    /// The column's name in both tables (and its header in the long export).
    pub name: &'static str,
    pub value: for<'a> fn(&'a Vote) -> Value<'a>,
}

/// The columns a vote fills, in the order the store binds them: the one list that the
/// store's inserts, the revision's upsert and the long export read (the store adds the
/// row's own: item, annotator, revision, submission time, side, submit token).
pub const COLUMNS: &[Column] = &[
    Column {
        name: "cr",
        value: |v| Value::Int(v.cr.into()),
    },
    Column {
        name: "cc",
        value: |v| Value::Int(v.cc.into()),
    },
    Column {
        name: "time_secs",
        value: |v| Value::OptReal(v.time_secs),
    },
    Column {
        name: "started_at",
        value: |v| Value::OptInt(v.started_at),
    },
    Column {
        name: "context_opened",
        value: |v| Value::Int(v.context_opened.into()),
    },
    Column {
        name: "comment",
        value: |v| Value::Text(&v.comment),
    },
];

/// A time on item the browser sent, if it is a measurement: zero or a normal number up to a
/// day (`formats::survey::is_time_on_item`); anything else (NaN, infinite, negative, longer,
/// subnormal such as `1e-320`) is stored as unmeasured.
fn measured(t: Option<f64>) -> Option<f64> {
    t.filter(|t| natstudy_engine::formats::survey::is_time_on_item(*t))
}

/// Whether a start time the browser sent (ms since the epoch) can be when the item was shown:
/// not in the future (a minute's clock skew allowed) and not more than a day before `now`.
fn plausible_start(started_at_ms: i64, now_ms: i64) -> bool {
    const DAY_MS: i64 = 86_400_000;
    started_at_ms <= now_ms.saturating_add(60_000) && started_at_ms >= now_ms.saturating_sub(DAY_MS)
}

/// An answer on the 1–4 scale.
fn answer(question: &'static str, value: u8) -> Result<u8, InvalidVote> {
    match value {
        1..=4 => Ok(value),
        _ => Err(InvalidVote::Answer { question, value }),
    }
}

impl Vote {
    /// Every rule of a vote, at `now_ms`: both questions answered, on the 1–4 scale; the
    /// submit token the page was given (32 lowercase hex digits); a comment of at most
    /// [`MAX_COMMENT`] characters. A time on item outside 0 s–24 h and a start time that cannot
    /// be when the item was shown are kept as unknown, not refused (the answer itself is good).
    pub fn parse(form: VoteForm, now_ms: i64) -> Result<Vote, InvalidVote> {
        let (Some(cr), Some(cc)) = (form.cr, form.cc) else {
            return Err(InvalidVote::Unanswered);
        };
        let cr = answer("readability", cr)?;
        let cc = answer("conventions", cc)?;
        let token_ok = form.token.len() == TOKEN_LEN
            && form
                .token
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !token_ok {
            return Err(InvalidVote::Token);
        }
        if form.comment.chars().count() > MAX_COMMENT {
            return Err(InvalidVote::Comment);
        }
        Ok(Vote {
            cr,
            cc,
            comment: form.comment,
            time_secs: measured(form.time_secs),
            started_at: form.started_at.filter(|t| plausible_start(*t, now_ms)),
            context_opened: form.context_opened,
            token: form.token,
        })
    }

    /// Readability's answer (1–4).
    pub fn cr(&self) -> u8 {
        self.cr
    }
    /// Conventions' answer (1–4).
    pub fn cc(&self) -> u8 {
        self.cc
    }
    pub fn comment(&self) -> &str {
        &self.comment
    }
    /// Seconds on the item, when measured.
    pub fn time_secs(&self) -> Option<f64> {
        self.time_secs
    }
    /// When the item was shown (ms since the epoch), when known.
    pub fn started_at(&self) -> Option<i64> {
        self.started_at
    }
    pub fn context_opened(&self) -> bool {
        self.context_opened
    }
    pub fn token(&self) -> &str {
        &self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn form() -> VoteForm {
        VoteForm {
            cr: Some(2),
            cc: Some(3),
            comment: "fine".into(),
            time_secs: Some(12.5),
            started_at: Some(NOW - 12_500),
            context_opened: true,
            token: "0123456789abcdef0123456789abcdef".into(),
        }
    }

    #[test]
    fn a_good_vote_is_kept_as_sent() {
        let v = Vote::parse(form(), NOW).expect("good");
        assert_eq!((v.cr(), v.cc(), v.comment()), (2, 3, "fine"));
        assert_eq!(
            (v.time_secs(), v.started_at()),
            (Some(12.5), Some(NOW - 12_500))
        );
        assert!(v.context_opened());
    }

    #[test]
    fn answers_are_on_the_four_point_scale() {
        for (cr, cc, question, value) in [(0, 2, "readability", 0), (2, 5, "conventions", 5)] {
            let f = VoteForm {
                cr: Some(cr),
                cc: Some(cc),
                ..form()
            };
            assert_eq!(
                Vote::parse(f, NOW),
                Err(InvalidVote::Answer { question, value })
            );
        }
    }

    #[test]
    fn both_questions_are_answered() {
        for (cr, cc) in [(None, Some(2)), (Some(2), None), (None, None)] {
            let f = VoteForm { cr, cc, ..form() };
            assert_eq!(Vote::parse(f, NOW), Err(InvalidVote::Unanswered));
        }
    }

    #[test]
    fn every_column_is_the_votes_own_value() {
        let v = Vote::parse(form(), NOW).expect("good");
        let values: Vec<_> = COLUMNS.iter().map(|c| (c.name, (c.value)(&v))).collect();
        assert_eq!(
            values,
            [
                ("cr", Value::Int(2)),
                ("cc", Value::Int(3)),
                ("time_secs", Value::OptReal(Some(12.5))),
                ("started_at", Value::OptInt(Some(NOW - 12_500))),
                ("context_opened", Value::Int(1)),
                ("comment", Value::Text("fine")),
            ]
        );
    }

    #[test]
    fn the_token_is_the_one_the_page_was_given() {
        for token in [
            "",
            "tok",
            "0123456789ABCDEF0123456789ABCDEF",
            &"a".repeat(33),
        ] {
            let f = VoteForm {
                token: token.into(),
                ..form()
            };
            assert_eq!(Vote::parse(f, NOW), Err(InvalidVote::Token), "{token:?}");
        }
    }

    #[test]
    fn a_comment_has_at_most_four_thousand_characters() {
        let f = VoteForm {
            comment: "é".repeat(MAX_COMMENT),
            ..form()
        };
        assert!(Vote::parse(f, NOW).is_ok(), "characters, not bytes");
        let f = VoteForm {
            comment: "x".repeat(MAX_COMMENT + 1),
            ..form()
        };
        assert_eq!(Vote::parse(f, NOW), Err(InvalidVote::Comment));
    }

    #[test]
    fn a_time_outside_a_day_is_unmeasured() {
        for t in [
            -1.0,
            MAX_TIME_SECS + 1.0,
            f64::NAN,
            f64::INFINITY,
            1.797e308,
            1e-320,
            5e-324,
            -0.0 - 1e-310,
            f64::MIN_POSITIVE / 2.0,
            2e-308,
        ] {
            let f = VoteForm {
                time_secs: Some(t),
                ..form()
            };
            assert_eq!(Vote::parse(f, NOW).expect("kept").time_secs(), None, "{t}");
        }
        let f = VoteForm {
            time_secs: Some(0.0),
            ..form()
        };
        assert_eq!(Vote::parse(f, NOW).expect("kept").time_secs(), Some(0.0));
        for t in [f64::MIN_POSITIVE, 1e-300, 0.001, 12.5, MAX_TIME_SECS] {
            let f = VoteForm {
                time_secs: Some(t),
                ..form()
            };
            assert_eq!(
                Vote::parse(f, NOW).expect("kept").time_secs(),
                Some(t),
                "{t}"
            );
        }
    }

    #[test]
    fn a_start_in_the_future_or_days_ago_is_unknown() {
        for s in [NOW + 120_000, NOW - 2 * 86_400_000, i64::MIN, i64::MAX] {
            let f = VoteForm {
                started_at: Some(s),
                ..form()
            };
            assert_eq!(Vote::parse(f, NOW).expect("kept").started_at(), None, "{s}");
        }
        let f = VoteForm {
            started_at: Some(NOW + 30_000),
            ..form()
        };
        assert_eq!(
            Vote::parse(f, NOW).expect("kept").started_at(),
            Some(NOW + 30_000),
            "skew"
        );
    }
}
