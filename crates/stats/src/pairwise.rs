//! Rankings from pairwise comparisons: Bradley–Terry by maximum likelihood (as `choix`'s
//! `opt_pairwise` with no regularisation, centred), online Elo (as FastChat's `compute_elo`) and
//! win rates. A tie counts as half a win to each side.

use faer::prelude::*;
use faer::{Mat, Side};

use super::{Result, StatsError};

/// One comparison between items `a` (shown first) and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    pub a: usize,
    pub b: usize,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    A,
    B,
    Tie,
}

impl Comparison {
    /// A's score: 1 for a win, 0 for a loss, ½ for a tie.
    fn score_a(&self) -> f64 {
        match self.outcome {
            Outcome::A => 1.0,
            Outcome::B => 0.0,
            Outcome::Tie => 0.5,
        }
    }
}

fn check(n: usize, comparisons: &[Comparison]) -> Result<()> {
    for c in comparisons {
        if c.a >= n || c.b >= n {
            return Err(StatsError::Invalid(format!(
                "a comparison names item {} of {n}",
                c.a.max(c.b)
            )));
        }
        if c.a == c.b {
            return Err(StatsError::Invalid(format!(
                "a comparison pairs item {} with itself",
                c.a
            )));
        }
    }
    Ok(())
}

/// The items of each strongly connected component of the "beat or tied" graph, the first
/// holding item 0. The maximum-likelihood strengths exist (are finite) exactly when there is
/// one component holding every item.
pub fn beat_components(n: usize, comparisons: &[Comparison]) -> Result<Vec<Vec<usize>>> {
    check(n, comparisons)?;
    // edge w → l when w beat l (both ways for a tie): l can be "reached" from w
    let mut forward = vec![Vec::new(); n];
    let mut backward = vec![Vec::new(); n];
    for c in comparisons {
        let (wins, losses) = match c.outcome {
            Outcome::A => (vec![c.a], vec![c.b]),
            Outcome::B => (vec![c.b], vec![c.a]),
            Outcome::Tie => (vec![c.a, c.b], vec![c.b, c.a]),
        };
        for (w, l) in wins.into_iter().zip(losses) {
            forward[w].push(l);
            backward[l].push(w);
        }
    }
    let reach = |from: usize, edges: &[Vec<usize>], alive: &[bool]| -> Vec<bool> {
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        seen[from] = true;
        while let Some(x) = stack.pop() {
            for &y in &edges[x] {
                if alive[y] && !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
        seen
    };
    let mut alive = vec![true; n];
    let mut components = Vec::new();
    for start in 0..n {
        if !alive[start] {
            continue;
        }
        let f = reach(start, &forward, &alive);
        let b = reach(start, &backward, &alive);
        let component: Vec<usize> = (0..n).filter(|&i| f[i] && b[i]).collect();
        for &i in &component {
            alive[i] = false;
        }
        components.push(component);
    }
    Ok(components)
}

/// The most items a Bradley–Terry fit takes: its Newton steps hold an n × n matrix (2,000
/// items: 32 MB, about a second a step on two cores).
pub const MAX_BRADLEY_TERRY_ITEMS: usize = 2000;

/// The Bradley–Terry log-strengths of `n` items, maximum likelihood, centred to mean 0.
/// Refused (with the components named by index) when the comparisons do not connect every
/// item both ways, since the likelihood then has no maximum.
pub fn bradley_terry(n: usize, comparisons: &[Comparison]) -> Result<Vec<f64>> {
    if n < 2 {
        return Err(StatsError::Invalid(
            "Bradley–Terry needs at least two items".into(),
        ));
    }
    if n > MAX_BRADLEY_TERRY_ITEMS {
        return Err(StatsError::Invalid(format!(
            "Bradley–Terry is fitted for at most {MAX_BRADLEY_TERRY_ITEMS} items; these \
             comparisons name {n}"
        )));
    }
    let components = beat_components(n, comparisons)?;
    if components.len() > 1 {
        let listed: Vec<String> = components
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>();
        return Err(StatsError::Invalid(format!(
            "the comparisons do not connect every item both ways (groups {}): some item's \
             strength would be infinite",
            listed.join(", ")
        )));
    }
    // weight of "i beat j": 1 for a win, ½ each way for a tie
    let mut wins = vec![0.0; n * n];
    for c in comparisons {
        let s = c.score_a();
        wins[c.a * n + c.b] += s;
        wins[c.b * n + c.a] += 1.0 - s;
    }
    let log_lik = |theta: &[f64]| -> f64 {
        let mut ll = 0.0;
        for i in 0..n {
            for j in 0..n {
                let w = wins[i * n + j];
                if w > 0.0 {
                    ll -= w * softplus(theta[j] - theta[i]);
                }
            }
        }
        ll
    };
    let mut theta = vec![0.0; n];
    let mut current = log_lik(&theta);
    for _ in 0..200 {
        let mut grad = vec![0.0; n];
        let mut hess = Mat::<f64>::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                let w = wins[i * n + j];
                if w == 0.0 {
                    continue;
                }
                // d/dθ_i of w log σ(θ_i − θ_j) = w (1 − σ)
                let p = logistic(theta[i] - theta[j]);
                grad[i] += w * (1.0 - p);
                grad[j] -= w * (1.0 - p);
                let h = w * p * (1.0 - p);
                hess[(i, i)] += h;
                hess[(j, j)] += h;
                hess[(i, j)] -= h;
                hess[(j, i)] -= h;
            }
        }
        if grad.iter().all(|g| g.abs() < 1e-12) {
            break;
        }
        // the information is singular along the all-ones direction, which the centring fixes
        for i in 0..n {
            for j in 0..n {
                hess[(i, j)] += 1.0 / n as f64;
            }
        }
        let llt = hess.llt(Side::Lower).map_err(|_| {
            StatsError::Invalid("Bradley–Terry: the information matrix is singular".into())
        })?;
        let rhs = Mat::<f64>::from_fn(n, 1, |i, _| grad[i]);
        let step = llt.solve(&rhs);
        let mut t = 1.0;
        loop {
            let next: Vec<f64> = (0..n).map(|i| theta[i] + t * step[(i, 0)]).collect();
            let ll = log_lik(&next);
            if ll >= current || t < 1e-10 {
                let moved = (0..n).map(|i| (t * step[(i, 0)]).abs()).fold(0.0, f64::max);
                theta = next;
                current = ll;
                if moved < 1e-13 {
                    return Ok(centred(theta));
                }
                break;
            }
            t /= 2.0;
        }
    }
    Ok(centred(theta))
}

