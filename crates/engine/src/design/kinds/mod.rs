//! The kinds of question. Each kind's module holds its settings and their checks, what an
//! answer to it is, and its analysis; this module only dispatches.
//!
//! A new kind: a module here with `parse` (settings from a `RawQuestion`), `answer` (a JSON
//! answer checked against the settings) and `analyse` (its report entry), a variant of [`Kind`]
//! and one arm in each `match` below.

pub mod answer;
pub mod best_worst;
pub mod form;
pub mod likert;
pub mod number;
pub mod options;
pub mod pairwise;
pub mod text;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::record::Answer;
use super::{At, RawQuestion};
use crate::formats::Problems;

/// A question's kind with its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    Likert(likert::Likert),
    Choice(options::Options),
    Multi(options::Options),
    Text(text::Text),
    Number(number::Number),
    Pairwise(pairwise::Pairwise),
    BestWorst(best_worst::BestWorst),
    Answer(answer::Comprehension),
}

/// What one item shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    Snippet,
    Pair,
    Set,
}

impl Unit {
    pub fn describe(self) -> &'static str {
        match self {
            Unit::Snippet => "one snippet",
            Unit::Pair => "a pair of snippets",
            Unit::Set => "a set of snippets",
        }
    }
}

impl Kind {
    pub const NAMES: [&'static str; 8] = [
        "likert",
        "choice",
        "multi",
        "text",
        "number",
        "pairwise",
        "best-worst",
        "answer",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Kind::Likert(_) => "likert",
            Kind::Choice(_) => "choice",
            Kind::Multi(_) => "multi",
            Kind::Text(_) => "text",
            Kind::Number(_) => "number",
            Kind::Pairwise(_) => "pairwise",
            Kind::BestWorst(_) => "best-worst",
            Kind::Answer(_) => "answer",
        }
    }

    pub fn unit(&self) -> Unit {
        match self {
            Kind::Pairwise(_) => Unit::Pair,
            Kind::BestWorst(_) => Unit::Set,
            _ => Unit::Snippet,
        }
    }

    /// The kind and settings of a question as written; `None` after reporting its problems.
    pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Kind> {
        let name = q.kind.get_ref().as_str();
        let line = at.of(&q.kind);
        let given = given_keys(q, at);
        let reads: &[&str] = match name {
            "likert" => &["points", "labels"],
            "choice" | "multi" => &["options"],
            "text" => &["max_chars"],
            "number" => &["min", "max"],
            "pairwise" => &["ties", "per_snippet"],
            "best-worst" => &["set_size", "per_snippet"],
            "answer" => &[],
            other => {
                problems.push(
                    at.file,
                    line,
                    "kind",
                    format!("`{other}` is not a kind: {}", Kind::NAMES.join(", ")),
                );
                return None;
            }
        };
        let before = problems.is_empty();
        for (key, key_line) in given {
            if !reads.contains(&key) {
                problems.push(
                    at.file,
                    key_line,
                    key,
                    format!("a {name} question has no `{key}`"),
                );
            }
        }
        let kind = match name {
            "likert" => likert::parse(q, at, problems).map(Kind::Likert),
            "choice" => options::parse(q, at, problems).map(Kind::Choice),
            "multi" => options::parse(q, at, problems).map(Kind::Multi),
            "text" => text::parse(q, at, problems).map(Kind::Text),
            "number" => number::parse(q, at, problems).map(Kind::Number),
            "pairwise" => pairwise::parse(q, at, problems).map(Kind::Pairwise),
            "best-worst" => best_worst::parse(q, at, problems).map(Kind::BestWorst),
            _ => Some(Kind::Answer(answer::Comprehension {})),
        };
        kind.filter(|_| !before || problems.is_empty())
    }

    /// The scale in words and its labels, as a codebook lists them.
    pub fn scale_words(&self) -> (String, String) {
        match self {
            Kind::Likert(l) => (format!("1-{}", l.points), l.labels.join(" | ")),
            Kind::Choice(o) | Kind::Multi(o) => (o.options.join(" | "), String::new()),
            Kind::Number(n) => (
                format!(
                    "{} to {}",
                    n.min.map_or("-inf".into(), |m| m.to_string()),
                    n.max.map_or("inf".into(), |m| m.to_string())
                ),
                String::new(),
            ),
            Kind::Text(t) => (format!("at most {} characters", t.max_chars), String::new()),
            Kind::Pairwise(p) => (
                if p.ties { "a, b or tie" } else { "a or b" }.to_owned(),
                String::new(),
            ),
            Kind::BestWorst(b) => (format!("best and worst of {}", b.set_size), String::new()),
            Kind::Answer(_) => (
                "right or wrong (each snippet's key)".to_owned(),
                String::new(),
            ),
        }
    }

    /// The settings as TOML `key = value` lines, as a design file writes them.
    pub fn settings_toml(&self) -> Vec<(&'static str, String)> {
        let list = |xs: &[String]| {
            toml::Value::Array(xs.iter().map(|x| toml::Value::String(x.clone())).collect())
                .to_string()
        };
        match self {
            Kind::Likert(l) => {
                let mut out = vec![("points", l.points.to_string())];
                if !l.labels.is_empty() {
                    out.push(("labels", list(&l.labels)));
                }
                out
            }
            Kind::Choice(o) | Kind::Multi(o) => vec![("options", list(&o.options))],
            Kind::Text(t) => vec![("max_chars", t.max_chars.to_string())],
            Kind::Number(n) => {
                let mut out = Vec::new();
                if let Some(min) = n.min {
                    out.push(("min", toml::Value::Float(min).to_string()));
                }
                if let Some(max) = n.max {
                    out.push(("max", toml::Value::Float(max).to_string()));
                }
                out
            }
            Kind::Pairwise(p) => {
                let mut out = vec![("ties", p.ties.to_string())];
                out.extend(p.per_snippet.map(|n| ("per_snippet", n.to_string())));
                out
            }
            Kind::BestWorst(b) => {
                let mut out = vec![("set_size", b.set_size.to_string())];
                out.extend(b.per_snippet.map(|n| ("per_snippet", n.to_string())));
                out
            }
            Kind::Answer(_) => Vec::new(),
        }
    }

    /// Checks a one-snippet answer (`value` as the responses file writes it) against the
    /// settings and, for a comprehension question, the snippet's own options.
    pub fn answer(
        &self,
        value: &Value,
        snippet_options: Option<&[String]>,
    ) -> Result<Answer, String> {
        match self {
            Kind::Likert(l) => likert::answer(l, value),
            Kind::Choice(o) => options::choice(o, value),
            Kind::Multi(o) => options::multi(o, value),
            Kind::Text(t) => text::answer(t, value),
            Kind::Number(n) => number::answer(n, value),
            Kind::Answer(_) => answer::answer(value, snippet_options),
            Kind::Pairwise(_) | Kind::BestWorst(_) => {
                Err("this question is answered about a pair or a set".into())
            }
        }
    }
}

