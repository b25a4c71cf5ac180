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
    /// k, the ratings the study asks of every item. When given, the analysis of the votes uses
    /// only the items with exactly k ratings (the published method's categories and kappa need
    /// all of them), and reports the others as incomplete; `None`: every item with votes.
    pub ratings_per_item: Option<usize>,
    /// Participants excluded before the analysis (by staff, or by the study's rules): their
    /// votes are not in `votes` unless [`LeftOut::included`] says they were put back.
    pub left_out: LeftOut,
}

/// Participants excluded from the analysis, so that the report says how many and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LeftOut {
    pub participants: Vec<LeftOutParticipant>,
    /// Their votes are in the analysis all the same (asked for: `report --include-excluded`).
    pub included: bool,
}

/// One excluded participant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOutParticipant {
    pub annotator: String,
    pub reason: String,
    pub votes: usize,
}

/// An item left out of the analysis of the votes: it has not exactly k ratings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncompleteItem {
    pub key: String,
    pub votes: usize,
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
    /// k, when the study's data said it ([`StudyData::ratings_per_item`]).
    pub ratings_per_item: Option<usize>,
    /// Items with exactly k ratings: the only ones the figures of the votes count (with k
    /// unknown, every item with votes).
    pub complete_items: usize,
    /// Items with some ratings but not exactly k, left out of the figures of the votes.
    pub incomplete_items: Vec<IncompleteItem>,
    /// Participants excluded before the analysis ([`StudyData::left_out`]).
    pub left_out: LeftOut,
    /// How the targets without a repair status ([`ToolReport::missing`]) were read.
    pub missing_npr: MissingNpr,
}

/// How to run the analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Leave out every annotator whose gold accuracy is below this (those without gold votes stay).
    pub min_gold_accuracy: Option<f64>,
    /// Bootstrap replicates for the agreement intervals (0: none).
    pub bootstrap: usize,
    pub seed: u64,
    /// How a target without a tool's repair status counts.
    pub missing_npr: MissingNpr,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            min_gold_accuracy: None,
            bootstrap: 1000,
            seed: 20240601,
            missing_npr: MissingNpr::Skip,
        }
    }
}

/// How a study's target (a bug or a transformation) that a tool has no repair status for
/// counts in that tool's robustness. Either way the report lists such targets per tool
/// (`ToolReport::missing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MissingNpr {
    /// Left out: a transformation without a status, and every transformation of a bug without
    /// one (natstudy's reading).
    #[default]
    Skip,
    /// Read as wrong (0), as the published package's scripts read a target without a row.
    Wrong,
}

