//! The study's results from votes, repair-tool results and cross-entropy scores, as the
//! published method defines them. Keys of [`Report`] follow `shared/reference/.../expected.json`.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::stats::{self, Alternative, MannWhitney};
use crate::formats::Level;

/// One item (transformation) of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    pub bug: String,
    pub level: Level,
    pub operator: String,
    /// Gold/attention items: the expected judgement (true = unnatural).
    pub gold_unnatural: Option<bool>,
}

/// One annotator's (latest) vote on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    /// index into [`StudyData::items`]
    pub item: usize,
    pub annotator: String,
    pub cr: u8,
    pub cc: u8,
    pub time_secs: Option<f64>,
}

/// Everything the analysis reads, as plain data.
#[derive(Debug, Clone, Default)]
pub struct StudyData {
    pub bugs: Vec<String>,
    pub items: Vec<Item>,
    pub votes: Vec<Vote>,
    /// (tool, target, status 0/1/2)
    pub npr: Vec<(String, String, u8)>,
    /// (model, target, cross-entropy)
    pub ce: Vec<(String, String, f64)>,
}

/// An annotator's binary judgement: unnatural when CR ≥ 3 or CC ≥ 3.
pub fn judges_unnatural(cr: u8, cc: u8) -> bool {
    cr >= 3 || cc >= 3
}

/// The naturalness category of an item from its votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Natural,
    LikelyNatural,
    LikelyUnnatural,
    Unnatural,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Natural,
        Category::LikelyNatural,
        Category::LikelyUnnatural,
        Category::Unnatural,
    ];

    /// With five votes: natural ≤ 1 unnatural vote, likely natural 2, likely unnatural 3,
    /// unnatural ≥ 4. Other numbers of votes use the same shares (≤ 1/5, ≤ 2/5, ≤ 3/5, more).
    pub fn of(unnatural_votes: usize, votes: usize) -> Option<Category> {
        if votes == 0 {
            return None;
        }
        let (u5, n) = (unnatural_votes * 5, votes);
        Some(if u5 <= n {
            Category::Natural
        } else if u5 <= 2 * n {
            Category::LikelyNatural
        } else if u5 <= 3 * n {
            Category::LikelyUnnatural
        } else {
            Category::Unnatural
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Natural => "natural",
            Category::LikelyNatural => "likely_natural",
            Category::LikelyUnnatural => "likely_unnatural",
            Category::Unnatural => "unnatural",
        }
    }

    /// Natural and unnatural items are the ones the annotators (mostly) agreed on.
    pub fn is_agreement(self) -> bool {
        matches!(self, Category::Natural | Category::Unnatural)
    }
}

/// One item's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemResult {
    pub key: String,
    pub bug: String,
    pub level: Level,
    pub operator: String,
    pub votes: usize,
    pub unnatural_votes: usize,
    pub category: Option<Category>,
    pub full_agreement: bool,
    pub mean_cr: Option<f64>,
    pub mean_cc: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub full_natural: usize,
    pub full_unnatural: usize,
    pub natural: usize,
    pub unnatural: usize,
    pub likely_natural: usize,
    pub likely_unnatural: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CategoryCounts {
    pub natural: usize,
    pub unnatural: usize,
    pub likely_natural: usize,
    pub likely_unnatural: usize,
}

impl CategoryCounts {
    fn add(&mut self, c: Category) {
        match c {
            Category::Natural => self.natural += 1,
            Category::LikelyNatural => self.likely_natural += 1,
            Category::LikelyUnnatural => self.likely_unnatural += 1,
            Category::Unnatural => self.unnatural += 1,
        }
    }
}

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
}

/// Robustness of one repair tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolReport {
    pub changes_all: usize,
    pub change_share_by_category: BTreeMap<String, f64>,
    pub false_alarm_rate: Option<f64>,
    pub natural: NaturalRobustness,
    /// The same rates over all transformations (performance change under all vs natural).
    pub all: NaturalRobustness,
    /// Bugs with at least one transformation, by level: all and natural only (applicability).
    pub by_level: BTreeMap<String, LevelRobustness>,
}

/// One pair of tools: differences (first − second) in fixed bugs, original vs transformed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateDifference {
    pub original_plausible: f64,
    pub transformed_plausible: f64,
    pub original_correct: f64,
    pub transformed_correct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairDifference {
    pub all: RateDifference,
    pub natural: RateDifference,
}

