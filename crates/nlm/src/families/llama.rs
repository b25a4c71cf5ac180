//! llama (CodeLlama): RMS norms, rotary positions, grouped-query attention, a SwiGLU MLP — after
//! transformers' `LlamaForCausalLM`. Its weights come from a Hugging Face folder (dense) or a
//! GGUF file (quantized, its query and key rows permuted for interleaved rotary pairs).

use candle_core::{Device, Module, Tensor};
use candle_nn::{Embedding, VarBuilder};

use super::attend::{attend, Rotary};
use super::swiglu::GatedUp;
use super::{Bias, Dense, Norm, Proj};
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

/// The query, key and value projections: one product (dense weights, fused) or three (packed).
pub enum Qkv {
    Fused(Proj),
    Separate { q: Proj, k: Proj, v: Proj },
}

/// The MLP's gate and up projections: one product with the activation (dense) or two
/// (packed).
pub enum GateUp {
    Fused(GatedUp),
    Separate { gate: Proj, up: Proj },
}

pub struct LlamaLayer {
    pub norm1: Norm,
    pub qkv: Qkv,
    pub o: Proj,
    pub norm2: Norm,
    pub gate_up: GateUp,
    pub down: Proj,
}

/// A llama model's weights, from wherever they were read.
pub struct LlamaWeights {
    pub embed: Embed,
    pub layers: Vec<LlamaLayer>,
    pub norm: Norm,
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
        let weight =
            |vb: VarBuilder<'static>, out: usize, input: usize| vb.get((out, input), "weight");
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("layers.{i}"));
            let a = l.pp("self_attn");
            let mlp = l.pp("mlp");
            let (q, k, v) = (
                weight(a.pp("q_proj"), c.heads * hd, h)?,
                weight(a.pp("k_proj"), c.kv_heads * hd, h)?,
                weight(a.pp("v_proj"), c.kv_heads * hd, h)?,
            );
            let (gate, up) = (
                weight(mlp.pp("gate_proj"), c.intermediate, h)?,
                weight(mlp.pp("up_proj"), c.intermediate, h)?,
            );
            layers.push(LlamaLayer {
                norm1: Norm::rms(h, c.eps, l.pp("input_layernorm"))?,
                qkv: Qkv::Fused(Proj::Dense(Dense::fused(&[&q, &k, &v])?)),
                o: Proj::Dense(Dense::load(&a.pp("o_proj"), (c.heads * hd, h), false)?),
                norm2: Norm::rms(h, c.eps, l.pp("post_attention_layernorm"))?,
                gate_up: GateUp::Fused(GatedUp::new(&gate, &up)?),
                down: Proj::Dense(Dense::load(
                    &mlp.pp("down_proj"),
                    (c.intermediate, h),
                    false,
                )?),
            });
        }
        let norm = Norm::rms(h, c.eps, m.pp("norm"))?;
        let head = super::lm_head(c, &vb, embed.embeddings(), "lm_head")?;
        Ok(LlamaWeights {
            embed: Embed::Dense(embed),
            layers,
            norm,
            head,
            rope: Rope::Half,
            device: vb.device().clone(),
        })
    }
}

/// The token embeddings: f32, or a GGUF file's table packed (its rows dequantized as they
/// are looked up).
pub enum Embed {
    Dense(Embedding),
    Packed(std::sync::Arc<super::Packed>),
}

impl Embed {
    /// `[B, T, hidden]` of token ids `[B, T]`.
    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Embed::Dense(e) => e.forward(ids),
            Embed::Packed(p) => {
                let (b, t) = ids.dims2()?;
                let rows = p.rows(&ids.flatten_all()?.to_vec1::<u32>()?)?;
                Tensor::from_vec(rows, (b, t, p.k()), ids.device())
            }
        }
    }
}

pub struct Llama {
    c: Config,
    embed: Embed,
    layers: Vec<LlamaLayer>,
    norm: Norm,
    pub(super) head: Proj,
    rope: Rope,
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
        })
    }

    /// cos and sin `[T, head_dim / 2]` of the rotary embedding, in f32 as transformers computes
    /// them (the inverse frequencies divided by a linear scaling factor).
    fn rotary(&self, t: usize) -> (Vec<f32>, Vec<f32>) {
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
        (cos, sin)
    }

    pub fn hidden(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let t = ids.dim(1)?;
        let (nh, nkv, hd) = (self.c.heads, self.c.kv_heads, self.c.head_dim);
        let (cos, sin) = self.rotary(t);
        let rope = Rotary {
            cos: &cos,
            sin: &sin,
            interleaved: self.rope == Rope::Interleaved,
        };
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed.forward(ids)?;
        // the MLP's output, added to the residual stream by the next norm
        let mut delta = None;
        for l in &self.layers {
            let (sum, h) = l.norm1.residual(&x, delta.as_ref())?;
            x = sum;
            let (b, t, _) = h.dims3()?;
            // queries, keys and values as views `[B, T, heads, d]` of the projections' output
            let (q, k, v) = match &l.qkv {
                Qkv::Fused(p) => {
                    let a = p.forward(&h)?.reshape((b, t, nh + 2 * nkv, hd))?;
                    (
                        a.narrow(2, 0, nh)?,
                        a.narrow(2, nh, nkv)?,
                        a.narrow(2, nh + nkv, nkv)?,
                    )
                }
                Qkv::Separate { q, k, v } => (
                    q.forward(&h)?.reshape((b, t, nh, hd))?,
                    k.forward(&h)?.reshape((b, t, nkv, hd))?,
                    v.forward(&h)?.reshape((b, t, nkv, hd))?,
                ),
            };
            let out = attend(
                &q,
                &k,
                &v,
                Some(scale),
                Bias::Causal { window: None },
                Some(rope),
            )?;
            let (sum, h) = l.norm2.residual(&x, Some(&l.o.forward(&out)?))?;
            x = sum;
            let act = match &l.gate_up {
                GateUp::Fused(m) => m.forward(&h)?,
                GateUp::Separate { gate, up } => (gate.forward(&h)?.silu()? * up.forward(&h)?)?,
            };
            delta = Some(l.down.forward(&act)?);
        }
        Ok(self.norm.residual(&x, delta.as_ref())?.1)
    }
}
