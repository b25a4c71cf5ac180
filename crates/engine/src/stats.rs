//! Statistics as the reference Python libraries compute them (numpy, scipy, statsmodels,
//! scikit-learn), to 1e-9 relative.

use statrs::distribution::{ContinuousCDF, Normal};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("{0}: no data")]
    Empty(&'static str),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, StatsError>;

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
    v.sort_by(f64::total_cmp);
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    let frac = pos - lo as f64;
    // numpy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) when t >= 0.5
    let (a, b) = (v[lo], v[hi]);
    let diff = b - a;
    Ok(if frac >= 0.5 {
        b - diff * (1.0 - frac)
    } else {
        a + diff * frac
    })
}

/// Average ranks (1-based, ties share the mean rank), as scipy `rankdata`.
pub fn rank_average(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Sizes of the groups of tied values.
fn tie_sizes(xs: &[f64]) -> Vec<usize> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[i] {
            j += 1;
        }
        out.push(j - i + 1);
        i = j + 1;
    }
    out
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
    let ranks = rank_average(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let nn = (n1 * n2) as f64;
    let u2 = nn - u1;
    let ties = tie_sizes(&all);
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
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.sf(z),
        Err(_) => f64::NAN,
    }
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
    if table.is_empty() {
        return Err(StatsError::Empty("fleiss_kappa"));
    }
    let n_sub = table.len() as f64;
    let n_rat: f64 = table[0].iter().sum();
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

/// The distance of Krippendorff's alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaMetric {
    Nominal,
    Ordinal,
    Interval,
}

/// Krippendorff's alpha prepared for resampling: each pairable unit's contribution to the
/// coincidence matrix, so that any multiset of units gives its alpha by summing.
#[derive(Debug, Clone)]
pub struct AlphaUnits {
    values: Vec<f64>,
    /// Row-major v × v contribution of each pairable unit.
    contributions: Vec<Vec<f64>>,
}

impl AlphaUnits {
    /// Units of observed values (missing values simply absent); units with fewer than two
    /// values are not pairable and are left out.
    pub fn new(units: &[Vec<f64>]) -> AlphaUnits {
        let pairable: Vec<&Vec<f64>> = units.iter().filter(|u| u.len() >= 2).collect();
        let mut values: Vec<f64> = pairable.iter().flat_map(|u| u.iter().copied()).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let v = values.len();
        let idx = |x: f64| values.iter().position(|y| *y == x).unwrap_or(0);
        let contributions = pairable
            .iter()
            .map(|u| {
                let m = u.len() as f64;
                let mut o = vec![0.0; v * v];
                for (i, a) in u.iter().enumerate() {
                    for (j, b) in u.iter().enumerate() {
                        if i != j {
                            o[idx(*a) * v + idx(*b)] += 1.0 / (m - 1.0);
                        }
                    }
                }
                o
            })
            .collect();
        AlphaUnits {
            values,
            contributions,
        }
    }

    /// How many pairable units there are (what a bootstrap resamples).
    pub fn len(&self) -> usize {
        self.contributions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.contributions.is_empty()
    }

    /// Alpha of all units.
    pub fn alpha(&self, metric: AlphaMetric) -> Result<f64> {
        let all: Vec<usize> = (0..self.len()).collect();
        self.alpha_of(&all, metric)
    }

    /// Alpha of the units at `picks` (repeats allowed).
    pub fn alpha_of(&self, picks: &[usize], metric: AlphaMetric) -> Result<f64> {
        let v = self.values.len();
        if v < 2 {
            return Err(StatsError::Invalid(
                "alpha needs at least two distinct values".into(),
            ));
        }
        let mut o = vec![0.0; v * v];
        for &p in picks {
            for (acc, x) in o.iter_mut().zip(&self.contributions[p]) {
                *acc += x;
            }
        }
        let nc: Vec<f64> = (0..v).map(|c| o[c * v..(c + 1) * v].iter().sum()).collect();
        let n: f64 = nc.iter().sum();
        let d2 = |c: usize, k: usize| -> f64 {
            match metric {
                AlphaMetric::Nominal => f64::from(u8::from(c != k)),
                AlphaMetric::Interval => (self.values[c] - self.values[k]).powi(2),
                AlphaMetric::Ordinal => {
                    let (lo, hi) = (c.min(k), c.max(k));
                    let s: f64 = nc[lo..=hi].iter().sum();
                    (s - (nc[c] + nc[k]) / 2.0).powi(2)
                }
            }
        };
        let (mut d_o, mut d_e) = (0.0, 0.0);
        for c in 0..v {
            for k in 0..v {
                let d = d2(c, k);
                d_o += o[c * v + k] * d;
                d_e += nc[c] * nc[k] * d;
            }
        }
        if d_e == 0.0 {
            return Err(StatsError::Invalid(
                "alpha is undefined without expected disagreement".into(),
            ));
        }
        Ok(1.0 - (n - 1.0) * d_o / d_e)
    }
}