/// Bugs with at least one transformation of a level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applicability {
    pub bugs_all: usize,
    pub bugs_natural: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NaturalRobustness {
    pub bugs: usize,
    pub original_plausible: usize,
    pub original_correct: usize,
    pub transformed_plausible: f64,
    pub transformed_correct: f64,
    pub plausible_drop: Option<f64>,
    pub correct_drop: Option<f64>,
    pub bugs_positive: usize,
    pub bugs_negative: usize,
    pub bugs_changed: usize,
    pub positive_changes: usize,
    pub negative_changes: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LevelRobustness {
    pub bugs_with_transformations: usize,
    pub bugs_with_natural_transformations: usize,
    pub bugs_changed: usize,
    pub changes: usize,
}

/// RNC of one language model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReport {
    pub items: usize,
    pub mww_natural_vs_unnatural: Option<MannWhitney>,
    pub mww_likely_natural_vs_likely_unnatural: Option<MannWhitney>,
    pub spearman_original_vs_transformed: Option<f64>,
    pub auc_rnc: Option<f64>,
    pub auc_nc: Option<f64>,
    pub auc_ce: Option<f64>,
    pub roc_rnc: Option<stats::Roc>,
    /// Per item: (key, CE = H(b′), NC = H(b′) − H(b), RNC = (H(b′)/H(b) − 1)·100), by RNC ascending.
    pub ranking: Vec<RncRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RncRow {
    pub key: String,
    pub category: Option<Category>,
    pub ce: f64,
    pub nc: f64,
    pub rnc: f64,
}

/// Everything the analysis reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub items: usize,
    pub votes: usize,
    pub annotators: usize,
    pub fleiss_kappa: Option<f64>,
    pub agreement: Agreement,
    pub counts: Counts,
    pub counts_by_level: BTreeMap<String, CategoryCounts>,
    pub counts_by_operator: BTreeMap<String, CategoryCounts>,
    pub time: Option<TimeReport>,
    pub robustness: BTreeMap<String, ToolReport>,
    /// Differences between every pair of tools, original vs transformed.
    pub robustness_pairs: BTreeMap<String, PairDifference>,
    pub applicability: BTreeMap<String, Applicability>,
    pub rnc: BTreeMap<String, ModelReport>,
    /// Per annotator: agreement with the leave-one-out majority, gold accuracy, median time.
    pub annotator_quality: BTreeMap<String, AnnotatorQuality>,
    /// Annotators left out by [`Options::min_gold_accuracy`].
    pub excluded_annotators: Vec<String>,
    pub item_results: Vec<ItemResult>,
}

/// One annotator's quality figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorQuality {
    pub votes: usize,
    /// Share of their votes that agree with the majority of the other annotators of the item
    /// (items where the others tie are skipped).
    pub loo_majority_agreement: Option<f64>,
    pub gold_items: usize,
    pub gold_accuracy: Option<f64>,
    pub median_time: Option<f64>,
}

/// How to run the analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Leave out every annotator whose gold accuracy is below this (those without gold votes stay).
    pub min_gold_accuracy: Option<f64>,
    /// Bootstrap replicates for the agreement intervals (0: none).
    pub bootstrap: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            min_gold_accuracy: None,
            bootstrap: 1000,
            seed: 20240601,
        }
    }
}

/// A coefficient with its bootstrap 95% interval (items resampled).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measure {
    pub value: Option<f64>,
    pub ci95: Option<(f64, f64)>,
}

/// Agreement on one question's 4-point scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaleAgreement {
    /// Fleiss' kappa over the four answers (items with the modal number of ratings).
    pub fleiss_kappa: Measure,
    /// Krippendorff's alpha, ordinal and interval (every item; missing ratings allowed).
    pub alpha_ordinal: Measure,
    pub alpha_interval: Measure,
}

/// Agreement beyond the headline binary kappa.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    pub binary_fleiss_kappa: Measure,
    pub binary_alpha_nominal: Measure,
    pub readability: ScaleAgreement,
    pub conventions: ScaleAgreement,
}

