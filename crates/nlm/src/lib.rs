//! Neural language models, scored as the published study's tool scores them: a method's text is
//! tokenized without special tokens (`tokenizer.tokenize` then `convert_tokens_to_ids`: no BOS),
//! truncated to the model's length, and its cross-entropy is the mean negative log-likelihood
//! in nats of tokens 2..n given their prefix — transformers' `model(ids, labels=ids).loss`.
//!
//! Models load from a Hugging Face model folder (`config.json`, `*.safetensors` — sharded
//! too — and `tokenizer.json`) or a GGUF file (llama family, quantized). Families: `llama`
//! (CodeLlama: grouped-query attention, `rope_theta`, linear `rope_scaling`), `gpt_neo` (global
//! and local attention layers), `bloom` (ALiBi) and `gpt_bigcode` (StarCoder: multi-query
//! attention), each a forward pass over every position of a batch written here on candle, after
//! transformers' modeling code. Plain data in and out; no web, database or runtime.

mod config;
mod cost;
mod families;
mod folder;
pub mod gguf;
mod guard;
mod load;
pub mod masked;
pub mod tokenizer;

use std::path::Path;

use candle_core::Tensor;

/// Positions whose logits are made at once when scoring (256 × a vocabulary of 32,000 is
/// 33 MB).
const LOGIT_ROWS: usize = 256;

pub use candle_core::Device;
pub use config::Family;
pub use cost::Cost;
pub use families::{with_candle_ops, PANEL_BYTES};
pub use masked::{Fill, MaskedLm};

/// Why a model cannot be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum NlmError {
    /// Shown without any backtrace its text picked up on the way (a reader's error formatted
    /// into it while `RUST_BACKTRACE` was set): every answer is a page's text.
    #[error("{}", without_backtrace(.0))]
    Model(String),
    #[error("tokenizer: {}", without_backtrace(.0))]
    Tokenizer(String),
    /// Shown without the backtrace candle attaches when `RUST_BACKTRACE` is set (a job's
    /// message is a page's text); `Debug` keeps it, for the log.
    #[error("{}", candle_message(.0))]
    Candle(#[from] candle_core::Error),
    /// A load's [`Stop`] said to stop before the model was made of its weights.
    #[error("stopped while the weights loaded")]
    Stopped,
}

/// A candle error's message, the backtraces it holds left out.
fn candle_message(e: &candle_core::Error) -> String {
    use candle_core::Error;
    match e {
        Error::WithBacktrace { inner, .. } => candle_message(inner),
        Error::Context { inner, context } => format!("{context}\n{}", candle_message(inner)),
        Error::WithPath { inner, path } => format!("path: {path:?} {}", candle_message(inner)),
        other => without_backtrace(&other.to_string()),
    }
}

/// `text` without the lines of a backtrace (Rust's form: `   0: frame` and `      at
/// file:line`, and the `stack backtrace:` heading), whatever the environment asked for: a
/// message is shown to people, the log keeps the detail.
pub fn without_backtrace(text: &str) -> String {
    let frame = |l: &str| {
        let t = l.trim_start();
        let indented = t.len() < l.len();
        let numbered = t
            .split_once(": ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        (indented && (numbered || t.starts_with("at ")))
            || t == "stack backtrace:"
            || t.starts_with("note: Some details are omitted")
    };
    if !text.lines().any(frame) {
        return text.to_owned();
    }
    let kept: Vec<&str> = text.lines().filter(|l| !frame(l)).collect();
    kept.join("\n").trim_end().to_owned()
}

/// How far a load has read: bytes of the weights' tensors read, of all the files hold (a
/// GGUF file's as packed there, a folder's as stored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loaded {
    pub read: u64,
    pub of: u64,
}

/// Asked before each tensor a load reads (a large model's load takes minutes), and once more
/// when all are read (`read == of`), told how far the load has read: `true` ends the load with
/// [`NlmError::Stopped`], reading nothing further.
pub type Stop<'a> = &'a (dyn Fn(Loaded) -> bool + Sync);

/// A [`Stop`] that never stops.
pub(crate) const NEVER: Stop<'static> = &|_| false;

