//! Statistics as the reference Python libraries compute them (numpy, scipy, statsmodels,
//! scikit-learn), to 1e-9 relative.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("{0}: no data")]
    Empty(&'static str),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, StatsError>;

mod cohen;
mod icc;
mod mixed;
mod ordinal;
mod pairwise;
mod proportion;
mod resample;
mod tukey;

pub use icc::{icc_one_way, OneWayIcc};
pub use mixed::{cumulative_logit_mixed, Factor, MixedOrdinalFit};
pub use ordinal::{cumulative_logit, OrdinalFit};
pub use pairwise::{beat_components, bradley_terry, elo, win_rates, Comparison, EloRule, Outcome};
pub use proportion::{binomial_test, wilson, Proportion};

pub use cohen::CohenPairs;
pub use tukey::{tukey_box, TukeyBox};

pub use resample::{
    bootstrap_ci, krippendorff_alpha, AlphaMetric, AlphaUnits, FleissRows, Resample,
};

/// Arithmetic mean.
pub fn mean(xs: &[f64]) -> Result<f64> {
    if xs.is_empty() {
        return Err(StatsError::Empty("mean"));
    }
    Ok(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Population standard deviation (numpy `std`, ddof = 0), computed as numpy does (two passes).
pub fn pstd(xs: &[f64]) -> Result<f64> {
    let m = mean(xs)?;
    Ok((xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt())
}

/// numpy `percentile(xs, q)` with the default linear interpolation.
pub fn percentile(xs: &[f64], q: f64) -> Result<f64> {
    if xs.is_empty() {
        return Err(StatsError::Empty("percentile"));
    }
    if !(0.0..=100.0).contains(&q) {
        return Err(StatsError::Invalid(format!(
            "percentile {q} outside 0..=100"
        )));
    }
    let mut v = xs.to_vec();
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    let frac = pos - lo as f64;
    // the two order statistics by selection (O(n)): v[lo], then the least of what follows
    let (_, a, above) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    let b = if hi == lo {
        a
    } else {
        above.iter().copied().min_by(f64::total_cmp).unwrap_or(a)
    };
    // numpy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) when t >= 0.5
    let diff = b - a;
    Ok(if frac >= 0.5 {
        b - diff * (1.0 - frac)
    } else {
        a + diff * frac
    })
}

/// Average ranks (1-based, ties share the mean rank), as scipy `rankdata`.
pub fn rank_average(xs: &[f64]) -> Vec<f64> {
    ranks_and_ties(xs).0
}

/// Average ranks and the sizes of the groups of tied values, from one sort of (value, index)
/// pairs (contiguous, so the sort stays in cache; the order among ties does not matter).
fn ranks_and_ties(xs: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut sorted: Vec<(f64, usize)> = xs.iter().copied().zip(0..).collect();
    sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1].0 == sorted[i].0 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &(_, k) in &sorted[i..=j] {
            ranks[k] = r;
        }
        ties.push(j - i + 1);
        i = j + 1;
    }
    (ranks, ties)
}

/// The alternative hypothesis of a Mann-Whitney test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alternative {
    Less,
    Greater,
    TwoSided,
}

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MwuMethod {
    Exact,
    Asymptotic,
}

/// A Mann-Whitney U test result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MannWhitney {
    /// U of the first sample (scipy's statistic).
    pub u: f64,
    pub p_value: f64,
    /// r = 1 − 2U/(n1·n2)
    pub effect_size: f64,
    pub n1: usize,
    pub n2: usize,
    pub method: MwuMethod,
}