/// Fleiss' kappa rows: `cats` category counts per unit, on the units with the modal number of values.
fn fleiss_rows(units: &[Vec<f64>], cats: &[f64]) -> Option<stats::FleissRows> {
    let mut freq: HashMap<usize, usize> = HashMap::new();
    for u in units.iter().filter(|u| !u.is_empty()) {
        *freq.entry(u.len()).or_default() += 1;
    }
    let k = freq
        .into_iter()
        .max_by_key(|&(n, c)| (c, n))
        .map(|(n, _)| n)?;
    let table: Vec<Vec<f64>> = units
        .iter()
        .filter(|u| u.len() == k)
        .map(|u| {
            cats.iter()
                .map(|c| u.iter().filter(|v| *v == c).count() as f64)
                .collect()
        })
        .collect();
    stats::FleissRows::new(&table).ok()
}

fn with_ci(n: usize, options: &Options, salt: u64, f: impl Fn(&[usize]) -> Option<f64>) -> Measure {
    let all: Vec<usize> = (0..n).collect();
    let value = f(&all).filter(|x| x.is_finite());
    let ci95 = if options.bootstrap > 0 && value.is_some() {
        stats::bootstrap_ci(n, options.bootstrap, options.seed ^ salt, &f)
    } else {
        None
    };
    Measure { value, ci95 }
}

fn kappa_measure(units: &[Vec<f64>], cats: &[f64], options: &Options, salt: u64) -> Measure {
    match fleiss_rows(units, cats) {
        Some(rows) => with_ci(rows.len(), options, salt, |p| rows.kappa_of(p).ok()),
        None => Measure {
            value: None,
            ci95: None,
        },
    }
}

fn alpha_measure(
    units: &[Vec<f64>],
    metric: stats::AlphaMetric,
    options: &Options,
    salt: u64,
) -> Measure {
    let prepared = stats::AlphaUnits::new(units);
    with_ci(prepared.len(), options, salt, |p| {
        prepared.alpha_of(p, metric).ok()
    })
}

fn scale(units: &[Vec<f64>], options: &Options, salt: u64) -> ScaleAgreement {
    let cats = [1.0, 2.0, 3.0, 4.0];
    ScaleAgreement {
        fleiss_kappa: kappa_measure(units, &cats, options, salt),
        alpha_ordinal: alpha_measure(units, stats::AlphaMetric::Ordinal, options, salt + 1),
        alpha_interval: alpha_measure(units, stats::AlphaMetric::Interval, options, salt + 2),
    }
}

/// Agreement of the study's votes.
pub fn agreement(data: &StudyData, options: &Options) -> Agreement {
    let mut cr: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    let mut cc: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    let mut bin: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    for v in &data.votes {
        if v.item < data.items.len() {
            cr[v.item].push(f64::from(v.cr));
            cc[v.item].push(f64::from(v.cc));
            bin[v.item].push(f64::from(u8::from(judges_unnatural(v.cr, v.cc))));
        }
    }
    Agreement {
        binary_fleiss_kappa: kappa_measure(&bin, &[0.0, 1.0], options, 1),
        binary_alpha_nominal: alpha_measure(&bin, stats::AlphaMetric::Nominal, options, 2),
        readability: scale(&cr, options, 10),
        conventions: scale(&cc, options, 20),
    }
}

/// Quality figures of every annotator.
pub fn annotator_quality(data: &StudyData) -> BTreeMap<String, AnnotatorQuality> {
    let mut per_item: Vec<Vec<&Vote>> = vec![Vec::new(); data.items.len()];
    for v in &data.votes {
        if let Some(slot) = per_item.get_mut(v.item) {
            slot.push(v);
        }
    }
    /// votes, decided items, agreeing, gold votes, gold right, times
    type Tally = (usize, usize, usize, usize, usize, Vec<f64>);
    let mut out: BTreeMap<String, Tally> = BTreeMap::new();
    for v in &data.votes {
        let e = out.entry(v.annotator.clone()).or_default();
        e.0 += 1;
        let mine = judges_unnatural(v.cr, v.cc);
        let others: Vec<bool> = per_item[v.item]
            .iter()
            .filter(|o| o.annotator != v.annotator)
            .map(|o| judges_unnatural(o.cr, o.cc))
            .collect();
        let u = others.iter().filter(|x| **x).count();
        let n = others.len() - u;
        if u != n {
            e.1 += 1;
            e.2 += usize::from((u > n) == mine);
        }
        if let Some(g) = data.items[v.item].gold_unnatural {
            e.3 += 1;
            e.4 += usize::from(g == mine);
        }
        if let Some(t) = v.time_secs {
            e.5.push(t);
        }
    }
    out.into_iter()
        .map(|(a, (votes, decided, agree, gold, right, mut times))| {
            times.sort_by(f64::total_cmp);
            let median = (!times.is_empty()).then(|| {
                let m = times.len();
                if m % 2 == 1 {
                    times[m / 2]
                } else {
                    (times[m / 2 - 1] + times[m / 2]) / 2.0
                }
            });
            (
                a,
                AnnotatorQuality {
                    votes,
                    loo_majority_agreement: ratio(agree as f64, decided as f64),
                    gold_items: gold,
                    gold_accuracy: ratio(right as f64, gold as f64),
                    median_time: median,
                },
            )
        })
        .collect()
}

