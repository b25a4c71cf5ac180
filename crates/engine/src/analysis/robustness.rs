//! Robustness of repair tools: prediction changes, false-alarm rates, plausible/correct rates
//! per bug, over all and over natural transformations, pairwise, applicability per level.

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;

use serde::Serialize;

use super::*;
use crate::formats::Level;

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
    /// The study's targets (bugs and transformations) this tool has no status for, in name
    /// order: left out or read as wrong, as `Options::missing_npr` says.
    pub missing: Vec<String>,
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
    /// Bugs the tool repairs correctly on the original and that have a transformation here.
    pub repairable_bugs: usize,
    /// Those bugs' transformations (PDM's denominator).
    pub variants: usize,
    /// Prediction-dependency measure: share of `variants` whose status is not correct.
    pub pdm: Option<f64>,
    /// Prediction-dependency across bugs: share of `repairable_bugs` with at least one variant
    /// that is not correct.
    pub pda: Option<f64>,
    /// Prediction changes per level, over the transformations of this pool.
    pub by_level: BTreeMap<String, LevelChanges>,
}

/// Bugs with at least one transformation of a level in the pool, and those of them with a
/// positive / negative / either change (Table 17 of the journal version, over natural ones).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LevelChanges {
    pub bugs: usize,
    pub bugs_positive: usize,
    pub bugs_negative: usize,
    pub bugs_changed: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LevelRobustness {
    pub bugs_with_transformations: usize,
    pub bugs_with_natural_transformations: usize,
    pub bugs_changed: usize,
    pub changes: usize,
}

/// The study's repair targets by number: every distinct target name (bug ids and item keys)
/// once, each item's own target and its bug's, and the bugs in name order (the order in which
/// per-bug rates are summed).
struct Targets<'d> {
    index: HashMap<&'d str, usize>,
    /// Per item: (its target, its bug's target).
    item: Vec<(usize, usize)>,
    /// Bug targets in name order.
    bug_order: Vec<usize>,
}

impl<'d> Targets<'d> {
    fn new(data: &'d StudyData) -> Targets<'d> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut id = |name: &'d str| {
            let next = index.len();
            *index.entry(name).or_insert(next)
        };
        let item: Vec<(usize, usize)> = data
            .items
            .iter()
            .map(|it| (id(it.key.as_str()), id(it.bug.as_str())))
            .collect();
        let mut bugs: Vec<(&str, usize)> = data
            .items
            .iter()
            .zip(&item)
            .map(|(it, (_, b))| (it.bug.as_str(), *b))
            .collect();
        bugs.sort_unstable();
        bugs.dedup();
        Targets {
            index,
            item,
            bug_order: bugs.into_iter().map(|(_, b)| b).collect(),
        }
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}

/// One bug's transformations in a pool: how many, plausible, correct, positive and negative
/// changes, and the original status.
#[derive(Clone, Copy, Default)]
struct BugTally {
    n: u32,
    plausible: u32,
    correct: u32,
    pos: u32,
    neg: u32,
    original: u8,
}

/// Tallies per bug target over the pairs that `keep` accepts. `pairs`: (item, transformed
/// status, original status).
fn tally(
    targets: &Targets<'_>,
    pairs: &[(usize, u8, u8)],
    keep: impl Fn(usize) -> bool,
) -> Vec<BugTally> {
    let mut per_bug = vec![BugTally::default(); targets.len()];
    for &(i, t, o) in pairs {
        if keep(i) {
            let a = &mut per_bug[targets.item[i].1];
            a.n += 1;
            a.plausible += u32::from(t >= 1);
            a.correct += u32::from(t == 2);
            a.pos += u32::from(t > o);
            a.neg += u32::from(t < o);
            a.original = o;
        }
    }
    per_bug
}

/// The bugs with at least one transformation in a tally, in name order.
fn bugs_with<'a>(
    targets: &'a Targets<'_>,
    per_bug: &'a [BugTally],
) -> impl Iterator<Item = BugTally> + 'a {
    targets
        .bug_order
        .iter()
        .map(|&b| per_bug[b])
        .filter(|a| a.n > 0)
}

