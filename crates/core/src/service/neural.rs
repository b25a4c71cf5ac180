//! Scoring a study with a neural causal language model (a Hugging Face model folder or a GGUF
//! file, run by `natstudy-nlm`): each bug's method and each transformation scored as the
//! published tool scores them, in batches of similar lengths, stored as the model's
//! cross-entropies like the n-gram model's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::Db;
use natstudy_engine::formats;
use natstudy_nlm::gguf::Packing;
use natstudy_vocab::ids::{StudyId, UserId};

/// The unit a cross-entropy is stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bits per token (natstudy's default, as for the n-gram model).
    Bits,
    /// Nats per token: transformers' `loss` exactly.
    Nats,
    /// −log10 per token.
    Log10,
}

impl Unit {
    fn of_nats(self, nats: f64) -> f64 {
        match self {
            Unit::Bits => nats / std::f64::consts::LN_2,
            Unit::Nats => nats,
            Unit::Log10 => nats / std::f64::consts::LN_10,
        }
    }
}

/// Whether a path is a neural model: a Hugging Face folder (`config.json`) or a GGUF file.
pub fn is_neural(path: &std::path::Path) -> bool {
    path.join("config.json").is_file() || (natstudy_nlm::gguf::is_gguf(path) && path.is_file())
}

/// The name a model's scores are stored under by default: a folder's name, a file's stem.
pub fn default_name(path: &std::path::Path) -> String {
    let name = if path.is_dir() {
        path.file_name()
    } else {
        path.file_stem()
    };
    name.map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "nlm".into())
}

/// How a study is scored: the unit stored, the longest input, methods per forward pass, and
/// on the CPU the threads (each scoring its own batches; default: every core).
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub unit: Unit,
    pub max_len: Option<usize>,
    pub batch: usize,
    pub threads: Option<usize>,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            unit: Unit::Bits,
            max_len: None,
            batch: 8,
            threads: None,
        }
    }
}

impl Run {
    /// The batches for `n` methods on this model.
    pub fn batching(&self, model: &natstudy_nlm::CausalLm, n: usize) -> natstudy_nlm::Batching {
        if model.on_cpu() {
            let threads = self
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get()));
            natstudy_nlm::Batching::for_cpu(n, threads, self.batch)
        } else {
            natstudy_nlm::Batching {
                sequences: self.batch.max(1),
                ..Default::default()
            }
        }
    }
}

/// What scoring did: methods scored (a method of fewer than two tokens has no score) and
/// tokens run through the model.
pub struct NeuralScored {
    pub methods: usize,
    pub tokens: u64,
    pub rows: Vec<formats::results::CeRecord>,
}

/// Loads a model (a folder or a GGUF file) off the async threads, on the CPU.
pub async fn load(dir: &std::path::Path) -> ServiceResult<natstudy_nlm::CausalLm> {
    load_on(dir, "cpu").await
}

/// Loads a model (a folder or a GGUF file) off the async threads, on a device (`cpu` or
/// `cuda`). On the CPU a model whose weights do not fit in the memory free is refused before
/// a tensor is read ([`check_memory`]); loads run one at a time, so that each is judged
/// against the memory the one before it left.
pub async fn load_on(dir: &std::path::Path, device: &str) -> ServiceResult<natstudy_nlm::CausalLm> {
    let device = natstudy_nlm::device(device).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    checked_load(dir, device, &NEVER, |d, device| {
        natstudy_nlm::CausalLm::load_packed_until(d, device, Packing::Packed, &|_| false)
    })
    .await
}

/// [`load`] for a job that may be stopped meanwhile, read by `loader` (the instance's
/// [`NeuralLoader`]): its `counters`' stop flag is read while
/// the loads before this one run (every [`STOP_POLL`]) and before each tensor, when the bytes
/// read so far go into the counters ([`super::jobs::Counters::loading`]); once the flag is set,
/// the load ends with [`super::jobs::stopped`], having read nothing further.
pub async fn load_until(
    dir: &std::path::Path,
    counters: &super::jobs::Counters,
    loader: &NeuralLoader,
) -> ServiceResult<natstudy_nlm::CausalLm> {
    let (c, loader) = (counters.clone(), loader.clone());
    let lm = checked_load(
        dir,
        natstudy_nlm::Device::Cpu,
        &counters.stop,
        move |d, device| {
            loader.load(d, device, &|l| {
                c.loading(l.read, l.of);
                c.stopping()
            })
        },
    )
    .await?;
    Ok(lm)
}