/// Per-item outcomes.
pub fn item_results(data: &StudyData) -> Vec<ItemResult> {
    let mut per: Vec<Vec<&Vote>> = vec![Vec::new(); data.items.len()];
    for v in &data.votes {
        if let Some(slot) = per.get_mut(v.item) {
            slot.push(v);
        }
    }
    data.items
        .iter()
        .zip(per)
        .map(|(item, votes)| {
            let n = votes.len();
            let u = votes
                .iter()
                .filter(|v| judges_unnatural(v.cr, v.cc))
                .count();
            let mean_of = |f: fn(&Vote) -> u8| {
                (n > 0).then(|| votes.iter().map(|v| f64::from(f(v))).sum::<f64>() / n as f64)
            };
            ItemResult {
                key: item.key.clone(),
                bug: item.bug.clone(),
                level: item.level,
                operator: item.operator.clone(),
                votes: n,
                unnatural_votes: u,
                category: Category::of(u, n),
                full_agreement: n > 0 && (u == 0 || u == n),
                mean_cr: mean_of(|v| v.cr),
                mean_cc: mean_of(|v| v.cc),
            }
        })
        .collect()
}

/// The most common number of votes per item among items with votes (the study's k in practice).
fn modal_votes(results: &[ItemResult]) -> Option<usize> {
    let mut freq: HashMap<usize, usize> = HashMap::new();
    for r in results.iter().filter(|r| r.votes > 0) {
        *freq.entry(r.votes).or_default() += 1;
    }
    freq.into_iter()
        .max_by_key(|&(votes, count)| (count, votes))
        .map(|(v, _)| v)
}

/// Fleiss' kappa over the binary judgement, on the items that have the modal number of votes.
fn binary_fleiss(results: &[ItemResult]) -> Option<f64> {
    let k = modal_votes(results)?;
    let table: Vec<Vec<f64>> = results
        .iter()
        .filter(|r| r.votes == k)
        .map(|r| {
            vec![
                (r.votes - r.unnatural_votes) as f64,
                r.unnatural_votes as f64,
            ]
        })
        .collect();
    stats::fleiss_kappa(&table).ok()
}

fn time_report(data: &StudyData, results: &[ItemResult]) -> Option<TimeReport> {
    let all: Vec<f64> = data.votes.iter().filter_map(|v| v.time_secs).collect();
    let cutoff = stats::percentile(&all, 99.0).ok()?;
    let kept: Vec<&Vote> = data
        .votes
        .iter()
        .filter(|v| v.time_secs.is_some_and(|t| t < cutoff))
        .collect();
    let times = |pred: &dyn Fn(&Vote) -> bool| -> Vec<f64> {
        kept.iter()
            .filter(|v| pred(v))
            .filter_map(|v| v.time_secs)
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
    let mut tests = BTreeMap::new();
    for (a, b) in [
        (Level::Naming, Level::Expression),
        (Level::Naming, Level::Statement),
        (Level::Expression, Level::Statement),
    ] {
        if let Ok(r) = stats::mann_whitney_u(&level_times[&a], &level_times[&b], Alternative::Less)
        {
            tests.insert(format!("mww_{a}_vs_{b}"), r);
        }
    }
    if let Ok(r) = stats::mann_whitney_u(&agree, &disagree, Alternative::Less) {
        tests.insert("mww_agreement_vs_disagreement".to_owned(), r);
    }
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
    })
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den != 0.0).then(|| num / den)
}

