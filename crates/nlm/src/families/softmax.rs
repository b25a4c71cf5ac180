//! The attention's softmax on the CPU, one pass over a block's scores, with what a query may
//! not see left out: a masked key's probability is 0 and its exponential is never computed, no bias
//! tensor is built or added, and the work runs on the CPU's widest vector unit (`pulp` picks it
//! at run time; every step is plain arithmetic the compiler vectorizes). On a long method this
//! is most of the attention's time besides its two products.

use super::Bias;

/// Lanes of the partial maxima and sums (one AVX-512 register of f32).
const LANES: usize = 16;

/// e^x for x ≤ 0, within 2 ulp of `f32::exp` (Cephes' `expf`: x = n·ln 2 + r, a degree-6
/// polynomial for e^r, 2^n from the exponent's bits); below −87.3 the smallest normal number,
/// which a sum of at least one 1 makes no difference to.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.max(-87.336_54);
    // n = round(x / ln 2) by adding and taking away 1.5·2²³: t's low bits then hold n as an
    // integer (plain arithmetic and bit moves, which vectorize; a float-to-int cast does not)
    const ROUND: f32 = 12_582_912.0;
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let k = t.to_bits().wrapping_sub(ROUND.to_bits());
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // n in −126..=0: 2ⁿ a normal number, its exponent field n + 127
    y * f32::from_bits(k.wrapping_add(127) << 23)
}

/// The largest value of `v` (not empty).
#[inline(always)]
fn max_of(v: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = v.chunks_exact(LANES);
    for c in &mut chunks {
        for (m, x) in lanes.iter_mut().zip(c) {
            *m = m.max(*x);
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, x| m.max(*x));
    lanes.iter().fold(tail, |m, x| m.max(*x))
}

/// `v` ← e^(v − max v); returns Σ e^(v − max v) (at least 1: the maximum's own term).
#[inline(always)]
fn exp_row(v: &mut [f32]) -> f32 {
    let max = max_of(v);
    let mut lanes = [0f32; LANES];
    let mut chunks = v.chunks_exact_mut(LANES);
    for c in &mut chunks {
        for (s, x) in lanes.iter_mut().zip(c.iter_mut()) {
            *x = exp_nonpositive(*x - max);
            *s += *x;
        }
    }
    let mut sum = 0f32;
    for x in chunks.into_remainder() {
        *x = exp_nonpositive(*x - max);
        sum += *x;
    }
    sum + lanes.iter().sum::<f32>()
}

/// `ln Σ e^x` of a row (not empty), under the CPU's widest vector unit.
pub fn log_sum_exp(row: &[f32]) -> f32 {
    struct Lse<'a>(&'a [f32]);
    impl pulp::WithSimd for Lse<'_> {
        type Output = f32;
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _simd: S) -> f32 {
            let v = self.0;
            let max = max_of(v);
            if !max.is_finite() {
                return max;
            }
            let mut lanes = [0f32; LANES];
            let mut chunks = v.chunks_exact(LANES);
            for c in &mut chunks {
                for (s, x) in lanes.iter_mut().zip(c) {
                    *s += exp_nonpositive(*x - max);
                }
            }
            let tail: f32 = chunks
                .remainder()
                .iter()
                .map(|x| exp_nonpositive(*x - max))
                .sum();
            max + (tail + lanes.iter().sum::<f32>()).ln()
        }
    }
    pulp::Arch::new().dispatch(Lse(row))
}

/// `silu(gate) · up` of each pair of rows (the SwiGLU MLP's activation): `out[i] =
/// gate[i] / (1 + e^−gate[i]) · up[i]`, under the CPU's widest vector unit.
pub fn swiglu(gate: &[f32], up: &[f32], out: &mut [f32]) {
    struct Swiglu<'a>(&'a [f32], &'a [f32], &'a mut [f32]);
    impl pulp::WithSimd for Swiglu<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _simd: S) {
            let Swiglu(gate, up, out) = self;
            for ((o, g), u) in out.iter_mut().zip(gate).zip(up) {
                // e^−|g| ≤ 1: no overflow on either side
                let e = exp_nonpositive(-g.abs());
                let sigmoid = if *g >= 0.0 {
                    1.0 / (1.0 + e)
                } else {
                    e / (1.0 + e)
                };
                *o = g * sigmoid * u;
            }
        }
    }
    pulp::Arch::new().dispatch(Swiglu(gate, up, out));
}

