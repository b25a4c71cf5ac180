//! A masked language model (RoBERTa: CodeBERT's architecture) for fill-mask: the model's
//! log-probabilities over the vocabulary at a `<mask>` of a text, as transformers'
//! `RobertaForMaskedLM` gives them (the text encoded with `<s>` … `</s>`).

use std::path::Path;

use candle_core::{Device, Module, Tensor, D};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};

use crate::{NlmError, NlmResult};

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    attn_out: Linear,
    attn_ln: LayerNorm,
    inter: Linear,
    out: Linear,
    out_ln: LayerNorm,
}

/// A RoBERTa masked language model with its tokenizer.
pub struct MaskedLm {
    words: Embedding,
    positions: Embedding,
    types: Tensor,
    embed_ln: LayerNorm,
    layers: Vec<Layer>,
    head_dense: Linear,
    head_ln: LayerNorm,
    decoder: Linear,
    heads: usize,
    padding_idx: u32,
    max_len: usize,
    mask_id: u32,
    tokenizer: crate::tokenizer::Tokenizer,
    device: Device,
}

/// The model's answer at one mask.
#[derive(Debug, Clone, PartialEq)]
pub struct Fill {
    /// The mask's position among the tokens (`<s>` is 0).
    pub position: usize,
    /// Log-probabilities over the vocabulary, by token id.
    pub logp: Vec<f32>,
}

impl Fill {
    /// The `k` most likely tokens: (id, log-probability), best first (ties by id).
    pub fn top(&self, k: usize) -> Vec<(u32, f32)> {
        let mut all: Vec<(u32, f32)> = self
            .logp
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u32, *p))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }
}

impl MaskedLm {
    pub fn load(dir: &Path) -> NlmResult<MaskedLm> {
        let path = dir.join("config.json");
        let c = crate::folder::json(&path)?;
        if c.get("model_type").and_then(|v| v.as_str()) != Some("roberta") {
            return Err(NlmError::Model(format!(
                "{}: fill-mask runs roberta models",
                path.display()
            )));
        }
        let n = |k: &str| -> NlmResult<usize> {
            c.get(k)
                .and_then(|v| v.as_u64())
                .filter(|v| (1..=10_000_000).contains(v))
                .map(|v| v as usize)
                .ok_or_else(|| NlmError::Model(format!("{}: field `{k}`", path.display())))
        };
        let (vocab, hidden, layers, heads) = (
            n("vocab_size")?,
            n("hidden_size")?,
            n("num_hidden_layers")?,
            n("num_attention_heads")?,
        );
        let inter = n("intermediate_size")?;
        let positions = n("max_position_embeddings")?;
        let eps = c
            .get("layer_norm_eps")
            .and_then(|v| v.as_f64())
            .unwrap_or(1e-12);
        let padding_idx = c.get("pad_token_id").and_then(|v| v.as_u64()).unwrap_or(1) as u32;
        if hidden % heads != 0 {
            return Err(NlmError::Model(format!(
                "{}: {heads} heads, hidden size {hidden}",
                path.display()
            )));
        }
        let tokenizer = crate::folder::tokenizer(dir)?;
        let mask_id = tokenizer
            .token_to_id("<mask>")
            .ok_or_else(|| NlmError::Tokenizer("no <mask> token".into()))?;
        let device = Device::Cpu;
        let vb: VarBuilder<'static> = crate::load::weights(dir, &device, crate::NEVER)?;
        let r = vb.pp("roberta");
        let e = r.pp("embeddings");
        let words = embedding(vocab, hidden, e.pp("word_embeddings"))?;
        let mut enc = Vec::with_capacity(layers);
        for i in 0..layers {
            let l = r.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            enc.push(Layer {
                q: linear(hidden, hidden, a.pp("self").pp("query"))?,
                k: linear(hidden, hidden, a.pp("self").pp("key"))?,
                v: linear(hidden, hidden, a.pp("self").pp("value"))?,
                attn_out: linear(hidden, hidden, a.pp("output").pp("dense"))?,
                attn_ln: layer_norm(hidden, eps, a.pp("output").pp("LayerNorm"))?,
                inter: linear(hidden, inter, l.pp("intermediate").pp("dense"))?,
                out: linear(inter, hidden, l.pp("output").pp("dense"))?,
                out_ln: layer_norm(hidden, eps, l.pp("output").pp("LayerNorm"))?,
            });
        }
        let h = vb.pp("lm_head");
        let decoder_weight = match vb.contains_tensor("lm_head.decoder.weight") {
            true => h.pp("decoder").get((vocab, hidden), "weight")?,
            false => words.embeddings().clone(),
        };
        Ok(MaskedLm {
            positions: embedding(positions, hidden, e.pp("position_embeddings"))?,
            types: e
                .pp("token_type_embeddings")
                .get(
                    (
                        c.get("type_vocab_size")
                            .and_then(|v| v.as_u64())
                            .unwrap_or(1) as usize,
                        hidden,
                    ),
                    "weight",
                )?
                .narrow(0, 0, 1)?,
            embed_ln: layer_norm(hidden, eps, e.pp("LayerNorm"))?,
            words,
            layers: enc,
            head_dense: linear(hidden, hidden, h.pp("dense"))?,
            head_ln: layer_norm(hidden, eps, h.pp("layer_norm"))?,
            decoder: Linear::new(decoder_weight, Some(h.get(vocab, "bias")?)),
            heads,
            padding_idx,
            max_len: positions.saturating_sub(padding_idx as usize + 1),
            mask_id,
            tokenizer,
            device,
        })
    }

