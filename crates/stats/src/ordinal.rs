//! The cumulative link (proportional odds) model with a logit link,
//! logit P(Y ≤ j) = θ_j − x·β, by maximum likelihood: as statsmodels'
//! `OrderedModel(distr="logit")` and R's `ordinal::clm` fit it. The thresholds are those between
//! the answers observed, as statsmodels takes its levels from the data.

use faer::linalg::solvers::DenseSolveCore;
use faer::prelude::*;
use faer::{Mat, Side};

use super::{Result, StatsError};

/// The fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct OrdinalFit {
    /// The answers observed, ascending: the model's categories.
    pub levels: Vec<u32>,
    /// θ_1 < … < θ_{J−1}
    pub thresholds: Vec<f64>,
    pub threshold_se: Vec<f64>,
    /// β, one per column of x
    pub coefficients: Vec<f64>,
    pub coefficient_se: Vec<f64>,
    /// two-sided Wald test of each β = 0
    pub p_values: Vec<f64>,
    pub log_likelihood: f64,
}

/// P(θ_{lo} < latent ≤ θ_{hi}) for a logistic latent, its density at both ends and the
/// density's derivative, computed from the far tail so that cells near 0 or 1 keep their digits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cell {
    pub p: f64,
    pub f_hi: f64,
    pub f_lo: f64,
    pub df_hi: f64,
    pub df_lo: f64,
}

