//! Kneser-Ney discounts, which both estimators compute from counts of counts.

use super::LmError;

/// Discounts of one order: D(1), D(2), D(3+).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Discounts(pub [f64; 4]);

impl Discounts {
    pub(super) fn of(&self, count: u64) -> f64 {
        self.0[count.min(3) as usize]
    }

    /// The discounts of an order from its counts-of-counts `n[j]` (adjusted counts j = 1..4).
    pub(super) fn from_counts_of_counts(order: usize, n: [u64; 5]) -> Result<Discounts, LmError> {
        if let Some(j) = (1..4).find(|&j| n[j] == 0) {
            return Err(LmError::Estimate(format!(
                "cannot compute Kneser-Ney discounts for {order}-grams: no n-grams with adjusted count {j}; is the corpus too small?"
            )));
        }
        let y = n[1] as f64 / (n[1] as f64 + 2.0 * n[2] as f64);
        let d = |j: usize| j as f64 - (j + 1) as f64 * y * n[j + 1] as f64 / n[j] as f64;
        let ds = Discounts([0.0, d(1), d(2), d(3)]);
        if let Some(j) = (1..4).find(|&j| !(0.0..=j as f64).contains(&ds.0[j])) {
            return Err(LmError::Estimate(format!(
                "{order}-gram discount for adjusted count {j} is {:.4}, outside 0..={j}: the corpus is too small or artificial for Kneser-Ney",
                ds.0[j]
            )));
        }
        Ok(ds)
    }
}
