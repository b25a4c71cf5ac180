//! A number, optionally within `min`..=`max`. Its analysis: mean, median and quartiles (numpy's
//! linear percentiles).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::{finite, put, Context};
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;
use crate::stats;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Number {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Number> {
    let min = q.min.as_ref().map(|m| *m.get_ref());
    let max = q.max.as_ref().map(|m| *m.get_ref());
    for (key, v, s) in [("min", min, &q.min), ("max", max, &q.max)] {
        if let (Some(v), Some(s)) = (v, s) {
            if !v.is_finite() {
                problems.push(
                    at.file,
                    at.of(s),
                    key,
                    format!("{v} is not a finite number"),
                );
                return None;
            }
        }
    }
    if let (Some(lo), Some(hi), Some(s)) = (min, max, &q.max) {
        if lo >= hi {
            problems.push(
                at.file,
                at.of(s),
                "max",
                format!("{hi} is not above min {lo}"),
            );
            return None;
        }
    }
    Some(Number { min, max })
}

pub(crate) fn answer(n: &Number, value: &Value) -> Result<Answer, String> {
    let Some(x) = value.as_f64().filter(|x| x.is_finite()) else {
        return Err(format!("{value} is not a number"));
    };
    if n.min.is_some_and(|m| x < m) || n.max.is_some_and(|m| x > m) {
        return Err(format!(
            "{x} is outside {} to {}",
            n.min.map_or("-∞".into(), |m| m.to_string()),
            n.max.map_or("∞".into(), |m| m.to_string())
        ));
    }
    Ok(Answer::Number(x))
}

pub(crate) fn analyse(_n: &Number, cx: &Context<'_>) -> Value {
    let xs: Vec<f64> = cx
        .single_answers()
        .filter_map(|(_, _, a)| match a {
            Answer::Number(x) => Some(*x),
            _ => None,
        })
        .collect();
    let mut out = Map::new();
    out.insert("kind".into(), json!("number"));
    out.insert("answers".into(), json!(xs.len()));
    put(&mut out, "mean", finite(stats::mean(&xs)));
    for (key, q) in [("q1", 25.0), ("median", 50.0), ("q3", 75.0)] {
        put(&mut out, key, finite(stats::percentile(&xs, q)));
    }
    Value::Object(out)
}