#[cfg(test)]
mod tests {
    /// An error's message leaves out the backtraces candle attaches (a job's message is shown
    /// on the study page); its `Debug`, which the log writes, keeps them.
    #[test]
    fn messages_carry_no_backtrace() {
        let backtrace = || Box::new(std::backtrace::Backtrace::force_capture());
        let e = super::NlmError::from(candle_core::Error::WithBacktrace {
            inner: Box::new(candle_core::Error::Context {
                inner: Box::new(candle_core::Error::WithBacktrace {
                    inner: Box::new(candle_core::Error::Msg("no tensor lm_head".into())),
                    backtrace: backtrace(),
                }),
                context: Box::new("loading model.safetensors"),
            }),
            backtrace: backtrace(),
        });
        assert_eq!(
            e.to_string(),
            "loading model.safetensors\nno tensor lm_head"
        );
        // the backtrace's first frame, in the log's form only
        assert!(format!("{e:?}").contains("   0: "), "{e:?}");
        assert!(!e.to_string().contains("   0: "));
    }

    /// A reader's error formatted into a message (as the GGUF header's are) brings candle's
    /// backtrace along when `RUST_BACKTRACE` is set: the message shows none of it.
    #[test]
    fn a_formatted_message_drops_the_backtrace_it_carried() {
        let candle = candle_core::Error::WithBacktrace {
            inner: Box::new(candle_core::Error::Msg(
                "unknown dtype for tensor 37".into(),
            )),
            backtrace: Box::new(std::backtrace::Backtrace::force_capture()),
        };
        let raw = format!("model.gguf: a GGUF header natstudy does not read: {candle}");
        assert!(raw.contains("   0: "), "{raw}");
        let e = super::NlmError::Model(raw);
        assert_eq!(
            e.to_string(),
            "model.gguf: a GGUF header natstudy does not read: unknown dtype for tensor 37"
        );
        let t = super::NlmError::Tokenizer(format!("merges: {candle}"));
        assert_eq!(
            t.to_string(),
            "tokenizer: merges: unknown dtype for tensor 37"
        );
        let plain = "line 1: expected a number\n2: the next";
        assert_eq!(super::without_backtrace("no frames here"), "no frames here");
        assert_eq!(
            super::without_backtrace(plain),
            plain,
            "no frame: kept whole"
        );
    }

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

#[cfg(test)]
mod plan_tests {
    use super::{plan, Batching, CPU_FILLED, CPU_PADDING};

    #[test]
    fn batches_are_shortest_first_and_within_their_bounds() {
        let lengths = [50, 10, 400, 12, 11, 3000, 13];
        let b = Batching {
            sequences: 3,
            positions: 1000,
            scores: usize::MAX,
            workers: 1,
            real_per_pad: 0,
            filled: 0,
        };
        let got = plan(&lengths, b, 4);
        assert_eq!(got, vec![vec![1, 4, 3], vec![6, 0], vec![2], vec![5]]);
        // every index once
        let mut all: Vec<usize> = got.concat();
        all.sort_unstable();
        assert_eq!(all, (0..lengths.len()).collect::<Vec<_>>());
        // a padded position for every 2 real ones at most: 10, 11, 12, 13 pad 6 for 46;
        // 50 with them would pad 154 for 96
        let b = Batching {
            real_per_pad: 2,
            sequences: 8,
            ..b
        };
        assert_eq!(
            plan(&lengths, b, 4),
            vec![vec![1, 4, 3, 6], vec![0], vec![2], vec![5]]
        );
        // one for every 16: 10, 11 pad 1 for 21; 12 would make 3 for 33
        let b = Batching {
            real_per_pad: 16,
            ..b
        };
        assert_eq!(
            plan(&lengths, b, 4),
            vec![vec![1, 4], vec![3, 6], vec![0], vec![2], vec![5]]
        );
    }

    #[test]
    fn attention_scores_bound_long_batches() {
        let b = Batching {
            sequences: 100,
            positions: usize::MAX,
            scores: 2 * 8 * 100 * 100,
            workers: 1,
            real_per_pad: 0,
            filled: 0,
        };
        assert_eq!(plan(&[100, 100, 100], b, 8), vec![vec![0, 1], vec![2]]);
        assert!(plan(&[], b, 8).is_empty());
    }

