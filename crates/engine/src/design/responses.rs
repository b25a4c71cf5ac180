//! `responses.jsonl`: the answers of a designed study, one a line, the same format out (the
//! export) as in (the import) —
//! `{"participant", "question", "item", "answer", "seconds"?}`,
//! `{"participant", "question", "pair": [A, B], "answer": A | B | "tie", "seconds"?}`,
//! `{"participant", "question", "set": [...], "best", "worst", "seconds"?}`, the pair and the set
//! as shown.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::kinds::{best_worst, pairwise, Kind, Unit};
pub use super::record::{Response, Shown};
use super::snippets::Snippet;
use super::Design;
use crate::formats::items::objects;
use crate::formats::survey::is_time_on_item;
use crate::formats::{FormatError, Problems};

/// The most responses a file imports.
pub const MAX_RESPONSES: usize = 1_000_000;
/// The longest participant code.
pub const MAX_PARTICIPANT_CHARS: usize = 128;

const UNIT_FIELDS: [&str; 3] = ["item", "pair", "set"];

/// Reads `text` (the file `file`) against the design and its snippets: each line checked,
/// every problem named by line and field, nothing returned unless all is well.
pub fn parse_responses(
    file: &str,
    text: &str,
    design: &Design,
    snippets: &[Snippet],
) -> Result<Vec<Response>, FormatError> {
    let mut problems = Problems::default();
    let by_id: HashMap<&str, &Snippet> = snippets.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut seen: HashMap<(String, String, Vec<String>), usize> = HashMap::new();
    let mut out = Vec::new();
    let records: Vec<_> = objects(text, file, &mut problems).collect();
    if records.len() > MAX_RESPONSES {
        problems.push(
            file,
            0,
            "(file)",
            format!("at most {MAX_RESPONSES} responses a file"),
        );
        return problems.finish(Vec::new());
    }
    for (n, obj) in records {
        match read(&obj, design, &by_id) {
            Ok(r) => {
                // one answer per participant, question and snippet (a participant is one coder
                // of the agreement figures); a pair or a set may come again (a repeat shown
                // to measure consistency, in the same order or swapped)
                let once = matches!(r.shown, Shown::Item(_));
                let key = (
                    r.participant.clone(),
                    r.question.clone(),
                    r.shown.unordered(),
                );
                if let Some(first) = once.then(|| seen.insert(key, n)).flatten() {
                    problems.push(
                        file,
                        n,
                        "participant",
                        format!(
                            "`{}` already answered `{}` about these snippets on line {first}",
                            r.participant, r.question
                        ),
                    );
                } else {
                    out.push(r);
                }
            }
            Err(list) => {
                for (field, reason) in list {
                    problems.push(file, n, &field, reason);
                }
            }
        }
    }
    problems.finish(out)
}

type Faults = Vec<(String, String)>;

