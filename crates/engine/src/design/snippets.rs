//! `snippets.jsonl`: a study's items, one snippet a line —
//! `{"id", "code", "language", "original"?, "condition"?, "key"?, "options"?, "context"?,
//! "group"?}` (a pairwise study compares the snippets of a group with each other only).

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::kinds::options::check_options;
use super::kinds::Kind;
pub use super::record::Snippet;
use super::{is_identifier, Design};
use crate::formats::items::objects;
use crate::formats::{FormatError, Problems};

/// The longest snippet (its code, its original and its context each).
pub const MAX_CODE_BYTES: usize = 256 * 1024;
/// The most snippets a study imports at once.
pub const MAX_SNIPPETS: usize = 100_000;

const FIELDS: [&str; 9] = [
    "id",
    "code",
    "language",
    "original",
    "condition",
    "key",
    "options",
    "context",
    "group",
];

/// Reads `text` (the file `file`) against `design`: every line checked, every problem named
/// by line and field, nothing returned unless all is well.
pub fn parse_snippets(
    file: &str,
    text: &str,
    design: &Design,
) -> Result<Vec<Snippet>, FormatError> {
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut ids = HashSet::new();
    let answer_questions: Vec<&str> = design
        .questions
        .iter()
        .filter(|q| matches!(q.kind, Kind::Answer(_)))
        .map(|q| q.id.as_str())
        .collect();
    let records: Vec<_> = objects(text, file, &mut problems).collect();
    if records.len() > MAX_SNIPPETS {
        problems.push(
            file,
            0,
            "(file)",
            format!("at most {MAX_SNIPPETS} snippets a file"),
        );
        return problems.finish(Vec::new());
    }
    for (n, obj) in records {
        for k in obj.keys() {
            if !FIELDS.contains(&k.as_str()) {
                problems.push(
                    file,
                    n,
                    k,
                    format!("unknown field; a snippet has {}", FIELDS.join(", ")),
                );
            }
        }
        let mut text_field = |name: &str, required: bool| -> Option<String> {
            match obj.get(name) {
                None | Some(Value::Null) if !required => None,
                None | Some(Value::Null) => {
                    problems.push(file, n, name, "missing");
                    None
                }
                Some(Value::String(s)) if s.len() > MAX_CODE_BYTES => {
                    problems.push(
                        file,
                        n,
                        name,
                        format!("longer than {} KiB", MAX_CODE_BYTES / 1024),
                    );
                    None
                }
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    problems.push(file, n, name, format!("expected a string, found {other}"));
                    None
                }
            }
        };
        let id = text_field("id", true);
        let code = text_field("code", true);
        let language = text_field("language", false).unwrap_or_else(|| "text".into());
        let original = text_field("original", false);
        let condition = text_field("condition", false);
        let context = text_field("context", false);
        let group = text_field("group", false);
        if let Some(g) = group.as_deref().filter(|g| !is_identifier(g)) {
            problems.push(
                file,
                n,
                "group",
                format!("`{g}` is not a group name (letters, digits, _ and -, at most 64)"),
            );
        }
        if let Some(id) = &id {
            if !is_identifier(id) {
                problems.push(
                    file,
                    n,
                    "id",
                    format!("`{id}` is not an id (letters, digits, _ and -, at most 64)"),
                );
            } else if !ids.insert(id.clone()) {
                problems.push(file, n, "id", format!("`{id}` is used twice"));
            }
        }
        if code.as_deref().is_some_and(|c| c.trim().is_empty()) {
            problems.push(file, n, "code", "empty");
        }
        if !is_identifier(&language) {
            problems.push(
                file,
                n,
                "language",
                format!("`{language}` is not a language name"),
            );
        }
        match (&condition, design.conditions.is_empty()) {
            (Some(c), true) => problems.push(
                file,
                n,
                "condition",
                format!("`{c}`: the design names no conditions"),
            ),
            (Some(c), false) if !design.conditions.contains(c) => problems.push(
                file,
                n,
                "condition",
                format!(
                    "`{c}` is not one of the design's conditions ({})",
                    design.conditions.join(", ")
                ),
            ),
            (None, false) => problems.push(
                file,
                n,
                "condition",
                format!(
                    "missing: one of the design's conditions ({})",
                    design.conditions.join(", ")
                ),
            ),
            _ => {}
        }
        let key = keyed(
            &obj,
            "key",
            file,
            n,
            &answer_questions,
            &mut problems,
            |v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(x) => Ok(x.to_string()),
                other => Err(format!(
                    "expected the right answer as a string, found {other}"
                )),
            },
        );
        let options = keyed(
            &obj,
            "options",
            file,
            n,
            &answer_questions,
            &mut problems,
            |v| {
                let list: Option<Vec<String>> = v
                    .as_array()
                    .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_owned)).collect());
                let list = list.ok_or_else(|| format!("expected a list of strings, found {v}"))?;
                match check_options(&list) {
                    Some(reason) => Err(reason),
                    None => Ok(list),
                }
            },
        );
        for q in &answer_questions {
            match (key.get(*q), options.get(*q)) {
                (None, _) => {
                    problems.push(file, n, "key", format!("missing the right answer to `{q}`"))
                }
                (Some(k), Some(list)) if !list.contains(k) => problems.push(
                    file,
                    n,
                    "key",
                    format!("the right answer to `{q}`, `{k}`, is not one of its options"),
                ),
                _ => {}
            }
        }
        if let (Some(id), Some(code)) = (id, code) {
            out.push(Snippet {
                id,
                code,
                language,
                original,
                condition,
                key,
                options,
                context,
                group,
            });
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(file, 0, "(file)", "no snippets");
    }
    problems.finish(out)
}

/// A per-question object (`key`, `options`): each question named must be a comprehension
/// question of the design.
fn keyed<T>(
    obj: &Map<String, Value>,
    field: &str,
    file: &str,
    line: usize,
    questions: &[&str],
    problems: &mut Problems,
    read: impl Fn(&Value) -> Result<T, String>,
) -> BTreeMap<String, T> {
    let mut out = BTreeMap::new();
    match obj.get(field) {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (q, v) in m {
                if !questions.contains(&q.as_str()) {
                    problems.push(
                        file,
                        line,
                        field,
                        format!("`{q}` is not a question with a right answer (kind = \"answer\") of the design"),
                    );
                    continue;
                }
                match read(v) {
                    Ok(x) => {
                        out.insert(q.clone(), x);
                    }
                    Err(reason) => problems.push(file, line, field, format!("`{q}`: {reason}")),
                }
            }
        }
        Some(other) => problems.push(
            file,
            line,
            field,
            format!("expected an object by question id, found {other}"),
        ),
    }
    out
}
