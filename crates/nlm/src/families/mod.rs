//! The forward passes, over every position of a batch of sequences, after transformers' modeling
//! code for each family: hidden states `[B, T, hidden]` after the final norm, then the logits of
//! a few hundred positions of one sequence at a time, so that a batch never holds
//! `B × T × vocab` floats.
//!
//! Sequences of a batch are padded on the right. Attention is causal, so a padded position is
//! never seen from a real one: a sequence's logits are the same alone or in a batch.

mod attend;
mod bigcode;
mod bloom;
mod dequant;
mod gpt_neo;
mod llama;
mod loss;
mod norm;
mod packed;
mod panels;
mod product;
mod softmax;
mod swiglu;

use candle_core::quantized::QTensor;
use candle_core::{Device, Module, Tensor};
use candle_nn::{Linear, VarBuilder};

use crate::config::{Config, Family};
use crate::NlmResult;

pub use llama::{Embed, GateUp, Llama, LlamaLayer, LlamaWeights, Qkv, Rope};
pub use loss::token_losses;
pub use norm::Norm;
pub use packed::Packed;
pub use panels::PANEL_BYTES;
pub use product::with_candle_ops;
pub use swiglu::GatedUp;

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

    /// The output projection.
    pub fn head(&self) -> &Proj {
        match self {
            Model::Llama(m) => &m.head,
            Model::GptNeo(m) => &m.head,
            Model::Bloom(m) => &m.head,
            Model::BigCode(m) => &m.head,
        }
    }
}

/// A dense projection `x·Wᵀ + b`, its weight held transposed (`[in, out]`, contiguous): the
/// CPU's matrix product runs faster on that layout than on a transposed view, and projections
/// that read the same input fuse into one product (`Dense::fused`).
pub struct Dense {
    /// `[in, out]`, tiled on the CPU (`held` says which).
    wt: Tensor,
    held: product::Weight,
    bias: Option<Tensor>,
}

impl Dense {
    /// From a weight `[out, in]` as checkpoints store it.
    pub fn new(weight: &Tensor, bias: Option<Tensor>) -> candle_core::Result<Dense> {
        let (wt, held) = product::hold(weight)?;
        Ok(Dense { wt, held, bias })
    }

    /// One projection doing the work of several on the same input: their outputs side by side.
    pub fn fused(weights: &[&Tensor]) -> candle_core::Result<Dense> {
        Dense::new(&Tensor::cat(weights, 0)?, None)
    }

    /// Reads `prefix.weight` (`[out, in]`) and, with `bias`, `prefix.bias`.
    pub fn load(
        vb: &VarBuilder<'static>,
        (input, output): (usize, usize),
        bias: bool,
    ) -> candle_core::Result<Dense> {
        let w = vb.get((output, input), "weight")?;
        let b = if bias {
            Some(vb.get(output, "bias")?)
        } else {
            None
        };
        Dense::new(&w, b)
    }
}

impl Module for Dense {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let y = product::project(x, &self.wt, self.held)?;
        match &self.bias {
            Some(b) => y.broadcast_add(b),
            None => Ok(y),
        }
    }
}

/// A projection: dense (a Hugging Face folder, or a GGUF file dequantized at load) or a GGUF
/// file's quantized weight: on the CPU packed in column tiles, each panel dequantized just
/// before the f32 kernel reads it ([`Packed`]); elsewhere (a GPU) dequantized whole just before
/// each product and let go after it. Either way the product is the dequantized model's
/// exactly.
pub enum Proj {
    Dense(Dense),
    /// On the CPU (shared with the token embeddings where the head is tied to them).
    Tiles(std::sync::Arc<Packed>),
    Packed(std::sync::Arc<QTensor>),
    /// The embeddings as the output projection.
    Tied(Linear),
}

impl Module for Proj {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Proj::Dense(l) => l.forward(x),
            Proj::Tiles(p) => packed::project(x, p),
            Proj::Packed(q) => {
                let w = q.dequantize(x.device())?;
                product::project(x, &w, product::Weight::OutIn)
            }
            Proj::Tied(l) => product::project(x, l.weight(), product::Weight::OutIn),
        }
    }
}