/// How this instance reads a neural model for a scoring job: [`natstudy_nlm::CausalLm::load_until`],
/// asking its [`natstudy_nlm::Stop`] before each tensor. The tests put a load that pauses at a
/// tensor in its place ([`super::models::ModelCache::with_neural_loader`]), to stop a whole job part-way
/// through reading its weights.
#[derive(Clone)]
pub struct NeuralLoader(std::sync::Arc<NeuralLoad>);

/// A neural model's load, as [`NeuralLoader`] holds it.
type NeuralLoad = dyn Fn(
        &std::path::Path,
        natstudy_nlm::Device,
        natstudy_nlm::Stop,
    ) -> natstudy_nlm::NlmResult<natstudy_nlm::CausalLm>
    + Send
    + Sync;

impl NeuralLoader {
    /// A loader that reads with `load`.
    pub fn new(
        load: impl Fn(
                &std::path::Path,
                natstudy_nlm::Device,
                natstudy_nlm::Stop,
            ) -> natstudy_nlm::NlmResult<natstudy_nlm::CausalLm>
            + Send
            + Sync
            + 'static,
    ) -> NeuralLoader {
        NeuralLoader(std::sync::Arc::new(load))
    }

    /// Loads the model at `path` on `device`, asking `stop` before each tensor.
    pub fn load(
        &self,
        path: &std::path::Path,
        device: natstudy_nlm::Device,
        stop: natstudy_nlm::Stop,
    ) -> natstudy_nlm::NlmResult<natstudy_nlm::CausalLm> {
        (self.0)(path, device, stop)
    }
}

impl Default for NeuralLoader {
    fn default() -> Self {
        NeuralLoader(std::sync::Arc::new(|path, device, stop| {
            natstudy_nlm::CausalLm::load_packed_until(path, device, Packing::Packed, stop)
        }))
    }
}

impl std::fmt::Debug for NeuralLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NeuralLoader")
    }
}

/// Held while a neural model loads (see [`load_on`]).
static LOADING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A stop flag nobody sets, for loads that cannot be stopped.
static NEVER: AtomicBool = AtomicBool::new(false);

/// How often a load waiting for the loads before it reads its stop flag.
pub const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Loads a neural model with `load` off the async threads, one load at a time, after
/// [`check_memory`]; a loader's error names the path. While the loads before this one run,
/// `stop` is read every [`STOP_POLL`]: once set, this load ends with
/// [`super::jobs::stopped`] without waiting for them (a job stopped while another job's
/// model loads for minutes).
pub async fn checked_load<T: Send + 'static>(
    dir: &std::path::Path,
    device: natstudy_nlm::Device,
    stop: &AtomicBool,
    load: impl FnOnce(&std::path::Path, natstudy_nlm::Device) -> natstudy_nlm::NlmResult<T>
        + Send
        + 'static,
) -> ServiceResult<T> {
    let d = dir.to_owned();
    let _one_at_a_time = loading_turn(stop).await.ok_or_else(super::jobs::stopped)?;
    tokio::task::spawn_blocking(move || {
        check_memory(&d, &device)?;
        load(&d, device).map_err(|e| match e {
            natstudy_nlm::NlmError::Stopped => super::jobs::stopped(),
            e => {
                // the message is the page's; the log has the rest (a backtrace, if any)
                tracing::warn!(error = ?e, model = %d.display(), "a model failed to load");
                ServiceError::Invalid(format!("cannot load {}: {e}", d.display()))
            }
        })
    })
    .await?
}

/// Waits for the loads before this one to end, keeping its place in the queue, and holds
/// [`LOADING`]; `None` once `stop` is set meanwhile.
async fn loading_turn(stop: &AtomicBool) -> Option<tokio::sync::MutexGuard<'static, ()>> {
    let turn = LOADING.lock();
    tokio::pin!(turn);
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        if let Ok(held) = tokio::time::timeout(STOP_POLL, &mut turn).await {
            return Some(held);
        }
    }
}

/// Refuses, before anything is read, a model whose weights on the CPU
/// ([`natstudy_nlm::weight_bytes`]: f32, or a GGUF file's packed size) exceed the memory this
/// machine — or the control group it runs in, a container's limit — has free: loading it would
/// have the operating system end the process, the web server with it. On a GPU the weights
/// are the GPU's memory, which candle's allocation errors report.
pub fn check_memory(path: &std::path::Path, device: &natstudy_nlm::Device) -> ServiceResult<()> {
    if !device.is_cpu() {
        return Ok(());
    }
    let weights = natstudy_nlm::weight_bytes(path)
        .map_err(|e| ServiceError::Invalid(format!("cannot load {}: {e}", path.display())))?;
    match memory_free() {
        Some(free) => fits(path, weights, free),
        None => Ok(()),
    }
}

