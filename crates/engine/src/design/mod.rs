//! A study's design as data: its questions, each of a kind (`kinds`), read from a TOML design
//! file; the snippets it shows (`snippets`) and the responses it collects (`responses`), read
//! from JSON lines; and each question's analysis. Every reader checks everything before
//! anything is returned and names the file, line and key of each problem.
//!
//! A kind is the unit of this code: `kinds/<kind>.rs` holds its settings and their checks,
//! what an answer to it is, and its analysis.

pub mod attention;
pub mod context;
pub mod kinds;
pub mod record;
pub mod report;
pub mod responses;
pub mod snippets;
pub mod synthetic;
pub mod units;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::formats::{FormatError, Problems};
pub use kinds::{Kind, Unit};
pub use record::{Answer, Response, Shown, Snippet};

/// The published naturalness study's design (Table 1 of the paper): two 4-point questions.
pub const NATURALNESS: &str = include_str!("../../designs/naturalness.toml");

/// The names a design may be given by instead of a file (`--design naturalness`).
pub fn builtin(name: &str) -> Option<&'static str> {
    (name == "naturalness").then_some(NATURALNESS)
}

/// The longest design file read (a design is a few questions, not a dataset).
pub const MAX_DESIGN_BYTES: usize = 256 * 1024;
/// The most questions a design holds.
pub const MAX_QUESTIONS: usize = 64;

/// A study's design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The snippets' conditions; the first is the baseline the others are compared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<String>,
    /// How each participant's items are ordered: seeded and random, or a Latin square.
    #[serde(default)]
    pub item_order: ItemOrder,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemOrder {
    #[default]
    Random,
    LatinSquare,
}

/// One question of a design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// letters, digits, `_` and `-`; unique in the design
    pub id: String,
    pub prompt: String,
    #[serde(flatten)]
    pub kind: Kind,
}

impl Design {
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// What one item of this design shows: a snippet, a pair or a set (every question of a
    /// design asks about the same unit).
    pub fn unit(&self) -> Unit {
        self.questions
            .first()
            .map_or(Unit::Snippet, |q| q.kind.unit())
    }

    /// The design as TOML, in the form it is read in.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let quoted = |s: &str| toml::Value::String(s.to_owned()).to_string();
        out.push_str(&format!("title = {}\n", quoted(&self.title)));
        if !self.description.is_empty() {
            out.push_str(&format!("description = {}\n", quoted(&self.description)));
        }
        if !self.conditions.is_empty() {
            let list: Vec<String> = self.conditions.iter().map(|c| quoted(c)).collect();
            out.push_str(&format!("conditions = [{}]\n", list.join(", ")));
        }
        if self.item_order != ItemOrder::Random {
            out.push_str("item_order = \"latin-square\"\n");
        }
        for q in &self.questions {
            out.push_str("\n[[question]]\n");
            out.push_str(&format!("id = {}\n", quoted(&q.id)));
            out.push_str(&format!("kind = \"{}\"\n", q.kind.name()));
            out.push_str(&format!("prompt = {}\n", quoted(&q.prompt)));
            for (key, value) in q.kind.settings_toml() {
                out.push_str(&format!("{key} = {value}\n"));
            }
        }
        out
    }
}

/// A question as written, every key with its place in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuestion {
    pub id: Spanned<String>,
    pub kind: Spanned<String>,
    pub prompt: Spanned<String>,
    pub points: Option<Spanned<i64>>,
    pub labels: Option<Spanned<Vec<String>>>,
    pub options: Option<Spanned<Vec<String>>>,
    pub max_chars: Option<Spanned<i64>>,
    pub min: Option<Spanned<f64>>,
    pub max: Option<Spanned<f64>>,
    pub ties: Option<Spanned<bool>>,
    pub set_size: Option<Spanned<i64>>,
    pub per_snippet: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDesign {
    title: Spanned<String>,
    description: Option<String>,
    conditions: Option<Spanned<Vec<String>>>,
    item_order: Option<Spanned<String>>,
    #[serde(default)]
    question: Vec<Spanned<RawQuestion>>,
}

/// Where a problem is: the file and the line of a byte offset.
pub(crate) struct At<'a> {
    pub file: &'a str,
    text: &'a str,
}

impl At<'_> {
    pub fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    pub fn of<T>(&self, spanned: &Spanned<T>) -> usize {
        self.line(spanned.span().start)
    }
}

