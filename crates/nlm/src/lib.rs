//! Neural language models, scored as the published study's tool scores them: a method's text is
//! tokenized without special tokens (`tokenizer.tokenize` then `convert_tokens_to_ids`: no BOS),
//! truncated to the model's length, and its cross-entropy is the mean negative log-likelihood
//! in nats of tokens 2..n given their prefix — transformers' `model(ids, labels=ids).loss`.
//!
//! Models load from a Hugging Face model folder (`config.json`, `*.safetensors` — sharded
//! too — and `tokenizer.json`). Families: `llama` (CodeLlama: grouped-query attention,
//! `rope_theta`, linear `rope_scaling`), `gpt_neo` (global and local attention layers) and
//! `bloom` (ALiBi), each a forward pass over every position written here on candle, after
//! transformers' modeling code. Plain data in and out; no web, database or runtime.

mod config;
mod families;
mod load;
pub mod masked;

use std::path::Path;

use candle_core::{DType, Device, Tensor, D};

pub use config::Family;
pub use masked::{Fill, MaskedLm};

/// Why a model cannot be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum NlmError {
    #[error("{0}")]
    Model(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}

#[cfg(test)]
mod tests {
    #[test]
    fn devices_are_named_and_a_missing_gpu_says_so() {
        assert!(matches!(super::device("cpu"), Ok(candle_core::Device::Cpu)));
        let e = super::device("tpu")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("cpu or cuda"), "{e}");
        if !cfg!(feature = "cuda") {
            let e = super::device("cuda")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("--features cuda"), "{e}");
        }
    }
}

pub type NlmResult<T> = Result<T, NlmError>;

/// The device a model runs on: `cpu`, or `cuda` (the first GPU) in a build with the `cuda`
/// feature; anything else, or a GPU the build or the machine lacks, is a clear error.
pub fn device(name: &str) -> NlmResult<Device> {
    match name {
        "cpu" => Ok(Device::Cpu),
        "cuda" if !cfg!(feature = "cuda") => Err(NlmError::Model(
            "this natstudy was built without GPU support: build it with `--features cuda` (needs the CUDA toolkit)".into(),
        )),
        "cuda" => Device::new_cuda(0)
            .map_err(|e| NlmError::Model(format!("no usable GPU: {e}"))),
        other => Err(NlmError::Model(format!("device `{other}`: cpu or cuda"))),
    }
}

/// A causal language model with its tokenizer.
pub struct CausalLm {
    family: Family,
    model: families::Model,
    tokenizer: tokenizers::Tokenizer,
    /// The longest input: the config's positions (BLOOM states none: 512).
    max_len: usize,
    device: Device,
}

/// One method scored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// Mean negative log-likelihood per predicted token, in nats.
    pub ce_nats: f64,
    /// The tokens scored (after truncation); the first is not predicted.
    pub tokens: usize,
}

impl CausalLm {
    /// Loads a model folder on the CPU.
    pub fn load(dir: &Path) -> NlmResult<CausalLm> {
        Self::load_on(dir, Device::Cpu)
    }

    /// Loads a model folder on a device.
    pub fn load_on(dir: &Path, device: Device) -> NlmResult<CausalLm> {
        let config = config::Config::read(dir)?;
        let tokenizer =
            tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| {
                NlmError::Tokenizer(format!("{}: {e}", dir.join("tokenizer.json").display()))
            })?;
        let vb = load::weights(dir, &device)?;
        let model = families::Model::new(&config, vb)?;
        Ok(CausalLm {
            family: config.family,
            max_len: config.max_len,
            model,
            tokenizer,
            device,
        })
    }

    pub fn family(&self) -> Family {
        self.family
    }

    /// The longest input the model takes, in tokens.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The token ids of a text, without special tokens.
    pub fn tokenize(&self, text: &str) -> NlmResult<Vec<u32>> {
        let enc = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| NlmError::Tokenizer(e.to_string()))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The cross-entropy of a text, truncated to `max_len` tokens (at most the model's).
    /// A text of fewer than two tokens has none (`None`).
    pub fn cross_entropy(&self, text: &str, max_len: Option<usize>) -> NlmResult<Option<Scored>> {
        let mut ids = self.tokenize(text)?;
        ids.truncate(max_len.unwrap_or(self.max_len).min(self.max_len));
        self.cross_entropy_of_ids(&ids)
    }

    /// The cross-entropy of token ids (already truncated).
    pub fn cross_entropy_of_ids(&self, ids: &[u32]) -> NlmResult<Option<Scored>> {
        if ids.len() < 2 {
            return Ok(None);
        }
        let input = Tensor::new(ids, &self.device)?;
        let logits = self.model.forward(&input)?.to_dtype(DType::F32)?;
        let t = ids.len();
        let lp = candle_nn::ops::log_softmax(&logits.narrow(0, 0, t - 1)?, D::Minus1)?;
        let next = Tensor::new(&ids[1..], &self.device)?.unsqueeze(1)?;
        let picked = lp.gather(&next, 1)?.squeeze(1)?.to_dtype(DType::F64)?;
        let sum: f64 = picked.sum_all()?.to_scalar()?;
        Ok(Some(Scored {
            ce_nats: -sum / (t - 1) as f64,
            tokens: t,
        }))
    }
}
