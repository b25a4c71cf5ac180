//! GGUF files (llama.cpp's format) of the llama family — CodeLlama quantized for a laptop's
//! memory: the configuration and the tokenizer from the file's metadata, the weights kept in
//! their packed form (`Q4_0`, `Q8_0`, the k-quants, …; on the CPU in column tiles, a panel
//! dequantized just before the f32 kernel reads it, see `families/packed.rs`), the norms as
//! f32: the scores are the dequantized model's, as transformers computes them. candle's reader
//! checks every length and offset against the file.

mod header;
mod tokenizer;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use candle_core::quantized::gguf_file::{TensorInfo, Value};
use candle_core::quantized::QTensor;
use candle_core::{DType, Device};
use candle_nn::Embedding;

use crate::config::{Config, Family};
use crate::families::{Dense, Embed, GateUp, GatedUp, LlamaWeights, Norm, Packed, Proj, Qkv, Rope};
use crate::{NlmError, NlmResult};

/// How a GGUF file's weights are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// In their quantized form (the file's size in memory), dequantized a panel at a time
    /// just before the product reads them: on the CPU at 0.9–1× the f32 speed (SmolLM2-135M
    /// Q4_1, 2 cores), the same scores to the bit.
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
/// header alone: every tensor packed as it lies (the token embeddings too, looked up from the
/// packed table), the norms as f32, and a panel of dequantized tiles for each product that
/// may run at once (one per core, [`crate::PANEL_BYTES`] each).
pub fn weight_bytes(path: &Path) -> NlmResult<u64> {
    guarded(path, || {
        let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
        let (_, content) = header::open(path)?;
        let mut total = 0u64;
        for (name, info) in &content.tensor_infos {
            let dims = info.shape.dims();
            let (elements, packed) = extent(info)
                .ok_or_else(|| at(format!("tensor `{name}`: dimensions {dims:?} overflow")))?;
            total = total.saturating_add(if dims.len() == 1 {
                elements.saturating_mul(4)
            } else {
                packed
            });
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        Ok(total.saturating_add(cores.saturating_mul(crate::PANEL_BYTES as u64)))
    })
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
    // packed on the CPU: in column tiles, each panel dequantized for its product
    let tiles = packing == Packing::Packed && crate::families::cpu_kernels(device);
    let proj = |t: QTensor| -> NlmResult<Proj> {
        Ok(match packing {
            Packing::Packed if tiles => Proj::Tiles(Arc::new(Packed::new(&[&[&t]])?)),
            Packing::Packed => Proj::Packed(Arc::new(t)),
            Packing::F32 => Proj::Dense(Dense::new(&t.dequantize(device)?, None)?),
        })
    };
    // projections of the same input fuse into one product
    let fused = |ts: Vec<QTensor>| -> NlmResult<Proj> {
        if tiles {
            let refs: Vec<&QTensor> = ts.iter().collect();
            return Ok(Proj::Tiles(Arc::new(Packed::new(&[&refs])?)));
        }
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
    let tied = !content.tensor_infos.contains_key("output.weight");
    // packed, the table is also the head where it is tied to it
    let (embed, embed_q) = if tiles {
        let table = Arc::new(Packed::new(&[&[&embed_q]])?);
        (Embed::Packed(table.clone()), Err(table))
    } else {
        (
            Embed::Dense(Embedding::new(embed_q.dequantize(device)?, h)),
            Ok(embed_q),
        )
    };
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
            Packing::Packed if !tiles => (
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
            Packing::Packed => (
                Qkv::Fused(fused(vec![q, k, v])?),
                GateUp::Fused(GatedUp::packed(&gate, &up)?),
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
    let head = match embed_q {
        _ if !tied => proj(shaped(
            tensor("output.weight")?,
            c.vocab,
            h,
            "output.weight",
        )?)?,
        Ok(embed_q) => proj(embed_q)?,
        Err(table) => Proj::Tiles(table),
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