    /// The token ids of a text with `<s>` and `</s>`.
    pub fn encode(&self, text: &str) -> NlmResult<Vec<u32>> {
        self.tokenizer.encode(text, true)
    }

    /// The id of a token, if the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }

    /// A token as the vocabulary spells it (byte-level: `Ġcount` for " count").
    pub fn token(&self, id: u32) -> Option<String> {
        self.tokenizer.id_to_token(id)
    }

    /// The text a token stands for (`Ġcount` → " count", `Ċ` → a line break).
    pub fn decode(&self, id: u32) -> Option<String> {
        self.tokenizer.decode(&[id])
    }

    /// The answers at every `<mask>` of a text, in order.
    pub fn fill(&self, text: &str) -> NlmResult<Vec<Fill>> {
        let ids = self.encode(text)?;
        if ids.len() > self.max_len {
            return Err(NlmError::Model(format!(
                "{} tokens: the model takes at most {}",
                ids.len(),
                self.max_len
            )));
        }
        let masks: Vec<usize> = ids
            .iter()
            .enumerate()
            .filter(|(_, id)| **id == self.mask_id)
            .map(|(i, _)| i)
            .collect();
        if masks.is_empty() {
            return Ok(Vec::new());
        }
        let hidden = self.encoder(&ids)?;
        let mut out = Vec::with_capacity(masks.len());
        for p in masks {
            let h = hidden.narrow(0, p, 1)?;
            let h = self
                .head_ln
                .forward(&self.head_dense.forward(&h)?.gelu_erf()?)?;
            let logits = self.decoder.forward(&h)?;
            let lp = candle_nn::ops::log_softmax(&logits, D::Minus1)?.squeeze(0)?;
            out.push(Fill {
                position: p,
                logp: lp.to_vec1()?,
            });
        }
        Ok(out)
    }

    fn encoder(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let t = ids.len();
        let (nh, hd) = (self.heads, self.words.hidden_size() / self.heads);
        let input = Tensor::new(ids, &self.device)?;
        // positions as transformers numbers them: after the padding index, padding kept at it
        let mut next = self.padding_idx;
        let pos: Vec<u32> = ids
            .iter()
            .map(|id| {
                if *id == self.padding_idx {
                    self.padding_idx
                } else {
                    next += 1;
                    next
                }
            })
            .collect();
        let pos = Tensor::new(pos.as_slice(), &self.device)?;
        let x = self
            .words
            .forward(&input)?
            .add(&self.positions.forward(&pos)?)?
            .broadcast_add(&self.types)?;
        let mut x = self.embed_ln.forward(&x)?;
        let scale = 1.0 / (hd as f64).sqrt();
        let split = |y: Tensor| -> candle_core::Result<Tensor> {
            y.reshape((t, nh, hd))?.transpose(0, 1)?.contiguous()
        };
        for l in &self.layers {
            let q = split(l.q.forward(&x)?)?;
            let k = split(l.k.forward(&x)?)?;
            let v = split(l.v.forward(&x)?)?;
            let scores = (q.matmul(&k.transpose(1, 2)?.contiguous()?)? * scale)?;
            let p = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = p
                .matmul(&v)?
                .transpose(0, 1)?
                .contiguous()?
                .reshape((t, nh * hd))?;
            let a = l.attn_ln.forward(&(l.attn_out.forward(&ctx)? + &x)?)?;
            let i = l.inter.forward(&a)?.gelu_erf()?;
            x = l.out_ln.forward(&(l.out.forward(&i)? + &a)?)?;
        }
        Ok(x)
    }
}