/// scipy `mannwhitneyu(x, y, alternative=…)` with its default `method="auto"`: exact when
/// one sample has at most 8 values and there are no ties, otherwise the normal approximation
/// with tie and continuity correction.
pub fn mann_whitney_u(x: &[f64], y: &[f64], alternative: Alternative) -> Result<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return Err(StatsError::Empty("mann_whitney_u"));
    }
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = ranks_and_ties(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let nn = (n1 * n2) as f64;
    let u2 = nn - u1;
    let has_ties = ties.iter().any(|&t| t > 1);
    let method = if (n1 > 8 && n2 > 8) || has_ties {
        MwuMethod::Asymptotic
    } else {
        MwuMethod::Exact
    };
    let (u, factor) = match alternative {
        Alternative::Greater => (u1, 1.0),
        Alternative::Less => (u2, 1.0),
        Alternative::TwoSided => (u1.max(u2), 2.0),
    };
    let p = match method {
        MwuMethod::Exact => mwu_exact_sf(u, n1, n2),
        MwuMethod::Asymptotic => {
            let n = (n1 + n2) as f64;
            let tie_term: f64 = ties.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
            let s = (nn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
            let z = (u - nn / 2.0 - 0.5) / s;
            standard_normal_sf(z)
        }
    };
    Ok(MannWhitney {
        u: u1,
        p_value: (p * factor).clamp(0.0, 1.0),
        effect_size: 1.0 - 2.0 * u1 / nn,
        n1,
        n2,
        method,
    })
}

fn standard_normal_sf(z: f64) -> f64 {
    // as scipy's `ndtr(-z)` (cephes): half the complementary error function at z/√2
    0.5 * libm::erfc(z * std::f64::consts::FRAC_1_SQRT_2)
}

/// P(U ≥ u) under H0 for sample sizes m, n (no ties), from the exact distribution of U.
fn mwu_exact_sf(u: f64, m: usize, n: usize) -> f64 {
    // counts[k] = number of arrangements with U = k; recursion over the two samples.
    let max = m * n;
    // f(i, j) as a vector over k, built up for i = 0..=m with j fixed sweeping.
    let mut table: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n + 1]; m + 1];
    for (i, row) in table.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            if i == 0 || j == 0 {
                *cell = vec![1.0];
            } else {
                *cell = Vec::new();
            }
        }
    }
    for i in 1..=m {
        for j in 1..=n {
            // f(i, j, k) = f(i-1, j, k-j) + f(i, j-1, k)
            let mut cell = vec![0.0; i * j + 1];
            for (k, c) in cell.iter_mut().enumerate() {
                let a = if k >= j {
                    table[i - 1][j].get(k - j).copied().unwrap_or(0.0)
                } else {
                    0.0
                };
                let b = table[i][j - 1].get(k).copied().unwrap_or(0.0);
                *c = a + b;
            }
            table[i][j] = cell;
        }
    }
    let counts = &table[m][n];
    let total: f64 = counts.iter().sum();
    let k = u.ceil().max(0.0) as usize;
    if k > max {
        return 0.0;
    }
    counts[k..].iter().sum::<f64>() / total
}

/// statsmodels `fleiss_kappa(table, method="fleiss")`: rows are subjects, columns categories,
/// cells the number of raters who chose that category (the same number of raters per row).
pub fn fleiss_kappa(table: &[Vec<f64>]) -> Result<f64> {
    let n_rat = fleiss_raters(table)?;
    let n_sub = table.len() as f64;
    let cats = table[0].len();
    let p_cat: Vec<f64> = (0..cats)
        .map(|j| table.iter().map(|r| r[j]).sum::<f64>() / (n_sub * n_rat))
        .collect();
    let p_rat: Vec<f64> = table
        .iter()
        .map(|r| (r.iter().map(|x| x * x).sum::<f64>() - n_rat) / (n_rat * (n_rat - 1.0)))
        .collect();
    let p_mean = p_rat.iter().sum::<f64>() / n_sub;
    let p_mean_exp: f64 = p_cat.iter().map(|p| p * p).sum();
    Ok((p_mean - p_mean_exp) / (1.0 - p_mean_exp))
}

/// The number of raters per subject of a Fleiss table: the same for every row, at least two.
fn fleiss_raters(table: &[Vec<f64>]) -> Result<f64> {
    let n_rat: f64 = table
        .first()
        .map(|r| r.iter().sum())
        .ok_or(StatsError::Empty("fleiss_kappa"))?;
    if table
        .iter()
        .any(|r| (r.iter().sum::<f64>() - n_rat).abs() > 1e-9)
    {
        return Err(StatsError::Invalid(
            "fleiss_kappa needs the same number of ratings per subject".into(),
        ));
    }
    if n_rat < 2.0 {
        return Err(StatsError::Invalid(
            "fleiss_kappa needs at least two ratings per subject".into(),
        ));
    }
    Ok(n_rat)
}

/// Pearson correlation coefficient.
pub fn pearson(x: &[f64], y: &[f64]) -> Result<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return Err(StatsError::Invalid(
            "pearson needs two samples of the same length ≥ 2".into(),
        ));
    }
    let (mx, my) = (mean(x)?, mean(y)?);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    Ok(sxy / (sxx * syy).sqrt())
}

/// scipy `spearmanr(x, y).statistic`: Pearson over average ranks.
pub fn spearman(x: &[f64], y: &[f64]) -> Result<f64> {
    pearson(&rank_average(x), &rank_average(y))
}

/// A ROC curve as scikit-learn `roc_curve(y, score)` returns it (with `drop_intermediate`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Roc {
    pub fpr: Vec<f64>,
    pub tpr: Vec<f64>,
    pub thresholds: Vec<f64>,
}

