//! GGUF files (llama.cpp's format) of the llama family — CodeLlama quantized for a laptop's
//! memory: the configuration and the tokenizer from the file's metadata, the projections kept in
//! their packed form (`Q4_0`, `Q8_0`, the k-quants, …) and dequantized one at a time for their
//! product, the token embeddings and norms as f32: the scores are the dequantized model's, as
//! transformers computes them. candle's reader checks every length and offset against the file.

mod header;
mod tokenizer;

use std::collections::HashMap;
use std::path::Path;

use candle_core::quantized::gguf_file::{TensorInfo, Value};
use candle_core::quantized::QTensor;
use candle_core::{DType, Device};
use candle_nn::Embedding;

use crate::config::{Config, Family};
use crate::families::{Dense, GateUp, GatedUp, LlamaWeights, Norm, Proj, Qkv, Rope};
use crate::{NlmError, NlmResult};

/// How a GGUF file's projections are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// In their quantized form (the file's size in memory), each dequantized just before its
    /// product.
    #[default]
    Packed,
    /// Dequantized to f32 at load (four to eight times the memory; no work per product).
    F32,
}

/// A number of any of GGUF's numeric types.
pub(crate) fn number(v: &Value) -> Option<f64> {
    Some(match v {
        Value::U8(x) => f64::from(*x),
        Value::I8(x) => f64::from(*x),
        Value::U16(x) => f64::from(*x),
        Value::I16(x) => f64::from(*x),
        Value::U32(x) => f64::from(*x),
        Value::I32(x) => f64::from(*x),
        Value::U64(x) => *x as f64,
        Value::I64(x) => *x as f64,
        Value::F32(x) => f64::from(*x),
        Value::F64(x) => *x,
        Value::Bool(_) | Value::String(_) | Value::Array(_) => return None,
    })
}

/// A GGUF file read: its configuration, weights and tokenizer.
pub struct Gguf {
    pub config: Config,
    pub weights: LlamaWeights,
    pub tokenizer: crate::tokenizer::Tokenizer,
}

/// Reads a GGUF file. The file may be hostile (uploaded through the study page): candle's
/// reader bounds what a header declares (string lengths, array and tensor counts against the
/// file's size; this crate lets it see at most 32 MiB of header, `header.rs`), but a few
/// crafted values make it panic (an alignment of 0 divides by zero;
/// tensor dimensions whose product overflows); such a panic is this file's error, not the
/// caller's.
/// `stop` is asked before each tensor is read ([`crate::Stop`]).
pub fn load(path: &Path, device: &Device, packing: Packing, stop: crate::Stop) -> NlmResult<Gguf> {
    guarded(path, || read(path, device, packing, stop))
}

/// The bytes a GGUF file's weights take once loaded with [`Packing::Packed`], read from its
/// header alone: the projections packed as they lie, the token embeddings and the norms as
/// f32, and one projection dequantized for its product (the largest).
pub fn weight_bytes(path: &Path) -> NlmResult<u64> {
    guarded(path, || {
        let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
        let (_, content) = header::open(path)?;
        let tied = !content.tensor_infos.contains_key("output.weight");
        let (mut total, mut largest) = (0u64, 0u64);
        for (name, info) in &content.tensor_infos {
            let dims = info.shape.dims();
            let (elements, packed) = extent(info)
                .ok_or_else(|| at(format!("tensor `{name}`: dimensions {dims:?} overflow")))?;
            let f32 = elements.saturating_mul(4);
            total = total.saturating_add(match (dims.len(), name.as_str()) {
                (1, _) => f32,
                // dequantized for the lookup; kept packed too where the head is tied to it
                (_, "token_embd.weight") if tied => f32.saturating_add(packed),
                (_, "token_embd.weight") => f32,
                _ => packed,
            });
            if dims.len() == 2 && (name != "token_embd.weight" || tied) {
                largest = largest.max(f32);
            }
        }
        Ok(total.saturating_add(largest))
    })
}

/// The bytes a GGUF file's weights take once loaded with [`Packing::F32`] (every tensor
/// dequantized; a head tied to the embeddings counted twice, to be safe), from its header.
pub fn f32_bytes(path: &Path) -> NlmResult<u64> {
    guarded(path, || {
        let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
        let (_, content) = header::open(path)?;
        let tied = !content.tensor_infos.contains_key("output.weight");
        let mut total = 0u64;
        for (name, info) in &content.tensor_infos {
            let (elements, _) = extent(info).ok_or_else(|| {
                at(format!(
                    "tensor `{name}`: dimensions {:?} overflow",
                    info.shape.dims()
                ))
            })?;
            let f32 = elements.saturating_mul(4);
            let twice = tied && name == "token_embd.weight";
            total = total.saturating_add(if twice { f32.saturating_mul(2) } else { f32 });
        }
        Ok(total)
    })
}

