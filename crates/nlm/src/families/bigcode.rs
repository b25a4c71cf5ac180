//! gpt_bigcode (SantaCoder, StarCoder): learned positions, multi-query attention (one key/value
//! head shared by every query head) or fused per-head query/key/value, a GELU MLP — after
//! transformers' `GPTBigCodeForCausalLM`.

use candle_core::{Device, Module, Tensor};
use candle_nn::{embedding, Embedding, VarBuilder};

use super::attend::attend;
use super::{gelu, Bias, Dense, Norm, Proj};
use crate::config::Config;
use crate::NlmResult;

struct Layer {
    ln1: Norm,
    c_attn: Dense,
    c_proj: Dense,
    ln2: Norm,
    fc: Dense,
    proj: Dense,
}

pub struct BigCode {
    c: Config,
    wte: Embedding,
    wpe: Embedding,
    layers: Vec<Layer>,
    ln_f: Norm,
    pub(super) head: Proj,
    device: Device,
}

impl BigCode {
    pub fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<BigCode> {
        let m = vb.pp("transformer");
        let h = c.hidden;
        let kv_dim = c.kv_heads * c.head_dim;
        let wte = embedding(c.vocab, h, m.pp("wte"))?;
        let wpe = embedding(c.max_len, h, m.pp("wpe"))?;
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("h.{i}"));
            layers.push(Layer {
                ln1: Norm::layer(h, c.eps, l.pp("ln_1"))?,
                c_attn: Dense::load(&l.pp("attn").pp("c_attn"), (h, h + 2 * kv_dim), true)?,
                c_proj: Dense::load(&l.pp("attn").pp("c_proj"), (h, h), true)?,
                ln2: Norm::layer(h, c.eps, l.pp("ln_2"))?,
                fc: Dense::load(&l.pp("mlp").pp("c_fc"), (h, c.intermediate), true)?,
                proj: Dense::load(&l.pp("mlp").pp("c_proj"), (c.intermediate, h), true)?,
            });
        }
        let ln_f = Norm::layer(h, c.eps, m.pp("ln_f"))?;
        let head = super::lm_head(c, &vb, wte.embeddings(), "lm_head")?;
        Ok(BigCode {
            c: c.clone(),
            wte,
            wpe,
            layers,
            ln_f,
            head,
            device: vb.device().clone(),
        })
    }

    pub fn hidden(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (b, t) = ids.dims2()?;
        let (nh, hd) = (self.c.heads, self.c.head_dim);
        let multi_query = self.c.kv_heads == 1;
        let scale = self.c.scale_attention.then(|| 1.0 / (hd as f64).sqrt());
        let pos = Tensor::arange(0u32, t as u32, &self.device)?;
        let mut x = self
            .wte
            .forward(ids)?
            .broadcast_add(&self.wpe.forward(&pos)?)?;
        // the MLP's output, added to the residual stream by the next norm
        let mut delta = None;
        for l in &self.layers {
            let (sum, h) = l.ln1.residual(&x, delta.as_ref())?;
            x = sum;
            let a = l.c_attn.forward(&h)?;
            // queries, keys and values as views `[B, T, heads, d]` of the projection's output
            let (q, k, v) = if multi_query {
                // [query (all heads) | key | value] along the features
                let a = a.reshape((b, t, nh + 2, hd))?;
                (
                    a.narrow(2, 0, nh)?,
                    a.narrow(2, nh, 1)?,
                    a.narrow(2, nh + 1, 1)?,
                )
            } else {
                // per head, its query, key and value side by side
                let a = a.reshape((b, t, nh, 3 * hd))?;
                let part = |i: usize| a.narrow(3, i * hd, hd);
                (part(0)?, part(1)?, part(2)?)
            };
            let out = attend(&q, &k, &v, scale, Bias::Causal { window: None }, None)?;
            let (sum, hs) = l.ln2.residual(&x, Some(&l.c_proj.forward(&out)?))?;
            x = sum;
            let act = l.fc.forward(&hs)?;
            let act = gelu(&act, self.c.gelu_erf)?;
            delta = Some(l.proj.forward(&act)?);
        }
        Ok(self.ln_f.residual(&x, delta.as_ref())?.1)
    }
}