/// Whether weights loaded on `device` now are for this crate's CPU kernels (tiled, packed in
/// tiles): the CPU, unless [`with_candle_ops`] runs.
pub fn cpu_kernels(device: &Device) -> bool {
    device.is_cpu() && !product::candle_ops()
}

impl Proj {
    /// The negative log-likelihood of `next[i]` given each row `i` of `x` `[r, hidden]`
    /// ([`loss::head_losses`]): `None` where the head is not held in tiles on the CPU (the
    /// caller makes the logits a few hundred rows at a time instead).
    pub fn tiled_losses(&self, x: &Tensor, next: &[u32]) -> Option<candle_core::Result<Vec<f64>>> {
        if !product::on_cpu_f32(x) {
            return None;
        }
        let (r, k) = match x.dims2() {
            Ok(d) => d,
            Err(e) => return Some(Err(e)),
        };
        let losses = |blocks: panels::Blocks<'_>, vocab| {
            product::read(x, |x| loss::head_losses(x, (r, k), next, (blocks, vocab)))
        };
        match self {
            Proj::Tiles(p) if p.parts() == 1 => Some(losses(panels::Blocks::Packed(&**p), p.n())),
            Proj::Dense(d) if d.held == product::Weight::Tiled && d.bias.is_none() => {
                let vocab = match d.wt.dim(1) {
                    Ok(v) => v,
                    Err(e) => return Some(Err(e)),
                };
                Some(product::read(&d.wt, |w| {
                    losses(panels::Blocks::F32 { w, parts: 1 }, vocab)
                }))
            }
            _ => None,
        }
    }
}

/// What a query may see, and the bias added to its scores.
#[derive(Debug, Clone, Copy)]
pub enum Bias<'a> {
    /// Keys up to the query (and within `window` positions when given).
    Causal { window: Option<usize> },
    /// Causal, plus ALiBi's `slope[h] * key position` per head (BLOOM).
    Alibi { slopes: &'a [f32] },
}

impl Bias<'_> {
    /// The bias of queries `from..from + rows` over keys `0..keys`: `[rows, keys]`, or
    /// `[heads, rows, keys]` for ALiBi; a key a query may not see gets a large negative number.
    fn block(
        &self,
        from: usize,
        rows: usize,
        keys: usize,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        let seen =
            |i: usize, j: usize, window: Option<usize>| j <= i && window.is_none_or(|w| i - j < w);
        match *self {
            Bias::Causal { window } => {
                let mut m = vec![0f32; rows * keys];
                for r in 0..rows {
                    for j in 0..keys {
                        if !seen(from + r, j, window) {
                            m[r * keys + j] = f32::MIN;
                        }
                    }
                }
                Tensor::from_vec(m, (rows, keys), device)
            }
            Bias::Alibi { slopes } => {
                let mut m = Vec::with_capacity(slopes.len() * rows * keys);
                for s in slopes {
                    for r in 0..rows {
                        for j in 0..keys {
                            m.push(if seen(from + r, j, None) {
                                s * j as f32
                            } else {
                                f32::MIN
                            });
                        }
                    }
                }
                Tensor::from_vec(m, (slopes.len(), rows, keys), device)
            }
        }
    }
}

/// Queries per block of attention: a long method's scores are computed a block of queries at a
/// time, each over the keys up to its last query only, so that memory grows with the method's
/// length, not with its square.
const QUERY_BLOCK: usize = 128;

/// `[B, T, heads * d]` from `[B, heads, T, d]`.
fn merge(x: &Tensor) -> candle_core::Result<Tensor> {
    let (b, n, t, d) = x.dims4()?;
    x.transpose(1, 2)?.contiguous()?.reshape((b, t, n * d))
}