/// Per-bug normalised rates over the transformations that `keep` accepts, grouped by bug.
fn rates(
    data: &StudyData,
    pairs: &[(usize, u8, u8)],
    keep: impl Fn(usize) -> bool,
) -> NaturalRobustness {
    let mut per_bug: BTreeMap<&str, Vec<(u8, u8)>> = BTreeMap::new();
    for &(i, t, o) in pairs {
        if keep(i) {
            per_bug
                .entry(data.items[i].bug.as_str())
                .or_default()
                .push((t, o));
        }
    }
    let mut n = NaturalRobustness {
        bugs: per_bug.len(),
        ..Default::default()
    };
    for list in per_bug.values() {
        let o = list[0].1;
        n.original_plausible += usize::from(o >= 1);
        n.original_correct += usize::from(o == 2);
        let len = list.len() as f64;
        n.transformed_plausible += list.iter().filter(|(t, _)| *t >= 1).count() as f64 / len;
        n.transformed_correct += list.iter().filter(|(t, _)| *t == 2).count() as f64 / len;
        let pos = list.iter().filter(|(t, o)| t > o).count();
        let neg = list.iter().filter(|(t, o)| t < o).count();
        n.positive_changes += pos;
        n.negative_changes += neg;
        n.bugs_positive += usize::from(pos > 0);
        n.bugs_negative += usize::from(neg > 0);
        n.bugs_changed += usize::from(pos > 0 || neg > 0);
    }
    n.plausible_drop = ratio(n.transformed_plausible, n.original_plausible as f64).map(|r| 1.0 - r);
    n.correct_drop = ratio(n.transformed_correct, n.original_correct as f64).map(|r| 1.0 - r);
    n
}

/// For every pair of tools: how their difference in plausible and correct fixes moves from the
/// original bugs to the transformed ones (over all transformations and over natural ones).
fn pairwise(tools: &BTreeMap<String, ToolReport>) -> BTreeMap<String, PairDifference> {
    let mut out = BTreeMap::new();
    let names: Vec<&String> = tools.keys().collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let (x, y) = (&tools[*a], &tools[*b]);
            let diff = |p: &NaturalRobustness, q: &NaturalRobustness| RateDifference {
                original_plausible: p.original_plausible as f64 - q.original_plausible as f64,
                transformed_plausible: p.transformed_plausible - q.transformed_plausible,
                original_correct: p.original_correct as f64 - q.original_correct as f64,
                transformed_correct: p.transformed_correct - q.transformed_correct,
            };
            out.insert(
                format!("{a}_vs_{b}"),
                PairDifference {
                    all: diff(&x.all, &y.all),
                    natural: diff(&x.natural, &y.natural),
                },
            );
        }
    }
    out
}

/// Bugs with at least one transformation per level: all and natural (independent of tools).
fn applicability(data: &StudyData, results: &[ItemResult]) -> BTreeMap<String, Applicability> {
    Level::ALL
        .iter()
        .map(|l| {
            let bugs = |natural: bool| {
                data.items
                    .iter()
                    .enumerate()
                    .filter(|(i, it)| {
                        it.level == *l
                            && (!natural || results[*i].category == Some(Category::Natural))
                    })
                    .map(|(_, it)| it.bug.as_str())
                    .collect::<HashSet<_>>()
                    .len()
            };
            (
                l.as_str().to_owned(),
                Applicability {
                    bugs_all: bugs(false),
                    bugs_natural: bugs(true),
                },
            )
        })
        .collect()
}