/// Per-bug normalised rates, changes, PDM/PDA and per-level changes over the transformations
/// that `keep` accepts, grouped by bug. `pairs`: (item, transformed status, original status).
fn rates(
    data: &StudyData,
    targets: &Targets<'_>,
    pairs: &[(usize, u8, u8)],
    keep: impl Fn(usize) -> bool,
) -> NaturalRobustness {
    let per_bug = tally(targets, pairs, &keep);
    let mut n = NaturalRobustness::default();
    let mut broken_bugs = 0usize;
    let mut broken_variants = 0usize;
    for a in bugs_with(targets, &per_bug) {
        n.bugs += 1;
        n.original_plausible += usize::from(a.original >= 1);
        n.original_correct += usize::from(a.original == 2);
        let len = f64::from(a.n);
        n.transformed_plausible += f64::from(a.plausible) / len;
        n.transformed_correct += f64::from(a.correct) / len;
        n.positive_changes += a.pos as usize;
        n.negative_changes += a.neg as usize;
        n.bugs_positive += usize::from(a.pos > 0);
        n.bugs_negative += usize::from(a.neg > 0);
        n.bugs_changed += usize::from(a.pos > 0 || a.neg > 0);
        if a.original == 2 {
            n.repairable_bugs += 1;
            n.variants += a.n as usize;
            let broken = (a.n - a.correct) as usize;
            broken_variants += broken;
            broken_bugs += usize::from(broken > 0);
        }
    }
    n.plausible_drop = ratio(n.transformed_plausible, n.original_plausible as f64).map(|r| 1.0 - r);
    n.correct_drop = ratio(n.transformed_correct, n.original_correct as f64).map(|r| 1.0 - r);
    n.pdm = ratio(broken_variants as f64, n.variants as f64);
    n.pda = ratio(broken_bugs as f64, n.repairable_bugs as f64);
    n.by_level = Level::ALL
        .iter()
        .map(|&level| {
            let per_bug = tally(targets, pairs, |i| keep(i) && data.items[i].level == level);
            let mut l = LevelChanges::default();
            for a in bugs_with(targets, &per_bug) {
                l.bugs += 1;
                l.bugs_positive += usize::from(a.pos > 0);
                l.bugs_negative += usize::from(a.neg > 0);
                l.bugs_changed += usize::from(a.pos > 0 || a.neg > 0);
            }
            (level.as_str().to_owned(), l)
        })
        .collect();
    n
}