/// Attention of queries `[B, heads, T, d]` over keys and values `[B, kv_heads, T, d]` shared by
/// groups of `heads / kv_heads` query heads (grouped-query and multi-query attention; no copy
/// of the keys): `softmax(q·kᵀ · scale + bias) · v`, in blocks of `QUERY_BLOCK` queries.
fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: Option<f64>,
    bias: Bias,
) -> candle_core::Result<Tensor> {
    let t = q.dim(2)?;
    // scaled once here, not every block's scores
    let q = match scale {
        Some(s) => (q * s)?,
        None => q.clone(),
    };
    // the keys transposed once for every block
    let kt = k.transpose(2, 3)?.contiguous()?;
    let v = v.contiguous()?;
    if t <= QUERY_BLOCK {
        return attention_block(&q, &kt, &v, 0, bias);
    }
    let block = |from: usize| -> candle_core::Result<Tensor> {
        let rows = QUERY_BLOCK.min(t - from);
        // causal: the keys after the block's last query are never seen
        let keys = from + rows;
        attention_block(
            &q.narrow(2, from, rows)?.contiguous()?,
            &kt.narrow(3, 0, keys)?,
            &v.narrow(2, 0, keys)?,
            from,
            bias,
        )
    };
    let blocks = (0..t)
        .step_by(QUERY_BLOCK)
        .map(block)
        .collect::<candle_core::Result<Vec<_>>>()?;
    Tensor::cat(&blocks, 2)
}

