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
    let mut per: Vec<Tally> = vec![Tally::default(); data.items.len()];
    for v in &data.votes {
        if let Some(t) = per.get_mut(v.item) {
            t.add(v.cr, v.cc);
        }
    }
    data.items
        .iter()
        .zip(per)
        .map(|(item, t)| ItemResult {
            key: item.key.clone(),
            bug: item.bug.clone(),
            level: item.level,
            operator: item.operator.clone(),
            votes: t.votes,
            unnatural_votes: t.unnatural,
            category: t.category(),
            full_agreement: t.votes > 0 && (t.unnatural == 0 || t.unnatural == t.votes),
            mean_cr: t.mean_cr(),
            mean_cc: t.mean_cc(),
        })
        .collect()
}

/// One item's votes as they are counted: how many, how many judge it unnatural, the answers'
/// sums. The analysis and the streamed dataset export both count with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub votes: usize,
    pub unnatural: usize,
    cr_sum: u32,
    cc_sum: u32,
}

impl Tally {
    pub fn add(&mut self, cr: u8, cc: u8) {
        self.votes += 1;
        self.unnatural += usize::from(judges_unnatural(cr, cc));
        self.cr_sum += u32::from(cr);
        self.cc_sum += u32::from(cc);
    }

    pub fn category(&self) -> Option<Category> {
        Category::of(self.unnatural, self.votes)
    }

    fn mean(&self, sum: u32) -> Option<f64> {
        (self.votes > 0).then(|| f64::from(sum) / self.votes as f64)
    }

    pub fn mean_cr(&self) -> Option<f64> {
        self.mean(self.cr_sum)
    }

    pub fn mean_cc(&self) -> Option<f64> {
        self.mean(self.cc_sum)
    }
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