fn cdf(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// (density, its derivative) of the logistic distribution at x
fn density(x: f64) -> (f64, f64) {
    let f = cdf(x);
    let s = cdf(-x);
    let d = f * s;
    (d, d * (s - f))
}

impl Cell {
    /// `hi`/`lo` of `None` are +∞/−∞.
    pub(crate) fn new(hi: Option<f64>, lo: Option<f64>) -> Cell {
        let p = match (hi, lo) {
            (None, None) => 1.0,
            (Some(h), None) => cdf(h),
            (None, Some(l)) => cdf(-l),
            (Some(h), Some(l)) if l > 0.0 => cdf(-l) - cdf(-h),
            (Some(h), Some(l)) => cdf(h) - cdf(l),
        };
        let (f_hi, df_hi) = hi.map_or((0.0, 0.0), density);
        let (f_lo, df_lo) = lo.map_or((0.0, 0.0), density);
        Cell {
            p,
            f_hi,
            f_lo,
            df_hi,
            df_lo,
        }
    }
}

/// The observations of a cumulative link model: each answer's category (0-based among the
/// levels observed) and covariate row.
#[derive(Debug, Clone)]
pub(crate) struct Observations {
    pub levels: Vec<u32>,
    pub category: Vec<usize>,
    pub x: Vec<Vec<f64>>,
    pub columns: usize,
}

impl Observations {
    pub(crate) fn new(answers: &[u32], x: &[Vec<f64>]) -> Result<Observations> {
        if answers.len() != x.len() {
            return Err(StatsError::Invalid(format!(
                "{} answers but {} covariate rows",
                answers.len(),
                x.len()
            )));
        }
        let columns = x.first().map_or(0, Vec::len);
        if x.iter()
            .any(|r| r.len() != columns || r.iter().any(|v| !v.is_finite()))
        {
            return Err(StatsError::Invalid(
                "every covariate row needs the same number of finite values".into(),
            ));
        }
        let mut levels: Vec<u32> = answers.to_vec();
        levels.sort_unstable();
        levels.dedup();
        if levels.len() < 2 {
            return Err(StatsError::Invalid(
                "an ordinal model needs at least two different answers".into(),
            ));
        }
        let category = answers
            .iter()
            .map(|a| levels.binary_search(a).unwrap_or(0))
            .collect();
        Ok(Observations {
            levels,
            category,
            x: x.to_vec(),
            columns,
        })
    }

    pub(crate) fn thresholds(&self) -> usize {
        self.levels.len() - 1
    }

    /// The thresholds at the observed cumulative shares: the fit's start.
    pub(crate) fn start(&self) -> Vec<f64> {
        let n = self.category.len() as f64;
        let mut counts = vec![0.0; self.levels.len()];
        for &c in &self.category {
            counts[c] += 1.0;
        }
        let mut cum = 0.0;
        (0..self.thresholds())
            .map(|j| {
                cum += counts[j];
                let q = (cum / n).clamp(1e-6, 1.0 - 1e-6);
                (q / (1.0 - q)).ln()
            })
            .collect()
    }

    /// x·β of observation i
    pub(crate) fn linear(&self, i: usize, beta: &[f64]) -> f64 {
        self.x[i].iter().zip(beta).map(|(a, b)| a * b).sum()
    }

    /// The cell of observation i given the thresholds and a shift of its latent mean.
    pub(crate) fn cell(&self, i: usize, theta: &[f64], shift: f64) -> Cell {
        let c = self.category[i];
        let hi = (c < theta.len()).then(|| theta[c] - shift);
        let lo = (c > 0).then(|| theta[c - 1] - shift);
        Cell::new(hi, lo)
    }
}

pub(crate) fn ordered(theta: &[f64]) -> bool {
    theta.windows(2).all(|w| w[0] < w[1]) && theta.iter().all(|t| t.is_finite())
}

/// Log-likelihood, gradient and Hessian over φ = (θ, β).
fn derivatives(obs: &Observations, weight: &[f64], phi: &[f64]) -> (f64, Vec<f64>, Mat<f64>) {
    let j = obs.thresholds();
    let m = phi.len();
    let (theta, beta) = phi.split_at(j);
    let mut ll = 0.0;
    let mut grad = vec![0.0; m];
    let mut hess = Mat::<f64>::zeros(m, m);
    let mut a_hi = vec![0.0; m];
    let mut a_lo = vec![0.0; m];
    let mut g = vec![0.0; m];
    for (i, &w) in weight.iter().enumerate() {
        let cell = obs.cell(i, theta, obs.linear(i, beta));
        if cell.p <= 0.0 {
            return (f64::NEG_INFINITY, grad, hess);
        }
        ll += w * cell.p.ln();
        let c = obs.category[i];
        a_hi.iter_mut().for_each(|v| *v = 0.0);
        a_lo.iter_mut().for_each(|v| *v = 0.0);
        if c < j {
            a_hi[c] = 1.0;
        }
        if c > 0 {
            a_lo[c - 1] = 1.0;
        }
        for (k, x) in obs.x[i].iter().enumerate() {
            a_hi[j + k] = -x;
            a_lo[j + k] = -x;
        }
        for (k, gk) in g.iter_mut().enumerate() {
            *gk = (cell.f_hi * a_hi[k] - cell.f_lo * a_lo[k]) / cell.p;
        }
        for k in 0..m {
            grad[k] += w * g[k];
            for l in 0..m {
                hess[(k, l)] += w
                    * ((cell.df_hi * a_hi[k] * a_hi[l] - cell.df_lo * a_lo[k] * a_lo[l]) / cell.p
                        - g[k] * g[l]);
            }
        }
    }
    (ll, grad, hess)
}

/// Fits the model to `answers` (scale points) with covariate rows `x` (one per answer, the
/// same number of columns each; no intercept column: the thresholds are the intercepts).
pub fn cumulative_logit(answers: &[u32], x: &[Vec<f64>]) -> Result<OrdinalFit> {
    let all = Observations::new(answers, x)?;
    // answers of one category and one covariate row contribute alike: each distinct cell once,
    // weighted by how many answers it holds
    let mut cells: std::collections::HashMap<(usize, Vec<u64>), usize> = Default::default();
    let mut obs = Observations {
        levels: all.levels.clone(),
        category: Vec::new(),
        x: Vec::new(),
        columns: all.columns,
    };
    let mut weight: Vec<f64> = Vec::new();
    for (c, row) in all.category.iter().zip(&all.x) {
        let key = (*c, row.iter().map(|v| v.to_bits()).collect());
        let at = *cells.entry(key).or_insert_with(|| {
            obs.category.push(*c);
            obs.x.push(row.clone());
            weight.push(0.0);
            weight.len() - 1
        });
        weight[at] += 1.0;
    }
    let j = obs.thresholds();
    let mut phi: Vec<f64> = all.start();
    phi.extend(std::iter::repeat_n(0.0, obs.columns));
    let (mut ll, mut grad, mut hess) = derivatives(&obs, &weight, &phi);
    for _ in 0..500 {
        let info = Mat::<f64>::from_fn(phi.len(), phi.len(), |a, b| -hess[(a, b)]);
        let step = info
            .llt(Side::Lower)
            .map_err(|_| not_identified(&obs))?
            .solve(Mat::<f64>::from_fn(phi.len(), 1, |a, _| grad[a]));
        // Newton's decrement: near the maximum the log-likelihood gains less than its own
        // rounding, so there the full step is taken without asking it to grow
        let decrement: f64 = (0..phi.len()).map(|a| grad[a] * step[(a, 0)]).sum();
        let quadratic = decrement < 1e-6 * (1.0 + ll.abs());
        let mut t = 1.0;
        let mut moved = false;
        while t > 1e-12 {
            let next: Vec<f64> = (0..phi.len()).map(|a| phi[a] + t * step[(a, 0)]).collect();
            if ordered(&next[..j]) {
                let (l2, g2, h2) = derivatives(&obs, &weight, &next);
                if l2 >= ll || (quadratic && l2.is_finite()) {
                    moved = (0..phi.len()).any(|a| next[a] != phi[a]);
                    (phi, ll, grad, hess) = (next, l2, g2, h2);
                    break;
                }
            }
            t /= 2.0;
        }
        let size = (0..phi.len()).fold(0.0f64, |m, a| m.max(step[(a, 0)].abs()));
        if !moved || (quadratic && size < 1e-10) {
            break;
        }
    }
    // a logit of 30 is a probability of 1e-13: parameters beyond it are running to infinity
    // (the answers are separated by a condition), not converging
    let scale = 1e-6 * (1.0 + weight.iter().sum::<f64>());
    if !ll.is_finite() || grad.iter().any(|g| g.abs() > scale) || phi.iter().any(|v| v.abs() > 30.0)
    {
        return Err(not_identified(&obs));
    }
    let info = Mat::<f64>::from_fn(phi.len(), phi.len(), |a, b| -hess[(a, b)]);
    let cov = info
        .llt(Side::Lower)
        .map_err(|_| not_identified(&obs))?
        .inverse();
    let se: Vec<f64> = (0..phi.len())
        .map(|a| cov[(a, a)].max(0.0).sqrt())
        .collect();
    let coefficients = phi[j..].to_vec();
    let p_values = coefficients
        .iter()
        .zip(&se[j..])
        .map(|(b, s)| 2.0 * super::standard_normal_sf((b / s).abs()))
        .collect();
    Ok(OrdinalFit {
        levels: obs.levels,
        thresholds: phi[..j].to_vec(),
        threshold_se: se[..j].to_vec(),
        coefficients,
        coefficient_se: se[j..].to_vec(),
        p_values,
        log_likelihood: ll,
    })
}

fn not_identified(obs: &Observations) -> StatsError {
    StatsError::Invalid(format!(
        "the ordinal model has no finite maximum on these {} answers (a condition whose answers \
         all lie above or below the others'?)",
        obs.category.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_covariates_the_thresholds_are_the_cumulative_logits() {
        // answers 1,1,2,3,3,3: P(Y ≤ 1) = 2/6, P(Y ≤ 2) = 3/6
        let answers = [1, 1, 2, 3, 3, 3];
        let x = vec![Vec::new(); 6];
        let fit = cumulative_logit(&answers, &x).expect("fit");
        assert!(
            (fit.thresholds[0] - (2.0f64 / 4.0).ln()).abs() < 1e-10,
            "{fit:?}"
        );
        assert!(fit.thresholds[1].abs() < 1e-10);
        let ll = 2.0 * (2.0f64 / 6.0).ln() + (1.0f64 / 6.0).ln() + 3.0 * (3.0f64 / 6.0).ln();
        assert!((fit.log_likelihood - ll).abs() < 1e-10);
    }

    #[test]
    fn separated_conditions_are_refused_in_words() {
        let answers = [1, 1, 2, 2];
        let x = vec![vec![0.0], vec![0.0], vec![1.0], vec![1.0]];
        let e = cumulative_logit(&answers, &x).expect_err("separated");
        assert!(e.to_string().contains("no finite maximum"), "{e}");
        assert!(cumulative_logit(&[2, 2], &[vec![], vec![]]).is_err());
    }
}
