//! A free-text answer of at most `max_chars` characters. Its analysis counts the answers; the
//! answers themselves are in the export.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::super::context::Context;
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;

pub const DEFAULT_MAX_CHARS: u32 = 1000;
pub const MAX_MAX_CHARS: i64 = 10_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    pub max_chars: u32,
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Text> {
    let max_chars = match &q.max_chars {
        None => DEFAULT_MAX_CHARS,
        Some(m) if (1..=MAX_MAX_CHARS).contains(m.get_ref()) => *m.get_ref() as u32,
        Some(m) => {
            problems.push(
                at.file,
                at.of(m),
                "max_chars",
                format!("{}: from 1 to {MAX_MAX_CHARS}", m.get_ref()),
            );
            return None;
        }
    };
    Some(Text { max_chars })
}

pub(crate) fn answer(t: &Text, value: &Value) -> Result<Answer, String> {
    let Some(s) = value.as_str() else {
        return Err(format!("{value} is not a text"));
    };
    let n = s.chars().count();
    if n > t.max_chars as usize {
        return Err(format!("{n} characters: at most {}", t.max_chars));
    }
    Ok(Answer::Text(s.to_owned()))
}

pub(crate) fn analyse(_t: &Text, cx: &Context<'_>) -> Value {
    let texts: Vec<&str> = cx
        .single_answers()
        .filter_map(|(_, _, a)| match a {
            Answer::Text(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let blank = texts.iter().filter(|s| s.trim().is_empty()).count();
    json!({"kind": "text", "answers": texts.len(), "blank": blank})
}