/// How to hold a GGUF file's projections given `f32_bytes` (their size dequantized,
/// [`f32_bytes`]) and the memory free: dequantized at load ([`Packing::F32`]) where that takes
/// at most a quarter of the memory free — each product then runs at the f32 kernels' speed
/// (SmolLM2-135M Q4_1 on 2 cores: 720 tokens/s against 168 packed, 0.9 GB at peak against
/// 0.6) — packed otherwise (a 7B file on a laptop), and packed where the free memory is not
/// known.
pub fn packing_within(f32_bytes: u64, free: Option<u64>) -> Packing {
    match free {
        Some(free) if f32_bytes.checked_mul(4).is_some_and(|b| b <= free) => Packing::F32,
        _ => Packing::Packed,
    }
}

/// A tensor's elements and its bytes as packed in the file, from its header; `None` where its
/// dimensions' product overflows (a crafted header).
fn extent(info: &TensorInfo) -> Option<(u64, u64)> {
    let dims = info.shape.dims();
    let elements = dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))?;
    let t = info.ggml_dtype;
    let blocks = elements / t.block_size().max(1) as u64;
    Some((elements, blocks.saturating_mul(t.type_size() as u64)))
}

/// Runs a reader of a GGUF file that may be hostile: candle's reader bounds what a header
/// declares, but a few crafted values make it panic, and such a panic is this file's error.
fn guarded<T>(path: &Path, f: impl FnOnce() -> NlmResult<T>) -> NlmResult<T> {
    crate::guard::guard(f, |why| {
        NlmError::Model(format!(
            "{}: a malformed GGUF file (its reader failed: {why})",
            path.display()
        ))
    })?
}

fn read(path: &Path, device: &Device, packing: Packing, stop: crate::Stop) -> NlmResult<Gguf> {
    let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
    let (mut file, content) = header::open(path)?;
    let md = &content.metadata;
    let arch = md
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_default();
    if arch != "llama" {
        return Err(at(format!(
            "architecture `{arch}`: natstudy runs GGUF files of the llama family (CodeLlama); \
             other families run from a Hugging Face folder"
        )));
    }
    let spec = tokenizer::Spec::read(md).map_err(|e| at(e.to_string()))?;
    let config = config_of(md, spec.tokens.len()).map_err(at)?;
    let tokenizer = crate::tokenizer::Tokenizer::new(&path.display().to_string(), || spec.build())?;
    // the bytes of the file's tensors as packed there, for the load's progress
    // (a crafted header's dimensions may overflow: all then, and its tensors fail to read)
    let size = |info: &TensorInfo| extent(info).map_or(u64::MAX, |(_, packed)| packed);
    let mut loaded = crate::Loaded {
        read: 0,
        of: content
            .tensor_infos
            .values()
            .map(size)
            .fold(0, u64::saturating_add),
    };
    let mut tensor = |name: &str| -> NlmResult<QTensor> {
        if stop(loaded) {
            return Err(NlmError::Stopped);
        }
        let read = content.tensor_infos.get(name).map_or(0, size);
        loaded.read = loaded.read.saturating_add(read);
        content
            .tensor(&mut file, name, device)
            .map_err(|e| at(format!("tensor `{name}`: {e}")))
    };
    let (h, hd, c) = (config.hidden, config.head_dim, &config);
    let shaped = |t: QTensor, rows: usize, cols: usize, name: &str| -> NlmResult<QTensor> {
        if t.shape().dims() == [rows, cols] {
            Ok(t)
        } else {
            Err(at(format!(
                "tensor `{name}`: shape {:?}, the configuration says [{rows}, {cols}]",
                t.shape().dims()
            )))
        }
    };
    let proj = |t: QTensor| -> NlmResult<Proj> {
        Ok(match packing {
            Packing::Packed => Proj::Packed(std::sync::Arc::new(t)),
            Packing::F32 => Proj::Dense(Dense::new(&t.dequantize(device)?, None)?),
        })
    };
    // dequantized projections of the same input fuse into one product
    let fused = |ts: Vec<QTensor>| -> NlmResult<Proj> {
        let ws = ts
            .iter()
            .map(|t| t.dequantize(device))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Proj::Dense(Dense::fused(&ws.iter().collect::<Vec<_>>())?))
    };
    let norm = |t: QTensor| -> NlmResult<Norm> {
        Ok(Norm::rms_of(
            t.dequantize(device)?.to_dtype(DType::F32)?,
            c.eps,
        )?)
    };
    let embed_q = shaped(
        tensor("token_embd.weight")?,
        c.vocab,
        h,
        "token_embd.weight",
    )?;
    let embed = Embedding::new(embed_q.dequantize(device)?, h);
    let mut layers = Vec::with_capacity(c.layers);
    for i in 0..c.layers {
        let norm1 = norm(tensor(&format!("blk.{i}.attn_norm.weight"))?)?;
        let norm2 = norm(tensor(&format!("blk.{i}.ffn_norm.weight"))?)?;
        let mut get = |n: &str, rows: usize, cols: usize| -> NlmResult<QTensor> {
            let name = format!("blk.{i}.{n}.weight");
            shaped(tensor(&name)?, rows, cols, &name)
        };
        let (q, k, v) = (
            get("attn_q", c.heads * hd, h)?,
            get("attn_k", c.kv_heads * hd, h)?,
            get("attn_v", c.kv_heads * hd, h)?,
        );
        let (gate, up) = (
            get("ffn_gate", c.intermediate, h)?,
            get("ffn_up", c.intermediate, h)?,
        );
        let (qkv, gate_up) = match packing {
            Packing::Packed => (
                Qkv::Separate {
                    q: proj(q)?,
                    k: proj(k)?,
                    v: proj(v)?,
                },
                GateUp::Separate {
                    gate: proj(gate)?,
                    up: proj(up)?,
                },
            ),
            Packing::F32 => (
                Qkv::Fused(fused(vec![q, k, v])?),
                GateUp::Fused(GatedUp::new(
                    &gate.dequantize(device)?,
                    &up.dequantize(device)?,
                )?),
            ),
        };
        layers.push(crate::families::LlamaLayer {
            norm1,
            qkv,
            o: proj(get("attn_output", h, c.heads * hd)?)?,
            norm2,
            gate_up,
            down: proj(get("ffn_down", h, c.intermediate)?)?,
        });
    }
    let norm_out = norm(tensor("output_norm.weight")?)?;
    let head = if content.tensor_infos.contains_key("output.weight") {
        proj(shaped(
            tensor("output.weight")?,
            c.vocab,
            h,
            "output.weight",
        )?)?
    } else {
        // tied to the embeddings
        proj(embed_q)?
    };
    // all read (a tensor the model has no use for is not read): a last chance to stop
    if stop(crate::Loaded {
        read: loaded.of,
        of: loaded.of,
    }) {
        return Err(NlmError::Stopped);
    }
    Ok(Gguf {
        config,
        weights: LlamaWeights {
            embed,
            layers,
            norm: norm_out,
            head,
            rope: Rope::Interleaved,
            device: device.clone(),
        },
        tokenizer,
    })
}