    #[test]
    fn cpu_batches_leave_every_thread_several() {
        let b = Batching::for_cpu(20, 16, 8);
        assert_eq!((b.sequences, b.workers), (1, 16));
        let b = Batching::for_cpu(2400, 16, 8);
        assert_eq!((b.sequences, b.workers), (8, 16));
        let b = Batching::for_cpu(100, 2, 8);
        assert_eq!(
            (b.sequences, b.workers, b.real_per_pad),
            (8, 2, CPU_PADDING)
        );
    }

    /// Short methods make no tiny batches: 20 methods of 30 tokens on 2 threads are 3 a
    /// batch by count (90 positions) but fill batches to `CPU_FILLED` positions; methods of
    /// scattered short lengths, which the padding bound alone cut into batches of one or
    /// two, fill theirs too; one at a time stays one at a time.
    #[test]
    fn short_methods_fill_their_batches() {
        let short = [30; 20];
        let b = Batching::for_cpu(short.len(), 2, 8);
        assert_eq!(b.sequences, 3);
        let got = plan(&short, b, 9);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got
            .iter()
            .all(|g| g.len() * 30 >= CPU_FILLED || g == got.last().expect("last")));
        assert_eq!(got.concat().len(), 20);
        // scattered lengths (which the padding bound alone cut into batches of one or two):
        // no batch but the last under CPU_FILLED real positions
        let mixed: Vec<usize> = (0..20).map(|i| 30 + i * i).collect();
        let got = plan(&mixed, Batching::for_cpu(20, 2, 8), 9);
        assert!(got.len() >= 4, "{got:?}");
        for g in &got[..got.len() - 1] {
            let real: usize = g.iter().map(|&i| mixed[i]).sum();
            assert!(real >= CPU_FILLED, "{got:?}");
        }
        let one = plan(&short, Batching::for_cpu(20, 2, 1), 9);
        assert!(one.iter().all(|g| g.len() == 1));
    }
}

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

/// The bytes a model's weights take in memory once loaded on the CPU, read from its files'
/// headers without loading a tensor: a folder's tensors as f32 (the type every product runs
/// in, whatever the file stores: a bfloat16 checkpoint doubles), a GGUF file's weights packed
/// plus its norms in f32 and a panel of dequantized tiles per core. The forward
/// pass needs more (its batches are bounded by [`Batching`]): this is the floor, what tells a
/// 7B model in f32 (28 GB) from a machine of 16 GB before anything is read.
pub fn weight_bytes(path: &Path) -> NlmResult<u64> {
    if gguf::is_gguf(path) {
        gguf::weight_bytes(path)
    } else {
        load::f32_bytes(path)
    }
}

/// A causal language model with its tokenizer.
pub struct CausalLm {
    family: Family,
    model: families::Model,
    tokenizer: tokenizer::Tokenizer,
    /// The longest input: the config's positions (BLOOM states none: 512).
    max_len: usize,
    /// Query heads, for the batch planner's bound on attention scores.
    heads: usize,
    /// What a forward pass costs.
    cost: Cost,
    device: Device,
    /// This load among the process's loads: what a [`Prepared`] is checked against.
    id: u64,
}

/// The loads of this process so far, numbering each [`CausalLm`].
static LOADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_load() -> u64 {
    LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One method scored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// Mean negative log-likelihood per predicted token, in nats.
    pub ce_nats: f64,
    /// The tokens scored (after truncation); the first is not predicted.
    pub tokens: usize,
}

/// Texts tokenized and grouped into batches, ready to score ([`CausalLm::prepare`]).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The model that prepared them ([`CausalLm`]'s `id`): its vocabulary, context and cost.
    model: u64,
    ids: Vec<Vec<u32>>,
    batches: Vec<Vec<usize>>,
    work: Vec<u64>,
    workers: usize,
}

impl Prepared {
    /// Each text's share of the work, in multiply-adds ([`Cost`]): its batch's cost split
    /// evenly, padding included; a text longer than the model's context costs what its
    /// truncation does. What the time left of a scoring follows.
    pub fn work(&self) -> &[u64] {
        &self.work
    }