/// For every pair of tools: how their difference in plausible and correct fixes moves from the
/// original bugs to the transformed ones (over all transformations and over natural ones).
pub(super) fn pairwise(tools: &BTreeMap<String, ToolReport>) -> BTreeMap<String, PairDifference> {
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

/// Bugs with at least one transformation per level, and of any level (the total): all and
/// natural (independent of tools).
pub(super) fn applicability(
    data: &StudyData,
    results: &[ItemResult],
) -> (BTreeMap<String, Applicability>, Applicability) {
    let count = |level: Option<Level>| {
        let bugs = |natural: bool| {
            data.items
                .iter()
                .enumerate()
                .filter(|(i, it)| {
                    level.is_none_or(|l| it.level == l)
                        && (!natural || results[*i].category == Some(Category::Natural))
                })
                .map(|(_, it)| it.bug.as_str())
                .collect::<HashSet<_>>()
                .len()
        };
        Applicability {
            bugs_all: bugs(false),
            bugs_natural: bugs(true),
        }
    };
    let by_level = Level::ALL
        .iter()
        .map(|&l| (l.as_str().to_owned(), count(Some(l))))
        .collect();
    (by_level, count(None))
}

/// `npr`: (tool, target, status), the study's results with the patch review's decisions applied.
pub(super) fn robustness(
    data: &StudyData,
    npr: &[(String, String, u8)],
    results: &[ItemResult],
    missing_npr: MissingNpr,
) -> BTreeMap<String, ToolReport> {
    let targets = Targets::new(data);
    // each tool's status per target (a later line for the same target wins)
    let mut by_tool: BTreeMap<&str, Vec<Option<u8>>> = BTreeMap::new();
    for (tool, target, status) in npr {
        if let Some(&t) = targets.index.get(target.as_str()) {
            by_tool
                .entry(tool.as_str())
                .or_insert_with(|| vec![None; targets.len()])[t] = Some(*status);
        }
    }
    let natural = |i: usize| results[i].category == Some(Category::Natural);
    let by_tool: Vec<(&str, Vec<Option<u8>>)> = by_tool.into_iter().collect();
    by_tool
        .par_iter()
        .map(|(tool, status)| {
            // (item index, transformed status, original status)
            let fill = match missing_npr {
                MissingNpr::Skip => None,
                MissingNpr::Wrong => Some(0),
            };
            let pairs: Vec<(usize, u8, u8)> = targets
                .item
                .iter()
                .enumerate()
                .filter_map(|(i, &(it, bug))| {
                    Some((i, status[it].or(fill)?, status[bug].or(fill)?))
                })
                .collect();
            let mut missing: Vec<String> = targets
                .index
                .iter()
                .filter(|(_, &t)| status[t].is_none())
                .map(|(name, _)| (*name).to_owned())
                .collect();
            missing.sort_unstable();
            let mut changed_by_category = [0usize; Category::ALL.len()];
            let mut changes = 0;
            for &(i, t, o) in &pairs {
                if t != o {
                    changes += 1;
                    if let Some(c) = results[i].category {
                        changed_by_category[c as usize] += 1;
                    }
                }
            }
            let share: BTreeMap<String, f64> = Category::ALL
                .iter()
                .map(|c| {
                    let n = changed_by_category[*c as usize];
                    (
                        c.as_str().to_owned(),
                        ratio(n as f64, changes as f64).unwrap_or(0.0),
                    )
                })
                .collect();
            let false_alarm_rate = (changes > 0).then(|| share[Category::Unnatural.as_str()]);
            let mut by_level = BTreeMap::new();
            let mut seen = vec![[false; 3]; targets.len()];
            for level in Level::ALL {
                for s in seen.iter_mut() {
                    *s = [false; 3];
                }
                let (mut with, mut with_natural, mut changed, mut level_changes) = (0, 0, 0, 0);
                for &(i, t, o) in pairs
                    .iter()
                    .filter(|(i, _, _)| data.items[*i].level == level)
                {
                    let s = &mut seen[targets.item[i].1];
                    let mut mark = |k: usize, count: &mut usize| {
                        if !s[k] {
                            s[k] = true;
                            *count += 1;
                        }
                    };
                    mark(0, &mut with);
                    if natural(i) {
                        mark(1, &mut with_natural);
                    }
                    if t != o {
                        mark(2, &mut changed);
                        level_changes += 1;
                    }
                }
                by_level.insert(
                    level.as_str().to_owned(),
                    LevelRobustness {
                        bugs_with_transformations: with,
                        bugs_with_natural_transformations: with_natural,
                        bugs_changed: changed,
                        changes: level_changes,
                    },
                );
            }
            (
                (*tool).to_owned(),
                ToolReport {
                    changes_all: changes,
                    change_share_by_category: share,
                    false_alarm_rate,
                    natural: rates(data, &targets, &pairs, natural),
                    all: rates(data, &targets, &pairs, |_| true),
                    by_level,
                    missing,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
            ratings_per_item: None,
            left_out: Default::default(),
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
            reviews: Vec::new(),
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
        // PDM/PDA: B is repaired on the original; one of its two variants breaks, the natural
        // one does not; t2 never repairs B, so it has no figure
        assert_eq!(
            (
                t1.all.repairable_bugs,
                t1.all.variants,
                t1.all.pdm,
                t1.all.pda
            ),
            (1, 2, Some(0.5), Some(1.0))
        );
        assert_eq!(
            (t1.natural.variants, t1.natural.pdm, t1.natural.pda),
            (1, Some(0.0), Some(0.0))
        );
        assert_eq!(
            (r.robustness["t2"].all.pdm, r.robustness["t2"].all.pda),
            (None, None)
        );
        // Table 17: changes per level over natural transformations only
        let level = |n: &NaturalRobustness, l: &str| n.by_level[l].clone();
        assert_eq!(
            level(&t1.natural, "naming"),
            LevelChanges {
                bugs: 1,
                ..LevelChanges::default()
            }
        );
        assert_eq!(level(&t1.natural, "statement"), LevelChanges::default());
        assert_eq!(
            level(&t1.all, "statement"),
            LevelChanges {
                bugs: 1,
                bugs_positive: 0,
                bugs_negative: 1,
                bugs_changed: 1
            }
        );
        let p = &r.robustness_pairs["t1_vs_t2"];
        assert_eq!(
            (p.all.original_correct, p.all.transformed_plausible),
            (1.0, 0.5 - 1.0)
        );
        assert_eq!(r.applicability["statement"].bugs_all, 1);
        assert_eq!(r.applicability["statement"].bugs_natural, 0);
        assert_eq!(
            (
                r.applicability_total.bugs_all,
                r.applicability_total.bugs_natural
            ),
            (1, 1)
        );
        let top = most_natural(&r.rnc["m"], 50.0);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].key, "naming_1");
    }
}
