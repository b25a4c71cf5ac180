//! The forward passes, over every position of one sequence (logits `[T, vocab]`), after
//! transformers' modeling code for each family.

use candle_core::{Device, Module, Tensor, D};
use candle_nn::{
    embedding, layer_norm, linear, linear_no_bias, rms_norm, Embedding, LayerNorm, Linear, RmsNorm,
    VarBuilder,
};

use crate::config::{Config, Family};
use crate::NlmResult;

pub enum Model {
    Llama(Llama),
    GptNeo(GptNeo),
    Bloom(Bloom),
}

impl Model {
    pub fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<Model> {
        Ok(match c.family {
            Family::Llama => Model::Llama(Llama::new(c, vb)?),
            Family::GptNeo => Model::GptNeo(GptNeo::new(c, vb)?),
            Family::Bloom => Model::Bloom(Bloom::new(c, vb)?),
        })
    }

    /// Logits `[T, vocab]` of token ids `[T]`.
    pub fn forward(&self, ids: &Tensor) -> NlmResult<Tensor> {
        Ok(match self {
            Model::Llama(m) => m.forward(ids)?,
            Model::GptNeo(m) => m.forward(ids)?,
            Model::Bloom(m) => m.forward(ids)?,
        })
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

/// `[heads, T, d]` from `[T, heads * d]`.
fn heads(x: &Tensor, n: usize, d: usize) -> candle_core::Result<Tensor> {
    let t = x.dim(0)?;
    x.reshape((t, n, d))?.transpose(0, 1)?.contiguous()
}

/// `[T, heads * d]` from `[heads, T, d]`.
fn merge(x: &Tensor) -> candle_core::Result<Tensor> {
    let (n, t, d) = x.dims3()?;
    x.transpose(0, 1)?.contiguous()?.reshape((t, n * d))
}

/// Softmax of `scores + bias` (`[heads, T, T]`, bias broadcast) then the values.
fn attend(scores: &Tensor, bias: &Tensor, v: &Tensor) -> candle_core::Result<Tensor> {
    let p = candle_nn::ops::softmax_last_dim(&scores.broadcast_add(bias)?)?;
    p.matmul(v)
}

fn lm_head(c: &Config, vb: &VarBuilder<'static>, embed: &Tensor, name: &str) -> NlmResult<Linear> {
    Ok(
        if c.tie_embeddings || !vb.contains_tensor(&format!("{name}.weight")) {
            Linear::new(embed.clone(), None)
        } else {
            linear_no_bias(c.hidden, c.vocab, vb.pp(name))?
        },
    )
}

// ---------------------------------------------------------------------------------------------
// llama

struct LlamaLayer {
    norm1: RmsNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    norm2: RmsNorm,
    gate: Linear,
    up: Linear,
    down: Linear,
}

pub struct Llama {
    c: Config,
    embed: Embedding,
    layers: Vec<LlamaLayer>,
    norm: RmsNorm,
    head: Linear,
    device: Device,
}

impl Llama {
    fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<Llama> {
        let m = vb.pp("model");
        let embed = embedding(c.vocab, c.hidden, m.pp("embed_tokens"))?;
        let (h, hd) = (c.hidden, c.head_dim);
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("layers.{i}"));
            let a = l.pp("self_attn");
            let mlp = l.pp("mlp");
            layers.push(LlamaLayer {
                norm1: rms_norm(h, c.eps, l.pp("input_layernorm"))?,
                q: linear_no_bias(h, c.heads * hd, a.pp("q_proj"))?,
                k: linear_no_bias(h, c.kv_heads * hd, a.pp("k_proj"))?,
                v: linear_no_bias(h, c.kv_heads * hd, a.pp("v_proj"))?,
                o: linear_no_bias(c.heads * hd, h, a.pp("o_proj"))?,
                norm2: rms_norm(h, c.eps, l.pp("post_attention_layernorm"))?,
                gate: linear_no_bias(h, c.intermediate, mlp.pp("gate_proj"))?,
                up: linear_no_bias(h, c.intermediate, mlp.pp("up_proj"))?,
                down: linear_no_bias(c.intermediate, h, mlp.pp("down_proj"))?,
            });
        }
        let norm = rms_norm(h, c.eps, m.pp("norm"))?;
        let head = lm_head(c, &vb, embed.embeddings(), "lm_head")?;
        Ok(Llama {
            c: c.clone(),
            embed,
            layers,
            norm,
            head,
            device: vb.device().clone(),
        })
    }