/// Whether weights of `weights` bytes fit in `free` bytes; the refusal says what would help.
pub fn fits(path: &std::path::Path, weights: u64, free: u64) -> ServiceResult<()> {
    if weights <= free {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / 1e9;
    let (held, instead) = if natstudy_nlm::gguf::is_gguf(path) {
        (
            "packed as the file holds them",
            "a more quantized file (Q4_0)",
        )
    } else {
        (
            "in f32, the type they are computed in",
            "a GGUF file of it (a Q4_0 7B model takes about 4 GB)",
        )
    };
    Err(ServiceError::Invalid(format!(
        "cannot load {}: its weights take {:.1} GB of memory on the CPU ({held}), and this \
         machine has {:.1} GB free — take a smaller model, or {instead}",
        path.display(),
        gb(weights),
        gb(free)
    )))
}

/// The memory free for a model: what the machine has available (memory the kernel can give
/// without swapping out what runs, page cache included, plus free swap), bounded by the
/// control group's room where it has a limit ([`Memory::free`]). `None` where the system does
/// not say.
pub fn memory_free() -> Option<u64> {
    let mut s = sysinfo::System::new();
    s.refresh_memory();
    Memory {
        available: s.available_memory(),
        free_swap: s.free_swap(),
        total: s.total_memory(),
        group: s
            .cgroup_limits()
            .map(|g| (g.total_memory, g.rss, g.free_swap)),
    }
    .free()
}

/// What the system says of its memory, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// The machine's available memory (free, and cache the kernel can reclaim).
    pub available: u64,
    pub free_swap: u64,
    /// The machine's memory.
    pub total: u64,
    /// The control group's limit (the machine's memory where it has none), resident memory
    /// and free swap.
    pub group: Option<(u64, u64, u64)>,
}

impl Memory {
    /// The machine's available memory and free swap; where the process runs in a control
    /// group whose limit is below the machine's memory (a container), at most that limit less
    /// the group's resident memory, plus its free swap (the group's cache, counted in its
    /// usage, is the kernel's to reclaim).
    pub fn free(self) -> Option<u64> {
        let machine = self.available.checked_add(self.free_swap)?;
        if machine == 0 {
            return None;
        }
        Some(match self.group {
            Some((limit, resident, swap)) if limit < self.total => {
                machine.min(limit.saturating_sub(resident).saturating_add(swap))
            }
            _ => machine,
        })
    }
}

/// Scores every bug and transformation of the study and stores the cross-entropies under
/// `name`, replacing earlier ones. `start` is told, once the methods are tokenized, how many
/// there are and their work in all (multiply-adds: [`natstudy_nlm::Prepared::work`], what
/// the time a method takes follows); `progress` gets the tokens and work of each method
/// scored and says whether to go on: once it says no, the scoring stops after the batch
/// under way and stores nothing.
pub async fn score_study(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    model: Arc<natstudy_nlm::CausalLm>,
    name: &str,
    run: Run,
    start: impl FnOnce(u64, u64) + Send + 'static,
    progress: Arc<dyn Fn(u64, u64) -> bool + Send + Sync>,
) -> ServiceResult<NeuralScored> {
    formats::results::check_name(name)
        .map_err(|why| ServiceError::Invalid(format!("model name: {why}")))?;
    let targets = store::analysis::sources(db, study).await?;
    let owned = name.to_owned();
    let (rows, tokens) = tokio::task::spawn_blocking(move || -> ServiceResult<_> {
        let texts: Vec<&str> = targets.iter().map(|(_, text)| text.as_str()).collect();
        let mut scores = vec![None; texts.len()];
        let mut tokens = 0u64;
        let batching = run.batching(&model, texts.len());
        let invalid = |e: natstudy_nlm::NlmError| ServiceError::Invalid(e.to_string());
        let prepared = model
            .prepare(&texts, run.max_len, batching)
            .map_err(invalid)?;
        let work = prepared.work();
        start(
            texts.len() as u64,
            work.iter().fold(0u64, |a, &b| a.saturating_add(b)),
        );
        let mut go_on = true;
        model
            .score_prepared(&prepared, |batch| {
                for (i, s) in batch {
                    let n = s.map_or(0, |s| s.tokens as u64);
                    tokens += n;
                    scores[*i] = *s;
                    go_on &= progress(n, work[*i]);
                }
                go_on
            })
            .map_err(invalid)?;
        if !go_on {
            return Err(super::jobs::stopped());
        }
        // a method of fewer than two tokens has no score
        let rows = targets
            .iter()
            .zip(scores)
            .filter_map(|((target, _), s)| {
                s.map(|s| formats::results::CeRecord {
                    model: owned.clone(),
                    target: target.clone(),
                    cross_entropy: run.unit.of_nats(s.ce_nats),
                })
            })
            .collect::<Vec<_>>();
        Ok((rows, tokens))
    })
    .await??;
    crate::domain::score::checked(&rows).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let methods = store::imports::replace_ce(db, study, actor, name, &rows).await?;
    Ok(NeuralScored {
        methods,
        tokens,
        rows,
    })
}

