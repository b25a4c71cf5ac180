//! Scoring a study with a language model: the models directory, loading model files
//! (untrusted: readers bounded by the bytes they read), scoring every method on all cores,
//! storing the cross-entropies, and the background job that does it for the study page.

use std::path::Path;
use std::sync::Arc;

use super::models::{model_kind, ModelKind};
use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::Db;
use natstudy_engine::formats;
use natstudy_vocab::ids::{JobId, StudyId, UserId};

/// What scoring a study did.
pub struct Scored {
    pub methods: usize,
    pub tokens: u64,
}

/// Scores every bug and transformation of a study with a model (on all cores) and stores the
/// cross-entropies as that model's CE scores, replacing earlier ones. `start` is told how many
/// methods there are; `progress` is called once per method scored and says whether to go on:
/// once it says no, the scoring stops after the methods under way and nothing is stored.
pub async fn score_study(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    model: Arc<natstudy_engine::lm::Scorer>,
    name: &str,
    opts: natstudy_engine::lm::tokenize::TokenizeOptions,
    log10: bool,
    start: impl FnOnce(u64),
    progress: std::sync::Arc<dyn Fn() -> bool + Send + Sync>,
) -> ServiceResult<Scored> {
    formats::results::check_name(name)
        .map_err(|why| ServiceError::Invalid(format!("model name: {why}")))?;
    let targets = store::analysis::sources(db, study).await?;
    start(targets.len() as u64);
    let scored = tokio::task::spawn_blocking(move || {
        natstudy_engine::lm::score::score_many(&model, &targets, opts, log10, &*progress)
    })
    .await?;
    let Some((scores, tokens)) = scored else {
        return Err(super::jobs::stopped());
    };
    let rows: Vec<formats::results::CeRecord> = scores
        .into_iter()
        .map(|(target, ce)| formats::results::CeRecord {
            model: name.to_owned(),
            target,
            cross_entropy: ce,
        })
        .collect();
    crate::domain::score::checked(&rows).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let methods = store::imports::replace_ce(db, study, actor, name, &rows).await?;
    Ok(Scored { methods, tokens })
}

/// The most a CPU core is taken to compute for the up-front estimate of a neural scoring: an
/// upper bound (the fastest kernels measured here run at a fraction of it), so that only work
/// that could not end within the budget on any CPU is refused.
const MAX_FLOPS_A_CORE: f64 = 200e9;
/// The most bytes of source one token is taken to stand for (code tokenizers average 3 to 4).
const MAX_BYTES_A_TOKEN: f64 = 8.0;

/// The least time a neural scoring takes on `cores`: `source_bytes` of methods, a token per
/// [`MAX_BYTES_A_TOKEN`] bytes at most, each through every parameter once (a multiply-add,
/// two operations) at [`MAX_FLOPS_A_CORE`]; the parameters from the weights' bytes (f32: 4 a
/// parameter; `packed`, a GGUF file: at most 8.5 bits a parameter, Q8_0's).
pub fn least_seconds(weight_bytes: u64, packed: bool, source_bytes: u64, cores: usize) -> f64 {
    let params = if packed {
        weight_bytes as f64 * 8.0 / 8.5
    } else {
        weight_bytes as f64 / 4.0
    };
    let tokens = source_bytes as f64 / MAX_BYTES_A_TOKEN;
    2.0 * params * tokens / (MAX_FLOPS_A_CORE * cores.max(1) as f64)
}