/// Krippendorff's alpha over units of observed values (missing values simply absent; units
/// with fewer than two values are not pairable and are left out), from the coincidence matrix.
pub fn krippendorff_alpha(units: &[Vec<f64>], metric: AlphaMetric) -> Result<f64> {
    AlphaUnits::new(units).alpha(metric)
}

/// Fleiss' kappa prepared for resampling: each subject's category counts and agreement.
#[derive(Debug, Clone)]
pub struct FleissRows {
    counts: Vec<Vec<f64>>,
    agreement: Vec<f64>,
    raters: f64,
}

impl FleissRows {
    /// Rows of category counts with the same number of raters each.
    pub fn new(table: &[Vec<f64>]) -> Result<FleissRows> {
        let raters: f64 = table
            .first()
            .map(|r| r.iter().sum())
            .ok_or(StatsError::Empty("fleiss_kappa"))?;
        if table
            .iter()
            .any(|r| (r.iter().sum::<f64>() - raters).abs() > 1e-9)
        {
            return Err(StatsError::Invalid(
                "fleiss_kappa needs the same number of ratings per subject".into(),
            ));
        }
        if raters < 2.0 {
            return Err(StatsError::Invalid(
                "fleiss_kappa needs at least two ratings per subject".into(),
            ));
        }
        let agreement = table
            .iter()
            .map(|r| (r.iter().map(|x| x * x).sum::<f64>() - raters) / (raters * (raters - 1.0)))
            .collect();
        Ok(FleissRows {
            counts: table.to_vec(),
            agreement,
            raters,
        })
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Kappa of the rows at `picks` (repeats allowed).
    pub fn kappa_of(&self, picks: &[usize]) -> Result<f64> {
        if picks.is_empty() {
            return Err(StatsError::Empty("fleiss_kappa"));
        }
        let cats = self.counts[0].len();
        let n_sub = picks.len() as f64;
        let mut p_cat = vec![0.0; cats];
        let mut p_mean = 0.0;
        for &i in picks {
            for (acc, x) in p_cat.iter_mut().zip(&self.counts[i]) {
                *acc += x;
            }
            p_mean += self.agreement[i];
        }
        p_mean /= n_sub;
        let p_mean_exp: f64 = p_cat
            .iter()
            .map(|p| (p / (n_sub * self.raters)).powi(2))
            .sum();
        Ok((p_mean - p_mean_exp) / (1.0 - p_mean_exp))
    }
}

/// A percentile bootstrap 95% interval: `stat` gets the indices of `n` units resampled with
/// replacement (seeded: the same seed gives the same interval). Failed replicates are skipped.
pub fn bootstrap_ci<F>(n: usize, replicates: usize, seed: u64, stat: F) -> Option<(f64, f64)>
where
    F: Fn(&[usize]) -> Option<f64>,
{
    use rand::{Rng, SeedableRng};
    if n == 0 {
        return None;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut stats = Vec::with_capacity(replicates);
    let mut sample = vec![0usize; n];
    for _ in 0..replicates {
        for s in sample.iter_mut() {
            *s = rng.gen_range(0..n);
        }
        if let Some(x) = stat(&sample).filter(|x| x.is_finite()) {
            stats.push(x);
        }
    }
    if stats.is_empty() {
        return None;
    }
    Some((
        percentile(&stats, 2.5).ok()?,
        percentile(&stats, 97.5).ok()?,
    ))
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
    fn krippendorff_alpha_matches_the_textbook_example() {
        // Krippendorff (2011), 4 observers × 12 units with missing values; the reference
        // values (nominal .743, ordinal .815, interval .849) computed exactly.
        let nan = f64::NAN;
        let rows = [
            [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 4.0, 1.0, 2.0, nan, nan, nan],
            [1.0, 2.0, 3.0, 3.0, 2.0, 2.0, 4.0, 1.0, 2.0, 5.0, nan, 3.0],
            [nan, 3.0, 3.0, 3.0, 2.0, 3.0, 4.0, 2.0, 2.0, 5.0, 1.0, nan],
            [1.0, 2.0, 3.0, 3.0, 2.0, 4.0, 4.0, 1.0, 2.0, 5.0, 1.0, nan],
        ];
        let units: Vec<Vec<f64>> = (0..12)
            .map(|u| rows.iter().map(|r| r[u]).filter(|x| !x.is_nan()).collect())
            .collect();
        let a = |m| krippendorff_alpha(&units, m).unwrap_or(f64::NAN);
        assert!(close(a(AlphaMetric::Nominal), 0.743421052631579));
        assert!(close(a(AlphaMetric::Ordinal), 0.8153875037548814));
        assert!(close(a(AlphaMetric::Interval), 0.8491071428571428));
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_estimate() {
        let xs: Vec<f64> = (0..50).map(f64::from).collect();
        let stat = |picks: &[usize]| mean(&picks.iter().map(|&i| xs[i]).collect::<Vec<_>>()).ok();
        let a = bootstrap_ci(xs.len(), 500, 7, stat).expect("ci");
        assert_eq!(Some(a), bootstrap_ci(xs.len(), 500, 7, stat));
        assert!(a.0 < 24.5 && 24.5 < a.1, "{a:?}");
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
