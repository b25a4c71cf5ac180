//! A comprehension question with a right answer: each snippet carries its own key (and,
//! where the answer is picked, its own options). Its analysis: per snippet the share correct
//! with its Wilson 95% interval and the median time; per participant the share correct; and
//! the times of right against wrong answers (Mann–Whitney, as the naturalness study's times).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::{finite, put, Context};
use super::Answer;
use crate::stats::{self, Alternative};

/// The longest typed answer.
pub const MAX_ANSWER_CHARS: usize = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comprehension {}

pub(crate) fn answer(value: &Value, options: Option<&[String]>) -> Result<Answer, String> {
    let s = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("{other} is not an answer (a text or a number)")),
    };
    match options {
        Some(list) if !list.contains(&s) => Err(format!(
            "`{s}` is not one of the snippet's options ({})",
            list.join(", ")
        )),
        _ if s.chars().count() > MAX_ANSWER_CHARS => Err(format!(
            "an answer is at most {MAX_ANSWER_CHARS} characters"
        )),
        _ => Ok(Answer::Text(s)),
    }
}

/// Whether `given` is the key: the same text, spaces around it aside.
pub fn is_correct(given: &str, key: &str) -> bool {
    given.trim() == key.trim()
}

pub(crate) fn analyse(cx: &Context<'_>) -> Value {
    let question = cx.question_id();
    let n = cx.snippets.len();
    let mut right = vec![0u64; n];
    let mut total = vec![0u64; n];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut by_participant = vec![(0u64, 0u64); cx.participants.len()];
    let (mut right_times, mut wrong_times) = (Vec::new(), Vec::new());
    let mut unkeyed = Vec::new();
    for r in &cx.responses {
        let super::super::record::Shown::Item(id) = &r.shown else {
            continue;
        };
        let (Some(s), Answer::Text(given)) = (cx.snippet(id), &r.answer) else {
            continue;
        };
        let Some(key) = cx.snippets[s].key.get(question) else {
            unkeyed.push(id.clone());
            continue;
        };
        let ok = is_correct(given, key);
        total[s] += 1;
        right[s] += u64::from(ok);
        let p = cx.participant(&r.participant);
        by_participant[p].0 += u64::from(ok);
        by_participant[p].1 += 1;
        if let Some(t) = r.seconds {
            times[s].push(t);
            if ok {
                right_times.push(t);
            } else {
                wrong_times.push(t);
            }
        }
    }
    let mut items = Map::new();
    for s in 0..n {
        if total[s] == 0 {
            continue;
        }
        let mut entry = Map::new();
        entry.insert("answers".into(), json!(total[s]));
        entry.insert("right".into(), json!(right[s]));
        match stats::wilson(right[s], total[s]) {
            Ok(w) => {
                entry.insert("correct".into(), json!(w.share));
                entry.insert("low".into(), json!(w.low));
                entry.insert("high".into(), json!(w.high));
            }
            Err(e) => put(&mut entry, "correct", Err(e.to_string())),
        }
        put(
            &mut entry,
            "median_seconds",
            if times[s].is_empty() {
                Err("no timed answer".into())
            } else {
                finite(stats::percentile(&times[s], 50.0))
            },
        );
        items.insert(cx.snippets[s].id.clone(), Value::Object(entry));
    }
    let participants: Map<String, Value> = cx
        .participants
        .iter()
        .zip(&by_participant)
        .filter(|(_, (_, m))| *m > 0)
        .map(|(p, (k, m))| (p.clone(), json!(*k as f64 / *m as f64)))
        .collect();
    let mut out = Map::new();
    out.insert("kind".into(), json!("answer"));
    out.insert("answers".into(), json!(total.iter().sum::<u64>()));
    out.insert("items".into(), Value::Object(items));
    out.insert("participants".into(), Value::Object(participants));
    unkeyed.sort();
    unkeyed.dedup();
    if !unkeyed.is_empty() {
        out.insert("unkeyed".into(), json!(unkeyed));
    }
    put(
        &mut out,
        "time_right_vs_wrong",
        stats::mann_whitney_u(&right_times, &wrong_times, Alternative::TwoSided)
            .map(|m| {
                json!({
                    "u": m.u, "p_value": m.p_value, "r": m.effect_size,
                    "right": m.n1, "wrong": m.n2,
                })
            })
            .map_err(|e| e.to_string()),
    );
    Value::Object(out)
}