/// Softmax, in place, over each row of a block's scores — `[.., rows, keys]`, the scores of queries
/// `from..from + rows` over keys `0..keys`, head after head (of `heads`) from `head0` — as
/// `bias` says: keys a query may not see get 0, ALiBi's `slope[h] · key` is added to those it
/// sees. In place on the scores the product just made: no second buffer, each row's passes run
/// in the cache. The rows are left unnormalized (`e^(x − max)`), each row's `1 / Σ` given
/// beside them: the attention scales its output's `d` values by it, not the row's `keys`
/// probabilities.
pub struct MaskedSoftmax<'a> {
    pub heads: usize,
    pub head0: usize,
    pub rows: usize,
    pub from: usize,
    pub bias: Bias<'a>,
}

impl MaskedSoftmax<'_> {
    /// The softmax, in place, over `scores` (rows of `keys`) but for its division: `inv[r]`
    /// gets row `r`'s `1 / Σ` (0 for a row that sees no key).
    pub fn run(&self, scores: &mut [f32], keys: usize, inv: &mut [f32]) {
        if keys > 0 {
            pulp::Arch::new().dispatch(Softmax {
                scores,
                keys,
                inv,
                op: self,
            });
        }
    }
}

/// [`MaskedSoftmax`]'s work, run by `pulp` under the CPU's vector features (everything it
/// calls is inlined into that context).
struct Softmax<'a, 'b> {
    scores: &'a mut [f32],
    keys: usize,
    inv: &'a mut [f32],
    op: &'a MaskedSoftmax<'b>,
}

impl pulp::WithSimd for Softmax<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Softmax {
            scores,
            keys,
            inv,
            op,
        } = self;
        let window = match op.bias {
            Bias::Causal { window } => window,
            Bias::Alibi { .. } => None,
        };
        let rows = op.rows.max(1);
        for ((n, row), inv) in scores.chunks_exact_mut(keys).enumerate().zip(inv) {
            *inv = 0.0;
            let i = op.from + n % rows;
            let lo = window.map_or(0, |w| (i + 1).saturating_sub(w)).min(keys);
            let hi = (i + 1).min(keys).max(lo);
            // what the query may not see gets 0
            row[..lo].fill(0.0);
            row[hi..].fill(0.0);
            if lo == hi {
                continue;
            }
            let seen = &mut row[lo..hi];
            if let Bias::Alibi { slopes } = op.bias {
                let s = slopes
                    .get((op.head0 + n / rows) % op.heads.max(1))
                    .copied()
                    .unwrap_or(0.0);
                for (j, x) in seen.iter_mut().enumerate() {
                    *x += s * (lo + j) as f32;
                }
            }
            *inv = 1.0 / exp_row(seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exponential_is_within_two_ulp() {
        let mut worst = 0f32;
        let mut x = -87.0f32;
        while x <= 0.0 {
            let (got, want) = (exp_nonpositive(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
            x += 0.001_3;
        }
        assert!(worst < 2.5 * f32::EPSILON, "{worst:e}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(-1e30) < 1e-37);
    }

    /// Rows of one head and a window: what each query sees sums to one, the rest is zero,
    /// and the values are the textbook softmax's.
    #[test]
    fn rows_see_what_the_mask_lets_them() {
        let (rows, keys) = (3, 5);
        let orig: Vec<f32> = (0..rows * keys).map(|i| (i % 7) as f32 * 0.5).collect();
        let op = MaskedSoftmax {
            heads: 1,
            head0: 0,
            rows,
            from: 2,
            bias: Bias::Causal { window: Some(2) },
        };
        let mut s = orig.clone();
        let mut inv = [f32::NAN; 3];
        op.run(&mut s, keys, &mut inv);
        for (r, inv) in inv.iter().enumerate() {
            let i = 2 + r;
            let row = &s[r * keys..(r + 1) * keys];
            let seen: Vec<usize> = (0..keys).filter(|&j| j <= i && i - j < 2).collect();
            let denom: f32 = seen.iter().map(|&j| orig[r * keys + j].exp()).sum();
            for (j, p) in row.iter().map(|e| e * inv).enumerate() {
                let want = if seen.contains(&j) {
                    orig[r * keys + j].exp() / denom
                } else {
                    0.0
                };
                assert!((p - want).abs() < 1e-6, "row {r} key {j}: {p} vs {want}");
            }
        }
    }
}
