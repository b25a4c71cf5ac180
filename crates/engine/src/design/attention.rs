//! Attention units of a designed study: a snippet, a pair or a set with an agreed answer
//! (a pairwise attention unit is a pair whose better side is obvious), read from
//! `attention.jsonl` — the responses format without `participant` and `seconds`, a line per
//! question answered — and checked by each kind's rules as a response is. Every participant
//! is shown each attention unit once, among their units: the first after their second unit,
//! then one every [`EVERY`] units.

use std::collections::BTreeMap;

use serde_json::Value;

use super::record::{Answer, Shown};
use super::responses::parse_responses;
use super::{Design, Snippet};
use crate::formats::{FormatError, Problems};

/// Units between two attention units for one participant.
pub const EVERY: u64 = 3;
/// The most attention units a study holds.
pub const MAX_ATTENTION_UNITS: usize = 100;

/// One attention unit: its snippets (in the order shown) and the expected answer of each
/// question it checks.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionUnit {
    pub members: Vec<String>,
    pub expect: BTreeMap<String, Answer>,
}

/// Reads `attention.jsonl`: every line checked as a response would be (its line named), the
/// lines about one unit (whatever their order) gathered into one attention unit.
pub fn parse_attention(
    file: &str,
    text: &str,
    design: &Design,
    snippets: &[Snippet],
) -> Result<Vec<AttentionUnit>, FormatError> {
    let mut problems = Problems::default();
    // each line as a response of one participant, its line kept in place
    let mut lines = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        let given = line.trim();
        match serde_json::from_str::<Value>(given) {
            Ok(Value::Object(mut o)) => {
                for key in ["participant", "seconds"] {
                    if o.remove(key).is_some() {
                        problems.push(
                            file,
                            i + 1,
                            key,
                            "an attention unit's line names no participant and no time",
                        );
                    }
                }
                o.insert("participant".into(), Value::String("attention".into()));
                lines.push_str(&Value::Object(o).to_string());
            }
            _ => lines.push_str(line),
        }
        lines.push('\n');
    }
    let responses = match parse_responses(file, &lines, design, snippets) {
        Ok(r) => r,
        Err(e) => {
            for p in e.problems {
                problems.push(&p.file, p.line, &p.field, p.reason);
            }
            return problems.finish(Vec::new());
        }
    };
    let mut units: Vec<AttentionUnit> = Vec::new();
    for r in responses {
        let members = match &r.shown {
            Shown::Item(s) => vec![s.clone()],
            Shown::Pair(p) => p.to_vec(),
            Shown::Set(s) => s.clone(),
        };
        let key = r.shown.unordered();
        match units.iter_mut().find(|u| {
            let mut m = u.members.clone();
            m.sort();
            m == key
        }) {
            Some(u) => {
                u.expect.insert(r.question.clone(), r.answer);
            }
            None => units.push(AttentionUnit {
                members,
                expect: BTreeMap::from([(r.question.clone(), r.answer)]),
            }),
        }
    }
    if units.len() > MAX_ATTENTION_UNITS {
        problems.push(
            file,
            0,
            "(file)",
            format!(
                "{} attention units: at most {MAX_ATTENTION_UNITS}",
                units.len()
            ),
        );
    }
    problems.finish(units)
}

/// Whether a given answer is the expected one: the same point, number, option or snippet; a
/// text the same but for spaces around it; a multiple choice the same options in any order.
pub fn agrees(expected: &Answer, given: &Answer) -> bool {
    match (expected, given) {
        (Answer::Text(e), Answer::Text(g)) => e.trim() == g.trim(),
        (Answer::Options(e), Answer::Options(g)) => {
            let (mut e, mut g) = (e.clone(), g.clone());
            e.sort();
            g.sort();
            e == g
        }
        (e, g) => e == g,
    }
}

/// Whether an attention unit is due for a participant who answered `regular` units and
/// `attention` attention units: the first after their second unit, then one every [`EVERY`].
pub fn attention_due(regular: u64, attention: u64) -> bool {
    regular >= 2 + attention * EVERY
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::parse_design;

    fn snippets() -> Vec<Snippet> {
        ["S1", "S2", "S3"]
            .iter()
            .map(|id| Snippet {
                id: id.to_string(),
                code: "x".into(),
                language: "java".into(),
                original: None,
                condition: None,
                key: Default::default(),
                options: Default::default(),
                context: None,
                group: None,
            })
            .collect()
    }

    #[test]
    fn attention_lines_are_read_as_responses_and_gathered_by_unit() {
        let d = parse_design(
            "d.toml",
            "title = \"t\"\n[[question]]\nid = \"better\"\nkind = \"pairwise\"\nprompt = \"Better?\"\nties = false\n",
        )
        .expect("design");
        let units = parse_attention(
            "attention.jsonl",
            "{\"question\": \"better\", \"pair\": [\"S1\", \"S2\"], \"answer\": \"S1\"}\n",
            &d,
            &snippets(),
        )
        .expect("read");
        assert_eq!(units.len(), 1);
        assert_eq!(units[0].members, ["S1", "S2"]);
        assert_eq!(units[0].expect["better"], Answer::Text("S1".into()));
        let bad = parse_attention(
            "attention.jsonl",
            "{\"question\": \"better\", \"pair\": [\"S1\", \"S2\"], \"answer\": \"S1\"}\n\
             {\"participant\": \"P1\", \"question\": \"better\", \"pair\": [\"S1\", \"S9\"], \"answer\": \"S1\"}\n",
            &d,
            &snippets(),
        )
        .expect_err("refused");
        let said = bad.to_string();
        assert!(
            said.contains("attention.jsonl:2: field `participant`"),
            "{said}"
        );
        assert!(said.contains("S9"), "{said}");
    }

    #[test]
    fn agreement_and_when_attention_is_due() {
        assert!(agrees(
            &Answer::Text(" 3 ".into()),
            &Answer::Text("3".into())
        ));
        assert!(agrees(
            &Answer::Options(vec!["a".into(), "b".into()]),
            &Answer::Options(vec!["b".into(), "a".into()])
        ));
        assert!(!agrees(&Answer::Number(1.0), &Answer::Number(2.0)));
        assert!(!attention_due(1, 0));
        assert!(attention_due(2, 0));
        assert!(!attention_due(4, 1));
        assert!(attention_due(5, 1));
    }
}
