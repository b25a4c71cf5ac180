//! Agreement coefficients prepared for resampling, and the percentile bootstrap over them.
//!
//! A bootstrap replicate resamples the units (items) with replacement. Every coefficient here is
//! a function of sums of per-unit contributions, and units with the same ratings contribute the
//! same, so units are grouped into classes of identical contribution (a study of 100,000 items
//! rated by five people on a four-point scale has a few dozen). A replicate is then only how many
//! units of each class it drew — a multinomial draw, made class by class from conditional
//! binomials in O(classes) — and the statistic is a weighted sum over the classes: no per-unit
//! work and no allocation per replicate. The distribution is exactly that of drawing n units
//! with replacement.

use std::collections::HashMap;

use rand::SeedableRng;
use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;

use super::{percentile, Result, StatsError};

/// A statistic over units grouped into classes of identical contribution.
pub trait Resample: Sync {
    /// How many units each class holds.
    fn class_sizes(&self) -> &[u64];
    /// The statistic when class `c` is taken `weights[c]` times.
    fn weighted(&self, weights: &[f64]) -> Option<f64>;
    /// The statistic of all units.
    fn estimate(&self) -> Option<f64> {
        let w: Vec<f64> = self.class_sizes().iter().map(|&s| s as f64).collect();
        self.weighted(&w)
    }
}

/// Groups items by an exact key: (distinct items, how many of each), in first-seen order.
fn classes<T: Clone>(
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> Vec<u64>,
) -> (Vec<T>, Vec<u64>) {
    let mut index: HashMap<Vec<u64>, usize> = HashMap::new();
    let (mut reps, mut sizes) = (Vec::new(), Vec::new());
    for it in items {
        let k = key(&it);
        match index.get(&k) {
            Some(&c) => sizes[c] += 1,
            None => {
                index.insert(k, reps.len());
                reps.push(it);
                sizes.push(1);
            }
        }
    }
    (reps, sizes)
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// The distance of Krippendorff's alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaMetric {
    Nominal,
    Ordinal,
    Interval,
    /// ((c − k) / (c + k))², for values on a ratio scale (`krippendorff`'s "ratio")
    Ratio,
}

/// Krippendorff's alpha prepared for resampling: the coincidence-matrix contribution of each
/// class of pairable units (units with the same values contribute the same).
#[derive(Debug, Clone)]
pub struct AlphaUnits {
    values: Vec<f64>,
    /// One unit of each class, its values sorted (the tests find a unit's class by it).
    #[cfg_attr(not(test), allow(dead_code))]
    reps: Vec<Vec<f64>>,
    /// Row-major v × v contribution of one unit of each class.
    contributions: Vec<Vec<f64>>,
    sizes: Vec<u64>,
    metric: AlphaMetric,
}

