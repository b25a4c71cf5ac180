//! `bugs.jsonl` and `transformations.jsonl`.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FormatError, Level, Problems};

/// An original (buggy) method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BugRecord {
    pub bug_id: String,
    pub project: String,
    pub file: String,
    pub method: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_source: Option<String>,
    /// The developer-fixed method, when known (patch review's SYE/TCE checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_source: Option<String>,
    pub buggy_lines: Vec<u32>,
    /// The encoding of the project's file (`ISO-8859-1`, …) when it is not UTF-8: files
    /// written back (verification, the benchmark export) are written in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// A transformed method: one item of the study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransformationRecord {
    pub id: String,
    pub bug_id: String,
    pub operator: String,
    pub level: Level,
    pub source: String,
    #[serde(default)]
    pub summary: String,
    /// A gold/attention item's expected judgement: Some(true) unnatural, Some(false) natural.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_unnatural: Option<bool>,
}

fn str_field(
    obj: &serde_json::Map<String, Value>,
    name: &str,
    file: &str,
    line: usize,
    problems: &mut Problems,
    required_nonempty: bool,
) -> Option<String> {
    match obj.get(name) {
        None | Some(Value::Null) => {
            problems.push(file, line, name, "missing");
            None
        }
        Some(Value::String(s)) => {
            if required_nonempty && s.trim().is_empty() {
                problems.push(file, line, name, "empty");
                None
            } else {
                Some(s.clone())
            }
        }
        Some(other) => {
            problems.push(
                file,
                line,
                name,
                format!("expected a string, found {}", kind(other)),
            );
            None
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses JSON lines into objects, reporting unparsable lines. Blank lines are skipped.
pub(crate) fn objects<'a>(
    text: &'a str,
    file: &'a str,
    problems: &'a mut Problems,
) -> impl Iterator<Item = (usize, serde_json::Map<String, Value>)> + 'a {
    text.lines().enumerate().filter_map(move |(i, raw)| {
        let line = i + 1;
        if raw.trim().is_empty() {
            return None;
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(m)) => Some((line, m)),
            Ok(other) => {
                problems.push(
                    file,
                    line,
                    "(record)",
                    format!("expected a JSON object, found {}", kind(&other)),
                );
                None
            }
            Err(e) => {
                problems.push(file, line, "(record)", format!("unparsable JSON: {e}"));
                None
            }
        }
    })
}

/// The largest method natstudy takes (`source`, `fixed_source`), in bytes: the JVM caps a
/// method's bytecode at 64 KiB, and a method's text beyond this is no method a person rates.
/// Every page, diff and score of an item stays in proportion to it.
pub const MAX_METHOD_BYTES: usize = 256 * 1024;
/// The largest file (`file_source`) natstudy takes, in bytes.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// Reports a field larger than `max` bytes.
fn bounded(
    value: Option<&String>,
    max: usize,
    field: &str,
    file: &str,
    line: usize,
    problems: &mut Problems,
) {
    if let Some(v) = value.filter(|v| v.len() > max) {
        problems.push(
            file,
            line,
            field,
            format!("{} KiB: at most {} KiB", v.len().div_ceil(1024), max / 1024),
        );
    }
}

