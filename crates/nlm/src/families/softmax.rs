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
/// which a sum of at least one 1 makes no difference to. The polynomial is fused
/// multiply-adds (`mul_add`: one instruction where the caller runs under `pulp`'s vector
/// features, which all have FMA; Rust never fuses `a * b + c` itself, and the separate
/// multiplies and adds took twice the instructions of the softmax's hottest loop).
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = larger(x, -87.336_54);
    // n = round(x / ln 2) by adding and taking away 1.5·2²³: t's low bits then hold n as an
    // integer (plain arithmetic and bit moves, which vectorize; a float-to-int cast does not)
    const ROUND: f32 = 12_582_912.0;
    let t = x.mul_add(std::f32::consts::LOG2_E, ROUND);
    let n = t - ROUND;
    let k = t.to_bits().wrapping_sub(ROUND.to_bits());
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, x));
    let p = 1.987_569_1e-4_f32;
    let p = p.mul_add(r, 1.398_199_9e-3);
    let p = p.mul_add(r, 8.333_452e-3);
    let p = p.mul_add(r, 4.166_579_6e-2);
    let p = p.mul_add(r, 0.166_666_65);
    let p = p.mul_add(r, 0.5);
    let y = (p * r).mul_add(r, r + 1.0);
    // n in −126..=0: 2ⁿ a normal number, its exponent field n + 127
    y * f32::from_bits(k.wrapping_add(127) << 23)
}

/// The larger of `x` and `m`, `m` where `x` is NaN: one vector `max` instruction (`f32::max`,
/// which also takes `x` where `m` is NaN, costs a compare and a blend more per vector).
#[inline(always)]
fn larger(x: f32, m: f32) -> f32 {
    if x > m {
        x
    } else {
        m
    }
}

/// The largest value of `v` (not empty).
#[inline(always)]
fn max_of(v: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = v.chunks_exact(LANES);
    for c in &mut chunks {
        for (m, x) in lanes.iter_mut().zip(c) {
            *m = larger(*x, *m);
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, x| larger(*x, m));
    lanes.iter().fold(tail, |m, x| larger(*x, m))
}

/// `v` ← e^(v − max), where `max` ≥ every value of `v`; returns Σ e^(v − max).
#[inline(always)]
fn exp_row(v: &mut [f32], max: f32) -> f32 {
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
    let (max, sum) = max_sum_exp(row);
    if !max.is_finite() {
        return max;
    }
    max + sum.ln()
}

/// The largest of a row (not empty) and `Σ e^(x − max)` (the sum left out where the largest
/// is not finite), under the CPU's widest vector unit.
pub fn max_sum_exp(row: &[f32]) -> (f32, f32) {
    struct Lse<'a>(&'a [f32]);
    impl pulp::WithSimd for Lse<'_> {
        type Output = (f32, f32);
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _simd: S) -> (f32, f32) {
            let v = self.0;
            let max = max_of(v);
            if !max.is_finite() {
                return (max, 0.0);
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
            (max, tail + lanes.iter().sum::<f32>())
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
/// `from..from + rows` over a span of keys, head after head (of `heads`) from `head0` — as
/// `bias` says: keys a query may not see get 0, ALiBi's `slope[h] · key` is added to those it
/// sees. In place on the scores the product just made: no second buffer, each row's passes run
/// in the cache.
///
/// A long method's keys come in spans (flash attention's online softmax): each row keeps
/// the largest score and the sum of exponentials of the spans so far ([`Running`]); a span's
/// scores become `e^(x − max)` under the maximum so far, and the output made from the earlier
/// spans is rescaled by `e^(old max − new max)`. The rows are left unnormalized: the attention
/// divides its output's `d` values of a row by the row's sum at the end, not the row's `keys`
/// probabilities.
pub struct MaskedSoftmax<'a> {
    pub heads: usize,
    pub head0: usize,
    pub rows: usize,
    pub from: usize,
    pub bias: Bias<'a>,
}

/// Each score row's running maximum and sum of exponentials over the spans of keys so far, and
/// the factor by which the last span asks the row's output so far to be multiplied.
pub struct Running {
    pub max: Vec<f32>,
    pub sum: Vec<f32>,
    pub rescale: Vec<f32>,
}

impl Running {
    /// `rows` rows that have seen nothing yet.
    pub fn new(rows: usize) -> Running {
        Running {
            max: vec![f32::NEG_INFINITY; rows],
            sum: vec![0.0; rows],
            rescale: vec![1.0; rows],
        }
    }

    /// Back to having seen nothing.
    pub fn reset(&mut self) {
        self.max.fill(f32::NEG_INFINITY);
        self.sum.fill(0.0);
        self.rescale.fill(1.0);
    }

    /// Row `r`'s `1 / Σ` over every span (0 for a row that saw no key).
    pub fn inverse(&self, r: usize) -> f32 {
        match self.sum[r] {
            s if s > 0.0 => 1.0 / s,
            _ => 0.0,
        }
    }
}

impl MaskedSoftmax<'_> {
    /// The span of keys `key0..key0 + keys` of each row, `scores` in rows of `keys`, in
    /// place: `e^(x − max)` under the row's maximum over every span so far, masked keys 0;
    /// `state` updated, its `rescale[r]` the factor for row `r`'s output of the earlier
    /// spans (1 where this span shows the row nothing, 0 where it is the row's first).
    pub fn run(&self, scores: &mut [f32], key0: usize, keys: usize, state: &mut Running) {
        if keys > 0 {
            pulp::Arch::new().dispatch(Softmax {
                scores,
                key0,
                keys,
                state,
                op: self,
            });
        }
    }
}

