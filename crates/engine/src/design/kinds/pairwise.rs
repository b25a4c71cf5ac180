//! "Which of the two?": an answer is the snippet chosen, or `tie` where the question allows
//! ties. Its analysis: Bradley–Terry log-strengths by maximum likelihood with bootstrap 95%
//! intervals, online Elo in the order the answers were given, win rates, and the position
//! bias (A chosen over B) with its binomial test.

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::{finite, put, Context};
use super::super::record::Shown;
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;
use crate::stats::{self, Comparison, EloRule, Outcome};

/// The answer that says neither snippet of a pair is the better.
pub const TIE: &str = "tie";
/// Bootstrap replicates of the Bradley–Terry fit.
pub const REPLICATES: usize = 200;
/// The most snippets a bootstrap is run for (each replicate refits every strength).
pub const MAX_BOOTSTRAP_SNIPPETS: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairwise {
    /// whether `tie` is an answer
    pub ties: bool,
    /// the pairs each snippet is in (`None`: every pair of a small study, else
    /// `units::DEFAULT_PAIRS_PER_SNIPPET`; snippets with a group: every pair of the group)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_snippet: Option<u32>,
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<Pairwise> {
    Some(Pairwise {
        ties: q.ties.as_ref().is_none_or(|t| *t.get_ref()),
        per_snippet: super::per_snippet(q, at, problems).ok()?,
    })
}

/// Checks an answer about `pair` (A first): one of the pair's snippets, or `tie`.
pub fn answer(p: &Pairwise, pair: &[String; 2], value: &Value) -> Result<Answer, String> {
    match value.as_str() {
        Some(TIE) if p.ties => Ok(Answer::Text(TIE.into())),
        Some(TIE) => Err("this question allows no tie".into()),
        Some(s) if pair.iter().any(|x| x == s) => Ok(Answer::Text(s.to_owned())),
        _ => Err(format!(
            "{value} is neither snippet of the pair ({}, {}){}",
            pair[0],
            pair[1],
            if p.ties { " nor `tie`" } else { "" }
        )),
    }
}

pub(crate) fn analyse(_p: &Pairwise, cx: &Context<'_>) -> Value {
    // the snippets compared, in the study's order
    let mut compared = vec![false; cx.snippets.len()];
    let mut raw: Vec<(usize, usize, Outcome)> = Vec::new();
    for r in &cx.responses {
        let (Shown::Pair(pair), Answer::Text(pick)) = (&r.shown, &r.answer) else {
            continue;
        };
        let (Some(a), Some(b)) = (cx.snippet(&pair[0]), cx.snippet(&pair[1])) else {
            continue;
        };
        let outcome = if pick == TIE {
            Outcome::Tie
        } else if *pick == pair[0] {
            Outcome::A
        } else {
            Outcome::B
        };
        compared[a] = true;
        compared[b] = true;
        raw.push((a, b, outcome));
    }
    let index: Vec<usize> = (0..cx.snippets.len()).filter(|&s| compared[s]).collect();
    let mut local = vec![usize::MAX; cx.snippets.len()];
    for (i, &s) in index.iter().enumerate() {
        local[s] = i;
    }
    let comparisons: Vec<Comparison> = raw
        .iter()
        .map(|&(a, b, outcome)| Comparison {
            a: local[a],
            b: local[b],
            outcome,
        })
        .collect();
    let n = index.len();
    let name = |i: usize| cx.snippets[index[i]].id.clone();
    let named = |xs: &[f64]| -> Value {
        xs.iter()
            .enumerate()
            .map(|(i, x)| (name(i), json!(x)))
            .collect::<Map<_, _>>()
            .into()
    };
    let mut out = Map::new();
    out.insert("kind".into(), json!("pairwise"));
    out.insert("answers".into(), json!(comparisons.len()));
    let never: Vec<&str> = (0..cx.snippets.len())
        .filter(|&s| !compared[s])
        .map(|s| cx.snippets[s].id.as_str())
        .collect();
    out.insert("never_compared".into(), json!(never));
    let fit = stats::bradley_terry(n, &comparisons).map_err(|e| {
        e.to_string()
            .replace("items", "snippets")
            .replace("item", "snippet")
    });
    put(
        &mut out,
        "bradley_terry",
        fit.as_ref()
            .map(|t| named(t))
            .map_err(|e| named_groups(e.clone(), &name, n, &comparisons)),
    );
    if fit.is_ok() {
        put(
            &mut out,
            "bradley_terry_interval",
            bootstrap(n, &comparisons).map(|(lo, hi)| {
                (0..n)
                    .map(|i| (name(i), json!([lo[i], hi[i]])))
                    .collect::<Map<_, _>>()
                    .into()
            }),
        );
    }
    put(
        &mut out,
        "elo",
        stats::elo(n, &comparisons, EloRule::default())
            .map(|r| named(&r))
            .map_err(|e| e.to_string()),
    );
    put(
        &mut out,
        "win_rate",
        stats::win_rates(n, &comparisons)
            .map(|w| {
                w.iter()
                    .enumerate()
                    .map(|(i, x)| (name(i), json!(x)))
                    .collect::<Map<_, _>>()
                    .into()
            })
            .map_err(|e| e.to_string()),
    );
    let decisive: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.outcome != Outcome::Tie)
        .collect();
    let a_chosen = decisive.iter().filter(|c| c.outcome == Outcome::A).count() as u64;
    let total = decisive.len() as u64;
    let mut bias = Map::new();
    bias.insert("a_chosen".into(), json!(a_chosen));
    bias.insert("decisive".into(), json!(total));
    bias.insert("ties".into(), json!(comparisons.len() as u64 - total));
    put(
        &mut bias,
        "share_a",
        if total == 0 {
            Err("no decisive answer".into())
        } else {
            Ok(json!(a_chosen as f64 / total as f64))
        },
    );
    put(
        &mut bias,
        "p_value",
        finite(stats::binomial_test(a_chosen, total, 0.5)),
    );
    out.insert("position_bias".into(), Value::Object(bias));
    Value::Object(out)
}

