//! Time on item: the sanity checks (99th-percentile cut, Mann-Whitney U per level pair and
//! agreement vs disagreement, effect size r).

use std::collections::BTreeMap;

use rayon::prelude::*;

use serde::Serialize;

use super::*;
use crate::formats::survey::is_time_on_item;
use crate::formats::Level;
use crate::stats::{self, Alternative, MannWhitney};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanStd {
    pub n: usize,
    pub mean: f64,
    pub std: f64,
}

impl MeanStd {
    fn of(xs: &[f64]) -> Option<MeanStd> {
        Some(MeanStd {
            n: xs.len(),
            mean: stats::mean(xs).ok()?,
            std: stats::pstd(xs).ok()?,
        })
    }
}

/// The time-on-item sanity checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeReport {
    pub p99_cutoff: f64,
    pub dropped: usize,
    pub n: usize,
    pub mean: f64,
    pub std: f64,
    pub by_level: BTreeMap<String, MeanStd>,
    pub agreement: Option<MeanStd>,
    pub disagreement: Option<MeanStd>,
    /// `mww_A_vs_B` tests, flattened into this object.
    #[serde(flatten)]
    pub tests: BTreeMap<String, MannWhitney>,
    /// The times each level's figures and tests stand on (complete items, counted
    /// participants, under the cutoff): what the time figure draws, so that it shows the
    /// table's data (not in report.json: `by_level` says their counts).
    #[serde(skip)]
    pub times_by_level: BTreeMap<String, Vec<f64>>,
}

pub(super) fn time_report(data: &StudyData, results: &[ItemResult]) -> Option<TimeReport> {
    // a stored time that is no measurement (one kept before the rule, or a forged import)
    // is unmeasured here too
    let measured = |v: &Vote| v.time_secs.filter(|t| is_time_on_item(*t));
    let all: Vec<f64> = data.votes.iter().filter_map(measured).collect();
    let cutoff = stats::percentile(&all, 99.0).ok()?;
    let kept: Vec<&Vote> = data
        .votes
        .iter()
        .filter(|v| measured(v).is_some_and(|t| t < cutoff))
        .collect();
    let times = |pred: &dyn Fn(&Vote) -> bool| -> Vec<f64> {
        kept.iter()
            .filter(|v| pred(v))
            .filter_map(|v| measured(v))
            .collect()
    };
    let overall = times(&|_| true);
    let mut by_level = BTreeMap::new();
    let mut level_times = BTreeMap::new();
    for level in Level::ALL {
        let t = times(&|v: &Vote| data.items[v.item].level == level);
        if let Some(ms) = MeanStd::of(&t) {
            by_level.insert(level.as_str().to_owned(), ms);
        }
        level_times.insert(level, t);
    }
    let cat = |v: &Vote| results[v.item].category;
    let agree = times(&|v: &Vote| cat(v).is_some_and(Category::is_agreement));
    let disagree = times(&|v: &Vote| cat(v).is_some_and(|c| !c.is_agreement()));
    let mut samples: Vec<(String, &[f64], &[f64])> = [
        (Level::Naming, Level::Expression),
        (Level::Naming, Level::Statement),
        (Level::Expression, Level::Statement),
    ]
    .into_iter()
    .map(|(a, b)| {
        (
            format!("mww_{a}_vs_{b}"),
            level_times[&a].as_slice(),
            level_times[&b].as_slice(),
        )
    })
    .collect();
    samples.push((
        "mww_agreement_vs_disagreement".to_owned(),
        &agree,
        &disagree,
    ));
    // the tests on every core
    let tests: BTreeMap<String, stats::MannWhitney> = samples
        .into_par_iter()
        .filter_map(|(name, x, y)| {
            stats::mann_whitney_u(x, y, Alternative::Less)
                .ok()
                .map(|r| (name, r))
        })
        .collect();
    let whole = MeanStd::of(&overall)?;
    Some(TimeReport {
        p99_cutoff: cutoff,
        dropped: all.len() - overall.len(),
        n: whole.n,
        mean: whole.mean,
        std: whole.std,
        by_level,
        agreement: MeanStd::of(&agree),
        disagreement: MeanStd::of(&disagree),
        tests,
        times_by_level: level_times
            .into_iter()
            .map(|(l, t)| (l.as_str().to_owned(), t))
            .collect(),
    })
}