    /// cos and sin `[T, head_dim]` of the rotary embedding, in f32 as transformers computes them.
    fn rotary(&self, t: usize) -> candle_core::Result<(Tensor, Tensor)> {
        let d = self.c.head_dim;
        let base = self.c.rope_theta as f32;
        let inv: Vec<f32> = (0..d / 2)
            .map(|i| 1.0 / base.powf((2 * i) as f32 / d as f32) / self.c.rope_linear as f32)
            .collect();
        let mut cos = Vec::with_capacity(t * d);
        let mut sin = Vec::with_capacity(t * d);
        for p in 0..t {
            // the frequencies twice over: transformers' `cat((freqs, freqs), -1)`
            for f in inv.iter().chain(&inv) {
                let a = p as f32 * f;
                cos.push(a.cos());
                sin.push(a.sin());
            }
        }
        Ok((
            Tensor::from_vec(cos, (t, d), &self.device)?,
            Tensor::from_vec(sin, (t, d), &self.device)?,
        ))
    }

    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let t = ids.dim(0)?;
        let (nh, nkv, hd) = (self.c.heads, self.c.kv_heads, self.c.head_dim);
        let (cos, sin) = self.rotary(t)?;
        let rope = |x: &Tensor| -> candle_core::Result<Tensor> {
            let x1 = x.narrow(D::Minus1, 0, hd / 2)?;
            let x2 = x.narrow(D::Minus1, hd / 2, hd / 2)?;
            let rotated = Tensor::cat(&[&x2.neg()?, &x1], D::Minus1)?;
            x.broadcast_mul(&cos)?.add(&rotated.broadcast_mul(&sin)?)
        };
        let causal = mask(t, None, &self.device)?;
        let rep = nh / nkv;
        let kv_of: Vec<u32> = (0..nh).map(|h| (h / rep) as u32).collect();
        let kv_of = Tensor::new(kv_of.as_slice(), &self.device)?;
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed.forward(ids)?;
        for l in &self.layers {
            let h = l.norm1.forward(&x)?;
            let q = rope(&heads(&l.q.forward(&h)?, nh, hd)?)?;
            let k = rope(&heads(&l.k.forward(&h)?, nkv, hd)?)?;
            let v = heads(&l.v.forward(&h)?, nkv, hd)?;
            let (k, v) = (k.index_select(&kv_of, 0)?, v.index_select(&kv_of, 0)?);
            let scores = (q.matmul(&k.transpose(1, 2)?.contiguous()?)? * scale)?;
            let out = merge(&attend(&scores, &causal, &v)?)?;
            x = (x + l.o.forward(&out)?)?;
            let h = l.norm2.forward(&x)?;
            let mlp = l
                .down
                .forward(&(l.gate.forward(&h)?.silu()? * l.up.forward(&h)?)?)?;
            x = (x + mlp)?;
        }
        self.head.forward(&self.norm.forward(&x)?)
    }
}

// ---------------------------------------------------------------------------------------------
// gpt_neo

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
    head: Linear,
    device: Device,
}

impl GptNeo {
    fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<GptNeo> {
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
        let head = lm_head(c, &vb, wte.embeddings(), "lm_head")?;
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

    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let t = ids.dim(0)?;
        let (nh, hd) = (self.c.heads, self.c.hidden / self.c.heads);
        let global = mask(t, None, &self.device)?;
        let local = mask(t, Some(self.c.window), &self.device)?;
        let pos = Tensor::arange(0u32, t as u32, &self.device)?;
        let mut x = (self.wte.forward(ids)? + self.wpe.forward(&pos)?)?;
        for l in &self.layers {
            let h = l.ln1.forward(&x)?;
            let q = heads(&l.q.forward(&h)?, nh, hd)?;
            let k = heads(&l.k.forward(&h)?, nh, hd)?;
            let v = heads(&l.v.forward(&h)?, nh, hd)?;
            // GPT-Neo does not scale the scores
            let scores = q.matmul(&k.transpose(1, 2)?.contiguous()?)?;
            let bias = if l.local { &local } else { &global };
            let out = merge(&attend(&scores, bias, &v)?)?;
            x = (x + l.out.forward(&out)?)?;
            let h = l.ln2.forward(&x)?;
            x = (x + l.proj.forward(&l.fc.forward(&h)?.gelu()?)?)?;
        }
        self.head.forward(&self.ln_f.forward(&x)?)
    }
}

