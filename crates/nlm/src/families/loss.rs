//! The loss of each position, straight from its logits: `ln Σ e^logit − logit[next token]`,
//! one pass over a row of the vocabulary (in the cache) instead of a log-softmax written out
//! over `positions × vocabulary` and gathered from. On the CPU; elsewhere candle's ops.

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor, D};
use rayon::prelude::*;

use super::panels::{for_panels, Blocks, PANEL_BYTES};
use super::product::{self, COLS};

/// The negative log-likelihood (nats) of `next[i]` under the logits `[n, vocab]` of row `i`:
/// `[n]`, f32.
pub fn token_losses(logits: &Tensor, next: &[u32]) -> candle_core::Result<Tensor> {
    let logits = logits.to_dtype(candle_core::DType::F32)?;
    if super::product::on_cpu_f32(&logits) {
        return logits.apply_op1_no_bwd(&TokenLosses { next });
    }
    let lp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
    let next = Tensor::new(next, logits.device())?.unsqueeze(1)?;
    lp.gather(&next, 1)?.squeeze(1)?.neg()
}

/// Logits a panel of the head makes at once, all rows by a panel's columns (32 MB).
const HEAD_FLOATS: usize = 8 << 20;

/// The negative log-likelihood (nats) of `next[i]` given the hidden state `i` of `x` `[r, k]`
/// (f32, on the CPU) under a head held in tiles: the logits are made a panel of the
/// vocabulary at a time for all the rows, each row's log-sum-exp carried from panel to panel,
/// so that the head's weights are read — and, packed, dequantized — once for all the rows of
/// a batch, and its logits `[r, vocab]` are never held whole. A panel's largest logit and sum
/// of exponentials are carried in f64, so that the loss is as near as a single pass over the
/// row (one rounding of the logarithm), or nearer.
pub(super) fn head_losses(
    x: &[f32],
    (r, k): (usize, usize),
    next: &[u32],
    (blocks, vocab): (Blocks<'_>, usize),
) -> candle_core::Result<Vec<f64>> {
    if next.len() != r || x.len() != r * k {
        return Err(candle_core::Error::Msg(format!(
            "head losses: {} values as [{r}, {k}] for {} tokens",
            x.len(),
            next.len()
        )));
    }
    if let Some(bad) = next.iter().find(|&&t| t as usize >= vocab) {
        return Err(candle_core::Error::Msg(format!(
            "token {bad} is outside the vocabulary of {vocab}"
        )));
    }
    if r == 0 || k == 0 || vocab == 0 {
        return Ok(vec![0.0; r]);
    }
    let xm = faer::MatRef::from_row_major_slice(x, r, k);
    // each row's largest logit so far and the sum of e^(logit − largest)
    let mut carried = vec![(f64::NEG_INFINITY, 0f64); r];
    let mut target = vec![0f32; r];
    // a packed panel is dequantized whole: within its buffer, a tile for each thread; the
    // same panels held in f32, so that a packed weight's losses are its f32 copy's to the bit
    let tiles = (HEAD_FLOATS / r / COLS).clamp(
        1,
        (PANEL_BYTES / 4 / (k * COLS)).max(rayon::current_num_threads()),
    );
    let mut logits = vec![0f32; r * (tiles * COLS).min(vocab)];
    for_panels((vocab, k), blocks, tiles, |c0, width, panel| {
        let buf = &mut logits[..r * width];
        product::tiles(
            faer::MatMut::from_row_major_slice_mut(buf, r, width),
            product::share(r),
        )
        .into_par_iter()
        .for_each(|(row, col, d)| {
            let at = col / COLS * k * COLS;
            let c = d.ncols();
            product::tile_product(d, xm, row, &panel[at..at + k * c]);
        });
        carried
            .par_iter_mut()
            .zip(target.par_iter_mut())
            .zip(buf.par_chunks_exact(width))
            .zip(next.par_iter())
            .for_each(|(((c, t), row), &nx)| {
                let (m, s) = super::softmax::max_sum_exp(row);
                *c = merge(*c, (f64::from(m), f64::from(s)));
                if let Some(v) = (nx as usize).checked_sub(c0).and_then(|i| row.get(i)) {
                    *t = *v;
                }
            });
        Ok(())
    })?;
    Ok(carried
        .iter()
        .zip(&target)
        .map(|(&(m, s), &t)| {
            let lse = if m.is_finite() { m + s.ln() } else { m };
            lse - f64::from(t)
        })
        .collect())
}

/// Two parts of a row as (largest, `Σ e^(x − largest)`): the whole row's.
fn merge(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let (hi, lo) = if a.0 >= b.0 { (a, b) } else { (b, a) };
    if lo.0 == f64::NEG_INFINITY || !hi.0.is_finite() {
        return hi;
    }
    (hi.0, hi.1 + lo.1 * (lo.0 - hi.0).exp())
}

struct TokenLosses<'a> {
    next: &'a [u32],
}

