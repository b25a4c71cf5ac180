//! Cohen's kappa between two raters on nominal labels (scikit-learn's `cohen_kappa_score`,
//! unweighted), over units grouped by their pair of labels so that a bootstrap replicate is a
//! weighted sum over at most `labels²` classes.

use super::resample::Resample;
use super::{Result, StatsError};

/// Two raters' labels on the same units, as classes of identical (first, second) pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct CohenPairs {
    labels: usize,
    /// (first rater's label, second rater's label) per class
    pairs: Vec<(usize, usize)>,
    sizes: Vec<u64>,
}

impl CohenPairs {
    /// `pairs` holds each unit's two labels, each below `labels`.
    pub fn new(
        labels: usize,
        pairs: impl IntoIterator<Item = (usize, usize)>,
    ) -> Result<CohenPairs> {
        let mut index = vec![usize::MAX; labels * labels];
        let mut out = CohenPairs {
            labels,
            pairs: Vec::new(),
            sizes: Vec::new(),
        };
        for (a, b) in pairs {
            if a >= labels || b >= labels {
                return Err(StatsError::Invalid(format!(
                    "cohen_kappa: label {} is not below {labels}",
                    a.max(b)
                )));
            }
            let slot = &mut index[a * labels + b];
            if *slot == usize::MAX {
                *slot = out.pairs.len();
                out.pairs.push((a, b));
                out.sizes.push(0);
            }
            out.sizes[*slot] += 1;
        }
        Ok(out)
    }

    /// Number of units.
    pub fn len(&self) -> u64 {
        self.sizes.iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Kappa of all units; an error when there are none or when chance agreement is total
    /// (both raters gave one and the same label throughout: scikit-learn returns NaN).
    pub fn kappa(&self) -> Result<f64> {
        let w: Vec<f64> = self.sizes.iter().map(|&s| s as f64).collect();
        self.kappa_weighted(&w)
    }

    /// Kappa when class `c` is taken `weights[c]` times: 1 − Σ w·O / Σ w·E with w = 1 off the
    /// diagonal, O the confusion matrix and E the outer product of its margins over n.
    pub fn kappa_weighted(&self, weights: &[f64]) -> Result<f64> {
        let l = self.labels;
        let mut rows = vec![0.0f64; l];
        let mut cols = vec![0.0f64; l];
        let (mut n, mut disagree) = (0.0, 0.0);
        for (&(a, b), &w) in self.pairs.iter().zip(weights) {
            rows[a] += w;
            cols[b] += w;
            n += w;
            if a != b {
                disagree += w;
            }
        }
        if n == 0.0 {
            return Err(StatsError::Empty("cohen_kappa"));
        }
        let mut expected = 0.0;
        for (i, r) in rows.iter().enumerate() {
            for (j, c) in cols.iter().enumerate() {
                if i != j {
                    expected += r * c / n;
                }
            }
        }
        if expected == 0.0 {
            return Err(StatsError::Invalid(
                "cohen_kappa: chance agreement is total".into(),
            ));
        }
        Ok(1.0 - disagree / expected)
    }
}

impl Resample for CohenPairs {
    fn class_sizes(&self) -> &[u64] {
        &self.sizes
    }
    fn weighted(&self, weights: &[f64]) -> Option<f64> {
        self.kappa_weighted(weights).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_chance_and_textbook_agreement() {
        let k = |pairs: &[(usize, usize)]| {
            CohenPairs::new(3, pairs.iter().copied()).and_then(|c| c.kappa())
        };
        assert_eq!(k(&[(0, 0), (1, 1), (2, 2)]), Ok(1.0));
        assert!(
            k(&[(0, 0), (0, 0)]).is_err(),
            "one label throughout is undefined"
        );
        assert!(k(&[]).is_err());
        assert!(CohenPairs::new(2, [(0, 2)]).is_err());
        // Cohen (1960)-style 2×2 table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no
        // po = 0.7, pe = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.4
        let mut pairs = Vec::new();
        pairs.extend(std::iter::repeat_n((0, 0), 20));
        pairs.extend(std::iter::repeat_n((0, 1), 5));
        pairs.extend(std::iter::repeat_n((1, 0), 10));
        pairs.extend(std::iter::repeat_n((1, 1), 15));
        let kappa = k(&pairs).expect("kappa");
        assert!((kappa - 0.4).abs() < 1e-12, "{kappa}");
        // swapping the raters does not change kappa
        let swapped: Vec<_> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        assert!((k(&swapped).expect("kappa") - kappa).abs() < 1e-12);
    }
}
