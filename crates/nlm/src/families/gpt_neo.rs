//! gpt_neo: learned positions, global and local (windowed) attention layers with unscaled
//! scores, a GELU MLP — after transformers' `GPTNeoForCausalLM`.

use candle_core::{Device, Module, Tensor};
use candle_nn::{embedding, Embedding, VarBuilder};

use super::attend::attend;
use super::{gelu, Bias, Dense, Norm, Proj};
use crate::config::Config;
use crate::NlmResult;

struct NeoLayer {
    ln1: Norm,
    /// query, key and value in one product
    qkv: Dense,
    out: Dense,
    ln2: Norm,
    fc: Dense,
    proj: Dense,
    local: bool,
}

pub struct GptNeo {
    c: Config,
    wte: Embedding,
    wpe: Embedding,
    layers: Vec<NeoLayer>,
    ln_f: Norm,
    pub(super) head: Proj,
    device: Device,
}

impl GptNeo {
    pub fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<GptNeo> {
        let m = vb.pp("transformer");
        let h = c.hidden;
        let wte = embedding(c.vocab, h, m.pp("wte"))?;
        let wpe = embedding(c.max_len, h, m.pp("wpe"))?;
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("h.{i}"));
            let a = l.pp("attn").pp("attention");
            layers.push(NeoLayer {
                ln1: Norm::layer(h, c.eps, l.pp("ln_1"))?,
                qkv: Dense::fused(&[
                    &a.pp("q_proj").get((h, h), "weight")?,
                    &a.pp("k_proj").get((h, h), "weight")?,
                    &a.pp("v_proj").get((h, h), "weight")?,
                ])?,
                out: Dense::load(&a.pp("out_proj"), (h, h), true)?,
                ln2: Norm::layer(h, c.eps, l.pp("ln_2"))?,
                fc: Dense::load(&l.pp("mlp").pp("c_fc"), (h, c.intermediate), true)?,
                proj: Dense::load(&l.pp("mlp").pp("c_proj"), (c.intermediate, h), true)?,
                local: c.local.get(i).copied().unwrap_or(false),
            });
        }
        let ln_f = Norm::layer(h, c.eps, m.pp("ln_f"))?;
        let head = super::lm_head(c, &vb, wte.embeddings(), "lm_head")?;
        Ok(GptNeo {
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
        let t = ids.dim(1)?;
        let (nh, hd) = (self.c.heads, self.c.hidden / self.c.heads);
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
            let qkv = l.qkv.forward(&h)?;
            // [queries | keys | values], each `[B, T, heads, d]` as a view
            let (b, t, _) = qkv.dims3()?;
            let qkv = qkv.reshape((b, t, 3 * nh, hd))?;
            let (q, k, v) = (
                qkv.narrow(2, 0, nh)?,
                qkv.narrow(2, nh, nh)?,
                qkv.narrow(2, 2 * nh, nh)?,
            );
            // GPT-Neo does not scale the scores
            let bias = Bias::Causal {
                window: l.local.then_some(self.c.window),
            };
            let out = attend(&q, &k, &v, None, bias, None)?;
            let (sum, h) = l.ln2.residual(&x, Some(&l.out.forward(&out)?))?;
            x = sum;
            let act = l.fc.forward(&h)?;
            let act = gelu(&act, self.c.gelu_erf)?;
            delta = Some(l.proj.forward(&act)?);
        }
        Ok(self.ln_f.residual(&x, delta.as_ref())?.1)
    }
}