/// The settings a question gives, each with its line.
fn given_keys(q: &RawQuestion, at: &At<'_>) -> Vec<(&'static str, usize)> {
    let mut out = Vec::new();
    let mut add = |key: &'static str, start: Option<usize>| {
        if let Some(start) = start {
            out.push((key, at.line(start)));
        }
    };
    add("points", q.points.as_ref().map(|s| s.span().start));
    add("labels", q.labels.as_ref().map(|s| s.span().start));
    add("options", q.options.as_ref().map(|s| s.span().start));
    add("max_chars", q.max_chars.as_ref().map(|s| s.span().start));
    add("min", q.min.as_ref().map(|s| s.span().start));
    add("max", q.max.as_ref().map(|s| s.span().start));
    add("ties", q.ties.as_ref().map(|s| s.span().start));
    add("set_size", q.set_size.as_ref().map(|s| s.span().start));
    add(
        "per_snippet",
        q.per_snippet.as_ref().map(|s| s.span().start),
    );
    out
}

/// The most units a snippet may be in (`per_snippet`).
pub const MAX_PER_SNIPPET: i64 = 1_000;

/// `per_snippet`: the pairs (pairwise) or sets (best–worst) each snippet is in; `Err` after
/// reporting a value out of range, `Ok(None)` when not given (the kind's default).
pub(crate) fn per_snippet(
    q: &RawQuestion,
    at: &At<'_>,
    problems: &mut Problems,
) -> Result<Option<u32>, ()> {
    match &q.per_snippet {
        None => Ok(None),
        Some(v) if (1..=MAX_PER_SNIPPET).contains(v.get_ref()) => Ok(Some(*v.get_ref() as u32)),
        Some(v) => {
            problems.push(
                at.file,
                at.of(v),
                "per_snippet",
                format!(
                    "{}: a snippet is in 1 to {MAX_PER_SNIPPET} pairs or sets",
                    v.get_ref()
                ),
            );
            Err(())
        }
    }
}
