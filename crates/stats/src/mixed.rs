//! The cumulative logit model with two crossed random intercepts,
//! logit P(Y ≤ j) = θ_j − x·β − σ₁u₁[g₁] − σ₂u₂[g₂], u ~ N(0, 1), by the Laplace approximation
//! to its marginal likelihood: as R's `ordinal::clmm(y ~ x + (1|g1) + (1|g2), link = "logit")`.
//!
//! The random effects' mode is found by Newton's method on their joint conditional density; its
//! Hessian is sparse (each answer ties one level of each factor), so it is solved through the
//! Schur complement of the larger factor's diagonal block: a dense matrix only the size of the
//! smaller factor. The fixed parameters and the two standard deviations are then maximised by
//! BFGS on central differences. The likelihood is even in each σ, so σ is free of sign and
//! reported as |σ|: a variance at its boundary is found at 0, not chased along log σ.

use faer::prelude::*;
use faer::{Mat, Side};

use super::ordinal::{cumulative_logit, ordered, Observations};
use super::{Result, StatsError};

/// The fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedOrdinalFit {
    pub levels: Vec<u32>,
    pub thresholds: Vec<f64>,
    pub coefficients: Vec<f64>,
    /// the standard deviations of the two random intercepts, in the order given
    pub sd: [f64; 2],
    /// the Laplace approximation of the marginal log-likelihood at the maximum
    pub log_likelihood: f64,
    /// BFGS iterations the outer maximisation took
    pub iterations: usize,
}

/// The most answers the mixed model is fitted to: each of its hundreds of likelihood
/// evaluations visits every answer (5,000 answers: 1.9 s in the release build on two cores).
pub const MAX_MIXED_ANSWERS: usize = 20_000;
/// The most levels of the smaller grouping factor (its block of the Hessian is dense: 2,000
/// levels, 32 MB).
pub const MAX_MIXED_LEVELS: usize = 2000;

/// A grouping factor: each answer's level, below `levels`.
#[derive(Debug, Clone, Copy)]
pub struct Factor<'a> {
    pub level: &'a [usize],
    pub levels: usize,
}

struct Laplace<'a> {
    obs: Observations,
    factors: [Factor<'a>; 2],
    /// the factor whose block stays dense (the one with fewer levels)
    dense: usize,
    /// per level of the sparse factor: the answers at it
    by_sparse: Vec<Vec<usize>>,
    /// the last mode, the next one's start
    mode: Vec<f64>,
}