/// One block: queries `[B, heads, R, d]` (scaled) at positions `from..from + R`, keys
/// transposed `[B, kv_heads, d, K]` and values `[B, kv_heads, K, d]` (narrowed to the keys the
/// block sees); the bias a tensor (`[R, K]`, or `[heads, R, K]` for ALiBi) added to the scores.
fn attention_block(
    q: &Tensor,
    kt: &Tensor,
    v: &Tensor,
    from: usize,
    bias: Bias,
) -> candle_core::Result<Tensor> {
    let (b, nh, rows, d) = q.dims4()?;
    let (nkv, keys) = (kt.dim(1)?, kt.dim(3)?);
    let rep = nh / nkv;
    let q = q.reshape((b, nkv, rep * rows, d))?;
    let scores = q.matmul(&kt.contiguous()?)?;
    let bias = bias.block(from, rows, keys, q.device())?;
    let scores = scores.reshape((b, nh, rows, keys))?.broadcast_add(&bias)?;
    let p = candle_nn::ops::softmax_last_dim(&scores)?.reshape((b, nkv, rep * rows, keys))?;
    p.matmul(&v.contiguous()?)?.reshape((b, nh, rows, d))
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

/// The output projection: its own weights, or the embeddings' (tied: read through a transposed
/// view, so that the vocabulary's matrix is not held twice).
fn lm_head(c: &Config, vb: &VarBuilder<'static>, embed: &Tensor, name: &str) -> NlmResult<Proj> {
    Ok(
        if c.tie_embeddings || !vb.contains_tensor(&format!("{name}.weight")) {
            Proj::Tied(Linear::new(embed.clone(), None))
        } else {
            Proj::Dense(Dense::load(&vb.pp(name), (c.hidden, c.vocab), false)?)
        },
    )
}

/// Test data: normal samples from a seeded generator, the same on every run and machine
/// (candle's `randn` draws from the thread's generator, so a test on it is another test on
/// each run, and a rare draw fails it).
#[cfg(test)]
pub(crate) fn normal(
    mean: f32,
    std: f32,
    shape: impl Into<candle_core::Shape>,
    seed: u64,
) -> candle_core::Result<Tensor> {
    use rand::SeedableRng;
    use rand_distr::Distribution;
    let shape = shape.into();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let dist = rand_distr::Normal::new(mean, std).map_err(candle_core::Error::wrap)?;
    let v: Vec<f32> = (0..shape.elem_count())
        .map(|_| dist.sample(&mut rng))
        .collect();
    Tensor::from_vec(v, shape, &candle_core::Device::Cpu)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn masks_see_the_past_within_the_window() {
        let m = Bias::Causal { window: Some(2) }
            .block(0, 4, 4, &Device::Cpu)
            .expect("mask");
        let v: Vec<Vec<f32>> = m.to_vec2().expect("vec");
        assert_eq!(v[3][3], 0.0);
        assert_eq!(v[3][2], 0.0);
        assert_eq!(v[3][1], f32::MIN);
        assert_eq!(v[0][1], f32::MIN);
        // a block of later queries: rows 2..4 over keys 0..4
        let m = Bias::Causal { window: None }
            .block(2, 2, 4, &Device::Cpu)
            .expect("mask");
        let v: Vec<Vec<f32>> = m.to_vec2().expect("vec");
        assert_eq!(v, vec![vec![0.0, 0.0, 0.0, f32::MIN], vec![0.0; 4]]);
    }

    fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .and_then(|d| d.abs())
            .and_then(|d| d.max_all())
            .and_then(|d| d.to_scalar())
            .expect("diff")
    }

    /// The largest difference as a share of the largest value expected: two orders of the
    /// same float sums (blocks, fused passes, vector widths) differ by a few units in the last
    /// place of the values they add up to.
    pub(crate) fn max_rel_diff(got: &Tensor, want: &Tensor) -> f32 {
        let scale = want
            .abs()
            .and_then(|w| w.max_all())
            .and_then(|w| w.to_scalar::<f32>())
            .expect("scale");
        max_diff(got, want) / scale.max(f32::MIN_POSITIVE)
    }

    /// Attention a block of queries at a time is attention over the whole: causal, windowed and
    /// ALiBi, across several blocks.
    #[test]
    fn blocked_attention_is_whole_attention() {
        let dev = Device::Cpu;
        let t = 2 * QUERY_BLOCK + 37;
        let (b, nh, nkv, d) = (1, 4, 2, 8);
        let q = normal(0f32, 1.0, (b, nh, t, d), 7).expect("q");
        let k = normal(0f32, 1.0, (b, nkv, t, d), 8).expect("k");
        let v = normal(0f32, 1.0, (b, nkv, t, d), 9).expect("v");
        let slopes = [0.5f32, 0.25, 0.125, 0.0625];
        for bias in [
            Bias::Causal { window: None },
            Bias::Causal { window: Some(100) },
            Bias::Alibi { slopes: &slopes },
        ] {
            let blocked = attention(&q, &k, &v, Some(0.3), bias).expect("blocked");
            // the whole as one product (each key/value head repeated for its group), the bias
            // a tensor added to the scores, candle's softmax
            let idx = Tensor::new(&[0u32, 0, 1, 1], &dev).expect("idx");
            let (kr, vr) = (
                k.index_select(&idx, 1).expect("k"),
                v.index_select(&idx, 1).expect("v"),
            );
            let kt = kr.transpose(2, 3).and_then(|k| k.contiguous()).expect("kt");
            let scores = (&q * 0.3)
                .and_then(|q| q.matmul(&kt))
                .and_then(|s| s.broadcast_add(&bias.block(0, t, t, &dev)?))
                .expect("scores");
            let whole = candle_nn::ops::softmax_last_dim(&scores)
                .and_then(|p| p.matmul(&vr))
                .expect("whole");
            assert!(max_rel_diff(&blocked, &whole) < 1e-5, "{bias:?}");
        }
    }

    /// Grouped-query attention without copying the keys is attention with each key/value head
    /// repeated for its group.
    #[test]
    fn grouped_attention_is_repeated_heads() {
        let dev = Device::Cpu;
        let (b, nh, nkv, t, d) = (2, 4, 2, 5, 3);
        let q = normal(0f32, 1.0, (b, nh, t, d), 10).expect("q");
        let k = normal(0f32, 1.0, (b, nkv, t, d), 11).expect("k");
        let v = normal(0f32, 1.0, (b, nkv, t, d), 12).expect("v");
        let bias = Bias::Causal { window: None };
        let got = attention(&q, &k, &v, Some(0.5), bias).expect("attention");
        let idx = Tensor::new(&[0u32, 0, 1, 1], &dev).expect("idx");
        let (kr, vr) = (
            k.index_select(&idx, 1).expect("k"),
            v.index_select(&idx, 1).expect("v"),
        );
        let want = attention(&q, &kr, &vr, Some(0.5), bias).expect("attention");
        assert!(max_diff(&got, &want) < 1e-6);
    }
}
