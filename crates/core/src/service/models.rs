//! The models directory as one instance holds it: each model file is loaded once and shared by
//! every score job and generator preview that names it (a second caller waits for the first
//! load instead of loading again), and at most a few models stay resident; a model is known by
//! its name, modification time and size, so a replaced file is loaded afresh. The per-study
//! quota and the deletion of uploaded models live here too.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::neural::NeuralLoader;
use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::Db;
use natstudy_engine::lm::Scorer;
use natstudy_types::ModelFile;
use natstudy_vocab::ids::{StudyId, UserId};

type Key = (String, SystemTime, u64);
type Cell = Arc<tokio::sync::OnceCell<Arc<Scorer>>>;

/// Models loaded once per instance, shared (see the module's doc).
#[derive(Debug)]
pub struct ModelCache {
    dir: PathBuf,
    capacity: usize,
    entries: Mutex<VecDeque<(Key, Cell)>>,
    loads: AtomicU64,
    sizes: WeightSizes,
    neural: NeuralLoader,
}

impl ModelCache {
    /// A cache of the models in `dir` keeping at most `capacity` resident.
    pub fn new(dir: PathBuf, capacity: usize) -> ModelCache {
        ModelCache {
            dir,
            capacity: capacity.max(1),
            entries: Mutex::new(VecDeque::new()),
            loads: AtomicU64::new(0),
            sizes: WeightSizes::default(),
            neural: NeuralLoader::default(),
        }
    }

    /// This cache with `load` reading its neural models for scoring jobs in place of
    /// [`natstudy_nlm::CausalLm::load_until`] (see [`NeuralLoader`]).
    pub fn with_neural_loader(mut self, load: NeuralLoader) -> ModelCache {
        self.neural = load;
        self
    }

    /// How this instance reads a neural model for a scoring job.
    pub fn neural_loader(&self) -> &NeuralLoader {
        &self.neural
    }

    /// What each neural model's weights take, as read from its headers (see [`WeightSizes`]).
    pub fn sizes(&self) -> &WeightSizes {
        &self.sizes
    }

    /// The models directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many times a model file was read (each model once while it stays resident).
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// The model of that file name, loading it if no one has yet.
    pub async fn get(&self, name: &str) -> ServiceResult<Arc<Scorer>> {
        let path = self.dir.join(name);
        let meta = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file() && model_kind(&self.dir, name) == Some(ModelKind::NGram))
            .ok_or_else(|| ServiceError::NotFound(format!("model {name}")))?;
        let key: Key = (
            name.to_owned(),
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        );
        let cell = {
            let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            match entries.iter().position(|(k, _)| *k == key) {
                Some(i) => {
                    let e = entries
                        .remove(i)
                        .unwrap_or_else(|| (key.clone(), Cell::default()));
                    let cell = e.1.clone();
                    entries.push_front(e);
                    cell
                }
                None => {
                    // an older version of the same file goes; the least recent beyond capacity
                    entries.retain(|(k, _)| k.0 != key.0);
                    let cell = Cell::default();
                    entries.push_front((key.clone(), cell.clone()));
                    entries.truncate(self.capacity);
                    cell
                }
            }
        };
        let loaded = cell
            .get_or_try_init(|| async {
                self.loads.fetch_add(1, Ordering::Relaxed);
                load_model(&path).await.map(Arc::new)
            })
            .await
            .cloned();
        if loaded.is_err() {
            self.forget(name);
        }
        loaded
    }

    /// Drops a model (deleted, or failed to load): the next caller reads the file again.
    pub fn forget(&self, name: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|(k, _)| k.0 != name);
    }
}

/// The scoring panel: the models in the folder (which this study uploaded, which the viewer
/// may delete), the study's quota, and its jobs.
pub async fn view(
    db: &Db,
    models: &Arc<ModelCache>,
    study: StudyId,
    admin: bool,
    quota: u64,
) -> ServiceResult<natstudy_types::ScoringView> {
    let cache = models.clone();
    let (mut models, memory_free) = tokio::task::spawn_blocking(move || {
        (
            list(cache.dir(), cache.sizes()),
            super::neural::memory_free(),
        )
    })
    .await?;
    let mine = store::models::names_of(db, study).await?;
    for m in &mut models {
        m.this_study = mine.contains(&m.name);
        m.deletable = m.this_study || admin;
    }
    Ok(natstudy_types::ScoringView {
        quota_used: store::models::bytes_of(db, study).await?,
        quota,
        models,
        jobs: super::jobs::list(db, study).await?,
        memory_free,
    })
}

