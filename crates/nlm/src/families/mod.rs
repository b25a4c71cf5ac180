//! The forward passes, over every position of a batch of sequences, after transformers' modeling
//! code for each family: hidden states `[B, T, hidden]` after the final norm, then the logits of
//! one sequence at a time (`[T, vocab]`), so that a batch never holds `B × T × vocab` floats.
//!
//! Sequences of a batch are padded on the right. Attention is causal, so a padded position is
//! never seen from a real one: a sequence's logits are the same alone or in a batch.

mod bigcode;
mod bloom;
mod gpt_neo;
mod llama;

use candle_core::quantized::QMatMul;
use candle_core::{Device, Module, Tensor};
use candle_nn::{Linear, VarBuilder};

use crate::config::{Config, Family};
use crate::NlmResult;

pub use llama::{Llama, LlamaLayer, LlamaWeights, Rope};

pub enum Model {
    Llama(Llama),
    GptNeo(gpt_neo::GptNeo),
    Bloom(bloom::Bloom),
    BigCode(bigcode::BigCode),
}

impl Model {
    /// A model of a Hugging Face folder's weights.
    pub fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<Model> {
        Ok(match c.family {
            Family::Llama => Model::Llama(Llama::new(c, LlamaWeights::hugging_face(c, vb)?)?),
            Family::GptNeo => Model::GptNeo(gpt_neo::GptNeo::new(c, vb)?),
            Family::Bloom => Model::Bloom(bloom::Bloom::new(c, vb)?),
            Family::GptBigCode => Model::BigCode(bigcode::BigCode::new(c, vb)?),
        })
    }

    /// Hidden states `[B, T, hidden]` after the final norm, of token ids `[B, T]`.
    pub fn hidden(&self, ids: &Tensor) -> NlmResult<Tensor> {
        Ok(match self {
            Model::Llama(m) => m.hidden(ids)?,
            Model::GptNeo(m) => m.hidden(ids)?,
            Model::Bloom(m) => m.hidden(ids)?,
            Model::BigCode(m) => m.hidden(ids)?,
        })
    }

    /// Logits `[T, vocab]` of one sequence's hidden states `[T, hidden]`.
    pub fn logits(&self, hidden: &Tensor) -> NlmResult<Tensor> {
        Ok(match self {
            Model::Llama(m) => m.head.forward(hidden)?,
            Model::GptNeo(m) => m.head.forward(hidden)?,
            Model::Bloom(m) => m.head.forward(hidden)?,
            Model::BigCode(m) => m.head.forward(hidden)?,
        })
    }
}

/// A projection: dense (a Hugging Face folder) or quantized (a GGUF file, multiplied in its
/// packed form).
pub enum Proj {
    Dense(Linear),
    Quant(QMatMul),
}

impl Module for Proj {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Proj::Dense(l) => l.forward(x),
            Proj::Quant(q) => q.forward(x),
        }
    }
}

/// `[T, T]`: 0 where key `j` may be seen from query `i` (`j <= i`, and within `window` when
/// given), a large negative number elsewhere.
fn mask(t: usize, window: Option<usize>, device: &Device) -> candle_core::Result<Tensor> {
    let mut m = vec![0f32; t * t];
    for i in 0..t {
        for j in 0..t {
            let seen = j <= i && window.is_none_or(|w| i - j < w);
            if !seen {
                m[i * t + j] = f32::MIN;
            }
        }
    }
    Tensor::from_vec(m, (t, t), device)
}

/// `[B, heads, T, d]` from `[B, T, heads * d]`.
fn heads(x: &Tensor, n: usize, d: usize) -> candle_core::Result<Tensor> {
    let (b, t, _) = x.dims3()?;
    x.reshape((b, t, n, d))?.transpose(1, 2)?.contiguous()
}

/// `[B, T, heads * d]` from `[B, heads, T, d]`.
fn merge(x: &Tensor) -> candle_core::Result<Tensor> {
    let (b, n, t, d) = x.dims4()?;
    x.transpose(1, 2)?.contiguous()?.reshape((b, t, n * d))
}

/// Attention of queries `[B, heads, T, d]` over keys and values `[B, kv_heads, T, d]` shared by
/// groups of `heads / kv_heads` query heads (grouped-query and multi-query attention; no copy
/// of the keys): `softmax(q·kᵀ · scale + bias) · v`, the bias `[T, T]` or `[heads, T, T]`
/// broadcast over the batch.
fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: Option<f64>,
    bias: &Tensor,
) -> candle_core::Result<Tensor> {
    let (b, nh, t, d) = q.dims4()?;
    let nkv = k.dim(1)?;
    let rep = nh / nkv;
    let q = q.reshape((b, nkv, rep * t, d))?;
    let mut scores = q.matmul(&k.transpose(2, 3)?.contiguous()?)?;
    if let Some(s) = scale {
        scores = (scores * s)?;
    }
    let scores = scores.reshape((b, nh, t, t))?.broadcast_add(bias)?;
    let p = candle_nn::ops::softmax_last_dim(&scores)?.reshape((b, nkv, rep * t, t))?;
    p.matmul(v)?.reshape((b, nh, t, d))
}

/// The MLP's GELU: the exact one (`gelu`) or the tanh approximation (`gelu_new`,
/// `gelu_pytorch_tanh`).
fn gelu(x: &Tensor, erf: bool) -> candle_core::Result<Tensor> {
    if erf {
        x.gelu_erf()
    } else {
        x.gelu()
    }
}

/// The output projection: its own weights, or the embeddings' (tied).
fn lm_head(c: &Config, vb: &VarBuilder<'static>, embed: &Tensor, name: &str) -> NlmResult<Linear> {
    Ok(
        if c.tie_embeddings || !vb.contains_tensor(&format!("{name}.weight")) {
            Linear::new(embed.clone(), None)
        } else {
            candle_nn::linear_no_bias(c.hidden, c.vocab, vb.pp(name))?
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_see_the_past_within_the_window() {
        let m = mask(4, Some(2), &Device::Cpu).expect("mask");
        let v: Vec<Vec<f32>> = m.to_vec2().expect("vec");
        assert_eq!(v[3][3], 0.0);
        assert_eq!(v[3][2], 0.0);
        assert_eq!(v[3][1], f32::MIN);
        assert_eq!(v[0][1], f32::MIN);
    }

    /// Grouped-query attention without copying the keys is attention with each key/value head
    /// repeated for its group.
    #[test]
    fn grouped_attention_is_repeated_heads() {
        let dev = Device::Cpu;
        let (b, nh, nkv, t, d) = (2, 4, 2, 5, 3);
        let q = Tensor::randn(0f32, 1.0, (b, nh, t, d), &dev).expect("q");
        let k = Tensor::randn(0f32, 1.0, (b, nkv, t, d), &dev).expect("k");
        let v = Tensor::randn(0f32, 1.0, (b, nkv, t, d), &dev).expect("v");
        let bias = mask(t, None, &dev).expect("mask");
        let got = attention(&q, &k, &v, Some(0.5), &bias).expect("attention");
        let idx = Tensor::new(&[0u32, 0, 1, 1], &dev).expect("idx");
        let (kr, vr) = (
            k.index_select(&idx, 1).expect("k"),
            v.index_select(&idx, 1).expect("v"),
        );
        let want = attention(&q, &kr, &vr, Some(0.5), &bias).expect("attention");
        let diff: f32 = (got - want)
            .expect("sub")
            .abs()
            .expect("abs")
            .max_all()
            .expect("max")
            .to_scalar()
            .expect("scalar");
        assert!(diff < 1e-6, "{diff}");
    }
}
