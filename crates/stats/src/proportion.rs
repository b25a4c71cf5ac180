//! A proportion's confidence interval and the exact binomial test, as statsmodels'
//! `proportion_confint(method="wilson")` and scipy's `binomtest` compute them.

use super::{Result, StatsError};

/// The standard normal's 97.5% quantile (scipy `norm.isf(0.025)`), the two-sided 95% critical value.
const Z_975: f64 = 1.959_963_984_540_054;

/// A proportion with its Wilson score 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proportion {
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

/// `count` successes of `n` trials: the share and its Wilson 95% interval (statsmodels'
/// formula, term for term).
pub fn wilson(count: u64, n: u64) -> Result<Proportion> {
    if n == 0 {
        return Err(StatsError::Empty("wilson"));
    }
    if count > n {
        return Err(StatsError::Invalid(format!(
            "wilson: {count} successes of {n} trials"
        )));
    }
    let nobs = n as f64;
    let q = count as f64 / nobs;
    let crit2 = Z_975 * Z_975;
    let denom = 1.0 + crit2 / nobs;
    let center = (q + crit2 / (2.0 * nobs)) / denom;
    let dist = Z_975 * (q * (1.0 - q) / nobs + crit2 / (4.0 * nobs * nobs)).sqrt() / denom;
    Ok(Proportion {
        share: q,
        low: (center - dist).max(0.0),
        high: (center + dist).min(1.0),
    })
}

fn log_binom_pmf(k: u64, n: u64, p: f64) -> f64 {
    let (k, n) = (k as f64, n as f64);
    let log_choose = libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0);
    let tail = |x: f64, q: f64| if x == 0.0 { 0.0 } else { x * q.ln() };
    log_choose + tail(k, p) + tail(n - k, 1.0 - p)
}

/// scipy `binomtest(k, n, p).pvalue` (two-sided): the probability of every outcome no more
/// likely than `k` (with scipy's relative tolerance 1e-7 on "no more likely").
pub fn binomial_test(k: u64, n: u64, p: f64) -> Result<f64> {
    if n == 0 || k > n || !(0.0..=1.0).contains(&p) {
        return Err(StatsError::Invalid(format!(
            "binomial test: {k} of {n} at p = {p}"
        )));
    }
    if (k as f64 - p * n as f64).abs() < f64::EPSILON * n as f64 {
        return Ok(1.0);
    }
    let d = log_binom_pmf(k, n, p) + (1.0 + 1e-7f64).ln();
    let total: f64 = (0..=n)
        .map(|x| log_binom_pmf(x, n, p))
        .filter(|lp| *lp <= d)
        .map(f64::exp)
        .sum();
    Ok(total.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_is_the_score_interval() {
        // 81 of 263 (Brown, Cai & DasGupta's example): the score interval solves
        // |q − p| = z √(p(1 − p)/n) at both ends
        let w = wilson(81, 263).expect("wilson");
        for end in [w.low, w.high] {
            let lhs = (w.share - end).abs();
            let rhs = Z_975 * (end * (1.0 - end) / 263.0).sqrt();
            assert!((lhs - rhs).abs() < 1e-12, "{w:?}");
        }
        assert_eq!(wilson(0, 10).map(|w| w.low), Ok(0.0));
        assert!(wilson(3, 2).is_err() && wilson(0, 0).is_err());
    }

    #[test]
    fn binomial_test_sums_the_outcomes_no_more_likely() {
        // p = 1/2 is symmetric: twice the lower tail P(X ≤ 2 | n = 10) = 2 · 56/1024
        let p = binomial_test(2, 10, 0.5).expect("test");
        assert!((p - 112.0 / 1024.0).abs() < 1e-12, "{p}");
        assert_eq!(binomial_test(5, 10, 0.5), Ok(1.0));
    }
}