impl CustomOp1 for TokenLosses<'_> {
    fn name(&self) -> &'static str {
        "token-losses"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let logits = super::product::contiguous(s, l, "token losses' logits")?;
        let (n, vocab) = l.shape().dims2()?;
        if self.next.len() != n {
            return Err(candle_core::Error::Msg(format!(
                "token losses: {n} rows of logits for {} tokens",
                self.next.len()
            )));
        }
        if let Some(bad) = self.next.iter().find(|&&t| t as usize >= vocab) {
            return Err(candle_core::Error::Msg(format!(
                "token {bad} is outside the vocabulary of {vocab}"
            )));
        }
        let mut out = vec![0f32; n];
        if vocab > 0 {
            out.par_iter_mut()
                .zip(logits.par_chunks_exact(vocab))
                .zip(self.next.par_iter())
                .for_each(|((o, row), &t)| {
                    *o = super::softmax::log_sum_exp(row) - row[t as usize];
                });
        }
        Ok((CpuStorage::F32(out), Shape::from(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;

    /// The losses are log-softmax's, gathered at the next tokens; a token outside the
    /// vocabulary is an error.
    #[test]
    fn losses_are_log_softmax_gathered() {
        let logits = (normal(0f32, 4.0, (37, 1003), 17).expect("logits") + 2.0).expect("shift");
        let next: Vec<u32> = (0..37u32).map(|i| (i * 97) % 1003).collect();
        let got: Vec<f32> = token_losses(&logits, &next)
            .and_then(|t| t.to_vec1())
            .expect("losses");
        let lp: Vec<Vec<f32>> = candle_nn::ops::log_softmax(&logits, D::Minus1)
            .and_then(|t| t.to_vec2())
            .expect("log-softmax");
        for (i, (g, t)) in got.iter().zip(&next).enumerate() {
            let want = -lp[i][*t as usize];
            assert!(
                (g - want).abs() < 1e-5 * want.abs().max(1.0),
                "row {i}: {g} vs {want}"
            );
        }
        assert!(token_losses(&logits, &[0; 36]).is_err());
        let mut far = next.clone();
        far[3] = 1003;
        assert!(token_losses(&logits, &far).is_err());
    }

    /// The losses through a head held in tiles are log-softmax's of the logits `x · Wᵀ`,
    /// gathered at the next tokens, for a vocabulary of one panel and of many (each row's
    /// log-sum-exp carried from panel to panel), the weight in f32 or packed.
    #[test]
    fn head_losses_are_the_logits_losses() {
        use candle_core::quantized::{GgmlDType, QTensor};
        let (r, k) = (300, 64);
        for vocab in [7, 3 * COLS + 5, 50_000] {
            let x = normal(0f32, 1.0, (r, k), 31).expect("x");
            let w = (normal(0f32, 1.0, (vocab, k), 32).expect("w") * 0.5).expect("w");
            let w = QTensor::quantize(&w, GgmlDType::Q8_0)
                .and_then(|q| q.dequantize(&candle_core::Device::Cpu))
                .expect("w");
            let next: Vec<u32> = (0..r as u32).map(|i| (i * 7919) % vocab as u32).collect();
            let logits = x.matmul(&w.t().expect("t")).expect("logits");
            let lp: Vec<Vec<f32>> = candle_nn::ops::log_softmax(&logits, D::Minus1)
                .and_then(|t| t.to_vec2())
                .expect("log-softmax");
            let want: Vec<f64> = next
                .iter()
                .enumerate()
                .map(|(i, &t)| -f64::from(lp[i][t as usize]))
                .collect();
            let xs: Vec<f32> = x.flatten_all().and_then(|t| t.to_vec1()).expect("xs");
            let (tiled, _) = product::hold(&w).expect("tiled");
            let packed = QTensor::quantize(&w, GgmlDType::F32)
                .and_then(|q| super::super::Packed::new(&[&[&q]]))
                .expect("packed");
            let f32s = product::read(&tiled, |t| {
                head_losses(&xs, (r, k), &next, (Blocks::F32 { w: t, parts: 1 }, vocab))
            })
            .expect("f32");
            let packs =
                head_losses(&xs, (r, k), &next, (Blocks::Packed(&packed), vocab)).expect("packed");
            assert_eq!(f32s, packs, "{vocab}");
            let (mut bias, mut worst) = (0f64, 0f64);
            for (g, w) in f32s.iter().zip(&want) {
                worst = worst.max((g - w).abs());
                bias += g - w;
            }
            bias /= r as f64;
            assert!(worst < 2e-5, "{vocab}: {worst}");
            assert!(
                bias.abs() < 2e-6,
                "{vocab}: losses {bias} above log-softmax's on average"
            );
            assert!(
                head_losses(&xs, (r, k), &next[1..], (Blocks::Packed(&packed), vocab)).is_err()
            );
        }
    }
}