/// Refuses, in words and before a job is made, a neural scoring that could not end within
/// `budget` ([`least_seconds`] on this machine's cores): the study page's jobs run within
/// [`super::jobs::JOB_BUDGET`]; the command line's `lm score` has none. An n-gram model, a
/// model whose headers cannot be read or that does not fit in memory (its job says why),
/// passes.
pub async fn admits(
    db: &Db,
    models: &Path,
    study: StudyId,
    model: &str,
    budget: std::time::Duration,
) -> ServiceResult<()> {
    if model_kind(models, model) != Some(ModelKind::Neural) {
        return Ok(());
    }
    let path = models.join(model);
    // the headers' reads and the memory's, off the request's thread
    let read = path.clone();
    let held = tokio::task::spawn_blocking(move || {
        let weights = natstudy_nlm::weight_bytes(&read).ok()?;
        // a model this machine cannot hold: its job refuses it first, saying what it needs
        super::neural::check_memory(&read, &natstudy_nlm::Device::Cpu)
            .ok()
            .map(|()| weights)
    })
    .await?;
    let Some(weights) = held else {
        return Ok(());
    };
    let bytes = u64::try_from(store::analysis::source_chars(db, study).await?).unwrap_or(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let least = least_seconds(weights, natstudy_nlm::gguf::is_gguf(&path), bytes, cores);
    if least > budget.as_secs_f64() {
        return Err(ServiceError::Invalid(format!(
            "scoring the study's {} KiB of methods with {model} takes at least {:.1} h on this machine's {cores} cores, over a job's time budget of {}: score it with `natstudy lm score` on the command line (no budget), on a GPU (`--device cuda`) or with a smaller model",
            bytes / 1024,
            least / 3600.0,
            super::jobs::budget_words(budget)
        )));
    }
    Ok(())
}

/// The study's cross-entropies under one model's name.
pub async fn ce_of_model(
    db: &Db,
    study: StudyId,
    name: &str,
) -> ServiceResult<Vec<formats::results::CeRecord>> {
    Ok(store::analysis::ce_of_model(db, study, name).await?)
}

/// Why a scoring job failed, as the study page shows it to researchers: the model by its
/// file name, never the server's path to it; an internal error by that word only (the log
/// keeps the detail).
pub fn public_reason(e: &anyhow::Error, path: &Path) -> String {
    match e.downcast_ref::<ServiceError>() {
        None | Some(ServiceError::Internal(_)) => {
            "internal error: the server's log has the details".into()
        }
        Some(other) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            natstudy_nlm::without_backtrace(&other.to_string())
                .replace(&path.display().to_string(), &name)
        }
    }
}

/// Scores every bug and transformation of the study with the model and stores the CE scores
/// under the model's name (its file stem), reporting progress in the job's row.
pub async fn run_scoring(
    db: Db,
    job: JobId,
    study: StudyId,
    actor: Option<UserId>,
    (models, model): (Arc<super::models::ModelCache>, String),
    log10: bool,
) {
    let started = std::time::Instant::now();
    let path = models.dir().join(&model);
    let counters = super::jobs::Counters::default();
    let result = match model_kind(models.dir(), &model) {
        Some(ModelKind::Neural) => {
            score_neural(&db, (job, &counters), study, actor, (&models, &path), log10).await
        }
        _ => {
            score(
                &db,
                (job, &counters),
                study,
                actor,
                (&models, &model),
                log10,
            )
            .await
        }
    };
    let (state, message) = match result {
        Ok((methods, tokens)) => (
            store::JobState::Done,
            format!(
                "scored {methods} methods ({tokens} tokens) in {:.1} s",
                started.elapsed().as_secs_f64()
            ),
        ),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), %job, "scoring failed");
            counters.ended_by(public_reason(&e, &path))
        }
    };
    if let Err(e) = crate::store::jobs::finish(&db, job, state, &message).await {
        tracing::error!(error = %e, %job, "cannot record the end of a job");
    }
}

/// A neural model folder's scoring job: loaded for the job, every method scored, progress
/// in the job's row.
async fn score_neural(
    db: &Db,
    (job, counters): (JobId, &super::jobs::Counters),
    study: StudyId,
    actor: Option<UserId>,
    (models, path): (&super::models::ModelCache, &Path),
    log10: bool,
) -> anyhow::Result<(usize, u64)> {
    let name = super::neural::default_name(path);
    // a large model loads for minutes: the job's row is read meanwhile, and a stop asked
    // ends the load before its next tensor
    let load = super::neural::load_until(path, counters, models.neural_loader());
    let lm = Arc::new(super::jobs::with_progress(db, job, counters, load).await?);
    // a stop asked after the last read of the row scores nothing
    if super::jobs::stop_asked(db, job, counters).await {
        anyhow::bail!("stopped before scoring");
    }
    let (begin, step) = (counters.clone(), counters.clone());
    let unit = if log10 {
        super::neural::Unit::Log10
    } else {
        super::neural::Unit::Bits
    };
    let work = super::neural::score_study(
        db,
        study,
        actor,
        lm,
        &name,
        super::neural::Run {
            unit,
            ..Default::default()
        },
        move |methods, work| begin.begin(methods, work),
        Arc::new(move |tokens, work| {
            step.step(tokens, work);
            !step.stopping()
        }),
    );
    let scored =
        super::jobs::with_progress_to_the_end(db, job, counters, work, |s| s.methods as u64)
            .await?;
    Ok((scored.methods, scored.tokens))
}

