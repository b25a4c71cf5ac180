//! llama (CodeLlama): RMS norms, rotary positions, grouped-query attention, a SwiGLU MLP — after
//! transformers' `LlamaForCausalLM`. Its weights come from a Hugging Face folder (dense) or a
//! GGUF file (quantized, its query and key rows permuted for interleaved rotary pairs).

use candle_core::{Device, Module, Tensor};
use candle_nn::{Embedding, RmsNorm, VarBuilder};

use super::{attention, heads, mask, merge, Proj};
use crate::config::Config;
use crate::NlmResult;

/// How the rotary embedding pairs a head's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rope {
    /// Dimension `i` with `i + d/2` (transformers' `rotate_half`).
    Half,
    /// Dimension `2i` with `2i + 1` (llama.cpp, whose converter permutes the query and key rows
    /// so that the two agree).
    Interleaved,
}

pub struct LlamaLayer {
    pub norm1: RmsNorm,
    pub q: Proj,
    pub k: Proj,
    pub v: Proj,
    pub o: Proj,
    pub norm2: RmsNorm,
    pub gate: Proj,
    pub up: Proj,
    pub down: Proj,
}

/// A llama model's weights, from wherever they were read.
pub struct LlamaWeights {
    pub embed: Embedding,
    pub layers: Vec<LlamaLayer>,
    pub norm: RmsNorm,
    pub head: Proj,
    pub rope: Rope,
    pub device: Device,
}

impl LlamaWeights {
    /// The weights of a Hugging Face folder (`model.layers.N.self_attn.q_proj`, …).
    pub fn hugging_face(c: &Config, vb: VarBuilder<'static>) -> NlmResult<LlamaWeights> {
        let m = vb.pp("model");
        let embed = candle_nn::embedding(c.vocab, c.hidden, m.pp("embed_tokens"))?;
        let (h, hd) = (c.hidden, c.head_dim);
        let dense = |i: usize, o: usize, vb: VarBuilder<'static>| -> NlmResult<Proj> {
            Ok(Proj::Dense(candle_nn::linear_no_bias(i, o, vb)?))
        };
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("layers.{i}"));
            let a = l.pp("self_attn");
            let mlp = l.pp("mlp");
            layers.push(LlamaLayer {
                norm1: candle_nn::rms_norm(h, c.eps, l.pp("input_layernorm"))?,
                q: dense(h, c.heads * hd, a.pp("q_proj"))?,
                k: dense(h, c.kv_heads * hd, a.pp("k_proj"))?,
                v: dense(h, c.kv_heads * hd, a.pp("v_proj"))?,
                o: dense(c.heads * hd, h, a.pp("o_proj"))?,
                norm2: candle_nn::rms_norm(h, c.eps, l.pp("post_attention_layernorm"))?,
                gate: dense(h, c.intermediate, mlp.pp("gate_proj"))?,
                up: dense(h, c.intermediate, mlp.pp("up_proj"))?,
                down: dense(c.intermediate, h, mlp.pp("down_proj"))?,
            });
        }
        let norm = candle_nn::rms_norm(h, c.eps, m.pp("norm"))?;
        let head = Proj::Dense(super::lm_head(c, &vb, embed.embeddings(), "lm_head")?);
        Ok(LlamaWeights {
            embed,
            layers,
            norm,
            head,
            rope: Rope::Half,
            device: vb.device().clone(),
        })
    }
}

pub struct Llama {
    c: Config,
    embed: Embedding,
    layers: Vec<LlamaLayer>,
    norm: RmsNorm,
    pub(super) head: Proj,
    rope: Rope,
    device: Device,
}

impl Llama {
    pub fn new(c: &Config, w: LlamaWeights) -> NlmResult<Llama> {
        Ok(Llama {
            c: c.clone(),
            embed: w.embed,
            layers: w.layers,
            norm: w.norm,
            head: w.head,
            rope: w.rope,
            device: w.device,
        })
    }

    /// cos and sin `[T, head_dim / 2]` of the rotary embedding, in f32 as transformers computes
    /// them (the inverse frequencies divided by a linear scaling factor).
    fn rotary(&self, t: usize) -> candle_core::Result<(Tensor, Tensor)> {
        let d = self.c.head_dim;
        let base = self.c.rope_theta as f32;
        let inv: Vec<f32> = (0..d / 2)
            .map(|i| 1.0 / base.powf((2 * i) as f32 / d as f32) / self.c.rope_linear as f32)
            .collect();
        let mut cos = Vec::with_capacity(t * d / 2);
        let mut sin = Vec::with_capacity(t * d / 2);
        for p in 0..t {
            for f in &inv {
                let a = p as f32 * f;
                cos.push(a.cos());
                sin.push(a.sin());
            }
        }
        Ok((
            Tensor::from_vec(cos, (t, d / 2), &self.device)?,
            Tensor::from_vec(sin, (t, d / 2), &self.device)?,
        ))
    }

    pub fn hidden(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let t = ids.dim(1)?;
        let (nh, nkv, hd) = (self.c.heads, self.c.kv_heads, self.c.head_dim);
        let (cos, sin) = self.rotary(t)?;
        let rope = |x: &Tensor| match self.rope {
            Rope::Half => candle_nn::rotary_emb::rope(x, &cos, &sin),
            Rope::Interleaved => candle_nn::rotary_emb::rope_i(x, &cos, &sin),
        };
        let causal = mask(t, None, &self.device)?;
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed.forward(ids)?;
        for l in &self.layers {
            let h = l.norm1.forward(&x)?;
            let q = rope(&heads(&l.q.forward(&h)?, nh, hd)?)?;
            let k = rope(&heads(&l.k.forward(&h)?, nkv, hd)?)?;
            let v = heads(&l.v.forward(&h)?, nkv, hd)?;
            let out = merge(&attention(&q, &k, &v, Some(scale), &causal)?)?;
            x = (x + l.o.forward(&out)?)?;
            let h = l.norm2.forward(&x)?;
            let mlp = l
                .down
                .forward(&(l.gate.forward(&h)?.silu()? * l.up.forward(&h)?)?)?;
            x = (x + mlp)?;
        }
        self.norm.forward(&x)
    }
}