impl AlphaUnits {
    /// Units of observed values (missing values simply absent); units with fewer than two
    /// values are not pairable and are left out.
    pub fn new(units: &[Vec<f64>], metric: AlphaMetric) -> AlphaUnits {
        let pairable = units.iter().filter(|u| u.len() >= 2);
        let mut values: Vec<f64> = pairable.clone().flat_map(|u| u.iter().copied()).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let v = values.len();
        let idx = |x: f64| values.iter().position(|y| *y == x).unwrap_or(0);
        let (reps, sizes) = classes(
            pairable.map(|u| {
                let mut s = u.clone();
                s.sort_by(f64::total_cmp);
                s
            }),
            |u| bits(u),
        );
        let contributions = reps
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
            reps,
            contributions,
            sizes,
            metric,
        }
    }

    /// How many pairable units there are.
    pub fn len(&self) -> usize {
        self.sizes.iter().sum::<u64>() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Alpha of all units.
    pub fn alpha(&self) -> Result<f64> {
        let w: Vec<f64> = self.sizes.iter().map(|&s| s as f64).collect();
        self.alpha_weighted(&w)
    }

    /// Alpha when each class is taken `weights[c]` times.
    pub fn alpha_weighted(&self, weights: &[f64]) -> Result<f64> {
        let v = self.values.len();
        if v < 2 {
            return Err(StatsError::Invalid(
                "alpha needs at least two distinct values".into(),
            ));
        }
        // v ≤ a handful of scale points: fixed-size work, on the stack for the usual scales
        let mut o = [0.0f64; 64];
        let mut heap;
        let o: &mut [f64] = if v * v <= o.len() {
            &mut o[..v * v]
        } else {
            heap = vec![0.0; v * v];
            &mut heap
        };
        for (w, c) in weights.iter().zip(&self.contributions) {
            if *w != 0.0 {
                for (acc, x) in o.iter_mut().zip(c) {
                    *acc += w * x;
                }
            }
        }
        let nc = |c: usize| -> f64 { o[c * v..(c + 1) * v].iter().sum() };
        let ncs: Vec<f64> = (0..v).map(nc).collect();
        let n: f64 = ncs.iter().sum();
        let d2 = |c: usize, k: usize| -> f64 {
            match self.metric {
                AlphaMetric::Nominal => f64::from(u8::from(c != k)),
                AlphaMetric::Interval => (self.values[c] - self.values[k]).powi(2),
                AlphaMetric::Ratio => {
                    let (a, b) = (self.values[c], self.values[k]);
                    if a + b == 0.0 {
                        0.0
                    } else {
                        ((a - b) / (a + b)).powi(2)
                    }
                }
                AlphaMetric::Ordinal => {
                    let (lo, hi) = (c.min(k), c.max(k));
                    let s: f64 = ncs[lo..=hi].iter().sum();
                    (s - (ncs[c] + ncs[k]) / 2.0).powi(2)
                }
            }
        };
        let (mut d_o, mut d_e) = (0.0, 0.0);
        for c in 0..v {
            for k in 0..v {
                let d = d2(c, k);
                d_o += o[c * v + k] * d;
                d_e += ncs[c] * ncs[k] * d;
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

impl Resample for AlphaUnits {
    fn class_sizes(&self) -> &[u64] {
        &self.sizes
    }
    fn weighted(&self, weights: &[f64]) -> Option<f64> {
        self.alpha_weighted(weights).ok()
    }
}

/// Krippendorff's alpha over units of observed values (missing values simply absent; units
/// with fewer than two values are not pairable and are left out), from the coincidence matrix.
pub fn krippendorff_alpha(units: &[Vec<f64>], metric: AlphaMetric) -> Result<f64> {
    AlphaUnits::new(units, metric).alpha()
}

/// Fleiss' kappa prepared for resampling: the category counts and agreement of each class of
/// subjects (subjects with the same counts contribute the same).
#[derive(Debug, Clone)]
pub struct FleissRows {
    counts: Vec<Vec<f64>>,
    agreement: Vec<f64>,
    sizes: Vec<u64>,
    raters: f64,
}

impl FleissRows {
    /// Rows of category counts with the same number of raters each.
    pub fn new(table: &[Vec<f64>]) -> Result<FleissRows> {
        let raters = super::fleiss_raters(table)?;
        let (counts, sizes) = classes(table.iter().cloned(), |r| bits(r));
        let agreement = counts
            .iter()
            .map(|r| (r.iter().map(|x| x * x).sum::<f64>() - raters) / (raters * (raters - 1.0)))
            .collect();
        Ok(FleissRows {
            counts,
            agreement,
            sizes,
            raters,
        })
    }

    /// How many subjects there are.
    pub fn len(&self) -> usize {
        self.sizes.iter().sum::<u64>() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Kappa of all subjects.
    pub fn kappa(&self) -> Result<f64> {
        let w: Vec<f64> = self.sizes.iter().map(|&s| s as f64).collect();
        self.kappa_weighted(&w)
    }

    /// Kappa when each class is taken `weights[c]` times.
    pub fn kappa_weighted(&self, weights: &[f64]) -> Result<f64> {
        let cats = self.counts.first().map_or(0, Vec::len);
        let mut p_cat = [0.0f64; 16];
        let mut heap;
        let p_cat: &mut [f64] = if cats <= p_cat.len() {
            &mut p_cat[..cats]
        } else {
            heap = vec![0.0; cats];
            &mut heap
        };
        let (mut n_sub, mut p_mean) = (0.0, 0.0);
        for ((w, row), a) in weights.iter().zip(&self.counts).zip(&self.agreement) {
            if *w != 0.0 {
                for (acc, x) in p_cat.iter_mut().zip(row) {
                    *acc += w * x;
                }
                p_mean += w * a;
                n_sub += w;
            }
        }
        if n_sub == 0.0 {
            return Err(StatsError::Empty("fleiss_kappa"));
        }
        p_mean /= n_sub;
        let p_mean_exp: f64 = p_cat
            .iter()
            .map(|p| (p / (n_sub * self.raters)).powi(2))
            .sum();
        Ok((p_mean - p_mean_exp) / (1.0 - p_mean_exp))
    }
}

impl Resample for FleissRows {
    fn class_sizes(&self) -> &[u64] {
        &self.sizes
    }
    fn weighted(&self, weights: &[f64]) -> Option<f64> {
        self.kappa_weighted(weights).ok()
    }
}

/// Draws how many of `n` units resampled with replacement fall in each class (`sizes[c]` units
/// of `n` are in class `c`): a multinomial draw as conditional binomials.
fn multinomial(rng: &mut impl rand::Rng, sizes: &[u64], out: &mut [f64]) {
    let n: u64 = sizes.iter().sum();
    let (mut left, mut left_units) = (n, n);
    for (o, &s) in out.iter_mut().zip(sizes) {
        let k = if left == 0 || s == 0 {
            0
        } else if s >= left_units {
            left
        } else {
            Binomial::new(left, s as f64 / left_units as f64)
                .map(|b| b.sample(rng))
                .unwrap_or(0)
        };
        *o = k as f64;
        left -= k;
        left_units -= s;
    }
}

/// A percentile bootstrap 95% interval of `stat` over its units resampled with replacement,
/// `replicates` times, on every core. Seeded: replicate `r` draws from stream `r` of a ChaCha8
/// generator seeded with `seed`, so the interval does not depend on the number of threads.
/// Failed or non-finite replicates are skipped.
pub fn bootstrap_ci<R: Resample + ?Sized>(
    stat: &R,
    replicates: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    let sizes = stat.class_sizes();
    if sizes.iter().sum::<u64>() == 0 || replicates == 0 {
        return None;
    }
    let stats: Vec<f64> = (0..replicates)
        .into_par_iter()
        .map_init(
            || vec![0.0; sizes.len()],
            |w, r| {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(r as u64);
                multinomial(&mut rng, sizes, w);
                stat.weighted(w).filter(|x| x.is_finite())
            },
        )
        .flatten()
        .collect();
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
    use rand::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    fn textbook_units() -> Vec<Vec<f64>> {
        // Krippendorff (2011), 4 observers × 12 units with missing values
        let nan = f64::NAN;
        let rows = [
            [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 4.0, 1.0, 2.0, nan, nan, nan],
            [1.0, 2.0, 3.0, 3.0, 2.0, 2.0, 4.0, 1.0, 2.0, 5.0, nan, 3.0],
            [nan, 3.0, 3.0, 3.0, 2.0, 3.0, 4.0, 2.0, 2.0, 5.0, 1.0, nan],
            [1.0, 2.0, 3.0, 3.0, 2.0, 4.0, 4.0, 1.0, 2.0, 5.0, 1.0, nan],
        ];
        (0..12)
            .map(|u| rows.iter().map(|r| r[u]).filter(|x| !x.is_nan()).collect())
            .collect()
    }

    #[test]
    fn krippendorff_alpha_matches_the_textbook_example() {
        // the reference values (nominal .743, ordinal .815, interval .849) computed exactly
        let units = textbook_units();
        let a = |m| krippendorff_alpha(&units, m).unwrap_or(f64::NAN);
        assert!(close(a(AlphaMetric::Nominal), 0.743421052631579));
        assert!(close(a(AlphaMetric::Ordinal), 0.8153875037548814));
        assert!(close(a(AlphaMetric::Interval), 0.8491071428571428));
    }

    /// Resampled units as a multiset: the weights of the classes must give the statistic of
    /// the units themselves.
    #[test]
    fn class_weights_give_the_statistic_of_the_resampled_units() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let units: Vec<Vec<f64>> = (0..300)
            .map(|_| (0..5).map(|_| f64::from(rng.gen_range(1..=4u8))).collect())
            .collect();
        let table: Vec<Vec<f64>> = units
            .iter()
            .map(|u| {
                (1..=4)
                    .map(|c| u.iter().filter(|x| **x == f64::from(c)).count() as f64)
                    .collect()
            })
            .collect();
        let alpha = AlphaUnits::new(&units, AlphaMetric::Ordinal);
        let kappa = FleissRows::new(&table).expect("rows");
        assert!(alpha.class_sizes().len() < units.len(), "units are grouped");
        for _ in 0..20 {
            let picks: Vec<usize> = (0..units.len())
                .map(|_| rng.gen_range(0..units.len()))
                .collect();
            let picked_units: Vec<Vec<f64>> = picks.iter().map(|&i| units[i].clone()).collect();
            let picked_rows: Vec<Vec<f64>> = picks.iter().map(|&i| table[i].clone()).collect();
            let direct_alpha =
                krippendorff_alpha(&picked_units, AlphaMetric::Ordinal).expect("alpha");
            let direct_kappa = super::super::fleiss_kappa(&picked_rows).expect("kappa");
            // the same multiset as class weights
            let w_alpha = weights_of(&alpha, &picked_units);
            let w_kappa = weights_of_rows(&kappa, &picked_rows);
            let a = alpha.alpha_weighted(&w_alpha).expect("alpha");
            let k = kappa.kappa_weighted(&w_kappa).expect("kappa");
            assert!((a - direct_alpha).abs() < 1e-12, "{a} vs {direct_alpha}");
            assert!((k - direct_kappa).abs() < 1e-12, "{k} vs {direct_kappa}");
        }
    }

    fn weights_of(classes: &AlphaUnits, units: &[Vec<f64>]) -> Vec<f64> {
        let mut w = vec![0.0; classes.sizes.len()];
        for u in units {
            let mut sorted = u.clone();
            sorted.sort_by(f64::total_cmp);
            let c = classes
                .reps
                .iter()
                .position(|r| *r == sorted)
                .expect("class");
            w[c] += 1.0;
        }
        w
    }

    fn weights_of_rows(classes: &FleissRows, rows: &[Vec<f64>]) -> Vec<f64> {
        let mut w = vec![0.0; classes.sizes.len()];
        for r in rows {
            let c = classes.counts.iter().position(|x| x == r).expect("class");
            w[c] += 1.0;
        }
        w
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_estimate() {
        let table: Vec<Vec<f64>> = (0..400)
            .map(|i| match i % 4 {
                0 => vec![5.0, 0.0],
                1 => vec![4.0, 1.0],
                2 => vec![0.0, 5.0],
                _ => vec![2.0, 3.0],
            })
            .collect();
        let rows = FleissRows::new(&table).expect("rows");
        assert_eq!(rows.class_sizes(), &[100, 100, 100, 100]);
        let k = rows.kappa().expect("kappa");
        assert!(close(k, super::super::fleiss_kappa(&table).expect("kappa")));
        let a = bootstrap_ci(&rows, 500, 7).expect("ci");
        assert_eq!(Some(a), bootstrap_ci(&rows, 500, 7));
        assert_ne!(Some(a), bootstrap_ci(&rows, 500, 8));
        assert!(a.0 < k && k < a.1, "{a:?} around {k}");
        // a replicate keeps the number of units
        let mut w = vec![0.0; 4];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        multinomial(&mut rng, rows.class_sizes(), &mut w);
        assert_eq!(w.iter().sum::<f64>(), 400.0);
    }
}