/// Records an uploaded model as the study's, in place of the upload's reservation.
pub async fn uploaded(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    name: &str,
    mut reservation: Reservation,
) -> ServiceResult<()> {
    let bytes = reservation.received;
    store::models::add(db, study, actor, (name, Some(&reservation.key)), bytes).await?;
    reservation.ended = true;
    Ok(())
}

/// How far ahead of what it received an upload reserves quota: one reservation a few
/// megabytes, not one a chunk.
const RESERVE_AHEAD: u64 = 4 << 20;

/// The quota an upload under way holds, in the database, so that uploads in parallel (on any
/// instance) never take the same room: it grows as the bytes arrive ([`Reservation::cover`])
/// and becomes the model's row when the upload is recorded ([`uploaded`]); dropped before,
/// it is released.
pub struct Reservation {
    db: Db,
    study: StudyId,
    key: String,
    quota: u64,
    held: u64,
    received: u64,
    ended: bool,
}

impl Reservation {
    /// A reservation of nothing yet, against the study's `quota`.
    pub async fn start(db: &Db, study: StudyId, quota: u64) -> ServiceResult<Reservation> {
        use rand::RngCore;
        let mut b = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut b);
        let key = store::models::reserve(db, study, &hex::encode(b)).await?;
        Ok(Reservation {
            db: db.clone(),
            study,
            key,
            quota,
            held: 0,
            received: 0,
            ended: false,
        })
    }

    /// Reserves `bytes` at once (a request's declared length, which bounds its file), when the
    /// quota has room for them: the upload then runs without asking again, and uploads in
    /// parallel are served first come, first served instead of each taking part of the room
    /// and all failing. Without room, the upload reserves as its bytes arrive.
    pub async fn ahead(&mut self, bytes: u64) -> ServiceResult<()> {
        if bytes > self.held
            && store::models::grow(&self.db, self.study, &self.key, bytes, self.quota).await?
        {
            self.held = bytes;
        }
        Ok(())
    }

    /// Counts `more` bytes received, reserving room for them (and a little ahead) first:
    /// `false` when the study's quota has no room for them, with what it leaves.
    pub async fn cover(&mut self, more: u64) -> ServiceResult<Result<(), u64>> {
        let received = self.received.saturating_add(more);
        if received > self.held {
            let ahead = received.saturating_add(RESERVE_AHEAD);
            let (db, study, key, quota) = (&self.db, self.study, &self.key, self.quota);
            if store::models::grow(db, study, key, ahead, quota).await? {
                self.held = ahead;
            } else if store::models::grow(db, study, key, received, quota).await? {
                self.held = received;
            } else {
                let used = store::models::bytes_of(db, study).await?;
                return Ok(Err(quota.saturating_sub(used.saturating_sub(self.held))));
            }
        }
        self.received = received;
        Ok(Ok(()))
    }

    /// Ends the reservation of an upload that failed, before its answer is sent (dropped, it
    /// is released a moment later).
    pub async fn release(mut self) {
        self.ended = true;
        if let Err(e) = store::models::release(&self.db, self.study, &self.key).await {
            tracing::warn!(error = %e, key = %self.key, "a model upload's reservation stays until it is stale");
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let (db, study, key) = (self.db.clone(), self.study, std::mem::take(&mut self.key));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store::models::release(&db, study, &key).await {
                    tracing::warn!(error = %e, %key, "a model upload's reservation stays until it is stale");
                }
            });
        }
    }
}

/// Deletes a model file: staff of the study that uploaded it, or an admin (also for a model
/// placed in the folder by hand). Stored scores stay; the file and its row go.
pub async fn delete(
    db: &Db,
    cache: &ModelCache,
    study: StudyId,
    actor: UserId,
    admin: bool,
    name: &str,
) -> ServiceResult<()> {
    let Some(kind) = model_kind(cache.dir(), name) else {
        return Err(ServiceError::NotFound(format!("model {name}")));
    };
    let owner = store::models::owner(db, name).await?;
    let allowed = admin || owner == Some(study);
    if !allowed {
        return Err(ServiceError::Forbidden(format!(
            "model {name} was not uploaded for this study"
        )));
    }
    let path = cache.dir().join(name);
    let removed = match kind {
        // a model folder (placed by hand: only an admin reaches here)
        ModelKind::Neural if path.is_dir() => tokio::fs::remove_dir_all(&path).await,
        _ => tokio::fs::remove_file(&path).await,
    };
    match removed {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if owner.is_none() {
                return Err(ServiceError::NotFound(format!("model {name}")));
            }
        }
        Err(e) => return Err(ServiceError::Internal(e.into())),
    }
    cache.forget(name);
    store::models::remove(db, name, Some(actor), study).await?;
    Ok(())
}