    /// The tokens each text is scored on (after truncation).
    pub fn tokens(&self) -> impl Iterator<Item = usize> + '_ {
        self.ids.iter().map(Vec::len)
    }
}

impl CausalLm {
    /// Loads a model — a Hugging Face folder or a GGUF file — on the CPU.
    pub fn load(dir: &Path) -> NlmResult<CausalLm> {
        Self::load_on(dir, Device::Cpu)
    }

    /// Loads a model — a Hugging Face folder or a GGUF file (its projections packed) — on a
    /// device.
    pub fn load_on(path: &Path, device: Device) -> NlmResult<CausalLm> {
        Self::load_until(path, device, NEVER)
    }

    /// [`CausalLm::load_on`], asking `stop` before each tensor it reads and once all are read,
    /// with the bytes read so far ([`Loaded`]: a job's row shows them): once it says yes, the
    /// load ends with
    /// [`NlmError::Stopped`] (a job stopped while its model loads).
    pub fn load_until(path: &Path, device: Device, stop: Stop) -> NlmResult<CausalLm> {
        Self::load_packed_until(path, device, gguf::Packing::Packed, stop)
    }

    /// [`CausalLm::load_until`], a GGUF file's projections held as `packing` says (a folder
    /// ignores it).
    pub fn load_packed_until(
        path: &Path,
        device: Device,
        packing: gguf::Packing,
        stop: Stop,
    ) -> NlmResult<CausalLm> {
        if gguf::is_gguf(path) {
            Self::gguf(path, device, packing, stop)
        } else {
            Self::folder(path, device, stop)
        }
    }

    /// Loads a GGUF file (the llama family) on a device, its projections held as `packing` says.
    pub fn load_gguf(path: &Path, device: Device, packing: gguf::Packing) -> NlmResult<CausalLm> {
        Self::gguf(path, device, packing, NEVER)
    }

    fn gguf(
        path: &Path,
        device: Device,
        packing: gguf::Packing,
        stop: Stop,
    ) -> NlmResult<CausalLm> {
        let g = gguf::load(path, &device, packing, stop)?;
        Ok(CausalLm {
            family: g.config.family,
            max_len: g.config.max_len,
            heads: g.config.heads,
            cost: Cost::of(&g.config),
            model: families::Model::Llama(families::Llama::new(&g.config, g.weights)?),
            tokenizer: g.tokenizer,
            device,
            id: next_load(),
        })
    }

    /// Loads a Hugging Face model folder on a device.
    pub fn load_folder(dir: &Path, device: Device) -> NlmResult<CausalLm> {
        Self::folder(dir, device, NEVER)
    }

    fn folder(dir: &Path, device: Device, stop: Stop) -> NlmResult<CausalLm> {
        let config = config::Config::read(dir)?;
        let tokenizer = folder::tokenizer(dir)?;
        let vb = load::weights(dir, &device, stop)?;
        let model = families::Model::new(&config, vb)?;
        Ok(CausalLm {
            family: config.family,
            max_len: config.max_len,
            heads: config.heads,
            cost: Cost::of(&config),
            model,
            tokenizer,
            device,
            id: next_load(),
        })
    }

    /// Checks a Hugging Face model folder without loading its weights (what an upload is
    /// judged by): `config.json` names a family natstudy runs, `tokenizer.json` loads, and the
    /// weight files (`model.safetensors`, or every shard the index names) are safetensors files
    /// whose headers describe their bytes, of float tensors. The family and the number of
    /// tensors.
    pub fn check_folder(dir: &Path) -> NlmResult<(Family, usize)> {
        let config = config::Config::read(dir)?;
        folder::tokenizer(dir)?;
        Ok((config.family, load::check(dir)?))
    }

    pub fn family(&self) -> Family {
        self.family
    }

    /// Whether the model runs on the CPU (its batches then run side by side, a thread each).
    pub fn on_cpu(&self) -> bool {
        self.device.is_cpu()
    }

    /// What a forward pass of this model costs.
    pub fn cost(&self) -> Cost {
        self.cost
    }

    /// The longest input the model takes, in tokens.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The token ids of a text, without special tokens.
    pub fn tokenize(&self, text: &str) -> NlmResult<Vec<u32>> {
        self.tokenizer.encode(text, false)
    }