/// scikit-learn `roc_curve(positive, score)`.
pub fn roc_curve(positive: &[bool], score: &[f64]) -> Result<Roc> {
    if positive.len() != score.len() || positive.is_empty() {
        return Err(StatsError::Invalid(
            "roc_curve needs one label per score".into(),
        ));
    }
    let mut idx: Vec<usize> = (0..score.len()).collect();
    // descending score, stable (as numpy's mergesort on the reversed key)
    idx.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let (mut tps, mut fps, mut thr) = (Vec::new(), Vec::new(), Vec::new());
    let (mut tp, mut fp) = (0.0f64, 0.0f64);
    for (pos, &i) in idx.iter().enumerate() {
        if positive[i] {
            tp += 1.0;
        } else {
            fp += 1.0;
        }
        let last_of_value = pos + 1 == idx.len() || score[idx[pos + 1]] != score[i];
        if last_of_value {
            tps.push(tp);
            fps.push(fp);
            thr.push(score[i]);
        }
    }
    // drop_intermediate: keep points where the curve changes direction
    let keep: Vec<usize> = if tps.len() > 2 {
        let mut k = vec![0];
        for i in 1..tps.len() - 1 {
            let d2f = (fps[i + 1] - fps[i]) - (fps[i] - fps[i - 1]);
            let d2t = (tps[i + 1] - tps[i]) - (tps[i] - tps[i - 1]);
            if d2f != 0.0 || d2t != 0.0 {
                k.push(i);
            }
        }
        k.push(tps.len() - 1);
        k
    } else {
        (0..tps.len()).collect()
    };
    let (tp_total, fp_total) = (tp, fp);
    if tp_total == 0.0 || fp_total == 0.0 {
        return Err(StatsError::Invalid("roc_curve needs both classes".into()));
    }
    let mut roc = Roc {
        fpr: vec![0.0],
        tpr: vec![0.0],
        thresholds: vec![f64::INFINITY],
    };
    for &i in &keep {
        roc.fpr.push(fps[i] / fp_total);
        roc.tpr.push(tps[i] / tp_total);
        roc.thresholds.push(thr[i]);
    }
    Ok(roc)
}

/// scikit-learn `auc(fpr, tpr)`: the trapezoidal area under the curve.
pub fn auc(x: &[f64], y: &[f64]) -> f64 {
    x.windows(2)
        .zip(y.windows(2))
        .map(|(xs, ys)| (xs[1] - xs[0]) * (ys[0] + ys[1]) / 2.0)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn percentile_matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], 99) == 3.9699999999999998
        assert!(close(
            percentile(&[4.0, 1.0, 3.0, 2.0], 99.0).unwrap_or(0.0),
            3.97
        ));
        assert_eq!(percentile(&[5.0], 50.0).ok(), Some(5.0));
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(
            rank_average(&[10.0, 20.0, 10.0, 30.0]),
            vec![1.5, 3.0, 1.5, 4.0]
        );
    }

    #[test]
    fn mann_whitney_exact_small_samples() {
        // scipy.stats.mannwhitneyu([1, 2, 3], [4, 5, 6], alternative="less")
        // -> statistic 0.0, pvalue 0.05 (exact: 1 / C(6, 3))
        let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], Alternative::Less).expect("mwu");
        assert_eq!(r.method, MwuMethod::Exact);
        assert_eq!(r.u, 0.0);
        assert!(close(r.p_value, 0.05), "{}", r.p_value);
        assert_eq!(r.effect_size, 1.0);
        // two-sided doubles it
        let t =
            mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], Alternative::TwoSided).expect("mwu");
        assert!(close(t.p_value, 0.1));
    }

    #[test]
    fn mann_whitney_asymptotic_with_ties() {
        // scipy.stats.mannwhitneyu([1, 2, 2, 3], [2, 3, 4, 5], alternative="less"):
        // U1 = 2.5, tie-corrected normal approximation with continuity.
        let r = mann_whitney_u(
            &[1.0, 2.0, 2.0, 3.0],
            &[2.0, 3.0, 4.0, 5.0],
            Alternative::Less,
        )
        .expect("mwu");
        assert_eq!(r.method, MwuMethod::Asymptotic);
        assert_eq!(r.u, 2.5);
        // hand computation: mu = 8, ties (3 of 2, 2 of 3): tie_term = 24 + 6 = 30,
        // s = sqrt(16/12 * (9 - 30/56)), z = (13.5 - 8 - 0.5)/s, p = sf(z)
        let s = (16.0f64 / 12.0 * (9.0 - 30.0 / 56.0)).sqrt();
        let expected = standard_normal_sf(5.0 / s);
        assert!(close(r.p_value, expected), "{} vs {}", r.p_value, expected);
    }

    #[test]
    fn fleiss_kappa_matches_textbook_example() {
        // Fleiss (1971) example as in Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
        let t: Vec<Vec<f64>> = [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
        .iter()
        .map(|r| r.iter().map(|&x| f64::from(x)).collect())
        .collect();
        let k = fleiss_kappa(&t).expect("kappa");
        assert!((k - 0.20993070442195522).abs() < 1e-12, "{k}");
    }

    #[test]
    fn spearman_and_auc() {
        assert!(close(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]).unwrap_or(0.0),
            1.0
        ));
        let roc = roc_curve(&[true, false, true, false], &[0.9, 0.8, 0.7, 0.1]).expect("roc");
        assert!(close(auc(&roc.fpr, &roc.tpr), 0.75));
        // ties count half
        let roc = roc_curve(&[true, false], &[0.5, 0.5]).expect("roc");
        assert!(close(auc(&roc.fpr, &roc.tpr), 0.5));
    }
}