/// Loads a language model file (ARPA or binary) off the async threads, ready to score: a
/// probing file as it lies, any other laid out for probing (one form held, never two).
pub async fn load_model(path: &Path) -> ServiceResult<natstudy_engine::lm::Scorer> {
    let p = path.to_owned();
    tokio::task::spawn_blocking(move || natstudy_engine::lm::binary::load_scorer(&p))
        .await?
        .map_err(|e| ServiceError::Invalid(format!("cannot load {}: {e}", path.display())))
}

/// Checks an uploaded Hugging Face folder as a model natstudy runs (configuration, tokenizer,
/// weight headers; no weights read), off the async threads.
pub async fn check_folder(dir: &Path) -> ServiceResult<()> {
    let d = dir.to_owned();
    tokio::task::spawn_blocking(move || natstudy_nlm::CausalLm::check_folder(&d))
        .await?
        .map(|_| ())
        .map_err(|e| ServiceError::Invalid(e.to_string()))
}

/// Checks an uploaded GGUF file's header as natstudy reads it (bounded: see
/// `natstudy_nlm::gguf::header`; no weights read), off the async threads.
pub async fn check_gguf(path: &Path) -> ServiceResult<()> {
    let p = path.to_owned();
    tokio::task::spawn_blocking(move || natstudy_nlm::gguf::weight_bytes(&p))
        .await?
        .map(|_| ())
        .map_err(|e| ServiceError::Invalid(e.to_string()))
}

/// A model's file name: letters, digits, `-`, `_`, `.`; ending in `.arpa` or `.bin` (n-gram)
/// or `.gguf` (neural).
pub fn valid_name(name: &str) -> bool {
    let ok_chars = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok_chars && (name.ends_with(".arpa") || name.ends_with(".bin") || name.ends_with(".gguf"))
}

/// A neural model's folder name: letters, digits, `-`, `_`, `.`, not starting with a dot.
pub fn valid_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What a model of the models directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// An n-gram model file (ARPA or binary).
    NGram,
    /// A Hugging Face model folder (`config.json`, safetensors, `tokenizer.json`) or a GGUF
    /// file.
    Neural,
}

/// The kind of the model `name` in `dir`, if it is one.
pub fn model_kind(dir: &Path, name: &str) -> Option<ModelKind> {
    let path = dir.join(name);
    if valid_name(name) && path.is_file() {
        Some(if natstudy_nlm::gguf::is_gguf(&path) {
            ModelKind::Neural
        } else {
            ModelKind::NGram
        })
    } else if valid_folder_name(name) && path.join("config.json").is_file() {
        Some(ModelKind::Neural)
    } else {
        None
    }
}

/// What the neural models' weights take in memory, read from their headers
/// ([`natstudy_nlm::weight_bytes`]) once for each version of a model: a model is known by its
/// name and the name, size and modification time of each of its files. A folder's header can be
/// tens of megabytes (the `safetensors` crate reads up to 100 MB), too much to read again each
/// time the scoring panel is shown.
#[derive(Debug, Default)]
pub struct WeightSizes {
    known: Mutex<HashMap<String, (Stamp, Option<u64>)>>,
    reads: AtomicU64,
}

/// The name, size and modification time of each file of a model, by name.
type Stamp = Vec<(std::ffi::OsString, u64, SystemTime)>;

/// The stamp of a model file or folder; `None` where it cannot be read.
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let of = |m: &std::fs::Metadata| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH));
    if !meta.is_dir() {
        let (len, at) = of(&meta);
        return Some(vec![(std::ffi::OsString::new(), len, at)]);
    }
    let mut files: Stamp = std::fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let m = e.metadata().ok().filter(|m| m.is_file())?;
            let (len, at) = of(&m);
            Some((e.file_name(), len, at))
        })
        .collect();
    files.sort();
    Some(files)
}

