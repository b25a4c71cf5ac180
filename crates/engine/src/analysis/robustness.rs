//! Robustness of repair tools: prediction changes, false-alarm rates, plausible/correct rates
//! per bug, over all and over natural transformations, pairwise, applicability per level.

use std::collections::{BTreeMap, HashMap, HashSet};

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

/// Per-bug normalised rates over the transformations that `keep` accepts, grouped by bug.
pub(super) fn rates(
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

/// Bugs with at least one transformation per level: all and natural (independent of tools).
pub(super) fn applicability(
    data: &StudyData,
    results: &[ItemResult],
) -> BTreeMap<String, Applicability> {
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

pub(super) fn robustness(data: &StudyData, results: &[ItemResult]) -> BTreeMap<String, ToolReport> {
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
