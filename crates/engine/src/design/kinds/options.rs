//! A choice of one option (`choice`) or of any number of them (`multi`). Its analysis: the
//! count and share of each option.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::Context;
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;

/// The most options a question offers.
pub const MAX_OPTIONS: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    pub options: Vec<String>,
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Options> {
    let Some(list) = &q.options else {
        problems.push(
            at.file,
            at.of(&q.kind),
            "options",
            format!("a {} question needs `options`", q.kind.get_ref()),
        );
        return None;
    };
    let options = list.get_ref().clone();
    let line = at.of(list);
    let problem = check_options(&options);
    if let Some(reason) = problem {
        problems.push(at.file, line, "options", reason);
        return None;
    }
    Some(Options { options })
}

/// Why a list of options cannot be offered, if it cannot: fewer than two, more than
/// [`MAX_OPTIONS`], an empty one or one listed twice.
pub fn check_options(options: &[String]) -> Option<String> {
    if options.len() < 2 {
        return Some(format!("{} options: offer at least two", options.len()));
    }
    if options.len() > MAX_OPTIONS {
        return Some(format!("{} options: at most {MAX_OPTIONS}", options.len()));
    }
    if options.iter().any(|o| o.trim().is_empty()) {
        return Some("an option is empty".into());
    }
    for (i, o) in options.iter().enumerate() {
        if options[..i].contains(o) {
            return Some(format!("`{o}` is listed twice"));
        }
    }
    None
}

pub(crate) fn choice(o: &Options, value: &Value) -> Result<Answer, String> {
    match value.as_str() {
        Some(s) if o.options.iter().any(|x| x == s) => Ok(Answer::Text(s.to_owned())),
        _ => Err(format!(
            "{value} is not one of the options ({})",
            o.options.join(", ")
        )),
    }
}

pub(crate) fn multi(o: &Options, value: &Value) -> Result<Answer, String> {
    let Some(list) = value.as_array() else {
        return Err(format!("{value} is not a list of options"));
    };
    let mut picked: Vec<String> = Vec::new();
    for v in list {
        match v.as_str() {
            Some(s) if o.options.iter().any(|x| x == s) => {
                if picked.iter().any(|p| p == s) {
                    return Err(format!("`{s}` is picked twice"));
                }
                picked.push(s.to_owned());
            }
            _ => {
                return Err(format!(
                    "{v} is not one of the options ({})",
                    o.options.join(", ")
                ))
            }
        }
    }
    Ok(Answer::Options(picked))
}

pub(crate) fn analyse(kind: &str, o: &Options, cx: &Context<'_>) -> Value {
    let mut counts = vec![0u64; o.options.len()];
    let mut answers = 0u64;
    for (_, _, a) in cx.single_answers() {
        answers += 1;
        let picked: Vec<&str> = match a {
            Answer::Text(s) => vec![s.as_str()],
            Answer::Options(list) => list.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        for p in picked {
            if let Some(i) = o.options.iter().position(|x| x == p) {
                counts[i] += 1;
            }
        }
    }
    let per_option: Map<String, Value> = o
        .options
        .iter()
        .zip(&counts)
        .map(|(name, &c)| {
            let share = (answers > 0).then(|| c as f64 / answers as f64);
            (name.clone(), json!({"count": c, "share": share}))
        })
        .collect();
    json!({"kind": kind, "answers": answers, "options": per_option})
}
