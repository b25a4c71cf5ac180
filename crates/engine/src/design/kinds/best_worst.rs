//! Best–worst scaling: of a set of `set_size` snippets, the best and the worst. Its analysis:
//! each snippet's (times best − times worst) / appearances, and the split-half reliability of
//! those scores (participants alternately in two halves, Spearman–Brown corrected).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::super::context::{put, Context};
use super::super::record::Shown;
use super::super::{At, RawQuestion};
use super::Answer;
use crate::formats::Problems;
use crate::stats;

pub const MIN_SET: i64 = 3;
pub const MAX_SET: i64 = 8;
pub const DEFAULT_SET: u8 = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestWorst {
    pub set_size: u8,
    /// the sets each snippet is in (`None`: twice the set size, so `n` snippets give `2n`
    /// sets)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_snippet: Option<u32>,
}

pub(crate) fn parse(q: &RawQuestion, at: &At<'_>, problems: &mut Problems) -> Option<BestWorst> {
    let set_size = match &q.set_size {
        None => DEFAULT_SET,
        Some(s) if (MIN_SET..=MAX_SET).contains(s.get_ref()) => *s.get_ref() as u8,
        Some(s) => {
            problems.push(
                at.file,
                at.of(s),
                "set_size",
                format!(
                    "{}: a set holds {MIN_SET} to {MAX_SET} snippets",
                    s.get_ref()
                ),
            );
            return None;
        }
    };
    Some(BestWorst {
        set_size,
        per_snippet: super::per_snippet(q, at, problems).ok()?,
    })
}

/// Checks a best and a worst of `set` (as shown).
pub fn answer(
    b: &BestWorst,
    set: &[String],
    best: &Value,
    worst: &Value,
) -> Result<Answer, String> {
    if set.len() != usize::from(b.set_size) {
        return Err(format!(
            "a set of {} snippets; this question's sets hold {}",
            set.len(),
            b.set_size
        ));
    }
    let pick = |v: &Value, what: &str| match v.as_str() {
        Some(s) if set.iter().any(|x| x == s) => Ok(s.to_owned()),
        _ => Err(format!("the {what}, {v}, is not a snippet of the set")),
    };
    let (best, worst) = (pick(best, "best")?, pick(worst, "worst")?);
    if best == worst {
        return Err(format!("`{best}` is both the best and the worst"));
    }
    Ok(Answer::BestWorst { best, worst })
}

/// One answer: the set's snippets (by index), the best and the worst.
type Picked = (Vec<usize>, usize, usize);

/// (best − worst) / appearances per snippet; `None` where a snippet never appeared.
fn scores(n: usize, sets: &[Picked]) -> Vec<Option<f64>> {
    let mut net = vec![0i64; n];
    let mut seen = vec![0u64; n];
    for (set, best, worst) in sets {
        for &s in set {
            seen[s] += 1;
        }
        net[*best] += 1;
        net[*worst] -= 1;
    }
    net.iter()
        .zip(&seen)
        .map(|(&d, &m)| (m > 0).then(|| d as f64 / m as f64))
        .collect()
}

pub(crate) fn analyse(_b: &BestWorst, cx: &Context<'_>) -> Value {
    let mut sets: Vec<(usize, Picked)> = Vec::new();
    for r in &cx.responses {
        let (Shown::Set(set), Answer::BestWorst { best, worst }) = (&r.shown, &r.answer) else {
            continue;
        };
        let members: Option<Vec<usize>> = set.iter().map(|s| cx.snippet(s)).collect();
        let (Some(members), Some(b), Some(w)) = (members, cx.snippet(best), cx.snippet(worst))
        else {
            continue;
        };
        sets.push((cx.participant(&r.participant), (members, b, w)));
    }
    let n = cx.snippets.len();
    let all: Vec<_> = sets.iter().map(|(_, s)| s.clone()).collect();
    let score = scores(n, &all);
    let mut out = Map::new();
    out.insert("kind".into(), json!("best-worst"));
    out.insert("answers".into(), json!(all.len()));
    let mut by_snippet = Map::new();
    let mut counts = Map::new();
    let mut best = vec![0u64; n];
    let mut worst = vec![0u64; n];
    let mut seen = vec![0u64; n];
    for (set, b, w) in &all {
        best[*b] += 1;
        worst[*w] += 1;
        for &s in set {
            seen[s] += 1;
        }
    }
    for (s, sc) in score.iter().enumerate() {
        if let Some(sc) = sc {
            by_snippet.insert(cx.snippets[s].id.clone(), json!(sc));
            counts.insert(
                cx.snippets[s].id.clone(),
                json!({"best": best[s], "worst": worst[s], "appearances": seen[s]}),
            );
        }
    }
    out.insert("scores".into(), Value::Object(by_snippet));
    out.insert("counts".into(), Value::Object(counts));
    let half = |h: usize| -> Vec<Option<f64>> {
        let part: Vec<_> = sets
            .iter()
            .filter(|(p, _)| p % 2 == h)
            .map(|(_, s)| s.clone())
            .collect();
        scores(n, &part)
    };
    let (a, b) = (half(0), half(1));
    let (xs, ys): (Vec<f64>, Vec<f64>) = a
        .iter()
        .zip(&b)
        .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
        .unzip();
    let reliability = if xs.len() < 3 {
        Err(format!(
            "{} snippets were seen by both halves of the participants; the split-half \
             reliability needs three",
            xs.len()
        ))
    } else {
        match stats::pearson(&xs, &ys) {
            Ok(r) if r.is_finite() && r > -1.0 => Ok(json!({
                "halves_correlation": r,
                "spearman_brown": 2.0 * r / (1.0 + r),
                "snippets": xs.len(),
            })),
            Ok(_) | Err(_) => Err("the halves' scores do not vary".into()),
        }
    };
    put(&mut out, "split_half", reliability);
    Value::Object(out)
}
