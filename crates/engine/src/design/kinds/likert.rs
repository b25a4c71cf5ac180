//! A rating on a scale of 2 to 11 points with a label per point or at its two ends.
//! Its analysis: Krippendorff's alpha at the four levels of measurement, Fleiss' kappa and the
//! one-way ICC where every snippet has as many answers, the cumulative link model of the answer
//! on the snippet's condition, the same with crossed random intercepts for participant and
//! snippet, and each snippet's and condition's distribution.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::{finite, put, Context};
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;
use crate::stats::{self, AlphaMetric, Factor};

pub const MIN_POINTS: i64 = 2;
pub const MAX_POINTS: i64 = 11;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Likert {
    pub points: u8,
    /// one per point, or the two ends' (empty: the points are numbered only)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl Likert {
    /// The label of point `p` (1-based), where it has one.
    pub fn label(&self, p: u8) -> Option<&str> {
        if self.labels.len() == usize::from(self.points) {
            self.labels.get(usize::from(p) - 1).map(String::as_str)
        } else if p == 1 {
            self.labels.first().map(String::as_str)
        } else if p == self.points {
            self.labels.get(1).map(String::as_str)
        } else {
            None
        }
    }
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Likert> {
    let Some(points) = &q.points else {
        problems.push(
            at.file,
            at.of(&q.kind),
            "points",
            format!("a likert question needs `points` ({MIN_POINTS} to {MAX_POINTS})"),
        );
        return None;
    };
    let n = *points.get_ref();
    if !(MIN_POINTS..=MAX_POINTS).contains(&n) {
        problems.push(
            at.file,
            at.of(points),
            "points",
            format!("{n} points: a scale has {MIN_POINTS} to {MAX_POINTS}"),
        );
        return None;
    }
    let labels = q
        .labels
        .as_ref()
        .map_or_else(Vec::new, |l| l.get_ref().clone());
    if let Some(l) = &q.labels {
        let len = labels.len() as i64;
        if len != n && len != 2 {
            problems.push(
                at.file,
                at.of(l),
                "labels",
                format!("{len} labels for {n} points: give one per point, or the two ends'"),
            );
            return None;
        }
        if labels.iter().any(|s| s.trim().is_empty()) {
            problems.push(at.file, at.of(l), "labels", "a label is empty");
            return None;
        }
    }
    Some(Likert {
        points: n as u8,
        labels,
    })
}

pub(crate) fn answer(l: &Likert, value: &Value) -> Result<Answer, String> {
    match value.as_i64() {
        Some(p) if (1..=i64::from(l.points)).contains(&p) => Ok(Answer::Number(p as f64)),
        _ => Err(format!(
            "{value} is not a point of the scale: a whole number from 1 to {}",
            l.points
        )),
    }
}

/// The question's report entry.
pub(crate) fn analyse(l: &Likert, cx: &Context<'_>, mixed_model: bool) -> Value {
    let answers: Vec<(usize, usize, u32)> = cx
        .single_answers()
        .filter_map(|(p, s, a)| match a {
            Answer::Number(x) => Some((p, s, *x as u32)),
            _ => None,
        })
        .collect();
    let mut out = Map::new();
    out.insert("kind".into(), json!("likert"));
    out.insert("points".into(), json!(l.points));
    out.insert("answers".into(), json!(answers.len()));
    // each snippet's answers, in the order given (the ICC's raters are these positions)
    let mut by_snippet: Vec<Vec<f64>> = vec![Vec::new(); cx.snippets.len()];
    for &(_, s, a) in &answers {
        by_snippet[s].push(f64::from(a));
    }
    let answered: Vec<&Vec<f64>> = by_snippet.iter().filter(|v| !v.is_empty()).collect();
    let units: Vec<Vec<f64>> = answered.iter().map(|v| (*v).clone()).collect();
    let mut alpha = Map::new();
    for (name, metric) in [
        ("nominal", AlphaMetric::Nominal),
        ("ordinal", AlphaMetric::Ordinal),
        ("interval", AlphaMetric::Interval),
        ("ratio", AlphaMetric::Ratio),
    ] {
        put(
            &mut alpha,
            name,
            finite(stats::krippendorff_alpha(&units, metric)),
        );
    }
    out.insert("alpha".into(), Value::Object(alpha));
    let counts: Vec<usize> = answered.iter().map(|v| v.len()).collect();
    let equal = counts.windows(2).all(|w| w[0] == w[1]) && counts.first().is_some_and(|&k| k >= 2);
    if equal {
        let table: Vec<Vec<f64>> = answered
            .iter()
            .map(|v| {
                let mut row = vec![0.0; usize::from(l.points)];
                for a in v.iter() {
                    row[*a as usize - 1] += 1.0;
                }
                row
            })
            .collect();
        put(
            &mut out,
            "fleiss_kappa",
            finite(stats::fleiss_kappa(&table)),
        );
        put(
            &mut out,
            "icc",
            stats::icc_one_way(&units)
                .map(|icc| json!({"ICC1": icc.single, "ICC1k": icc.average}))
                .map_err(|e| e.to_string()),
        );
    } else {
        let why = "the snippets have different numbers of answers (from {lo} to {hi}); Fleiss' \
                   kappa and the ICC need the same number for every snippet";
        let (lo, hi) = (
            counts.iter().min().copied().unwrap_or(0),
            counts.iter().max().copied().unwrap_or(0),
        );
        let why = why
            .replace("{lo}", &lo.to_string())
            .replace("{hi}", &hi.to_string());
        put(&mut out, "fleiss_kappa", Err(why.clone()));
        put(&mut out, "icc", Err(why));
    }
    let (columns, x) = cx.condition_columns(answers.iter().map(|&(_, s, _)| s));
    let ys: Vec<u32> = answers.iter().map(|&(_, _, a)| a).collect();
    put(
        &mut out,
        "ordinal_model",
        match stats::cumulative_logit(&ys, &x) {
            Ok(fit) => Ok({
                let named = |v: &[f64]| -> Value {
                    columns
                        .iter()
                        .zip(v)
                        .map(|(c, b)| (c.clone(), json!(b)))
                        .collect::<Map<_, _>>()
                        .into()
                };
                json!({
                    "coefficients": named(&fit.coefficients),
                    "standard_errors": named(&fit.coefficient_se),
                    "p_values": named(&fit.p_values),
                    "thresholds": fit.thresholds,
                    "threshold_standard_errors": fit.threshold_se,
                    "levels": fit.levels,
                    "log_likelihood": fit.log_likelihood,
                })
            }),
            Err(e) => Err(e.to_string()),
        },
    );
    let participants: Vec<usize> = answers.iter().map(|&(p, _, _)| p).collect();
    let items: Vec<usize> = answers.iter().map(|&(_, s, _)| s).collect();
    put(
        &mut out,
        "mixed_ordinal_model",
        match if mixed_model {
            stats::cumulative_logit_mixed(
                &ys,
                &x,
                [
                    Factor {
                        level: &participants,
                        levels: cx.participants.len(),
                    },
                    Factor {
                        level: &items,
                        levels: cx.snippets.len(),
                    },
                ],
            )
        } else {
            Err(stats::StatsError::Invalid("not asked for".into()))
        } {
            Ok(fit) => Ok({
                let named: Map<String, Value> = columns
                    .iter()
                    .zip(&fit.coefficients)
                    .map(|(c, b)| (c.clone(), json!(b)))
                    .collect();
                json!({
                    "coefficients": named,
                    "thresholds": fit.thresholds,
                    "sd": {"participant": fit.sd[0], "item": fit.sd[1]},
                    "levels": fit.levels,
                    "log_likelihood": fit.log_likelihood,
                })
            }),
            Err(e) => Err(e.to_string()),
        },
    );
    let mut per_snippet = Map::new();
    for (s, v) in by_snippet.iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        let mut counts = vec![0u64; usize::from(l.points)];
        for a in v {
            counts[*a as usize - 1] += 1;
        }
        per_snippet.insert(
            cx.snippets[s].id.clone(),
            json!({
                "answers": v.len(),
                "mean": v.iter().sum::<f64>() / v.len() as f64,
                "median": stats::percentile(v, 50.0).ok(),
                "counts": counts,
            }),
        );
    }
    out.insert("snippets".into(), Value::Object(per_snippet));
    let mut per_condition = Map::new();
    for (name, members) in cx.by_condition(answers.iter().map(|&(_, s, a)| (s, a))) {
        let mut counts = vec![0u64; usize::from(l.points)];
        for a in &members {
            counts[*a as usize - 1] += 1;
        }
        let values: Vec<f64> = members.iter().map(|a| f64::from(*a)).collect();
        per_condition.insert(
            name,
            json!({
                "answers": values.len(),
                "mean": stats::mean(&values).ok(),
                "counts": counts,
            }),
        );
    }
    out.insert("conditions".into(), Value::Object(per_condition));
    Value::Object(out)
}
