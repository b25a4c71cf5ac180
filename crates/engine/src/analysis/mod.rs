//! The study's results from votes, repair-tool results and cross-entropy scores, as the
//! published method defines them. Keys of [`Report`] follow `shared/reference/.../expected.json`.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::formats::Level;

mod agreement;
mod items;
mod patch_review;
mod quality;
mod rnc;
mod robustness;
pub mod synthetic;
mod time;

pub use agreement::*;
pub use items::*;
pub use patch_review::*;
pub use quality::*;
pub use rnc::*;
pub use robustness::*;
pub use time::*;

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
    /// Plausible patches under review: their decisions override `npr`'s statuses.
    pub reviews: Vec<ReviewTask>,
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
    /// Bugs with a transformation of any level (the applicability table's total row).
    pub applicability_total: Applicability,
    pub rnc: BTreeMap<String, ModelReport>,
    /// Patch review: decisions and the reviewers' agreement (`None` without review tasks).
    pub patch_review: Option<PatchReview>,
    /// Per annotator: agreement with the leave-one-out majority, gold accuracy, median time.
    pub annotator_quality: BTreeMap<String, AnnotatorQuality>,
    /// Annotators left out by [`Options::min_gold_accuracy`].
    pub excluded_annotators: Vec<String>,
    pub item_results: Vec<ItemResult>,
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

pub(super) fn ratio(num: f64, den: f64) -> Option<f64> {
    (den != 0.0).then(|| num / den)
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
    // the statuses the patch review decided replace the imported ones
    let decided = decided_statuses(&data.reviews);
    let npr: std::borrow::Cow<'_, [(String, String, u8)]> = if decided.is_empty() {
        std::borrow::Cow::Borrowed(&data.npr)
    } else {
        std::borrow::Cow::Owned(
            data.npr
                .iter()
                .map(|(tool, target, status)| {
                    let s = decided
                        .get(&(tool.as_str(), target.as_str()))
                        .copied()
                        .unwrap_or(*status);
                    (tool.clone(), target.clone(), s)
                })
                .collect(),
        )
    };
    // the independent parts on every core
    let ((tools, agreement), (time, (rnc, (applicability, applicability_total)))) = rayon::join(
        || {
            rayon::join(
                || robustness(data, &npr, &results),
                || agreement(data, options),
            )
        },
        || {
            rayon::join(
                || time_report(data, &results),
                || rayon::join(|| rnc(data, &results), || applicability(data, &results)),
            )
        },
    );
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
        agreement,
        counts,
        counts_by_level: by_level,
        counts_by_operator: by_operator,
        time,
        robustness_pairs: pairwise(&tools),
        robustness: tools,
        applicability,
        applicability_total,
        rnc,
        patch_review: patch_review(&data.reviews, options),
        annotator_quality: quality,
        excluded_annotators: excluded,
        item_results: results,
    }
}