/// The configuration a llama GGUF file states under `llama.*`.
fn config_of(md: &HashMap<String, Value>, vocab: usize) -> Result<Config, String> {
    let get = |k: &str| md.get(&format!("llama.{k}")).and_then(number);
    let need = |k: &str| -> Result<usize, String> {
        get(k)
            .filter(|n| *n >= 1.0 && *n <= 1e7)
            .map(|n| n as usize)
            .ok_or_else(|| format!("llama.{k} missing or out of range"))
    };
    let hidden = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    let kv_heads =
        get("attention.head_count_kv").map_or(Ok(heads), |_| need("attention.head_count_kv"))?;
    if hidden % heads != 0 || heads % kv_heads != 0 {
        return Err(format!(
            "{heads} heads, {kv_heads} key/value heads, hidden size {hidden}"
        ));
    }
    let head_dim = get("attention.key_length").map_or(hidden / heads, |n| n as usize);
    if head_dim == 0 || head_dim % 2 != 0 || head_dim > 65_536 {
        return Err(format!("a head of {head_dim} dimensions"));
    }
    let rope_linear = match md
        .get("llama.rope.scaling.type")
        .and_then(|v| v.to_string().ok())
        .map(String::as_str)
    {
        None | Some("none") => 1.0,
        Some("linear") => get("rope.scaling.factor")
            .filter(|f| *f > 0.0)
            .unwrap_or(1.0),
        Some(other) => return Err(format!("rope scaling `{other}`: natstudy runs linear")),
    };
    if vocab == 0 || vocab > 10_000_000 {
        return Err(format!("{vocab} tokens"));
    }
    Ok(Config {
        family: Family::Llama,
        vocab,
        hidden,
        layers: need("block_count")?,
        heads,
        kv_heads,
        head_dim,
        intermediate: need("feed_forward_length")?,
        eps: get("attention.layer_norm_rms_epsilon").unwrap_or(1e-5),
        max_len: need("context_length")?,
        tie_embeddings: false,
        rope_theta: get("rope.freq_base").unwrap_or(10_000.0),
        rope_linear,
        local: Vec::new(),
        window: 0,
        gelu_erf: false,
        scale_attention: true,
    })
}

/// Whether a path names a GGUF file (by its name; its magic is checked when it is read).
pub fn is_gguf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
}
