//! Verifying a study's items (`natstudy verify`): each transformed method compiled in its file
//! with javac, optionally a test command compared with the original's; the results stored per
//! item.

use std::sync::Arc;

use super::ServiceResult;
use crate::store;
use crate::store::Db;
use natstudy_engine::verify::{self, Check, Options};
use natstudy_vocab::ids::StudyId;

/// What a run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub items: usize,
    pub compiles: usize,
    pub does_not_compile: usize,
    /// Not compiled: no compiler, or the original does not compile either.
    pub not_compiled: usize,
    pub tests_same: usize,
    pub tests_differ: usize,
}

impl Summary {
    fn of<'a>(checks: impl Iterator<Item = &'a Check>) -> Summary {
        let mut s = Summary::default();
        for c in checks {
            s.items += 1;
            match c.compiles {
                Some(true) => s.compiles += 1,
                Some(false) => s.does_not_compile += 1,
                None => s.not_compiled += 1,
            }
            match c.tests_same {
                Some(true) => s.tests_same += 1,
                Some(false) => s.tests_differ += 1,
                None => {}
            }
        }
        s
    }

    /// One line for people.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} checked: {} compile, {} do not, {} not compiled",
            natstudy_types::words::count(self.items as i64, "item"),
            self.compiles,
            self.does_not_compile,
            self.not_compiled
        );
        if self.tests_same + self.tests_differ > 0 {
            out.push_str(&format!(
                "; tests as the original: {}, different: {}",
                self.tests_same, self.tests_differ
            ));
        }
        out
    }
}

/// Verifies the study's items (only those never checked when `unchecked_only`), stores each
/// item's check, and returns the summary and the checks by item key. `start(total)` is told
/// the amount of work; `progress(done, total)` follows it from the workers and says whether
/// to go on: once it says no, the workers stop before their next bug and nothing is stored.
pub async fn run(
    db: &Db,
    study: StudyId,
    options: Options,
    unchecked_only: bool,
    start: impl FnOnce(u64),
    progress: Arc<dyn Fn(u64, u64) -> bool + Send + Sync>,
) -> ServiceResult<(Summary, Vec<(String, Check)>)> {
    let (bugs, items) = store::checks::inputs(db, study, unchecked_only).await?;
    let phases = u64::from(options.compiler.is_some()) + u64::from(options.tests.is_some());
    start(items.len() as u64 * phases.max(1));
    let (items, checks, finished) = tokio::task::spawn_blocking(move || {
        let b: Vec<verify::Bug<'_>> = bugs
            .iter()
            .map(|b| verify::Bug {
                key: &b.key,
                file_path: &b.file_path,
                method: &b.method,
                file_source: b.file_source.as_deref(),
                encoding: b.encoding.as_deref(),
            })
            .collect();
        let i: Vec<verify::Item<'_>> = items
            .iter()
            .map(|i| verify::Item {
                key: &i.key,
                bug: i.bug,
                source: &i.source,
            })
            .collect();
        let go_on = std::sync::atomic::AtomicBool::new(true);
        let checks = verify::verify(&b, &i, &options, &|done, total| {
            let more = progress(done, total);
            if !more {
                go_on.store(false, std::sync::atomic::Ordering::Relaxed);
            }
            more
        });
        (items, checks, go_on.into_inner())
    })
    .await?;
    if !finished {
        return Err(super::jobs::stopped());
    }
    let rows: Vec<_> = items
        .iter()
        .zip(&checks)
        .map(|(i, c)| (i.id, c.clone()))
        .collect();
    store::checks::save(db, &rows).await?;
    let summary = Summary::of(checks.iter());
    let by_key = items.into_iter().map(|i| i.key).zip(checks).collect();
    Ok((summary, by_key))
}

/// What one check of one item costs at least, for a job's estimate: a javac run on its file
/// takes about a second of a core.
const SECONDS_A_CHECK: u64 = 1;

/// Refuses, in words and before it starts, a verification job whose estimate (items ×
/// checks, a second each, over the workers) is past a job's time budget
/// (`budget`: the study page's is [`super::jobs::JOB_BUDGET`]); the command line's
/// `natstudy verify` has none.
pub async fn admits(
    db: &Db,
    study: StudyId,
    options: &Options,
    budget: std::time::Duration,
) -> ServiceResult<()> {
    let items: i64 = store::studies::level_counts(db, study)
        .await?
        .iter()
        .map(|(_, n)| n)
        .sum();
    let checks = u64::from(options.compiler.is_some()) + u64::from(options.tests.is_some());
    let workers = options.workers.max(1) as u64;
    let secs = (items.max(0) as u64)
        .saturating_mul(checks.max(1))
        .saturating_mul(SECONDS_A_CHECK)
        / workers;
    if secs > budget.as_secs() {
        return Err(super::ServiceError::Invalid(format!(
            "{items} items × {} checks at about {SECONDS_A_CHECK} s each on {workers} workers is about {} h, over a job's time budget of {}: run `natstudy verify --study NAME` on the command line (no budget; it can go on with --unchecked), or make a study of fewer items",
            checks.max(1),
            secs.div_ceil(3600),
            super::jobs::budget_words(budget)
        )));
    }
    Ok(())
}

/// The study page's verification job: runs [`run`], records progress and the summary.
pub async fn run_job(db: Db, job: natstudy_vocab::ids::JobId, study: StudyId, options: Options) {
    use std::sync::atomic::Ordering;
    let started = std::time::Instant::now();
    let counters = super::jobs::Counters::default();
    let (begin, step) = (counters.clone(), counters.clone());
    let work = run(
        &db,
        study,
        options,
        false,
        move |n| begin.begin(n, 0),
        Arc::new(move |n, _| {
            step.done.store(n, Ordering::Relaxed);
            !step.stopping()
        }),
    );
    let total = |_: &_| counters.total.load(Ordering::Relaxed);
    let result = super::jobs::with_progress_to_the_end(&db, job, &counters, work, total).await;
    let (state, message) = match result {
        Ok((summary, _)) => (
            store::JobState::Done,
            format!(
                "{} in {:.1} s",
                summary.line(),
                started.elapsed().as_secs_f64()
            ),
        ),
        Err(e) => counters.ended_by(e.to_string()),
    };
    if let Err(e) = store::jobs::finish(&db, job, state, &message).await {
        tracing::error!(error = %e, %job, "cannot record the end of a job");
    }
}
