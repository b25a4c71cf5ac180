//! gpt_neo: learned positions, global and local (windowed) attention layers with unscaled
//! scores, a GELU MLP — after transformers' `GPTNeoForCausalLM`.

use candle_core::{Device, Module, Tensor};
use candle_nn::{
    embedding, layer_norm, linear, linear_no_bias, Embedding, LayerNorm, Linear, VarBuilder,
};

use super::{attention, gelu, heads, mask, merge};
use crate::config::Config;
use crate::NlmResult;

struct NeoLayer {
    ln1: LayerNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
    ln2: LayerNorm,
    fc: Linear,
    proj: Linear,
    local: bool,
}

pub struct GptNeo {
    c: Config,
    wte: Embedding,
    wpe: Embedding,
    layers: Vec<NeoLayer>,
    ln_f: LayerNorm,
    pub(super) head: Linear,
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
                ln1: layer_norm(h, c.eps, l.pp("ln_1"))?,
                q: linear_no_bias(h, h, a.pp("q_proj"))?,
                k: linear_no_bias(h, h, a.pp("k_proj"))?,
                v: linear_no_bias(h, h, a.pp("v_proj"))?,
                out: linear(h, h, a.pp("out_proj"))?,
                ln2: layer_norm(h, c.eps, l.pp("ln_2"))?,
                fc: linear(h, c.intermediate, l.pp("mlp").pp("c_fc"))?,
                proj: linear(c.intermediate, h, l.pp("mlp").pp("c_proj"))?,
                local: c.local.get(i).copied().unwrap_or(false),
            });
        }
        let ln_f = layer_norm(h, c.eps, m.pp("ln_f"))?;
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
        let global = mask(t, None, &self.device)?;
        let local = mask(t, Some(self.c.window), &self.device)?;
        let pos = Tensor::arange(0u32, t as u32, &self.device)?;
        let mut x = self
            .wte
            .forward(ids)?
            .broadcast_add(&self.wpe.forward(&pos)?)?;
        for l in &self.layers {
            let h = l.ln1.forward(&x)?;
            let q = heads(&l.q.forward(&h)?, nh, hd)?;
            let k = heads(&l.k.forward(&h)?, nh, hd)?;
            let v = heads(&l.v.forward(&h)?, nh, hd)?;
            // GPT-Neo does not scale the scores
            let bias = if l.local { &local } else { &global };
            let out = merge(&attention(&q, &k, &v, None, bias)?)?;
            x = (x + l.out.forward(&out)?)?;
            let h = l.ln2.forward(&x)?;
            let act = l.fc.forward(&h)?;
            let act = gelu(&act, self.c.gelu_erf)?;
            x = (x + l.proj.forward(&act)?)?;
        }
        self.ln_f.forward(&x)
    }
}