/// The groups of a graph that is not strongly connected, by snippet id.
fn named_groups(
    reason: String,
    name: &dyn Fn(usize) -> String,
    n: usize,
    comparisons: &[Comparison],
) -> String {
    match stats::beat_components(n, comparisons) {
        Ok(groups) if groups.len() > 1 => {
            let listed: Vec<String> = groups
                .iter()
                .map(|g| {
                    format!(
                        "[{}]",
                        g.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", ")
                    )
                })
                .collect();
            format!(
                "the answers do not connect every snippet both ways, so some strength would be \
                 infinite; groups: {}",
                listed.join(", ")
            )
        }
        _ => reason,
    }
}

/// Percentile 95% intervals of each log-strength over comparisons resampled with replacement
/// (seeded; replicates whose graph falls apart are skipped).
fn bootstrap(n: usize, comparisons: &[Comparison]) -> Result<(Vec<f64>, Vec<f64>), String> {
    if n > MAX_BOOTSTRAP_SNIPPETS {
        return Err(format!(
            "{n} snippets: the bootstrap is run for at most {MAX_BOOTSTRAP_SNIPPETS}"
        ));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x6274);
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut sample = Vec::with_capacity(comparisons.len());
    for _ in 0..REPLICATES {
        sample.clear();
        for _ in 0..comparisons.len() {
            sample.push(comparisons[rng.gen_range(0..comparisons.len())]);
        }
        if let Ok(t) = stats::bradley_terry(n, &sample) {
            for (d, x) in draws.iter_mut().zip(t) {
                d.push(x);
            }
        }
    }
    if draws.first().is_none_or(|d| d.len() < REPLICATES / 2) {
        return Err("most resampled answers leave some snippet unbeaten or unbeating".into());
    }
    let lo = draws
        .iter()
        .map(|d| stats::percentile(d, 2.5).unwrap_or(f64::NAN))
        .collect();
    let hi = draws
        .iter()
        .map(|d| stats::percentile(d, 97.5).unwrap_or(f64::NAN))
        .collect();
    Ok((lo, hi))
}