/// An identifier of a question, snippet or condition: letters, digits, `_` and `-`, 1 to 64.
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Reads a design file. Every problem is reported with the file's name, its line and key.
pub fn parse_design(file: &str, text: &str) -> Result<Design, FormatError> {
    let mut problems = Problems::default();
    if text.len() > MAX_DESIGN_BYTES {
        problems.push(
            file,
            0,
            "(file)",
            format!(
                "a design is at most {} KiB; this one is {} KiB",
                MAX_DESIGN_BYTES / 1024,
                text.len() / 1024
            ),
        );
        return problems.finish(empty());
    }
    let at = At { file, text };
    let raw: RawDesign = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            let line = e.span().map_or(0, |s| at.line(s.start));
            let message = e.message().to_owned();
            let key = message
                .split('`')
                .nth(1)
                .filter(|_| {
                    message.starts_with("unknown field") || message.starts_with("missing field")
                })
                .unwrap_or("(syntax)")
                .to_owned();
            problems.push(file, line, &key, message);
            return problems.finish(empty());
        }
    };
    let title = raw.title.get_ref().trim().to_owned();
    if title.is_empty() {
        problems.push(file, at.of(&raw.title), "title", "empty");
    }
    let mut conditions = Vec::new();
    if let Some(list) = &raw.conditions {
        let line = at.of(list);
        let mut seen = HashSet::new();
        for c in list.get_ref() {
            if !is_identifier(c) {
                problems.push(
                    file,
                    line,
                    "conditions",
                    format!("`{c}` is not a name (letters, digits, _ and -, at most 64)"),
                );
            } else if !seen.insert(c.as_str()) {
                problems.push(file, line, "conditions", format!("`{c}` is listed twice"));
            }
        }
        if list.get_ref().is_empty() {
            problems.push(file, line, "conditions", "empty: leave the key out instead");
        }
        conditions.clone_from(list.get_ref());
    }
    let item_order = match raw
        .item_order
        .as_ref()
        .map(|o| (o.get_ref().as_str(), at.of(o)))
    {
        None | Some(("random", _)) => ItemOrder::Random,
        Some(("latin-square", _)) => ItemOrder::LatinSquare,
        Some((other, line)) => {
            problems.push(
                file,
                line,
                "item_order",
                format!("`{other}` is not an order: random or latin-square"),
            );
            ItemOrder::Random
        }
    };
    if raw.question.is_empty() {
        problems.push(
            file,
            0,
            "question",
            "a design needs at least one [[question]]",
        );
    }
    if raw.question.len() > MAX_QUESTIONS {
        problems.push(
            file,
            0,
            "question",
            format!(
                "at most {MAX_QUESTIONS} questions; this design has {}",
                raw.question.len()
            ),
        );
    }
    let mut ids = HashSet::new();
    let mut questions = Vec::new();
    for q in &raw.question {
        let q = q.get_ref();
        let id = q.id.get_ref();
        if !is_identifier(id) {
            problems.push(
                file,
                at.of(&q.id),
                "id",
                format!("`{id}` is not an id (letters, digits, _ and -, at most 64)"),
            );
        } else if !ids.insert(id.clone()) {
            problems.push(file, at.of(&q.id), "id", format!("`{id}` is used twice"));
        }
        let prompt = q.prompt.get_ref().trim();
        if prompt.is_empty() {
            problems.push(file, at.of(&q.prompt), "prompt", "empty");
        }
        if let Some(kind) = Kind::parse(q, &at, &mut problems) {
            questions.push(Question {
                id: id.clone(),
                prompt: prompt.to_owned(),
                kind,
            });
        }
    }
    if let Some(first) = questions.first() {
        let unit = first.kind.unit();
        for (q, raw_q) in questions.iter().zip(&raw.question) {
            if q.kind.unit() != unit {
                problems.push(
                    file,
                    at.of(&raw_q.get_ref().kind),
                    "kind",
                    format!(
                        "a {} question asks about {}, but `{}` asks about {}: the questions of a \
                         design all ask about one snippet, a pair or a set",
                        q.kind.name(),
                        q.kind.unit().describe(),
                        first.id,
                        unit.describe()
                    ),
                );
            }
        }
    }
    let design = Design {
        title,
        description: raw.description.unwrap_or_default().trim().to_owned(),
        conditions,
        item_order,
        questions,
    };
    problems.finish(design)
}

fn empty() -> Design {
    Design {
        title: String::new(),
        description: String::new(),
        conditions: Vec::new(),
        item_order: ItemOrder::Random,
        questions: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