/// A masked language model (CodeBERT and the like) proposing RenameVariable-2's names: every
/// occurrence of the variable masked, the candidates ranked by their log-probabilities summed
/// over the masks; the transformation engine keeps the first valid, unused identifier.
pub struct NameModel(pub natstudy_nlm::MaskedLm);

/// Proposals a masked model offers per variable.
const PROPOSALS: usize = 50;

impl natstudy_engine::transform::NameScorer for NameModel {
    fn score(&self, _method_source: &str) -> f64 {
        0.0
    }

    fn propose(&self, masked_method: &str, _mask: &str) -> Vec<String> {
        let Ok(fills) = self.0.fill(masked_method) else {
            return Vec::new();
        };
        let Some(first) = fills.first() else {
            return Vec::new();
        };
        let mut total = vec![0f64; first.logp.len()];
        for f in &fills {
            for (t, p) in total.iter_mut().zip(&f.logp) {
                *t += f64::from(*p);
            }
        }
        let mut order: Vec<usize> = (0..total.len()).collect();
        order.sort_by(|a, b| total[*b].total_cmp(&total[*a]).then(a.cmp(b)));
        order
            .into_iter()
            .filter_map(|id| self.0.decode(id as u32))
            // a whole word: one leading space at most, nothing else around it
            .map(|t| t.strip_prefix(' ').unwrap_or(&t).to_owned())
            .filter(|t| !t.is_empty() && !t.contains(char::is_whitespace))
            .take(PROPOSALS)
            .collect()
    }
}

/// Loads a masked model folder off the async threads.
pub async fn load_masked(dir: &std::path::Path) -> ServiceResult<NameModel> {
    checked_load(dir, natstudy_nlm::Device::Cpu, &NEVER, |d, _| {
        natstudy_nlm::MaskedLm::load(d)
    })
    .await
    .map(NameModel)
}

#[cfg(test)]
mod tests {
    use super::Memory;

    const GB: u64 = 1_000_000_000;

    #[test]
    fn memory_free_is_the_machines_unless_a_group_limits_it() {
        let machine = Memory {
            available: 20 * GB,
            free_swap: 2 * GB,
            total: 32 * GB,
            group: None,
        };
        assert_eq!(machine.free(), Some(22 * GB));
        // a group without a limit (reported as the machine's memory) whose usage counts
        // the page cache: the machine's figure stands
        let unlimited = Memory {
            group: Some((32 * GB, 3 * GB, 0)),
            ..machine
        };
        assert_eq!(unlimited.free(), Some(22 * GB));
        // a container of 8 GB holding 3 GB resident: 5 GB, plus its swap
        let container = Memory {
            group: Some((8 * GB, 3 * GB, GB)),
            ..machine
        };
        assert_eq!(container.free(), Some(6 * GB));
        // a group's room never exceeds what the machine has
        let busy = Memory {
            available: 4 * GB,
            free_swap: 0,
            group: Some((16 * GB, GB, 0)),
            ..machine
        };
        assert_eq!(busy.free(), Some(4 * GB));
        // a system that says nothing
        let silent = Memory {
            available: 0,
            free_swap: 0,
            total: 0,
            group: None,
        };
        assert_eq!(silent.free(), None);
    }

    #[test]
    fn a_model_too_big_is_refused_with_its_size_and_the_memory_free() {
        let path = std::path::Path::new("models/codellama-7b");
        assert!(super::fits(path, 27 * GB, 27 * GB).is_ok());
        let e = super::fits(path, 26_953_670_656, 15_600_000_000)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("cannot load models/codellama-7b: its weights take 27.0 GB")
                && e.contains("(in f32, the type they are computed in)")
                && e.contains("has 15.6 GB free")
                && e.contains("or a GGUF file of it"),
            "{e}"
        );
        let gguf = std::path::Path::new("models/codellama-7b.Q8_0.gguf");
        let e = super::fits(gguf, 7_200_000_000, 5_000_000_000)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("take 7.2 GB of memory on the CPU (packed as the file holds them)")
                && e.contains("or a more quantized file (Q4_0)"),
            "{e}"
        );
    }
}
