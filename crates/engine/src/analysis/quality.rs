//! Annotator quality: leave-one-out majority agreement, gold accuracy, median time.

use std::collections::BTreeMap;

use serde::Serialize;

use super::*;

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

#[cfg(test)]
mod tests {
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
            ratings_per_item: None,
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