impl Laplace<'_> {
    fn offsets(&self) -> [usize; 2] {
        [0, self.factors[0].levels]
    }

    /// −(Laplace log-likelihood) at ψ = (θ, β, σ₁, σ₂); +∞ where undefined.
    fn objective(&mut self, psi: &[f64]) -> f64 {
        let j = self.obs.thresholds();
        let p = self.obs.columns;
        let (theta, rest) = psi.split_at(j);
        let (beta, sigma) = rest.split_at(p);
        if !ordered(theta) || sigma.iter().any(|s| !s.is_finite()) {
            return f64::INFINITY;
        }
        let sigma = [sigma[0], sigma[1]];
        let base: Vec<f64> = (0..self.obs.category.len())
            .map(|i| self.obs.linear(i, beta))
            .collect();
        let mut u = self.mode.clone();
        let mut current = self.conditional(theta, &base, sigma, &u);
        for _ in 0..100 {
            let Some((grad, logdet, step)) = self.newton_step(theta, &base, sigma, &u) else {
                return f64::INFINITY;
            };
            let largest = grad.iter().fold(0.0f64, |m, g| m.max(g.abs()));
            let moves = step.iter().fold(0.0f64, |m, d| m.max(d.abs()));
            if largest < 1e-10 || moves < 1e-13 {
                self.mode.clone_from(&u);
                return -(current - 0.5 * logdet);
            }
            // near the mode the density changes below its rounding: take Newton's full step
            let mut t = 1.0;
            loop {
                let next: Vec<f64> = u.iter().zip(&step).map(|(a, d)| a + t * d).collect();
                let h = self.conditional(theta, &base, sigma, &next);
                if h >= current || largest < 1e-6 || t < 1e-12 {
                    u = next;
                    current = h;
                    break;
                }
                t /= 2.0;
            }
        }
        f64::INFINITY
    }

    fn shift(&self, i: usize, base: &[f64], sigma: [f64; 2], u: &[f64]) -> f64 {
        let off = self.offsets();
        base[i]
            + sigma[0] * u[off[0] + self.factors[0].level[i]]
            + sigma[1] * u[off[1] + self.factors[1].level[i]]
    }

    /// Σ log p(y | u) − ½|u|²
    fn conditional(&self, theta: &[f64], base: &[f64], sigma: [f64; 2], u: &[f64]) -> f64 {
        let mut h = -0.5 * u.iter().map(|v| v * v).sum::<f64>();
        for i in 0..self.obs.category.len() {
            let p = self.obs.cell(i, theta, self.shift(i, base, sigma, u)).p;
            if p <= 0.0 {
                return f64::NEG_INFINITY;
            }
            h += p.ln();
        }
        h
    }

    /// The gradient of the conditional density in u, log det of its negative Hessian D, and
    /// the Newton step D⁻¹·gradient.
    fn newton_step(
        &self,
        theta: &[f64],
        base: &[f64],
        sigma: [f64; 2],
        u: &[f64],
    ) -> Option<(Vec<f64>, f64, Vec<f64>)> {
        let off = self.offsets();
        let total = u.len();
        let mut grad: Vec<f64> = u.iter().map(|v| -v).collect();
        let mut diag = vec![1.0; total];
        // w per answer: the negative second derivative of log p in its latent shift
        let mut w = vec![0.0; self.obs.category.len()];
        for (i, wi) in w.iter_mut().enumerate() {
            let c = self.obs.cell(i, theta, self.shift(i, base, sigma, u));
            if c.p <= 0.0 {
                return None;
            }
            let q = (c.f_hi - c.f_lo) / c.p;
            let r = (c.df_hi - c.df_lo) / c.p - q * q;
            *wi = -r;
            for f in 0..2 {
                let at = off[f] + self.factors[f].level[i];
                grad[at] -= sigma[f] * q;
                diag[at] += sigma[f] * sigma[f] * *wi;
            }
        }
        let d = self.dense;
        let s = 1 - d;
        let nd = self.factors[d].levels;
        // Schur complement of the sparse factor's diagonal block B:
        // S = A − C B⁻¹ Cᵀ with C[g, k] = σ_d σ_s Σ w over answers at (g, k)
        let mut schur =
            Mat::<f64>::from_fn(nd, nd, |a, b| if a == b { diag[off[d] + a] } else { 0.0 });
        let mut rhs: Vec<f64> = (0..nd).map(|g| grad[off[d] + g]).collect();
        let mut column: Vec<(usize, f64)> = Vec::new();
        for (k, answers) in self.by_sparse.iter().enumerate() {
            column.clear();
            for &i in answers {
                let g = self.factors[d].level[i];
                let v = sigma[d] * sigma[s] * w[i];
                match column.iter_mut().find(|(h, _)| *h == g) {
                    Some((_, acc)) => *acc += v,
                    None => column.push((g, v)),
                }
            }
            let b = diag[off[s] + k];
            for &(g, c) in &column {
                rhs[g] -= c / b * grad[off[s] + k];
                for &(h, c2) in &column {
                    schur[(g, h)] -= c * c2 / b;
                }
            }
        }
        let llt = schur.llt(Side::Lower).ok()?;
        let l = llt.L();
        let mut logdet: f64 = (0..nd).map(|a| 2.0 * l[(a, a)].ln()).sum();
        let dense_step = llt.solve(Mat::<f64>::from_fn(nd, 1, |a, _| rhs[a]));
        let mut step = vec![0.0; total];
        for g in 0..nd {
            step[off[d] + g] = dense_step[(g, 0)];
        }
        for (k, answers) in self.by_sparse.iter().enumerate() {
            let b = diag[off[s] + k];
            logdet += b.ln();
            let mut v = grad[off[s] + k];
            for &i in answers {
                let g = self.factors[d].level[i];
                v -= sigma[d] * sigma[s] * w[i] * step[off[d] + g];
            }
            step[off[s] + k] = v / b;
        }
        Some((grad, logdet, step))
    }
}

