//! One unit of a designed study as the participant's page shows it: the snippets (one, a pair
//! or a set, labelled A, B, … in the order shown) and the design's questions about them.

use serde::{Deserialize, Serialize};

use crate::DiffLine;

/// A snippet as shown: its label, its lines (a diff against its original where it has one,
/// else its code alone), and whether its language is highlighted (Java) or shown plain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnippetView {
    /// `A`, `B`, … in the order shown.
    pub label: String,
    pub language: String,
    /// Java is highlighted; any other language is shown as plain text.
    pub highlighted: bool,
    /// The rows shown: a diff (original and changed) when `is_diff`, else the code's own lines.
    pub rows: Vec<DiffLine>,
    pub is_diff: bool,
    /// What the study says around the snippet (plain text).
    pub context: Option<String>,
}

/// A question as the page asks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionView {
    /// The form field's name (letters, digits, `_` and `-`).
    pub id: String,
    pub prompt: String,
    pub ask: Ask,
}

/// How a question is answered on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Ask {
    /// Points 1..=`points`, each with its label where it has one.
    Scale { labels: Vec<Option<String>> },
    /// One option (the field's value is the option's text).
    Choice { options: Vec<String> },
    /// Any of the options (field `id.N` for option N, from 1).
    Multi { options: Vec<String> },
    /// Free text of at most `max_chars`.
    Text { max_chars: u32 },
    /// A number, within the bounds given.
    Number { min: Option<f64>, max: Option<f64> },
    /// A or B (`A`, `B`, or `tie` where ties are allowed).
    Pair { ties: bool },
    /// The best and the worst of the set, by label (fields `id.best` and `id.worst`).
    BestWorst,
}

/// The unit to answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitView {
    /// The participant's claim on the unit (what the answer names).
    pub claim: i64,
    pub snippets: Vec<SnippetView>,
    pub questions: Vec<QuestionView>,
    /// The submit token (a resent submit is one answer).
    pub token: String,
    /// What the unit is, in words ("this snippet", "these two snippets", "these four snippets").
    pub heading: String,
    /// The answers given before, when the unit is shown again to be revised: each field's
    /// name (as [`Ask`] names them, without `answers[…]`) and value.
    #[serde(default)]
    pub given: Vec<(String, String)>,
    /// Shown again to revise the answers given (the form replaces them).
    #[serde(default)]
    pub revising: bool,
}

/// A unit the participant answered, in the list they may revise from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnsweredUnit {
    /// The participant's claim on the unit (what a revision names).
    pub claim: i64,
    /// What was shown, in words ("S1", "S2 and S1", "S3, S1, S4, S2").
    pub shown: String,
    /// The answers, in words ("readable: 4; style: Sun").
    pub answers: String,
}

/// What the survey page is asked to show again for a revision: a rated item of the
/// naturalness study, or an answered unit (its claim) of a designed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Revise {
    Item(crate::ItemId),
    Unit(i64),
}

/// An answer as the page's form sends it: the unit's claim, the submit token, the time the page
/// measured and the fields by name (see [`Ask`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerForm {
    pub claim: i64,
    pub token: String,
    pub time_secs: Option<f64>,
    pub fields: Vec<(String, String)>,
    /// Replaces the answers given before to this unit (a revision before the finish).
    #[serde(default)]
    pub revise: bool,
}