async fn score(
    db: &Db,
    (job, counters): (JobId, &super::jobs::Counters),
    study: StudyId,
    actor: Option<UserId>,
    (models, file): (&super::models::ModelCache, &str),
    log10: bool,
) -> anyhow::Result<(usize, u64)> {
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ngram".into());
    let model = models.get(file).await?;
    if super::jobs::stop_asked(db, job, counters).await {
        anyhow::bail!("stopped before scoring");
    }
    let (begin, step) = (counters.clone(), counters.clone());
    let work = score_study(
        db,
        study,
        actor,
        model,
        &name,
        Default::default(),
        log10,
        move |n| begin.begin(n, 0),
        Arc::new(move || {
            step.step(0, 0);
            !step.stopping()
        }),
    );
    let scored =
        super::jobs::with_progress_to_the_end(db, job, counters, work, |s| s.methods as u64)
            .await?;
    Ok((scored.methods, scored.tokens))
}

/// The study's method sources (each bug's original, each item's transformed), keyed by bug or
/// item: what a language model's training corpus must leave out to score the study fairly.
pub async fn study_sources(db: &Db, study: StudyId) -> ServiceResult<Vec<(String, String)>> {
    Ok(crate::store::analysis::sources(db, study).await?)
}

#[cfg(test)]
mod tests {
    use super::super::models::valid_name;
    use super::{public_reason, ServiceError};
    use std::path::Path;

    #[test]
    fn a_failed_job_names_the_model_not_its_path() {
        let path = Path::new("./natstudy-data/models/broken.arpa");
        let e = ServiceError::Invalid(format!("cannot load {}: bad header", path.display()));
        assert_eq!(
            public_reason(&e.into(), path),
            "cannot load broken.arpa: bad header"
        );
        let internal = ServiceError::Internal(anyhow::anyhow!("disk at /srv/x failed"));
        assert!(!public_reason(&internal.into(), path).contains("/srv"));
        assert!(!public_reason(&anyhow::anyhow!("/srv/y"), path).contains("/srv"));
    }

    /// The least time of a neural scoring: the README's 7B model in f32 (28 GB) on its study of
    /// 600,000 tokens (2.4 MB of methods; the bound counts a token per 8 bytes) on 2 cores is at
    /// least 2.9 h (about 5.5 h measured at best): admitted under 12 h; a 70B model on the same
    /// study is not; a packed file counts more parameters a byte.
    #[test]
    fn a_neural_scoring_is_estimated_from_its_weights_and_sources() {
        use super::least_seconds;
        let h = |s: f64| s / 3600.0;
        let seven = least_seconds(28_000_000_000, false, 2_400_000, 2);
        assert!((h(seven) - 2.92).abs() < 0.01, "{}", h(seven));
        assert!(h(least_seconds(280_000_000_000, false, 2_400_000, 2)) > 12.0);
        let packed = least_seconds(4_000_000_000, true, 2_400_000, 2);
        assert!(packed > least_seconds(4_000_000_000, false, 2_400_000, 2) * 3.7);
        assert!(
            least_seconds(1, false, 1, 0).is_finite(),
            "no core counted is one"
        );
    }

    #[test]
    fn model_names_stay_in_the_directory() {
        assert!(valid_name("java-4gram.arpa"));
        assert!(valid_name("m.bin"));
        assert!(!valid_name("../etc/passwd.arpa"));
        assert!(!valid_name(".hidden.arpa"));
        assert!(!valid_name("model.txt"));
        assert!(!valid_name("a b.arpa"));
    }
}
