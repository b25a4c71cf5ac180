//! `survey.json`: votes in the published replication layout,
//! `{level: {n: {participant: {"CR": 1-4, "CC": 1-4, "Time": seconds}}}}`.

use serde_json::Value;

use super::{FormatError, Level, Problems};

/// One annotator's vote on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyVote {
    /// `{level}_{n}`
    pub item: String,
    pub level: Level,
    pub participant: String,
    pub cr: u8,
    pub cc: u8,
    pub time_secs: Option<f64>,
}

/// Finds the 1-based line where `needle` first occurs after line `from`, for messages.
fn line_of(text: &str, needle: &str, from: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .unwrap_or(from)
}

pub fn parse_survey(text: &str, file: &str) -> Result<Vec<SurveyVote>, FormatError> {
    let mut problems = Problems::default();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(
                file,
                e.line(),
                "(document)",
                format!("unparsable JSON: {e}"),
            );
            return problems.finish(Vec::new());
        }
    };
    let Value::Object(levels) = root else {
        problems.push(file, 1, "(document)", "expected an object keyed by level");
        return problems.finish(Vec::new());
    };
    let mut out = Vec::new();
    let mut cursor = 1;
    for (level_name, items) in &levels {
        cursor = line_of(text, &format!("\"{level_name}\""), cursor);
        let Some(level) = Level::parse(level_name) else {
            problems.push(
                file,
                cursor,
                level_name,
                "unknown level (naming, expression or statement)",
            );
            continue;
        };
        let Value::Object(items) = items else {
            problems.push(
                file,
                cursor,
                level_name,
                "expected an object keyed by item number",
            );
            continue;
        };
        for (n, votes) in items {
            cursor = line_of(text, &format!("\"{n}\""), cursor);
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                problems.push(
                    file,
                    cursor,
                    &format!("{level_name}.{n}"),
                    "item number must be digits",
                );
                continue;
            }
            let item = format!("{level_name}_{n}");
            let Value::Object(votes) = votes else {
                problems.push(
                    file,
                    cursor,
                    &item,
                    "expected an object keyed by participant",
                );
                continue;
            };
            for (participant, vote) in votes {
                cursor = line_of(text, &format!("\"{participant}\""), cursor);
                let path = format!("{level_name}.{n}.{participant}");
                let Value::Object(v) = vote else {
                    problems.push(file, cursor, &path, "expected {\"CR\", \"CC\", \"Time\"}");
                    continue;
                };
                let likert = |key: &str, problems: &mut Problems| -> Option<u8> {
                    match v.get(key).and_then(Value::as_f64) {
                        Some(x) if x.fract() == 0.0 && (1.0..=4.0).contains(&x) => Some(x as u8),
                        Some(x) => {
                            problems.push(
                                file,
                                cursor,
                                &format!("{path}.{key}"),
                                format!("Likert value {x} out of 1–4"),
                            );
                            None
                        }
                        None => {
                            problems.push(
                                file,
                                cursor,
                                &format!("{path}.{key}"),
                                "missing or not a number",
                            );
                            None
                        }
                    }
                };
                let cr = likert("CR", &mut problems);
                let cc = likert("CC", &mut problems);
                let time_secs = match v.get("Time") {
                    None | Some(Value::Null) => None,
                    Some(t) => match t.as_f64() {
                        Some(x) if x.is_finite() && x >= 0.0 => Some(x),
                        _ => {
                            problems.push(
                                file,
                                cursor,
                                &format!("{path}.Time"),
                                format!("expected seconds ≥ 0, found {t}"),
                            );
                            None
                        }
                    },
                };
                if let (Some(cr), Some(cc)) = (cr, cc) {
                    out.push(SurveyVote {
                        item: item.clone(),
                        level,
                        participant: participant.clone(),
                        cr,
                        cc,
                        time_secs,
                    });
                }
            }
        }
    }
    problems.finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_votes_and_names_bad_fields() {
        let ok = r#"{"naming": {"1": {"S1": {"CR": 1, "CC": 4, "Time": 2.5}}}}"#;
        let v = parse_survey(ok, "s.json").expect("valid");
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].item.as_str(), v[0].cr, v[0].cc, v[0].time_secs),
            ("naming_1", 1, 4, Some(2.5))
        );

        let bad = "{\n \"naming\": {\n  \"1\": {\n   \"S1\": {\"CR\": 5, \"CC\": 4, \"Time\": 2.5}\n  }\n }\n}";
        let e = parse_survey(bad, "s.json").expect_err("CR 5");
        assert_eq!(e.problems[0].line, 4);
        assert_eq!(e.problems[0].field, "naming.1.S1.CR");
        assert!(
            e.problems[0].reason.contains("out of 1–4"),
            "{}",
            e.problems[0].reason
        );
    }
}