/// Reads `bugs.jsonl`. `file` names the input in messages.
pub fn parse_bugs(text: &str, file: &str) -> Result<Vec<BugRecord>, FormatError> {
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let parsed: Vec<_> = objects(text, file, &mut problems).collect();
    for (line, obj) in parsed {
        let bug_id = str_field(&obj, "bug_id", file, line, &mut problems, true);
        let project = str_field(&obj, "project", file, line, &mut problems, true);
        let path = str_field(&obj, "file", file, line, &mut problems, true);
        let method = str_field(&obj, "method", file, line, &mut problems, true);
        let source = str_field(&obj, "source", file, line, &mut problems, true);
        let mut optional = |field: &str| match obj.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                problems.push(
                    file,
                    line,
                    field,
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
        };
        let file_source = optional("file_source");
        let fixed_source = optional("fixed_source");
        let encoding = optional("encoding");
        if let Some(e) = &encoding {
            if let Err(err) = crate::bugs::encoding::Encoding::parse(e) {
                problems.push(file, line, "encoding", err.to_string());
            }
        }
        for (field, value, max) in [
            ("source", &source, MAX_METHOD_BYTES),
            ("fixed_source", &fixed_source, MAX_METHOD_BYTES),
            ("file_source", &file_source, MAX_FILE_BYTES),
        ] {
            bounded(value.as_ref(), max, field, file, line, &mut problems);
        }
        let lines_in_source = source.as_deref().map(|s| s.lines().count()).unwrap_or(0);
        let mut buggy_lines = Vec::new();
        match obj.get("buggy_lines") {
            None | Some(Value::Null) => problems.push(file, line, "buggy_lines", "missing"),
            Some(Value::Array(items)) => {
                for v in items {
                    match v.as_u64() {
                        Some(n)
                            if n >= 1 && (source.is_none() || n as usize <= lines_in_source) =>
                        {
                            buggy_lines.push(n as u32)
                        }
                        Some(n) => problems.push(
                            file,
                            line,
                            "buggy_lines",
                            format!("line {n} is outside the method (1..={lines_in_source})"),
                        ),
                        None => problems.push(
                            file,
                            line,
                            "buggy_lines",
                            format!("expected a positive line number, found {v}"),
                        ),
                    }
                }
            }
            Some(other) => problems.push(
                file,
                line,
                "buggy_lines",
                format!("expected an array, found {}", kind(other)),
            ),
        }
        if let Some(id) = &bug_id {
            if let Some(first) = seen.insert(id.clone(), line) {
                problems.push(
                    file,
                    line,
                    "bug_id",
                    format!("duplicate id {id} (first on line {first})"),
                );
                continue;
            }
        }
        if let (Some(bug_id), Some(project), Some(path), Some(method), Some(source)) =
            (bug_id, project, path, method, source)
        {
            out.push(BugRecord {
                bug_id,
                project,
                file: path,
                method,
                source,
                file_source,
                fixed_source,
                buggy_lines,
                encoding,
            });
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(file, 0, "(file)", "no records");
    }
    problems.finish(out)
}

/// Reads `transformations.jsonl`, checking each against `bugs` (known bug id, source changed).
pub fn parse_transformations(
    text: &str,
    file: &str,
    bugs: &[BugRecord],
) -> Result<Vec<TransformationRecord>, FormatError> {
    let by_id: HashMap<&str, &BugRecord> = bugs.iter().map(|b| (b.bug_id.as_str(), b)).collect();
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let parsed: Vec<_> = objects(text, file, &mut problems).collect();
    for (line, obj) in parsed {
        let id = str_field(&obj, "id", file, line, &mut problems, true);
        let bug_id = str_field(&obj, "bug_id", file, line, &mut problems, true);
        let operator = str_field(&obj, "operator", file, line, &mut problems, true);
        let level_s = str_field(&obj, "level", file, line, &mut problems, true);
        let source = str_field(&obj, "source", file, line, &mut problems, true);
        bounded(
            source.as_ref(),
            MAX_METHOD_BYTES,
            "source",
            file,
            line,
            &mut problems,
        );
        let summary = match obj.get("summary") {
            None | Some(Value::Null) => Some(String::new()),
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                problems.push(
                    file,
                    line,
                    "summary",
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
        };
        let gold_unnatural = match obj.get("gold") {
            None | Some(Value::Null) => None,
            Some(Value::String(g)) if g == "natural" => Some(false),
            Some(Value::String(g)) if g == "unnatural" => Some(true),
            Some(other) => {
                problems.push(
                    file,
                    line,
                    "gold",
                    format!("expected \"natural\" or \"unnatural\", found {other}"),
                );
                None
            }
        };
        let level = level_s.as_deref().and_then(|l| {
            let parsed = Level::parse(l);
            if parsed.is_none() {
                problems.push(
                    file,
                    line,
                    "level",
                    format!("unknown level {l:?} (naming, expression or statement)"),
                );
            }
            parsed
        });
        if let (Some(id), Some(level)) = (&id, level) {
            let ok = id
                .strip_prefix(level.as_str())
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                problems.push(
                    file,
                    line,
                    "id",
                    format!("{id:?} is not of the form {level}_N"),
                );
            }
        }
        if let Some(b) = &bug_id {
            match by_id.get(b.as_str()) {
                None => problems.push(file, line, "bug_id", format!("unknown bug id {b}")),
                Some(bug) => {
                    if source.as_deref() == Some(bug.source.as_str()) {
                        problems.push(file, line, "source", "identical to the original method");
                    }
                }
            }
        }
        if let Some(id) = &id {
            if let Some(first) = seen.insert(id.clone(), line) {
                problems.push(
                    file,
                    line,
                    "id",
                    format!("duplicate id {id} (first on line {first})"),
                );
                continue;
            }
        }
        if let (Some(id), Some(bug_id), Some(operator), Some(level), Some(source), Some(summary)) =
            (id, bug_id, operator, level, source, summary)
        {
            out.push(TransformationRecord {
                id,
                bug_id,
                operator,
                level,
                source,
                summary,
                gold_unnatural,
            });
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(file, 0, "(file)", "no records");
    }
    problems.finish(out)
}

/// The ids of a parsed item set, for cross-checks of votes and results.
pub fn target_ids(bugs: &[BugRecord], items: &[TransformationRecord]) -> HashSet<String> {
    bugs.iter()
        .map(|b| b.bug_id.clone())
        .chain(items.iter().map(|t| t.id.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method or file larger than the bounds is refused with its file, line and field, and
    /// nothing of the file is taken (an import is all-or-nothing).
    #[test]
    fn oversized_methods_and_files_are_refused_by_line() {
        let big = "x".repeat(MAX_METHOD_BYTES + 1);
        let ok = r#"{"bug_id": "B-1", "project": "P", "file": "A.java", "method": "m", "source": "int m() {\n  return 1;\n}\n", "buggy_lines": [2]}"#;
        let huge = serde_json::json!({
            "bug_id": "B-2", "project": "P", "file": "A.java", "method": "m",
            "source": format!("int m() {{\n{big}\n}}\n"), "buggy_lines": [2],
            "file_source": "y".repeat(MAX_FILE_BYTES + 1)
        })
        .to_string();
        let err = parse_bugs(&format!("{ok}\n{huge}\n"), "bugs.jsonl").expect_err("too big");
        let text = err.to_string();
        assert!(
            text.contains("bugs.jsonl:2: field `source`: 257 KiB: at most 256 KiB"),
            "{text}"
        );
        assert!(text.contains("bugs.jsonl:2: field `file_source`"), "{text}");
        assert!(!text.contains("bugs.jsonl:1"), "{text}");
        let t = serde_json::json!({
            "id": "naming_1", "bug_id": "B-1", "operator": "RenameVariable-1",
            "level": "naming", "source": big
        })
        .to_string();
        let bugs = parse_bugs(ok, "bugs.jsonl").expect("a bug");
        let err = parse_transformations(&t, "t.jsonl", &bugs).expect_err("too big");
        assert!(
            err.to_string().contains("t.jsonl:1: field `source`"),
            "{err}"
        );
        // at the bound it is taken
        let at = serde_json::json!({
            "bug_id": "B-3", "project": "P", "file": "A.java", "method": "m",
            "source": format!("{}\n", "z".repeat(MAX_METHOD_BYTES - 1)), "buggy_lines": [1]
        })
        .to_string();
        assert_eq!(
            parse_bugs(&at, "bugs.jsonl").expect("at the bound").len(),
            1
        );
    }
}