    /// The token ids a text is scored on: tokenized, truncated to `max_len` tokens (at most the
    /// model's).
    pub fn input_ids(&self, text: &str, max_len: Option<usize>) -> NlmResult<Vec<u32>> {
        let mut ids = self.tokenize(text)?;
        ids.truncate(max_len.unwrap_or(self.max_len).min(self.max_len));
        Ok(ids)
    }

    /// The cross-entropy of a text, truncated to `max_len` tokens (at most the model's).
    /// A text of fewer than two tokens has none (`None`).
    pub fn cross_entropy(&self, text: &str, max_len: Option<usize>) -> NlmResult<Option<Scored>> {
        let ids = self.input_ids(text, max_len)?;
        self.cross_entropy_of_ids(&ids)
    }

    /// The cross-entropy of token ids (already truncated).
    pub fn cross_entropy_of_ids(&self, ids: &[u32]) -> NlmResult<Option<Scored>> {
        Ok(self.score_batch(&[ids])?.pop().flatten())
    }

    /// The cross-entropies of several token sequences (each already truncated) in one forward
    /// pass, padded on the right: each the same as scored alone.
    pub fn score_batch(&self, seqs: &[&[u32]]) -> NlmResult<Vec<Option<Scored>>> {
        let t = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        if t < 2 {
            return Ok(vec![None; seqs.len()]);
        }
        if t > self.max_len {
            return Err(NlmError::Model(format!(
                "{t} tokens: the model takes at most {}",
                self.max_len
            )));
        }
        let mut padded = Vec::with_capacity(seqs.len() * t);
        for s in seqs {
            padded.extend_from_slice(s);
            padded.resize(padded.len() + t - s.len(), 0);
        }
        let input = Tensor::from_vec(padded, (seqs.len(), t), &self.device)?;
        let hidden = self.model.hidden(&input)?;
        if let Some(scored) = self.tiled_scores(&hidden, seqs)? {
            return Ok(scored);
        }
        let mut out = Vec::with_capacity(seqs.len());
        for (b, ids) in seqs.iter().enumerate() {
            let n = ids.len();
            if n < 2 {
                out.push(None);
                continue;
            }
            // the logits of positions 0..n-1 predict tokens 1..n, a few hundred positions at
            // a time (a method's logits whole would be positions × vocabulary floats)
            let h = hidden.get(b)?;
            let mut sum = 0f64;
            for from in (0..n - 1).step_by(LOGIT_ROWS) {
                let rows = LOGIT_ROWS.min(n - 1 - from);
                let logits = self.model.logits(&h.narrow(0, from, rows)?)?;
                let losses: Vec<f32> =
                    families::token_losses(&logits, &ids[from + 1..from + 1 + rows])?.to_vec1()?;
                sum += losses.iter().map(|&l| f64::from(l)).sum::<f64>();
            }
            out.push(Some(Scored {
                ce_nats: sum / (n - 1) as f64,
                tokens: n,
            }));
        }
        Ok(out)
    }

    /// The scores of a batch's hidden states `[B, T, hidden]` where the head is held in tiles
    /// on the CPU: every sequence's predicting positions through the head at once, a panel of
    /// the vocabulary at a time ([`families::Proj::tiled_losses`]); `None` elsewhere.
    fn tiled_scores(
        &self,
        hidden: &Tensor,
        seqs: &[&[u32]],
    ) -> NlmResult<Option<Vec<Option<Scored>>>> {
        let mut rows = Vec::with_capacity(seqs.len());
        let mut next = Vec::new();
        for (b, ids) in seqs.iter().enumerate() {
            if ids.len() >= 2 {
                rows.push(hidden.get(b)?.narrow(0, 0, ids.len() - 1)?);
                next.extend_from_slice(&ids[1..]);
            }
        }
        let x = Tensor::cat(&rows, 0)?;
        let Some(losses) = self.model.head().tiled_losses(&x, &next) else {
            return Ok(None);
        };
        let losses = losses?;
        let mut at = 0;
        let scored = seqs
            .iter()
            .map(|ids| {
                let n = ids.len();
                (n >= 2).then(|| {
                    let sum: f64 = losses[at..at + n - 1].iter().sum();
                    at += n - 1;
                    Scored {
                        ce_nats: sum / (n - 1) as f64,
                        tokens: n,
                    }
                })
            })
            .collect();
        Ok(Some(scored))
    }

