//! bloom: ALiBi position biases, a layer norm after the embeddings, fused query/key/value — after
//! transformers' `BloomForCausalLM`.

use candle_core::{Module, Tensor};
use candle_nn::{embedding, Embedding, VarBuilder};

use super::attend::attend;
use super::{Bias, Dense, Norm, Proj};
use crate::config::Config;
use crate::NlmResult;

struct BloomLayer {
    ln1: Norm,
    qkv: Dense,
    dense: Dense,
    ln2: Norm,
    up: Dense,
    down: Dense,
}

pub struct Bloom {
    c: Config,
    embed: Embedding,
    embed_ln: Norm,
    layers: Vec<BloomLayer>,
    ln_f: Norm,
    pub(super) head: Proj,
}

/// ALiBi's slope per head, as transformers' `build_alibi_tensor` computes them (f32).
fn alibi_slopes(n: usize) -> Vec<f32> {
    let closest = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let base = 2f32.powf(-(2f32.powf(-((closest as f32).log2() - 3.0))));
    let mut slopes: Vec<f32> = (1..=closest).map(|p| base.powf(p as f32)).collect();
    if closest != n {
        let extra = 2f32.powf(-(2f32.powf(-(((2 * closest) as f32).log2() - 3.0))));
        let remaining = closest.min(n - closest);
        slopes.extend((0..remaining).map(|i| extra.powf((1 + 2 * i) as f32)));
    }
    slopes
}

impl Bloom {
    pub fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<Bloom> {
        let m = vb.pp("transformer");
        let h = c.hidden;
        let embed = embedding(c.vocab, h, m.pp("word_embeddings"))?;
        let embed_ln = Norm::layer(h, c.eps, m.pp("word_embeddings_layernorm"))?;
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("h.{i}"));
            layers.push(BloomLayer {
                ln1: Norm::layer(h, c.eps, l.pp("input_layernorm"))?,
                qkv: Dense::load(
                    &l.pp("self_attention").pp("query_key_value"),
                    (h, 3 * h),
                    true,
                )?,
                dense: Dense::load(&l.pp("self_attention").pp("dense"), (h, h), true)?,
                ln2: Norm::layer(h, c.eps, l.pp("post_attention_layernorm"))?,
                up: Dense::load(&l.pp("mlp").pp("dense_h_to_4h"), (h, 4 * h), true)?,
                down: Dense::load(&l.pp("mlp").pp("dense_4h_to_h"), (4 * h, h), true)?,
            });
        }
        let ln_f = Norm::layer(h, c.eps, m.pp("ln_f"))?;
        let head = super::lm_head(c, &vb, embed.embeddings(), "lm_head")?;
        Ok(Bloom {
            c: c.clone(),
            embed,
            embed_ln,
            layers,
            ln_f,
            head,
        })
    }

    pub fn hidden(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (b, t) = ids.dims2()?;
        let (nh, hd) = (self.c.heads, self.c.hidden / self.c.heads);
        let slopes = alibi_slopes(nh);
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed_ln.forward(&self.embed.forward(ids)?)?;
        // the MLP's output, added to the residual stream by the next norm
        let mut delta = None;
        for l in &self.layers {
            let (sum, h) = l.ln1.residual(&x, delta.as_ref())?;
            x = sum;
            // fused: per head, its query, key and value side by side
            let qkv = l.qkv.forward(&h)?.reshape((b, t, nh, 3, hd))?;
            let part = |i: usize| qkv.narrow(3, i, 1)?.squeeze(3);
            let (q, k, v) = (part(0)?, part(1)?, part(2)?);
            let out = attend(
                &q,
                &k,
                &v,
                Some(scale),
                Bias::Alibi { slopes: &slopes },
                None,
            )?;
            let (sum, h) = l.ln2.residual(&x, Some(&l.dense.forward(&out)?))?;
            x = sum;
            delta = Some(l.down.forward(&l.up.forward(&h)?.gelu()?)?);
        }
        Ok(self.ln_f.residual(&x, delta.as_ref())?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' slopes: 8 heads → 2^-1 … 2^-8; 6 heads → the 4 of 4, then 2 of 8's odd ones.
    #[test]
    fn alibi_slopes_are_transformers() {
        let s = alibi_slopes(8);
        let want: Vec<f32> = (1..=8).map(|p| 2f32.powi(-p)).collect();
        assert_eq!(s, want);
        let s = alibi_slopes(6);
        assert_eq!(s, vec![0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]);
    }
}
