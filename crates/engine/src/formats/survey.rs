//! `survey.json`: votes in the published replication layout,
//! `{level: {n: {participant: {"CR": 1-4, "CC": 1-4, "Time": seconds}}}}`.

use serde_json::Value;

use super::{FormatError, Level, Problems};

/// The longest time on item that is a measurement: a day. A browser that reports more (a tab
/// left open for a week, or a forged request) did not measure the participant's work, and a
/// value near `f64::MAX` would swamp every mean; the survey stores such a time as unmeasured,
/// an import refuses it.
pub const MAX_TIME_SECS: f64 = 86_400.0;

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
                        Some(x) if (0.0..=MAX_TIME_SECS).contains(&x) => Some(x),
                        _ => {
                            problems.push(
                                file,
                                cursor,
                                &format!("{path}.Time"),
                                format!(
                                    "expected seconds from 0 to {MAX_TIME_SECS} (a day), found {t}"
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

/// Writes `survey.json` as votes stream in, in (level, item, participant) order: each call
/// returns the text to append, so a writer never holds the whole survey. The reader above
/// reads back what this writes.
#[derive(Debug, Default)]
pub struct SurveyWriter {
    level: Option<String>,
    item: Option<String>,
    votes: u64,
}

impl SurveyWriter {
    /// The opening text.
    pub fn start() -> (SurveyWriter, String) {
        (SurveyWriter::default(), "{".into())
    }

    /// One vote on item `key` (`{level}_{n}`) of `level` by `participant`.
    pub fn vote(
        &mut self,
        key: &str,
        level: &str,
        participant: &str,
        cr: i64,
        cc: i64,
        time_secs: Option<f64>,
    ) -> Result<String, serde_json::Error> {
        let num = key.rsplit_once('_').map_or(key, |(_, n)| n);
        let mut out = String::new();
        if self.level.as_deref() != Some(level) {
            if self.level.is_some() {
                out.push_str("}}, ");
            }
            out.push_str(&format!(
                "{}: {{{}: {{",
                serde_json::to_string(level)?,
                serde_json::to_string(num)?
            ));
            self.level = Some(level.to_owned());
            self.item = Some(key.to_owned());
        } else if self.item.as_deref() != Some(key) {
            out.push_str(&format!("}}, {}: {{", serde_json::to_string(num)?));
            self.item = Some(key.to_owned());
        } else {
            out.push_str(", ");
        }
        let vote = serde_json::json!({"CR": cr, "CC": cc, "Time": time_secs});
        out.push_str(&format!(
            "{}: {}",
            serde_json::to_string(participant)?,
            vote
        ));
        self.votes += 1;
        Ok(out)
    }

    /// The closing text, and how many votes were written.
    pub fn finish(self) -> (String, u64) {
        let close = if self.level.is_some() { "}}}\n" } else { "}\n" };
        (close.into(), self.votes)
    }
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
    fn what_the_writer_writes_reads_back() {
        let (mut w, mut text) = SurveyWriter::start();
        for (key, level, who, cr, cc, t) in [
            ("expression_2", "expression", "S1", 1, 2, Some(3.5)),
            ("naming_1", "naming", "S1", 4, 3, None),
            ("naming_1", "naming", "S2", 2, 2, Some(1.0)),
            ("naming_7", "naming", "S1", 3, 1, Some(9.25)),
        ] {
            text.push_str(&w.vote(key, level, who, cr, cc, t).expect("json"));
        }
        let (close, n) = w.finish();
        text.push_str(&close);
        assert_eq!(n, 4);
        let back = parse_survey(&text, "survey.json").expect("reads back");
        let mut got: Vec<_> = back
            .iter()
            .map(|v| {
                (
                    v.item.clone(),
                    v.participant.clone(),
                    v.cr,
                    v.cc,
                    v.time_secs,
                )
            })
            .collect();
        got.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        assert_eq!(
            got,
            vec![
                ("expression_2".into(), "S1".into(), 1, 2, Some(3.5)),
                ("naming_1".into(), "S1".into(), 4, 3, None),
                ("naming_1".into(), "S2".into(), 2, 2, Some(1.0)),
                ("naming_7".into(), "S1".into(), 3, 1, Some(9.25)),
            ]
        );
        let (w, empty) = SurveyWriter::start();
        assert_eq!(format!("{empty}{}", w.finish().0), "{}\n");
    }
}