fn robustness(data: &StudyData, results: &[ItemResult]) -> BTreeMap<String, ToolReport> {
    let mut by_tool: BTreeMap<&str, HashMap<&str, u8>> = BTreeMap::new();
    for (tool, target, status) in &data.npr {
        by_tool
            .entry(tool.as_str())
            .or_default()
            .insert(target.as_str(), *status);
    }
    let mut out = BTreeMap::new();
    for (tool, status) in by_tool {
        // (item index, transformed status, original status)
        let pairs: Vec<(usize, u8, u8)> = data
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| {
                Some((
                    i,
                    *status.get(it.key.as_str())?,
                    *status.get(it.bug.as_str())?,
                ))
            })
            .collect();
        let changes: Vec<&(usize, u8, u8)> = pairs.iter().filter(|(_, t, o)| t != o).collect();
        let mut share = BTreeMap::new();
        for c in Category::ALL {
            let n = changes
                .iter()
                .filter(|(i, _, _)| results[*i].category == Some(c))
                .count();
            share.insert(
                c.as_str().to_owned(),
                ratio(n as f64, changes.len() as f64).unwrap_or(0.0),
            );
        }
        let false_alarm_rate = (!changes.is_empty()).then(|| share[Category::Unnatural.as_str()]);

        let n = rates(data, &pairs, |i| {
            results[i].category == Some(Category::Natural)
        });
        let all = rates(data, &pairs, |_| true);

        let mut by_level = BTreeMap::new();
        for level in Level::ALL {
            let in_level: Vec<&(usize, u8, u8)> = pairs
                .iter()
                .filter(|(i, _, _)| data.items[*i].level == level)
                .collect();
            let bugs = |f: &dyn Fn(&(usize, u8, u8)) -> bool| -> usize {
                in_level
                    .iter()
                    .filter(|p| f(p))
                    .map(|(i, _, _)| data.items[*i].bug.as_str())
                    .collect::<HashSet<_>>()
                    .len()
            };
            by_level.insert(
                level.as_str().to_owned(),
                LevelRobustness {
                    bugs_with_transformations: bugs(&|_| true),
                    bugs_with_natural_transformations: bugs(&|(i, _, _)| {
                        results[*i].category == Some(Category::Natural)
                    }),
                    bugs_changed: bugs(&|(_, t, o)| t != o),
                    changes: in_level.iter().filter(|(_, t, o)| t != o).count(),
                },
            );
        }
        out.insert(
            tool.to_owned(),
            ToolReport {
                changes_all: changes.len(),
                change_share_by_category: share,
                false_alarm_rate,
                natural: n,
                all,
                by_level,
            },
        );
    }
    out
}

/// The AUC of "natural" (positive) against "unnatural" items, the score being
/// 1 − (x − min)/(max − min) over all items' values of the metric.
fn auc_natural(values: &[(Option<Category>, f64)]) -> Option<(f64, stats::Roc)> {
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, x)| {
            (lo.min(*x), hi.max(*x))
        });
    let (labels, scores): (Vec<bool>, Vec<f64>) = values
        .iter()
        .filter_map(|(c, x)| match c {
            Some(Category::Natural) => Some((true, 1.0 - (x - min) / (max - min))),
            Some(Category::Unnatural) => Some((false, 1.0 - (x - min) / (max - min))),
            _ => None,
        })
        .unzip();
    let roc = stats::roc_curve(&labels, &scores).ok()?;
    Some((stats::auc(&roc.fpr, &roc.tpr), roc))
}

fn rnc(data: &StudyData, results: &[ItemResult]) -> BTreeMap<String, ModelReport> {
    let mut by_model: BTreeMap<&str, HashMap<&str, f64>> = BTreeMap::new();
    for (model, target, h) in &data.ce {
        by_model
            .entry(model.as_str())
            .or_default()
            .insert(target.as_str(), *h);
    }
    let mut out = BTreeMap::new();
    for (model, h) in by_model {
        let mut rows: Vec<RncRow> = Vec::new();
        let mut originals = Vec::new();
        for (i, it) in data.items.iter().enumerate() {
            let (Some(&hb2), Some(&hb)) = (h.get(it.key.as_str()), h.get(it.bug.as_str())) else {
                continue;
            };
            originals.push(hb);
            rows.push(RncRow {
                key: it.key.clone(),
                category: results[i].category,
                ce: hb2,
                nc: hb2 - hb,
                rnc: (hb2 / hb - 1.0) * 100.0,
            });
        }
        let of = |c: Category| -> Vec<f64> {
            rows.iter()
                .filter(|r| r.category == Some(c))
                .map(|r| r.rnc)
                .collect()
        };
        let transformed: Vec<f64> = rows.iter().map(|r| r.ce).collect();
        let metric = |f: fn(&RncRow) -> f64| -> Vec<(Option<Category>, f64)> {
            rows.iter().map(|r| (r.category, f(r))).collect()
        };
        let rnc_auc = auc_natural(&metric(|r| r.rnc));
        let mut ranking = rows.clone();
        ranking.sort_by(|a, b| a.rnc.total_cmp(&b.rnc).then_with(|| a.key.cmp(&b.key)));
        out.insert(
            model.to_owned(),
            ModelReport {
                items: rows.len(),
                mww_natural_vs_unnatural: stats::mann_whitney_u(
                    &of(Category::Natural),
                    &of(Category::Unnatural),
                    Alternative::Less,
                )
                .ok(),
                mww_likely_natural_vs_likely_unnatural: stats::mann_whitney_u(
                    &of(Category::LikelyNatural),
                    &of(Category::LikelyUnnatural),
                    Alternative::Less,
                )
                .ok(),
                spearman_original_vs_transformed: stats::spearman(&transformed, &originals).ok(),
                auc_rnc: rnc_auc.as_ref().map(|(a, _)| *a),
                auc_nc: auc_natural(&metric(|r| r.nc)).map(|(a, _)| a),
                auc_ce: auc_natural(&metric(|r| r.ce)).map(|(a, _)| a),
                roc_rnc: rnc_auc.map(|(_, roc)| roc),
                ranking,
            },
        );
    }
    out
}

