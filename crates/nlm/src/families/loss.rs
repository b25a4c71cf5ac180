//! The loss of each position, straight from its logits: `ln Σ e^logit − logit[next token]`,
//! one pass over a row of the vocabulary (in the cache) instead of a log-softmax written out
//! over `positions × vocabulary` and gathered from. On the CPU; elsewhere candle's ops.

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor, D};
use rayon::prelude::*;

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
}