impl WeightSizes {
    /// The bytes the weights of the neural model `name` in `dir` take once loaded (`None`
    /// where its headers do not say), read again only when one of its files changed: `now`
    /// is its stamp as read just now.
    fn of(&self, dir: &Path, name: &str, now: Stamp) -> Option<u64> {
        let path = dir.join(name);
        let known = |map: &HashMap<String, (Stamp, Option<u64>)>| {
            map.get(name)
                .filter(|(was, _)| *was == now)
                .map(|(_, bytes)| *bytes)
        };
        if let Some(bytes) = known(&self.known.lock().unwrap_or_else(|p| p.into_inner())) {
            return bytes;
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let bytes = natstudy_nlm::weight_bytes(&path).ok();
        let mut map = self.known.lock().unwrap_or_else(|p| p.into_inner());
        // models deleted since are forgotten
        map.retain(|n, _| dir.join(n).exists());
        map.insert(name.to_owned(), (now, bytes));
        bytes
    }

    /// How many times a model's headers were read.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

/// The models in the directory, by name: n-gram files, neural model folders and GGUF files.
pub fn list(dir: &Path, sizes: &WeightSizes) -> Vec<ModelFile> {
    let mut out: Vec<ModelFile> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let kind = model_kind(dir, &name)?;
                    // a folder's files (not below it), read once for its size and its stamp
                    let stamp = stamp(&e.path())?;
                    let bytes = stamp.iter().map(|(_, len, _)| len).sum();
                    let neural = kind == ModelKind::Neural;
                    // its headers only, once for each version of the model
                    let memory = neural.then(|| sizes.of(dir, &name, stamp)).flatten();
                    Some(ModelFile {
                        name,
                        bytes,
                        neural,
                        this_study: false,
                        deletable: false,
                        memory,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARPA: &str =
        "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\t<s>\t0\n-0.5\t</s>\t0\n-0.5\tx\t0\n\n\\end\\\n";

    /// A neural model's headers are read once for the panel and again when one of its files
    /// changes; an n-gram model's never.
    #[test]
    fn weight_sizes_are_read_once_a_version() {
        let dir = tempfile::tempdir().expect("dir");
        let model = dir.path().join("bigcode");
        std::fs::create_dir(&model).expect("mkdir");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nlm/tests/data/bigcode");
        for f in ["config.json", "model.safetensors", "tokenizer.json"] {
            std::fs::copy(data.join(f), model.join(f)).expect("copy");
        }
        let sizes = WeightSizes::default();
        let first = list(dir.path(), &sizes);
        assert_eq!(first.len(), 1);
        let files: u64 = ["config.json", "model.safetensors", "tokenizer.json"]
            .iter()
            .map(|f| std::fs::metadata(model.join(f)).expect("file").len())
            .sum();
        assert_eq!(first[0].bytes, files, "a folder's size is its files'");
        let bytes = first[0].memory.expect("the weights' size");
        assert!(bytes > 0);
        assert_eq!(list(dir.path(), &sizes)[0].memory, Some(bytes));
        assert_eq!(sizes.reads(), 1, "read once");
        std::fs::write(model.join("README.md"), "a new file").expect("write");
        assert_eq!(list(dir.path(), &sizes)[0].memory, Some(bytes));
        assert_eq!(sizes.reads(), 2, "a changed folder is read again");
        std::fs::remove_dir_all(&model).expect("rm");
        assert!(list(dir.path(), &sizes).is_empty());
        std::fs::write(dir.path().join("m.arpa"), ARPA).expect("write");
        assert_eq!(list(dir.path(), &sizes)[0].memory, None, "an n-gram model");
        assert_eq!(sizes.reads(), 2, "an n-gram model's headers are not read");
    }

    /// Two callers at once load a model once; a changed file is loaded again; a broken one is
    /// an error that a later call retries.
    #[tokio::test]
    async fn a_model_is_loaded_once_and_shared() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("m.arpa"), ARPA).expect("write");
        let cache = ModelCache::new(dir.path().to_owned(), 2);
        let (a, b) = tokio::join!(cache.get("m.arpa"), cache.get("m.arpa"));
        let (a, b) = (a.expect("a"), b.expect("b"));
        assert!(Arc::ptr_eq(&a, &b), "one model, shared");
        assert_eq!(cache.loads(), 1);
        cache.get("m.arpa").await.expect("again");
        assert_eq!(cache.loads(), 1, "resident");
        std::fs::write(dir.path().join("m.arpa"), format!("{ARPA}\n")).expect("rewrite");
        cache.get("m.arpa").await.expect("changed");
        assert_eq!(cache.loads(), 2, "a changed file is read again");
        std::fs::write(dir.path().join("bad.arpa"), "nonsense").expect("write");
        assert!(cache.get("bad.arpa").await.is_err());
        assert!(cache.get("bad.arpa").await.is_err());
        assert_eq!(cache.loads(), 4, "a failed load is not kept");
        assert!(matches!(
            cache.get("none.arpa").await,
            Err(ServiceError::NotFound(_))
        ));
        assert!(matches!(
            cache.get("../x.arpa").await,
            Err(ServiceError::NotFound(_))
        ));
    }
}
