//! The records of a designed study: a snippet, an answer, what was shown, a response. Plain data that
//! the kinds check and analyse and the responses file reads and writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// A checked answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    /// a Likert point (1-based) or a number
    Number(f64),
    /// a choice, a comprehension answer, a text, or a pairwise pick (a snippet id or `tie`)
    Text(String),
    /// the options of a multiple choice
    Options(Vec<String>),
    /// best and worst of a set
    BestWorst { best: String, worst: String },
}

/// What the participant was shown when answering.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Item(String),
    /// A first (left or top), as shown
    Pair([String; 2]),
    /// in the order shown
    Set(Vec<String>),
}

impl Shown {
    /// The unit whatever its order.
    pub(crate) fn unordered(&self) -> Vec<String> {
        let mut v = match self {
            Shown::Item(s) => vec![s.clone()],
            Shown::Pair(p) => p.to_vec(),
            Shown::Set(s) => s.clone(),
        };
        v.sort();
        v
    }
}

/// The question and the answer of a response line this program stored (its own
/// [`Response::to_json_line`]); `None` when it does not read as one.
pub fn stored_answer(line: &str) -> Option<(String, Answer)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let question = v.get("question")?.as_str()?.to_owned();
    let answer = match (v.get("best"), v.get("worst"), v.get("answer")) {
        (Some(best), Some(worst), _) => Answer::BestWorst {
            best: best.as_str()?.to_owned(),
            worst: worst.as_str()?.to_owned(),
        },
        (_, _, Some(Value::Number(n))) => Answer::Number(n.as_f64()?),
        (_, _, Some(Value::String(s))) => Answer::Text(s.clone()),
        (_, _, Some(Value::Array(list))) => Answer::Options(
            list.iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    };
    Some((question, answer))
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub participant: String,
    pub question: String,
    pub shown: Shown,
    pub answer: Answer,
    /// time on item; `None` when not measured
    pub seconds: Option<f64>,
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// A response's line, its fields in the order the format lists them.
#[derive(serde::Serialize)]
struct Line<'a> {
    participant: &'a str,
    question: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    item: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pair: Option<&'a [String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    set: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    best: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    worst: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
}

impl Response {
    /// The response as one line of `responses.jsonl` (no line break), fields in the format's
    /// order.
    pub fn to_json_line(&self) -> String {
        let (best, worst) = match &self.answer {
            Answer::BestWorst { best, worst } => (Some(best.as_str()), Some(worst.as_str())),
            _ => (None, None),
        };
        let line = Line {
            participant: &self.participant,
            question: &self.question,
            item: match &self.shown {
                Shown::Item(s) => Some(s),
                _ => None,
            },
            pair: match &self.shown {
                Shown::Pair(p) => Some(p),
                _ => None,
            },
            set: match &self.shown {
                Shown::Set(s) => Some(s),
                _ => None,
            },
            answer: match &self.answer {
                Answer::Number(x) => Some(number(*x)),
                Answer::Text(s) => Some(json!(s)),
                Answer::Options(list) => Some(json!(list)),
                Answer::BestWorst { .. } => None,
            },
            best,
            worst,
            seconds: self.seconds,
        };
        serde_json::to_string(&line).unwrap_or_default()
    }

    /// The response as one line of `responses.jsonl`, as a JSON value.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("participant".into(), json!(self.participant));
        o.insert("question".into(), json!(self.question));
        match &self.shown {
            Shown::Item(s) => o.insert("item".into(), json!(s)),
            Shown::Pair(p) => o.insert("pair".into(), json!(p)),
            Shown::Set(s) => o.insert("set".into(), json!(s)),
        };
        match &self.answer {
            Answer::Number(x) => {
                o.insert("answer".into(), number(*x));
            }
            Answer::Text(s) => {
                o.insert("answer".into(), json!(s));
            }
            Answer::Options(list) => {
                o.insert("answer".into(), json!(list));
            }
            Answer::BestWorst { best, worst } => {
                o.insert("best".into(), json!(best));
                o.insert("worst".into(), json!(worst));
            }
        }
        if let Some(t) = self.seconds {
            o.insert("seconds".into(), json!(t));
        }
        Value::Object(o)
    }
}

/// One snippet: what a participant reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snippet {
    pub id: String,
    pub code: String,
    /// `java` is highlighted; any other language is shown plain
    pub language: String,
    /// shown as a diff against `code` when present
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// the right answer per comprehension question
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub key: BTreeMap<String, String>,
    /// the options offered per comprehension question
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// pairwise: compared with the snippets of its group only
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_line_reads_back_as_its_answer() {
        for (shown, answer) in [
            (Shown::Item("S1".into()), Answer::Number(4.0)),
            (Shown::Item("S1".into()), Answer::Number(12.5)),
            (Shown::Item("S1".into()), Answer::Text("0 1".into())),
            (
                Shown::Item("S1".into()),
                Answer::Options(vec!["long".into(), "none".into()]),
            ),
            (
                Shown::Pair(["S2".into(), "S1".into()]),
                Answer::Text("tie".into()),
            ),
            (
                Shown::Set(vec!["S1".into(), "S2".into(), "S3".into()]),
                Answer::BestWorst {
                    best: "S3".into(),
                    worst: "S1".into(),
                },
            ),
        ] {
            let r = Response {
                participant: "P1".into(),
                question: "q".into(),
                shown,
                answer: answer.clone(),
                seconds: Some(3.0),
            };
            assert_eq!(
                stored_answer(&r.to_json_line()),
                Some(("q".to_owned(), answer))
            );
        }
        assert_eq!(stored_answer("{\"question\": \"q\"}"), None);
        assert_eq!(stored_answer("not json"), None);
    }
}