/// Fits the model to `answers` with covariate rows `x` and two crossed grouping factors.
pub fn cumulative_logit_mixed(
    answers: &[u32],
    x: &[Vec<f64>],
    factors: [Factor<'_>; 2],
) -> Result<MixedOrdinalFit> {
    if answers.len() > MAX_MIXED_ANSWERS {
        return Err(StatsError::Invalid(format!(
            "the mixed model is fitted to at most {MAX_MIXED_ANSWERS} answers; there are {}",
            answers.len()
        )));
    }
    let smaller = factors[0].levels.min(factors[1].levels);
    if smaller > MAX_MIXED_LEVELS {
        return Err(StatsError::Invalid(format!(
            "the mixed model is fitted when one grouping factor has at most {MAX_MIXED_LEVELS} \
             levels; the smaller has {smaller}"
        )));
    }
    let fixed = cumulative_logit(answers, x)?;
    let obs = Observations::new(answers, x)?;
    for f in &factors {
        if f.level.len() != answers.len() || f.level.iter().any(|&l| l >= f.levels) {
            return Err(StatsError::Invalid(
                "every answer needs a level of each grouping factor".into(),
            ));
        }
    }
    let dense = usize::from(factors[1].levels < factors[0].levels);
    let sparse = 1 - dense;
    let mut by_sparse = vec![Vec::new(); factors[sparse].levels];
    for (i, &l) in factors[sparse].level.iter().enumerate() {
        by_sparse[l].push(i);
    }
    let mut model = Laplace {
        obs,
        factors,
        dense,
        by_sparse,
        mode: vec![0.0; factors[0].levels + factors[1].levels],
    };
    let mut psi = fixed.thresholds.clone();
    psi.extend(&fixed.coefficients);
    psi.extend([0.5, 0.5]);
    let (psi, value, iterations) = bfgs(&mut |p: &[f64]| model.objective(p), psi)?;
    let j = model.obs.thresholds();
    let p = model.obs.columns;
    Ok(MixedOrdinalFit {
        levels: model.obs.levels.clone(),
        thresholds: psi[..j].to_vec(),
        coefficients: psi[j..j + p].to_vec(),
        sd: [psi[j + p].abs(), psi[j + p + 1].abs()],
        log_likelihood: -value,
        iterations,
    })
}

fn numeric_gradient(f: &mut dyn FnMut(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    let mut probe = x.to_vec();
    (0..x.len())
        .map(|k| {
            let h = 1e-5 * x[k].abs().max(1.0);
            probe[k] = x[k] + h;
            let up = f(&probe);
            probe[k] = x[k] - h;
            let down = f(&probe);
            probe[k] = x[k];
            (up - down) / (2.0 * h)
        })
        .collect()
}

/// Minimises f by BFGS with a backtracking line search: (the minimum, its value, iterations).
fn bfgs(f: &mut dyn FnMut(&[f64]) -> f64, start: Vec<f64>) -> Result<(Vec<f64>, f64, usize)> {
    let n = start.len();
    let mut x = start;
    let mut fx = f(&x);
    if !fx.is_finite() {
        return Err(StatsError::Invalid(
            "the mixed ordinal model is undefined at its start".into(),
        ));
    }
    let mut g = numeric_gradient(f, &x);
    let mut h_inv = Mat::<f64>::identity(n, n);
    for iteration in 0..1000 {
        if g.iter().all(|v| v.abs() < 1e-7) {
            return Ok((x, fx, iteration));
        }
        let d: Vec<f64> = (0..n)
            .map(|a| -(0..n).map(|b| h_inv[(a, b)] * g[b]).sum::<f64>())
            .collect();
        let slope: f64 = d.iter().zip(&g).map(|(a, b)| a * b).sum();
        let (d, slope) = if slope < 0.0 {
            (d, slope)
        } else {
            h_inv = Mat::<f64>::identity(n, n);
            let d: Vec<f64> = g.iter().map(|v| -v).collect();
            let s = -g.iter().map(|v| v * v).sum::<f64>();
            (d, s)
        };
        let mut t = 1.0;
        let (next, f_next) = loop {
            let next: Vec<f64> = x.iter().zip(&d).map(|(a, b)| a + t * b).collect();
            let v = f(&next);
            if v.is_finite() && v <= fx + 1e-4 * t * slope {
                break (next, v);
            }
            t /= 2.0;
            if t < 1e-14 {
                return Ok((x, fx, iteration));
            }
        };
        let g_next = numeric_gradient(f, &next);
        let s: Vec<f64> = next.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = g_next.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy: f64 = s.iter().zip(&y).map(|(a, b)| a * b).sum();
        if sy > 1e-12 {
            let hy: Vec<f64> = (0..n)
                .map(|a| (0..n).map(|b| h_inv[(a, b)] * y[b]).sum::<f64>())
                .collect();
            let yhy: f64 = y.iter().zip(&hy).map(|(a, b)| a * b).sum();
            for a in 0..n {
                for b in 0..n {
                    h_inv[(a, b)] +=
                        (sy + yhy) * s[a] * s[b] / (sy * sy) - (hy[a] * s[b] + s[a] * hy[b]) / sy;
                }
            }
        }
        x = next;
        fx = f_next;
        g = g_next;
    }
    Ok((x, fx, 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data too large for the fit are refused in words before any work.
    #[test]
    fn too_many_answers_or_levels_are_refused_in_words() {
        let n = MAX_MIXED_ANSWERS + 1;
        let answers: Vec<u32> = (0..n).map(|i| 1 + (i % 2) as u32).collect();
        let x = vec![Vec::new(); n];
        let level: Vec<usize> = (0..n).map(|i| i % 10).collect();
        let f = Factor {
            level: &level,
            levels: 10,
        };
        let e = cumulative_logit_mixed(&answers, &x, [f, f]).expect_err("too many answers");
        assert!(e.to_string().contains("at most 20000 answers"), "{e}");
        let m = MAX_MIXED_LEVELS + 1;
        let own: Vec<usize> = (0..m).collect();
        let f = Factor {
            level: &own,
            levels: m,
        };
        let e = cumulative_logit_mixed(&answers[..m], &x[..m], [f, f]).expect_err("levels");
        assert!(e.to_string().contains("at most 2000 levels"), "{e}");
    }
}