fn centred(mut theta: Vec<f64>) -> Vec<f64> {
    let mean = theta.iter().sum::<f64>() / theta.len() as f64;
    for t in &mut theta {
        *t -= mean;
    }
    theta
}

fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// log(1 + eˣ) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The parameters of online Elo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloRule {
    pub k: f64,
    pub scale: f64,
    pub base: f64,
    pub start: f64,
}

impl Default for EloRule {
    /// FastChat's `compute_elo`: K = 4, scale 400, base 10, start 1000.
    fn default() -> Self {
        EloRule {
            k: 4.0,
            scale: 400.0,
            base: 10.0,
            start: 1000.0,
        }
    }
}

/// Online Elo ratings of `n` items after the comparisons in their order.
pub fn elo(n: usize, comparisons: &[Comparison], rule: EloRule) -> Result<Vec<f64>> {
    check(n, comparisons)?;
    let mut rating = vec![rule.start; n];
    for c in comparisons {
        let (ra, rb) = (rating[c.a], rating[c.b]);
        let ea = 1.0 / (1.0 + rule.base.powf((rb - ra) / rule.scale));
        let eb = 1.0 / (1.0 + rule.base.powf((ra - rb) / rule.scale));
        let sa = c.score_a();
        rating[c.a] += rule.k * (sa - ea);
        rating[c.b] += rule.k * (1.0 - sa - eb);
    }
    Ok(rating)
}