/// One line read, or its problems as (field, reason).
fn read(
    obj: &Map<String, Value>,
    design: &Design,
    snippets: &HashMap<&str, &Snippet>,
) -> Result<Response, Faults> {
    let mut faults: Faults = Vec::new();
    let mut fault = |f: &str, r: String| faults.push((f.to_owned(), r));
    let participant = match obj.get("participant").and_then(Value::as_str) {
        Some(p) if !p.trim().is_empty() && p.chars().count() <= MAX_PARTICIPANT_CHARS => {
            Some(p.trim().to_owned())
        }
        Some(_) => {
            fault(
                "participant",
                format!("empty or longer than {MAX_PARTICIPANT_CHARS} characters"),
            );
            None
        }
        None => {
            fault("participant", "missing (a string)".into());
            None
        }
    };
    let question = match obj.get("question").and_then(Value::as_str) {
        Some(q) => match design.question(q) {
            Some(q) => Some(q),
            None => {
                let ids: Vec<&str> = design.questions.iter().map(|q| q.id.as_str()).collect();
                fault(
                    "question",
                    format!("`{q}` is not a question of the design ({})", ids.join(", ")),
                );
                None
            }
        },
        None => {
            fault("question", "missing (a string)".into());
            None
        }
    };
    let seconds = match obj.get("seconds") {
        None | Some(Value::Null) => None,
        Some(v) => {
            match v.as_f64() {
                Some(t) if is_time_on_item(t) => Some(t),
                _ => {
                    fault("seconds", format!("{v} is not a time on item (0, or a normal number of seconds up to a day)"));
                    None
                }
            }
        }
    };
    let Some(question) = question else {
        return Err(faults);
    };
    let unit = question.kind.unit();
    let wanted: &[&str] = match unit {
        Unit::Snippet => &["participant", "question", "item", "answer", "seconds"],
        Unit::Pair => &["participant", "question", "pair", "answer", "seconds"],
        Unit::Set => &["participant", "question", "set", "best", "worst", "seconds"],
    };
    for k in obj.keys() {
        if !wanted.contains(&k.as_str()) {
            let why = if UNIT_FIELDS.contains(&k.as_str())
                || ["answer", "best", "worst"].contains(&k.as_str())
            {
                format!(
                    "a {} question is answered about {} with {}",
                    question.kind.name(),
                    unit.describe(),
                    wanted[2..].join(", ")
                )
            } else {
                format!("unknown field; a response has {}", wanted.join(", "))
            };
            fault(k, why);
        }
    }
    let known = |id: &Value, field: &str, fault: &mut dyn FnMut(&str, String)| -> Option<String> {
        match id.as_str() {
            Some(s) if snippets.contains_key(s) => Some(s.to_owned()),
            Some(s) => {
                fault(field, format!("`{s}` is not a snippet of the study"));
                None
            }
            None => {
                fault(field, format!("{id} is not a snippet id"));
                None
            }
        }
    };
    let missing = Value::Null;
    let (shown, answer) = match (unit, &question.kind) {
        (Unit::Snippet, kind) => {
            let item = obj.get("item").unwrap_or(&missing);
            let item = known(item, "item", &mut fault);
            let answer = obj.get("answer").unwrap_or(&missing);
            let answer = item.as_ref().and_then(|id| {
                let opts = snippets
                    .get(id.as_str())
                    .and_then(|s| s.options.get(&question.id))
                    .map(Vec::as_slice);
                kind.answer(answer, opts)
                    .map_err(|r| fault("answer", r))
                    .ok()
            });
            (item.map(Shown::Item), answer)
        }
        (Unit::Pair, Kind::Pairwise(p)) => {
            let pair: Option<[String; 2]> = match obj.get("pair").and_then(Value::as_array) {
                Some(list) if list.len() == 2 => {
                    let a = known(&list[0], "pair", &mut fault);
                    let b = known(&list[1], "pair", &mut fault);
                    match (a, b) {
                        (Some(a), Some(b)) if a == b => {
                            fault("pair", format!("names `{a}` twice"));
                            None
                        }
                        (Some(a), Some(b)) => Some([a, b]),
                        _ => None,
                    }
                }
                _ => {
                    fault("pair", "missing: a list of two snippet ids, A first".into());
                    None
                }
            };
            let answer = pair.as_ref().and_then(|pair| {
                pairwise::answer(p, pair, obj.get("answer").unwrap_or(&missing))
                    .map_err(|r| fault("answer", r))
                    .ok()
            });
            (pair.map(Shown::Pair), answer)
        }
        (Unit::Set, Kind::BestWorst(b)) => {
            let set: Option<Vec<String>> = match obj.get("set").and_then(Value::as_array) {
                Some(list) => {
                    let ids: Vec<Option<String>> =
                        list.iter().map(|v| known(v, "set", &mut fault)).collect();
                    let ids: Option<Vec<String>> = ids.into_iter().collect();
                    ids.filter(|ids| {
                        let distinct: HashSet<&String> = ids.iter().collect();
                        if distinct.len() != ids.len() {
                            fault("set", "names a snippet twice".into());
                        }
                        distinct.len() == ids.len()
                    })
                }
                None => {
                    fault("set", "missing: a list of snippet ids, as shown".into());
                    None
                }
            };
            let answer = set.as_ref().and_then(|set| {
                best_worst::answer(
                    b,
                    set,
                    obj.get("best").unwrap_or(&missing),
                    obj.get("worst").unwrap_or(&missing),
                )
                .map_err(|r| fault("best", r))
                .ok()
            });
            (set.map(Shown::Set), answer)
        }
        _ => (None, None),
    };
    match (participant, shown, answer) {
        (Some(participant), Some(shown), Some(answer)) if faults.is_empty() => Ok(Response {
            participant,
            question: question.id.clone(),
            shown,
            answer,
            seconds,
        }),
        _ => Err(faults),
    }
}