// ---------------------------------------------------------------------------------------------
// bloom

struct BloomLayer {
    ln1: LayerNorm,
    qkv: Linear,
    dense: Linear,
    ln2: LayerNorm,
    up: Linear,
    down: Linear,
}

pub struct Bloom {
    c: Config,
    embed: Embedding,
    embed_ln: LayerNorm,
    layers: Vec<BloomLayer>,
    ln_f: LayerNorm,
    head: Linear,
    device: Device,
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
    fn new(c: &Config, vb: VarBuilder<'static>) -> NlmResult<Bloom> {
        let m = vb.pp("transformer");
        let h = c.hidden;
        let embed = embedding(c.vocab, h, m.pp("word_embeddings"))?;
        let embed_ln = layer_norm(h, c.eps, m.pp("word_embeddings_layernorm"))?;
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = m.pp(format!("h.{i}"));
            layers.push(BloomLayer {
                ln1: layer_norm(h, c.eps, l.pp("input_layernorm"))?,
                qkv: linear(h, 3 * h, l.pp("self_attention").pp("query_key_value"))?,
                dense: linear(h, h, l.pp("self_attention").pp("dense"))?,
                ln2: layer_norm(h, c.eps, l.pp("post_attention_layernorm"))?,
                up: linear(h, 4 * h, l.pp("mlp").pp("dense_h_to_4h"))?,
                down: linear(4 * h, h, l.pp("mlp").pp("dense_4h_to_h"))?,
            });
        }
        let ln_f = layer_norm(h, c.eps, m.pp("ln_f"))?;
        let head = lm_head(c, &vb, embed.embeddings(), "lm_head")?;
        Ok(Bloom {
            c: c.clone(),
            embed,
            embed_ln,
            layers,
            ln_f,
            head,
            device: vb.device().clone(),
        })
    }

    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let t = ids.dim(0)?;
        let (nh, hd) = (self.c.heads, self.c.hidden / self.c.heads);
        // the bias of head `h` at key `j`: slope_h * j, plus the causal mask
        let slopes = alibi_slopes(nh);
        let mut bias = Vec::with_capacity(nh * t * t);
        for s in &slopes {
            for i in 0..t {
                for j in 0..t {
                    bias.push(if j <= i { s * j as f32 } else { f32::MIN });
                }
            }
        }
        let bias = Tensor::from_vec(bias, (nh, t, t), &self.device)?;
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed_ln.forward(&self.embed.forward(ids)?)?;
        for l in &self.layers {
            let h = l.ln1.forward(&x)?;
            // fused: per head, its query, key and value side by side
            let qkv = l.qkv.forward(&h)?.reshape((t, nh, 3, hd))?;
            let part = |i: usize| -> candle_core::Result<Tensor> {
                qkv.narrow(2, i, 1)?
                    .squeeze(2)?
                    .transpose(0, 1)?
                    .contiguous()
            };
            let (q, k, v) = (part(0)?, part(1)?, part(2)?);
            let scores = (q.matmul(&k.transpose(1, 2)?.contiguous()?)? * scale)?;
            let out = merge(&attend(&scores, &bias, &v)?)?;
            x = (x + l.dense.forward(&out)?)?;
            let h = l.ln2.forward(&x)?;
            x = (x + l.down.forward(&l.up.forward(&h)?.gelu()?)?)?;
        }
        self.head.forward(&self.ln_f.forward(&x)?)
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

    #[test]
    fn masks_see_the_past_within_the_window() {
        let m = mask(4, Some(2), &Device::Cpu).expect("mask");
        let v: Vec<Vec<f32>> = m.to_vec2().expect("vec");
        assert_eq!(v[3][3], 0.0);
        assert_eq!(v[3][2], 0.0);
        assert_eq!(v[3][1], f32::MIN);
        assert_eq!(v[0][1], f32::MIN);
    }
}