    /// Scores texts in batches (shortest first, as `plan` groups them), each truncated to
    /// `max_len` tokens (at most the model's): [`CausalLm::prepare`], then
    /// [`CausalLm::score_prepared`].
    pub fn score_texts(
        &self,
        texts: &[&str],
        max_len: Option<usize>,
        batching: Batching,
        done: impl FnMut(&[(usize, Option<Scored>)]) -> bool,
    ) -> NlmResult<()> {
        let prepared = self.prepare(texts, max_len, batching)?;
        self.score_prepared(&prepared, done)
    }

    /// Tokenizes texts, each truncated to `max_len` tokens (at most the model's), and groups
    /// them into batches: the work [`CausalLm::score_prepared`] does, and what it will cost.
    pub fn prepare(
        &self,
        texts: &[&str],
        max_len: Option<usize>,
        batching: Batching,
    ) -> NlmResult<Prepared> {
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.input_ids(t, max_len))
            .collect::<NlmResult<_>>()?;
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let batches = self.plan(&lengths, batching);
        let mut work = vec![0; ids.len()];
        for batch in &batches {
            let longest = batch.iter().map(|&i| lengths[i]).max().unwrap_or(0);
            let each = self.cost.batch(1, longest);
            for &i in batch {
                work[i] = each;
            }
        }
        Ok(Prepared {
            model: self.id,
            ids,
            batches,
            work,
            workers: batching.workers,
        })
    }

    /// Scores texts this model prepared (another model's are refused: their token ids, batches
    /// and work were planned for its vocabulary, context and cost). `done` gets each batch's
    /// scores by the texts' indices as the batch ends, and stops the work by answering `false`.
    ///
    /// On the CPU, `batching.workers` batches run at once, one per thread: the matrix products
    /// of one method are too small to keep many cores busy, the methods of a study are many.
    /// (Elementwise work then runs best with `CANDLE_NUM_THREADS=1`, which `natstudy` sets.)
    pub fn score_prepared(
        &self,
        prepared: &Prepared,
        mut done: impl FnMut(&[(usize, Option<Scored>)]) -> bool,
    ) -> NlmResult<()> {
        let Prepared {
            model,
            ids,
            batches,
            work,
            workers,
        } = prepared;
        if *model != self.id {
            return Err(NlmError::Model(
                "these texts were prepared by another model: prepare them with the one that scores them"
                    .into(),
            ));
        }
        let run = |batch: &[usize]| -> NlmResult<Vec<(usize, Option<Scored>)>> {
            let seqs: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            let scores = self.score_batch(&seqs)?;
            Ok(batch.iter().copied().zip(scores).collect())
        };
        let workers = if self.device.is_cpu() {
            (*workers).clamp(1, batches.len().max(1))
        } else {
            1
        };
        if workers == 1 {
            for batch in batches {
                if !done(&run(batch)?) {
                    break;
                }
            }
            return Ok(());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("nlm-{i}"))
            .build()
            .map_err(|e| NlmError::Model(format!("cannot start {workers} threads: {e}")))?;
        let stop = std::sync::atomic::AtomicBool::new(false);
        // the costliest batch first (`Prepared::work`: padding and attention included): each
        // worker takes the next when it is free, so a long method does not run alone at the
        // end while the others wait, and the threads left over help its products
        let mut order: Vec<usize> = (0..batches.len()).collect();
        order.sort_by_key(|&b| {
            std::cmp::Reverse(
                batches[b]
                    .iter()
                    .map(|&i| work[i])
                    .fold(0u64, u64::saturating_add),
            )
        });
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let (stop, run, batches, order, next) = (&stop, &run, &batches, &order, &next);
            s.spawn(move || {
                use rayon::prelude::*;
                pool.install(|| {
                    (0..workers)
                        .into_par_iter()
                        .for_each_with(tx, |tx, _| loop {
                            let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(&b) = order.get(n) else { break };
                            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                                break;
                            }
                            // the receiver is gone only once it stopped listening
                            let _ = tx.send(run(&batches[b]));
                        })
                })
            });
            for result in rx {
                match result {
                    Ok(scored) if done(&scored) => {}
                    Ok(_) => {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        break;
                    }
                    Err(e) => {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
            Ok(())
        })
    }

    /// Batches of the sequences of these lengths, as `plan` makes them for this model.
    pub fn plan(&self, lengths: &[usize], batching: Batching) -> Vec<Vec<usize>> {
        plan(lengths, batching, self.heads)
    }
}