/// Each item's (wins + ties/2) / appearances; `None` for an item never compared.
pub fn win_rates(n: usize, comparisons: &[Comparison]) -> Result<Vec<Option<f64>>> {
    check(n, comparisons)?;
    let mut score = vec![0.0; n];
    let mut seen = vec![0u64; n];
    for c in comparisons {
        let s = c.score_a();
        score[c.a] += s;
        score[c.b] += 1.0 - s;
        seen[c.a] += 1;
        seen[c.b] += 1;
    }
    Ok(score
        .iter()
        .zip(&seen)
        .map(|(s, &m)| (m > 0).then(|| s / m as f64))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(a: usize, b: usize, outcome: Outcome) -> Comparison {
        Comparison { a, b, outcome }
    }

    #[test]
    fn two_items_have_the_odds_of_their_record() {
        // 3 wins to 1: σ(θ0 − θ1) = 3/4, so θ0 − θ1 = ln 3
        let c = [
            cmp(0, 1, Outcome::A),
            cmp(1, 0, Outcome::B),
            cmp(0, 1, Outcome::A),
            cmp(0, 1, Outcome::B),
        ];
        let t = bradley_terry(2, &c).expect("fit");
        assert!((t[0] - t[1] - 3f64.ln()).abs() < 1e-12, "{t:?}");
        assert!((t[0] + t[1]).abs() < 1e-12);
    }

    /// Stigler's (1994) citations among four statistics journals, the worked example of R's
    /// BradleyTerry2 (its vignette: abilities with Biometrika as 0 — Comm Statist −2.9491,
    /// JASA −0.4796, JRSS-B 0.2690). Journal i "beats" j each time j cites i.
    #[test]
    fn the_citations_example_of_bradley_terry2() {
        // cited (row) by citing (column): Biometrika, Comm Statist, JASA, JRSS-B
        let cites = [
            [714, 730, 498, 221],
            [33, 425, 68, 17],
            [320, 813, 1072, 142],
            [284, 276, 325, 188],
        ];
        let mut c = Vec::new();
        for (i, row) in cites.iter().enumerate() {
            for (j, &n) in row.iter().enumerate() {
                if i != j {
                    c.extend(std::iter::repeat_n(cmp(i, j, Outcome::A), n));
                }
            }
        }
        let t = bradley_terry(4, &c).expect("fit");
        let relative: Vec<f64> = t.iter().map(|x| x - t[0]).collect();
        for (got, want) in relative[1..].iter().zip([-2.9491, -0.4796, 0.2690]) {
            assert!((got - want).abs() < 1e-4, "{relative:?}");
        }
    }

    #[test]
    fn an_unbeaten_item_is_refused_in_words() {
        let c = [cmp(0, 1, Outcome::A), cmp(1, 2, Outcome::Tie)];
        let e = bradley_terry(3, &c).expect_err("no maximum");
        assert!(e.to_string().contains("[0], [1, 2]"), "{e}");
        assert!(bradley_terry(2, &[cmp(0, 0, Outcome::A)]).is_err());
        // too many items for its n × n steps: refused before anything is allocated
        let n = MAX_BRADLEY_TERRY_ITEMS + 1;
        let ring: Vec<Comparison> = (0..n).map(|i| cmp(i, (i + 1) % n, Outcome::Tie)).collect();
        let e = bradley_terry(n, &ring).expect_err("too many");
        assert!(e.to_string().contains("at most 2000 items"), "{e}");
    }

    #[test]
    fn elo_moves_by_k_times_the_surprise() {
        let r = elo(2, &[cmp(0, 1, Outcome::A)], EloRule::default()).expect("elo");
        assert_eq!(r, vec![1002.0, 998.0]);
        let w = win_rates(3, &[cmp(0, 1, Outcome::Tie)]).expect("rates");
        assert_eq!(w, vec![Some(0.5), Some(0.5), None]);
    }
}