impl MissingNpr {
    /// `skip` or `wrong`, as the command line takes it.
    pub fn parse(s: &str) -> Option<MissingNpr> {
        match s {
            "skip" => Some(MissingNpr::Skip),
            "wrong" => Some(MissingNpr::Wrong),
            _ => None,
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
    // only items with exactly k ratings are judged: a category or kappa from 3 of 5 votes is
    // not the published method's
    let (complete, incomplete) = completeness(data);
    let kept;
    let data = if incomplete.is_empty() {
        data
    } else {
        let mut d = data.clone();
        d.votes
            .retain(|v| complete.get(v.item).copied().unwrap_or(false));
        kept = d;
        &kept
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
                || robustness(data, &npr, &results, options.missing_npr),
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
        ratings_per_item: data.ratings_per_item,
        complete_items: complete.iter().filter(|c| **c).count(),
        incomplete_items: incomplete,
        left_out: data.left_out.clone(),
        missing_npr: options.missing_npr,
    }
}

/// Per item, whether it has exactly k ratings (with k unknown: any rating); and the items with
/// some ratings that are not complete, in item order.
fn completeness(data: &StudyData) -> (Vec<bool>, Vec<IncompleteItem>) {
    let mut votes = vec![0usize; data.items.len()];
    for v in &data.votes {
        if let Some(n) = votes.get_mut(v.item) {
            *n += 1;
        }
    }
    let complete: Vec<bool> = votes
        .iter()
        .map(|n| match data.ratings_per_item {
            Some(k) => *n == k,
            None => *n > 0,
        })
        .collect();
    let incomplete = votes
        .iter()
        .zip(&complete)
        .enumerate()
        .filter(|(_, (n, ok))| **n > 0 && !**ok)
        .map(|(i, (n, _))| IncompleteItem {
            key: data.items[i].key.clone(),
            votes: *n,
        })
        .collect();
    (complete, incomplete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &str, level: Level) -> Item {
        Item {
            key: key.into(),
            bug: "B".into(),
            level,
            operator: "Op".into(),
            gold_unnatural: None,
        }
    }

    /// Four items with k = 5 ratings, answers varied enough for kappa.
    fn complete_study() -> StudyData {
        let answers: [[u8; 5]; 4] = [
            [1, 1, 1, 2, 4],
            [4, 4, 3, 4, 1],
            [1, 3, 4, 1, 2],
            [4, 4, 4, 4, 4],
        ];
        let mut data = StudyData {
            bugs: vec!["B".into()],
            ratings_per_item: Some(5),
            ..Default::default()
        };
        for (i, row) in answers.iter().enumerate() {
            data.items.push(item(&format!("naming_{i}"), Level::Naming));
            for (a, cr) in row.iter().enumerate() {
                data.votes.push(Vote {
                    item: i,
                    annotator: format!("S{a}"),
                    cr: *cr,
                    cc: 1,
                    time_secs: Some(10.0 + f64::from(*cr)),
                });
            }
        }
        data
    }

    #[test]
    fn items_without_k_ratings_change_no_figure_of_the_votes() {
        let options = Options {
            bootstrap: 0,
            ..Options::default()
        };
        let before = report_with(&complete_study(), &options);
        assert!(before.fleiss_kappa.is_some());
        assert_eq!(before.complete_items, 4);
        assert!(before.incomplete_items.is_empty());
        // a fifth item with three ratings, all unnatural: alone it would be "likely
        // unnatural" and move kappa
        let mut more = complete_study();
        more.items.push(item("naming_9", Level::Naming));
        for a in 0..3 {
            more.votes.push(Vote {
                item: 4,
                annotator: format!("S{a}"),
                cr: 4,
                cc: 4,
                time_secs: Some(99.0),
            });
        }
        let after = report_with(&more, &options);
        assert_eq!(after.fleiss_kappa, before.fleiss_kappa);
        assert_eq!(after.counts, before.counts);
        assert_eq!(after.counts_by_level, before.counts_by_level);
        assert_eq!(after.time, before.time);
        assert_eq!(after.complete_items, 4);
        assert_eq!(
            after.incomplete_items,
            vec![IncompleteItem {
                key: "naming_9".into(),
                votes: 3
            }]
        );
        let incomplete = after
            .item_results
            .iter()
            .find(|r| r.key == "naming_9")
            .expect("listed");
        assert_eq!(incomplete.category, None, "no category from 3 of 5 ratings");
        // without k (data from elsewhere), every item with ratings counts, as before
        more.ratings_per_item = None;
        let all = report_with(&more, &options);
        assert_ne!(
            all.counts, before.counts,
            "the 3-rating item gets a category"
        );
        assert!(all.incomplete_items.is_empty());
    }

    /// Spearman's ρ of H(b′) and H(b) reads the items with a category, as `rq3.py` does; the
    /// figure over every scored item stands beside it.
    #[test]
    fn spearman_reads_complete_items_as_rq3_does() {
        let mut data = complete_study();
        data.items.push(item("naming_9", Level::Naming));
        data.votes.push(Vote {
            item: 4,
            annotator: "S0".into(),
            cr: 1,
            cc: 1,
            time_secs: None,
        });
        data.bugs = (0..5).map(|i| format!("B{i}")).collect();
        for (i, it) in data.items.iter_mut().enumerate() {
            it.bug = format!("B{i}");
        }
        for i in 0..5 {
            let h = f64::from(i + 1);
            // the incomplete item goes against the others' order
            let h2 = if i == 4 { 0.5 } else { h + 0.1 };
            data.ce.push(("m".into(), format!("B{i}"), h));
            data.ce
                .push(("m".into(), data.items[i as usize].key.clone(), h2));
        }
        let options = Options {
            bootstrap: 0,
            ..Options::default()
        };
        let m = &report_with(&data, &options).rnc["m"];
        assert_eq!(m.items, 5);
        assert_eq!(m.spearman_original_vs_transformed, Some(1.0));
        let all = m.spearman_all_scored.expect("all scored");
        assert!((all - 0.0).abs() < 1e-12, "{all}");
    }
}
