//! `survey.json`: votes in the published replication layout,
//! `{level: {n: {participant: {"CR": 1-4, "CC": 1-4, "Time": seconds}}}}`.

use serde_json::Value;

use super::{FormatError, Level, Problems};

/// The longest time on item that is a measurement: a day. A browser that reports more (a tab
/// left open for a week, or a forged request) did not measure the participant's work, and a
/// value near `f64::MAX` would swamp every mean; the survey stores such a time as unmeasured,
/// an import refuses it.
pub const MAX_TIME_SECS: f64 = 86_400.0;

/// Whether `t` seconds can be a measured time on item: zero, or a normal (not subnormal),
/// positive number of at most [`MAX_TIME_SECS`]. A subnormal time such as `1e-320` is no
/// browser's measurement, and a chart's axis over `[0, 1e-320]` has no ticks to compute (it
/// once spun the results page for minutes): like NaN, infinities and negatives, it is
/// unmeasured.
pub fn is_time_on_item(t: f64) -> bool {
    t == 0.0 || (t.is_normal() && t > 0.0 && t <= MAX_TIME_SECS)
}

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

/// `text` with every bare `NaN` (outside strings) read as `null`: Python's `json` writes a
/// missing float so, and natstudy's replication layout writes an untimed vote's time so. The
/// lines stay where they were, so the problems' line numbers hold.
fn nan_as_null(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") {
        return std::borrow::Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let (mut in_string, mut escaped, mut from) = (false, false, 0);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if bytes[i..].starts_with(b"NaN")
            && (i == 0 || !word(bytes[i - 1]))
            && bytes.get(i + 3).is_none_or(|&n| !word(n))
        {
            out.push_str(&text[from..i]);
            out.push_str("null");
            i += 3;
            from = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[from..]);
    std::borrow::Cow::Owned(out)
}

pub fn parse_survey(text: &str, file: &str) -> Result<Vec<SurveyVote>, FormatError> {
    let mut problems = Problems::default();
    let text = &*nan_as_null(text);
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
                        Some(x) if is_time_on_item(x) => Some(x),
                        _ => {
                            problems.push(
                                file,
                                cursor,
                                &format!("{path}.Time"),
                                format!(
                                    "expected seconds from 0 to {MAX_TIME_SECS} (a day), a normal number, found {t}"
                                ),
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

    #[test]
    fn nan_is_an_untimed_vote_outside_strings_only() {
        let text = "{\"naming\": {\"1\": {\"S1\": {\"CR\": 1, \"CC\": 2, \"Time\": NaN},\n \"NaN\\\"NaN\": {\"CR\": 2, \"CC\": 2, \"Time\": 4}}}}";
        let v = parse_survey(text, "s.json").expect("reads");
        let got: Vec<(&str, Option<f64>)> = v
            .iter()
            .map(|v| (v.participant.as_str(), v.time_secs))
            .collect();
        assert_eq!(got, [("NaN\"NaN", Some(4.0)), ("S1", None)]);
        // a word that merely holds NaN is still refused, on its line
        let bad = "{\"naming\": {\"1\": {\"S1\":\n {\"CR\": 1, \"CC\": 2, \"Time\": NaNa}}}}";
        let e = parse_survey(bad, "s.json").expect_err("NaNa");
        assert_eq!(e.problems[0].line, 2);
    }
}