/// On the CPU, real positions a batch has for each padded one, at least.
pub const CPU_PADDING: usize = 16;

/// On the CPU, real positions a batch of several sequences reaches where it can: a product's
/// rows below which the kernels run far below their speed (and a packed model's weights,
/// dequantized once a batch, cost a larger share).
pub const CPU_FILLED: usize = 256;

/// How many sequences run in one forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// At most this many sequences in a batch.
    pub sequences: usize,
    /// At most this many positions (sequences × the longest), padding included.
    pub positions: usize,
    /// At most this many attention scores (sequences × heads × longest²): what bounds the
    /// memory of long sequences.
    pub scores: usize,
    /// On the CPU, batches run at once (one thread each); memory grows with them.
    pub workers: usize,
    /// At least this many real positions in a batch for each padded one (0: no bound). On
    /// the CPU a padded position costs what a real one does.
    pub real_per_pad: usize,
    /// A batch of fewer real positions than this takes sequences past `sequences`, and a
    /// padded position for every real one (within the other bounds): a product of a few
    /// dozen rows runs far below the kernels' speed, and a packed model dequantizes its
    /// weights once a batch whatever its size.
    pub filled: usize,
}

impl Default for Batching {
    fn default() -> Self {
        Batching {
            sequences: 8,
            positions: 4096,
            scores: 1 << 26,
            workers: 1,
            real_per_pad: 0,
            filled: 0,
        }
    }
}

impl Batching {
    /// For `n` methods on the CPU with `threads` threads: a batch per thread at once,
    /// batches small enough that every thread gets several (`sequences` at most), and at most
    /// one padded position for every [`CPU_PADDING`] real ones (a study's many methods,
    /// sorted by length, pad far less; a handful of methods of scattered lengths ran 5% slower
    /// in batches of 3 than one at a time), but no batch of short methods under
    /// [`CPU_FILLED`] positions while more are left (unless one at a time was asked for).
    pub fn for_cpu(n: usize, threads: usize, sequences: usize) -> Batching {
        let threads = threads.max(1);
        Batching {
            sequences: sequences.clamp(1, n.div_ceil(4 * threads).max(1)),
            workers: threads,
            real_per_pad: CPU_PADDING,
            filled: if sequences > 1 { CPU_FILLED } else { 0 },
            ..Batching::default()
        }
    }
}

/// Groups sequences (by index) into batches: shortest first, so that a batch pads little; each
/// batch within the bounds of `batching`, except a sequence alone, which always runs.
pub fn plan(lengths: &[usize], batching: Batching, heads: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| (lengths[i], i));
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    // the real positions of `current`
    let mut real = 0usize;
    for i in order {
        // sorted: the newcomer is the longest of the batch it joins
        let t = lengths[i].max(1);
        let n = current.len() + 1;
        // sorted: every sequence of the batch pads up to `t`
        let padded = n.saturating_mul(t).saturating_sub(real + t);
        // a batch short of `filled` takes a padded position for every real one
        let filling = real < batching.filled;
        let per_pad = if filling { 1 } else { batching.real_per_pad };
        let fits = (n <= batching.sequences.max(1) || filling)
            && padded.saturating_mul(per_pad) <= real + t
            && n.saturating_mul(t) <= batching.positions
            && n.saturating_mul(heads.max(1))
                .saturating_mul(t)
                .saturating_mul(t)
                <= batching.scores;
        if !fits && !current.is_empty() {
            batches.push(std::mem::take(&mut current));
            real = 0;
        }
        current.push(i);
        real += t;
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}