/// [`MaskedSoftmax`]'s work, run by `pulp` under the CPU's vector features (everything it
/// calls is inlined into that context).
struct Softmax<'a, 'b> {
    scores: &'a mut [f32],
    key0: usize,
    keys: usize,
    state: &'a mut Running,
    op: &'a MaskedSoftmax<'b>,
}

impl pulp::WithSimd for Softmax<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Softmax {
            scores,
            key0,
            keys,
            state,
            op,
        } = self;
        let window = match op.bias {
            Bias::Causal { window } => window,
            Bias::Alibi { .. } => None,
        };
        let rows = op.rows.max(1);
        let end = key0 + keys;
        let rows_state = state
            .max
            .iter_mut()
            .zip(state.sum.iter_mut())
            .zip(state.rescale.iter_mut());
        for ((n, row), ((max, sum), rescale)) in
            scores.chunks_exact_mut(keys).enumerate().zip(rows_state)
        {
            *rescale = 1.0;
            let i = op.from + n % rows;
            // the keys the query sees, within this span
            let first = window.map_or(0, |w| (i + 1).saturating_sub(w));
            let lo = first.clamp(key0, end) - key0;
            let hi = (i + 1).clamp(key0, end).max(key0 + lo) - key0;
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
                    *x += s * (key0 + lo + j) as f32;
                }
            }
            let new_max = max_of(seen).max(*max);
            *rescale = if *max == f32::NEG_INFINITY {
                0.0
            } else {
                exp_nonpositive(*max - new_max)
            };
            *sum = *sum * *rescale + exp_row(seen, new_max);
            *max = new_max;
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
        let mut state = Running::new(rows);
        op.run(&mut s, 0, keys, &mut state);
        for r in 0..rows {
            let i = 2 + r;
            let row = &s[r * keys..(r + 1) * keys];
            let seen: Vec<usize> = (0..keys).filter(|&j| j <= i && i - j < 2).collect();
            let denom: f32 = seen.iter().map(|&j| orig[r * keys + j].exp()).sum();
            for (j, p) in row.iter().map(|e| e * state.inverse(r)).enumerate() {
                let want = if seen.contains(&j) {
                    orig[r * keys + j].exp() / denom
                } else {
                    0.0
                };
                assert!((p - want).abs() < 1e-6, "row {r} key {j}: {p} vs {want}");
            }
        }
    }

    /// The keys in spans, each span's probabilities rescaled by the later spans' factors,
    /// are the softmax over all keys at once: ALiBi's bias, a window, and rows that see
    /// nothing of a span (or of the first).
    #[test]
    fn spans_of_keys_make_the_softmax_of_all_keys() {
        let (heads, rows, from, keys) = (2, 4, 9, 13);
        let orig: Vec<f32> = (0..heads * rows * keys)
            .map(|i| ((i * 37) % 11) as f32 * 0.7 - 3.0)
            .collect();
        let slopes = [0.5f32, -0.25];
        for bias in [
            Bias::Causal { window: Some(5) },
            Bias::Causal { window: None },
            Bias::Alibi { slopes: &slopes },
        ] {
            let op = MaskedSoftmax {
                heads,
                head0: 0,
                rows,
                from,
                bias,
            };
            let mut whole = orig.clone();
            let mut all = Running::new(heads * rows);
            op.run(&mut whole, 0, keys, &mut all);
            // spans of 4, 4, 5 keys; each row's probabilities kept, rescaled as spans come
            let mut spans = Running::new(heads * rows);
            let mut got = vec![0f32; orig.len()];
            for (key0, len) in [(0, 4), (4, 4), (8, 5)] {
                let mut s: Vec<f32> = orig
                    .chunks(keys)
                    .flat_map(|row| row[key0..key0 + len].to_vec())
                    .collect();
                op.run(&mut s, key0, len, &mut spans);
                for (r, row) in got.chunks_mut(keys).enumerate() {
                    row[..key0].iter_mut().for_each(|x| *x *= spans.rescale[r]);
                    row[key0..key0 + len].copy_from_slice(&s[r * len..(r + 1) * len]);
                }
            }
            for r in 0..heads * rows {
                for j in 0..keys {
                    let (p, want) = (
                        got[r * keys + j] * spans.inverse(r),
                        whole[r * keys + j] * all.inverse(r),
                    );
                    assert!(
                        (p - want).abs() < 1e-6,
                        "{bias:?} row {r} key {j}: {p} vs {want}"
                    );
                }
                assert!((spans.inverse(r) > 0.0) == (all.inverse(r) > 0.0));
            }
        }
    }
}
