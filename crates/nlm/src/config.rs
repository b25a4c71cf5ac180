//! A model folder's `config.json`, as far as the forward passes need it.

use std::path::Path;

use serde_json::Value;

use crate::{NlmError, NlmResult};

/// The model families natstudy runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Llama,
    GptNeo,
    Bloom,
    GptBigCode,
}

/// The per-family facts are exhaustive matches, no `_ =>`: a new family does not compile until
/// each says what it is (`name`, `mlp_matrices`, and `families::Model::load`).
impl Family {
    /// Every family natstudy runs.
    pub const ALL: [Family; 4] = [
        Family::Llama,
        Family::GptNeo,
        Family::Bloom,
        Family::GptBigCode,
    ];

    /// Its `model_type` in `config.json`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Llama => "llama",
            Family::GptNeo => "gpt_neo",
            Family::Bloom => "bloom",
            Family::GptBigCode => "gpt_bigcode",
        }
    }

    /// The weight matrices of a layer's MLP: a gated MLP (llama's) has three, the others two.
    /// What a forward pass costs follows it (`cost.rs`).
    pub fn mlp_matrices(self) -> u64 {
        match self {
            Family::Llama => 3,
            Family::GptNeo | Family::Bloom | Family::GptBigCode => 2,
        }
    }
}

/// What the forward passes read from `config.json`.
#[derive(Debug, Clone)]
pub struct Config {
    pub family: Family,
    pub vocab: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub intermediate: usize,
    pub eps: f64,
    pub max_len: usize,
    pub tie_embeddings: bool,
    /// llama: the rotary base and a linear scaling factor of positions.
    pub rope_theta: f64,
    pub rope_linear: f64,
    /// gpt_neo: each layer's attention (`true`: local) and the local window.
    pub local: Vec<bool>,
    pub window: usize,
    /// gpt_neo, gpt_bigcode: the MLP's GELU is the exact one (`gelu`), not the tanh
    /// approximation (`gelu_new`, `gelu_pytorch_tanh`).
    pub gelu_erf: bool,
    /// gpt_bigcode: scores scaled by 1/√head_dim (`scale_attn_weights`).
    pub scale_attention: bool,
}

fn num(v: &Value, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_f64))
}

impl Config {
    pub fn read(dir: &Path) -> NlmResult<Config> {
        let path = dir.join("config.json");
        let v = crate::folder::json(&path)?;
        Self::parse(&v).map_err(|e| NlmError::Model(format!("{}: {e}", path.display())))
    }

    pub fn parse(v: &Value) -> Result<Config, String> {
        let family = match v.get("model_type").and_then(Value::as_str) {
            Some(t) => match Family::ALL.into_iter().find(|f| f.name() == t) {
                Some(f) => f,
                None => {
                    let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
                    return Err(format!(
                        "model_type `{t}`: natstudy runs {} and {}",
                        names[..names.len() - 1].join(", "),
                        names[names.len() - 1]
                    ));
                }
            },
            None => return Err("no model_type".into()),
        };
        let need = |keys: &[&str]| -> Result<usize, String> {
            num(v, keys)
                .filter(|n| *n >= 1.0 && *n <= 1e7)
                .map(|n| n as usize)
                .ok_or_else(|| format!("field `{}` missing or out of range", keys[0]))
        };
        let vocab = need(&["vocab_size"])?;
        let hidden = need(&["hidden_size", "n_embd"])?;
        let layers = need(&["num_hidden_layers", "num_layers", "n_layer"])?;
        let heads = need(&["num_attention_heads", "num_heads", "n_head"])?;
        // gpt_bigcode's multi-query attention: one key/value head for all
        let multi_query = family == Family::GptBigCode
            && v.get("multi_query")
                .and_then(Value::as_bool)
                .unwrap_or(true);
        let kv_heads = if multi_query {
            1
        } else {
            num(v, &["num_key_value_heads"]).map_or(heads, |n| n as usize)
        };
        if hidden % heads != 0 || kv_heads == 0 || heads % kv_heads != 0 {
            return Err(format!(
                "{heads} heads, {kv_heads} key/value heads, hidden size {hidden}"
            ));
        }
        let head_dim = num(v, &["head_dim"]).map_or(hidden / heads, |n| n as usize);
        let intermediate = num(v, &["intermediate_size", "n_inner"])
            .filter(|n| *n >= 1.0 && *n <= 1e7)
            .map_or(4 * hidden, |n| n as usize);
        let gelu_erf = match v.get("activation_function").and_then(Value::as_str) {
            None | Some("gelu_new" | "gelu_pytorch_tanh" | "gelu_fast") => false,
            Some("gelu") => true,
            Some(other) if family == Family::GptNeo || family == Family::GptBigCode => {
                return Err(format!(
                    "activation_function `{other}`: natstudy runs gelu, gelu_new and gelu_pytorch_tanh"
                ))
            }
            Some(_) => false,
        };
        let eps = num(v, &["rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps"]).unwrap_or(1e-5);
        // BLOOM's config states no maximum length: 512, as the reference uses
        let max_len = num(v, &["max_position_embeddings", "n_positions", "seq_length"])
            .map_or(512, |n| n as usize);
        let tie_embeddings = v
            .get("tie_word_embeddings")
            .and_then(Value::as_bool)
            .unwrap_or(family != Family::Llama);
        // transformers 5 writes the rotary base under `rope_parameters`
        let rope = v.get("rope_parameters").or_else(|| v.get("rope_scaling"));
        let rope_theta = num(v, &["rope_theta"])
            .or_else(|| rope.and_then(|r| num(r, &["rope_theta"])))
            .unwrap_or(10_000.0);
        let rope_type = rope
            .and_then(|r| r.get("rope_type").or_else(|| r.get("type")))
            .and_then(Value::as_str)
            .unwrap_or("default");
        let rope_linear = match rope_type {
            "default" => 1.0,
            "linear" => rope.and_then(|r| num(r, &["factor"])).unwrap_or(1.0),
            other => {
                return Err(format!(
                    "rope type `{other}`: natstudy runs default and linear"
                ))
            }
        };
        let local = match v.get("attention_layers").and_then(Value::as_array) {
            Some(list) => list.iter().map(|a| a.as_str() == Some("local")).collect(),
            None => vec![false; layers],
        };
        if family == Family::GptNeo && local.len() != layers {
            return Err(format!(
                "{} attention layers for {layers} layers",
                local.len()
            ));
        }
        Ok(Config {
            family,
            vocab,
            hidden,
            layers,
            heads,
            kv_heads,
            head_dim,
            intermediate,
            eps,
            max_len,
            tie_embeddings,
            rope_theta,
            rope_linear,
            local,
            window: num(v, &["window_size"]).map_or(256, |n| n as usize),
            gelu_erf,
            scale_attention: v
                .get("scale_attn_weights")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        })
    }
}
