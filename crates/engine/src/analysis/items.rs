//! Items: the unnatural judgement, the five-vote categories, per-item results, counts.

use std::collections::HashMap;

use serde::Serialize;

use super::*;
use crate::formats::Level;
use crate::stats::{self};

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
    pub(super) fn add(&mut self, c: Category) {
        match c {
            Category::Natural => self.natural += 1,
            Category::LikelyNatural => self.likely_natural += 1,
            Category::LikelyUnnatural => self.likely_unnatural += 1,
            Category::Unnatural => self.unnatural += 1,
        }
    }
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
pub(super) fn modal_votes(results: &[ItemResult]) -> Option<usize> {
    let mut freq: HashMap<usize, usize> = HashMap::new();
    for r in results.iter().filter(|r| r.votes > 0) {
        *freq.entry(r.votes).or_default() += 1;
    }
    freq.into_iter()
        .max_by_key(|&(votes, count)| (count, votes))
        .map(|(v, _)| v)
}

/// Fleiss' kappa over the binary judgement, on the items that have the modal number of votes.
pub(super) fn binary_fleiss(results: &[ItemResult]) -> Option<f64> {
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