/// The whole analysis with default options.
pub fn report(data: &StudyData) -> Report {
    report_with(data, &Options::default())
}

/// The whole analysis.
pub fn report_with(data: &StudyData, options: &Options) -> Report {
    let quality = annotator_quality(data);
    let excluded: Vec<String> = match options.min_gold_accuracy {
        Some(min) => quality
            .iter()
            .filter(|(_, q)| q.gold_accuracy.is_some_and(|a| a < min))
            .map(|(a, _)| a.clone())
            .collect(),
        None => Vec::new(),
    };
    let filtered;
    let data = if excluded.is_empty() {
        data
    } else {
        let mut d = data.clone();
        d.votes.retain(|v| !excluded.contains(&v.annotator));
        filtered = d;
        &filtered
    };
    let results = item_results(data);
    let mut counts = Counts::default();
    let mut by_level: BTreeMap<String, CategoryCounts> = BTreeMap::new();
    let mut by_operator: BTreeMap<String, CategoryCounts> = BTreeMap::new();
    for r in &results {
        let Some(c) = r.category else { continue };
        let mut cc = CategoryCounts::default();
        cc.add(c);
        counts.natural += cc.natural;
        counts.unnatural += cc.unnatural;
        counts.likely_natural += cc.likely_natural;
        counts.likely_unnatural += cc.likely_unnatural;
        counts.full_natural += usize::from(r.unnatural_votes == 0);
        counts.full_unnatural += usize::from(r.unnatural_votes == r.votes);
        by_level
            .entry(r.level.as_str().to_owned())
            .or_default()
            .add(c);
        by_operator.entry(r.operator.clone()).or_default().add(c);
    }
    let tools = robustness(data, &results);
    Report {
        items: data.items.len(),
        votes: data.votes.len(),
        annotators: data
            .votes
            .iter()
            .map(|v| v.annotator.as_str())
            .collect::<HashSet<_>>()
            .len(),
        fleiss_kappa: binary_fleiss(&results),
        agreement: agreement(data, options),
        counts,
        counts_by_level: by_level,
        counts_by_operator: by_operator,
        time: time_report(data, &results),
        robustness_pairs: pairwise(&tools),
        robustness: tools,
        applicability: applicability(data, &results),
        rnc: rnc(data, &results),
        annotator_quality: quality,
        excluded_annotators: excluded,
        item_results: results,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_the_five_vote_rule() {
        let cats: Vec<_> = (0..=5).map(|u| Category::of(u, 5)).collect();
        assert_eq!(
            cats,
            vec![
                Some(Category::Natural),
                Some(Category::Natural),
                Some(Category::LikelyNatural),
                Some(Category::LikelyUnnatural),
                Some(Category::Unnatural),
                Some(Category::Unnatural)
            ]
        );
        assert_eq!(Category::of(0, 0), None);
        assert!(judges_unnatural(3, 1) && judges_unnatural(1, 3) && !judges_unnatural(2, 2));
    }
}

/// The `percent`% most natural transformations by RNC (lowest first), at least one when any.
pub fn most_natural(model: &ModelReport, percent: f64) -> &[RncRow] {
    let n = model.ranking.len();
    let k = ((percent.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    &model.ranking[..k.min(n)]
}

#[cfg(test)]
mod robustness_tests {
    use super::*;

    #[test]
    fn all_vs_natural_pairs_and_applicability() {
        let item = |k: &str, level| Item {
            key: k.into(),
            bug: "B".into(),
            level,
            operator: "Op".into(),
            gold_unnatural: None,
        };
        let v = |item, a: &str, cr| Vote {
            item,
            annotator: a.into(),
            cr,
            cc: 1,
            time_secs: None,
        };
        let mut votes = Vec::new();
        for a in ["A", "B", "C", "D", "E"] {
            votes.push(v(0, a, 1)); // naming_1: natural
            votes.push(v(1, a, 4)); // statement_1: unnatural
        }
        let s = |t: &str, target: &str, st: u8| (t.to_owned(), target.to_owned(), st);
        let data = StudyData {
            bugs: vec!["B".into()],
            items: vec![
                item("naming_1", Level::Naming),
                item("statement_1", Level::Statement),
            ],
            votes,
            npr: vec![
                s("t1", "B", 2),
                s("t1", "naming_1", 2),
                s("t1", "statement_1", 0),
                s("t2", "B", 0),
                s("t2", "naming_1", 1),
                s("t2", "statement_1", 1),
            ],
            ce: vec![
                ("m".into(), "B".into(), 2.0),
                ("m".into(), "naming_1".into(), 1.8),
                ("m".into(), "statement_1".into(), 3.0),
            ],
        };
        let r = report_with(
            &data,
            &Options {
                bootstrap: 0,
                ..Options::default()
            },
        );
        let t1 = &r.robustness["t1"];
        assert_eq!(
            (t1.natural.transformed_correct, t1.all.transformed_correct),
            (1.0, 0.5)
        );
        assert_eq!(t1.all.negative_changes, 1);
        let p = &r.robustness_pairs["t1_vs_t2"];
        assert_eq!(
            (p.all.original_correct, p.all.transformed_plausible),
            (1.0, 0.5 - 1.0)
        );
        assert_eq!(r.applicability["statement"].bugs_all, 1);
        assert_eq!(r.applicability["statement"].bugs_natural, 0);
        let top = most_natural(&r.rnc["m"], 50.0);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].key, "naming_1");
    }
}

#[cfg(test)]
mod quality_tests {
    use super::*;

    fn data() -> StudyData {
        let item = |k: &str, gold| Item {
            key: k.into(),
            bug: "B".into(),
            level: Level::Naming,
            operator: "Op".into(),
            gold_unnatural: gold,
        };
        let v = |item, a: &str, cr| Vote {
            item,
            annotator: a.into(),
            cr,
            cc: 1,
            time_secs: Some(f64::from(cr)),
        };
        StudyData {
            bugs: vec!["B".into()],
            items: vec![item("naming_1", Some(true)), item("naming_2", None)],
            // item 0: A, B, C say unnatural, D natural; item 1: all natural
            votes: vec![
                v(0, "A", 4),
                v(0, "B", 3),
                v(0, "C", 4),
                v(0, "D", 1),
                v(1, "A", 1),
                v(1, "B", 1),
                v(1, "C", 2),
                v(1, "D", 1),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn leave_one_out_majority_and_gold() {
        let q = annotator_quality(&data());
        assert_eq!(q["A"].loo_majority_agreement, Some(1.0));
        assert_eq!(q["D"].loo_majority_agreement, Some(0.5));
        assert_eq!((q["D"].gold_items, q["D"].gold_accuracy), (1, Some(0.0)));
        assert_eq!(q["A"].median_time, Some(2.5));
    }

    #[test]
    fn low_gold_accuracy_excludes_the_annotator() {
        let r = report_with(
            &data(),
            &Options {
                min_gold_accuracy: Some(0.5),
                ..Options::default()
            },
        );
        assert_eq!(r.excluded_annotators, vec!["D".to_string()]);
        assert_eq!(r.votes, 6);
        assert_eq!(r.item_results[0].unnatural_votes, 3);
        assert_eq!(r.item_results[0].category, Some(Category::Unnatural));
    }
}
