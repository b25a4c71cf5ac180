//! Background jobs that survive crashes: a bounded number run at once per instance (the rest
//! wait, `queued`), and one study's at most all but one of them, so that another study's job
//! (or generator preview) always finds a slot when there are two or more; each beats a heartbeat into its row while it waits and runs; a reaper on
//! every instance fails jobs whose heartbeat stopped (their process died), so no job shows
//! "running" forever, and a failed job can be run again from its stored parameters.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::db::now_ms;
use crate::store;
use crate::store::jobs::Progress;
use crate::store::Db;
use natstudy_vocab::ids::{JobId, StudyId};

/// What a job does.
pub use crate::store::JobKind;

/// How background jobs are run.
#[derive(Debug, Clone, Copy)]
pub struct JobLimits {
    /// Jobs running at once on one instance.
    pub concurrent: usize,
    /// How often a live job's row is touched.
    pub heartbeat: Duration,
    /// A queued or running job whose row is older than this is failed by the reaper.
    pub stale_after: Duration,
}

impl Default for JobLimits {
    fn default() -> Self {
        JobLimits {
            concurrent: 1,
            heartbeat: Duration::from_secs(5),
            stale_after: Duration::from_secs(60),
        }
    }
}

/// Runs jobs under [`JobLimits`].
#[derive(Debug, Clone)]
pub struct JobRunner {
    db: Db,
    limits: JobLimits,
    slots: Arc<tokio::sync::Semaphore>,
    /// Per study, its share of the slots: all but one of them (at least one).
    shares: Arc<Mutex<HashMap<StudyId, Arc<tokio::sync::Semaphore>>>>,
}

/// Both permits a job or preview holds while it runs: its study's share and the instance's
/// slot.
#[derive(Debug)]
pub struct Slot {
    _share: tokio::sync::OwnedSemaphorePermit,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

impl JobRunner {
    pub fn new(db: Db, limits: JobLimits) -> JobRunner {
        JobRunner {
            db,
            limits,
            slots: Arc::new(tokio::sync::Semaphore::new(limits.concurrent.max(1))),
            shares: Arc::default(),
        }
    }

    /// How many slots one study may hold at once: all but one (at least one).
    pub fn share(&self) -> usize {
        self.limits.concurrent.max(2) - 1
    }

    /// A slot for work of `study`: its study's share first (so a study that holds all it may
    /// waits behind itself, not in front of other studies), then the instance's.
    fn acquire(&self, study: StudyId) -> impl Future<Output = Option<Slot>> + Send + 'static {
        let share = {
            let mut shares = self.shares.lock().unwrap_or_else(|e| e.into_inner());
            shares
                .entry(study)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(self.share())))
                .clone()
        };
        let slots = self.slots.clone();
        async move {
            let share = share.acquire_owned().await.ok()?;
            let slot = slots.acquire_owned().await.ok()?;
            Some(Slot {
                _share: share,
                _slot: slot,
            })
        }
    }

    /// Runs `work` for the (queued) job `job` in the background once a slot is free, beating
    /// its heartbeat all the while; `work` records the job's end itself. A job stopped while
    /// it waited for its slot is not run.
    pub fn spawn<F>(&self, job: JobId, study: StudyId, work: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (db, beat) = (self.db.clone(), self.limits.heartbeat);
        let slot = self.acquire(study);
        tokio::spawn(async move {
            let heart = tokio::spawn({
                let db = db.clone();
                async move {
                    loop {
                        tokio::time::sleep(beat).await;
                        if let Err(e) = store::jobs::heartbeat(&db, job).await {
                            tracing::warn!(error = %e, %job, "job heartbeat");
                        }
                    }
                }
            });
            let permit = slot.await;
            // a job stopped while it waited (or failed by the reaper) does not run
            let run = store::jobs::start(&db, job).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, %job, "job start");
                true
            });
            if run {
                work.await;
            }
            drop(permit);
            heart.abort();
        });
    }

    /// A slot of the same pool for work of `study` that is not a stored job (the generator's
    /// preview): `None` when none frees up within `wait`.
    pub async fn slot(&self, study: StudyId, wait: Duration) -> Option<Slot> {
        tokio::time::timeout(wait, self.acquire(study)).await.ok()?
    }

    /// Fails stale jobs now and then every `stale_after / 2` (runs until the process ends).
    pub fn spawn_reaper(&self) {
        let (db, stale) = (self.db.clone(), self.limits.stale_after);
        tokio::spawn(async move {
            loop {
                match store::jobs::fail_stale(&db, now_ms(), stale.as_millis() as i64).await {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(jobs = n, "failed jobs whose runner stopped"),
                    Err(e) => tracing::warn!(error = %e, "job reaper"),
                }
                tokio::time::sleep((stale / 2).max(Duration::from_millis(500))).await;
            }
        });
    }
}

/// A budget in words: "12 h", "90 min", "5 s".
pub fn budget_words(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// How often a running job's counters are written into its row.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(300);

/// The longest a job started from the study page runs (a verification, a scoring): past it,
/// it stops and stores nothing, whether or not anyone watches. A job whose estimate is over
/// it is refused before it starts (`verification::admits`); the command line has none.
pub const JOB_BUDGET: Duration = Duration::from_secs(12 * 3600);

/// What a job has done, of how much: set by its work (on any thread), written into its row
/// by [`with_progress`] with the pace it implies ([`pace`]); and whether someone asked it to
/// stop, read back with each write, or its time budget ran out.
#[derive(Debug, Clone)]
pub struct Counters {
    pub done: Arc<AtomicU64>,
    pub total: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
    /// Tokens scored so far.
    pub tokens: Arc<AtomicU64>,
    /// The work done and to do in a unit each step's cost follows (a neural scoring: each
    /// method's multiply-adds, as its tokens after truncation and its batch's padding make
    /// them); 0 of 0 where the steps cost alike.
    pub work_done: Arc<AtomicU64>,
    pub work_total: Arc<AtomicU64>,
    /// A model's load before the work: bytes of its tensors read, of all (0 of 0: no load).
    pub load_read: Arc<AtomicU64>,
    pub load_of: Arc<AtomicU64>,
    /// When the work began ([`Counters::begin`]).
    began: Arc<OnceLock<Instant>>,
    /// When the job was made, and how long it may run from then (`None`: no bound).
    made: Instant,
    budget: Option<Duration>,
}

/// A job's counters within [`JOB_BUDGET`].
impl Default for Counters {
    fn default() -> Self {
        Counters::within(Some(JOB_BUDGET))
    }
}

impl Counters {
    /// Counters of a job that may run for `budget` from now (`None`: the command line's
    /// work, stopped by its user).
    pub fn within(budget: Option<Duration>) -> Self {
        Counters {
            done: Arc::default(),
            total: Arc::default(),
            stop: Arc::default(),
            tokens: Arc::default(),
            work_done: Arc::default(),
            work_total: Arc::default(),
            load_read: Arc::default(),
            load_of: Arc::default(),
            began: Arc::default(),
            made: Instant::now(),
            budget,
        }
    }

    /// The job has run past its budget.
    fn over_budget(&self) -> bool {
        self.budget.is_some_and(|b| self.made.elapsed() >= b)
    }

    /// The work begins (a model's load is over): `total` steps of `work` units in all (0
    /// where the steps cost alike). The pace is counted from now.
    pub fn begin(&self, total: u64, work: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.work_total.store(work, Ordering::Relaxed);
        let _ = self.began.set(Instant::now());
    }

    /// The job's model has read `read` bytes of its tensors' `of` (before the work begins).
    pub fn loading(&self, read: u64, of: u64) {
        self.load_read.store(read, Ordering::Relaxed);
        self.load_of.store(of, Ordering::Relaxed);
    }

    /// One step done, of `tokens` tokens and `work` units.
    pub fn step(&self, tokens: u64, work: u64) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.tokens.fetch_add(tokens, Ordering::Relaxed);
        self.work_done.fetch_add(work, Ordering::Relaxed);
    }

    fn read(&self) -> Progress {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (done, total) = (n(&self.done), n(&self.total));
        let p = match self.began.get() {
            Some(began) => pace(
                began.elapsed(),
                (done, total),
                n(&self.tokens),
                (n(&self.work_done), n(&self.work_total)),
            ),
            None => Progress::of(done, total),
        };
        Progress {
            load_read: n(&self.load_read),
            load_of: n(&self.load_of),
            ..p
        }
    }

    /// Whether the job was asked to stop (as of the last progress write).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.over_budget()
    }

    /// How a job that ended with an error ends: `stopped` (storing nothing) when it was asked
    /// to or ran out of its time, else `failed` with `why`.
    pub fn ended_by(&self, why: String) -> (store::JobState, String) {
        if self.stopping() {
            let Progress { done, total, .. } = self.read();
            let why = match self.budget {
                Some(b) if !self.stop.load(Ordering::Relaxed) => format!(
                    "stopped at its time budget of {} at {done} of {total}: nothing stored",
                    budget_words(b)
                ),
                _ => format!("stopped on request at {done} of {total}: nothing stored"),
            };
            (store::JobState::Stopped, why)
        } else {
            (store::JobState::Failed, why)
        }
    }
}

/// Runs `work` for the job `job`, writing its counters into the job's row every
/// [`PROGRESS_EVERY`] meanwhile, from a task of its own: progress is news, not work. Each
/// write reads back whether someone asked the job to stop ([`Counters::stopping`]), so a
/// stop asked of any instance reaches the one running the job. The work
/// is never held up by a progress write — one that waits for the database waits beside it.
/// (Written from the work's own task, a write waited with the work suspended: on SQLite, whose
/// one write connection the work's transaction held, that wait was the pool's 30 s timeout
/// at every tick until the transaction ended — a scoring job stalled for minutes.) Once the
/// work ends, the ticking stops and a write under way is waited for, so that no tick lands
/// after the caller's last word on the row.
pub async fn with_progress<T>(
    db: &Db,
    job: JobId,
    counters: &Counters,
    work: impl Future<Output = T>,
) -> T {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let ticker = tokio::spawn({
        let (db, counters) = (db.clone(), counters.clone());
        async move {
            let mut tick = tokio::time::interval_at(
                tokio::time::Instant::now() + PROGRESS_EVERY,
                PROGRESS_EVERY,
            );
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    _ = &mut stopped => break,
                    _ = tick.tick() => {
                        match store::jobs::progress(&db, job, counters.read()).await {
                            Ok(stop) => {
                                if stop {
                                    counters.stop.store(true, Ordering::Relaxed);
                                }
                            }
                            Err(e) => tracing::warn!(error = %e, %job, "job progress"),
                        }
                    }
                }
            }
        }
    });
    let out = work.await;
    let _ = stop.send(());
    if let Err(e) = ticker.await {
        tracing::warn!(error = %e, %job, "job progress");
    }
    out
}

/// The progress of work begun `elapsed` ago that has done `done` of `total` steps, `tokens`
/// tokens, and `work` (done, in all) of the units its cost follows (`(0, 0)`: the steps cost
/// alike): what is left is expected to go at the pace so far. No estimate before the first
/// step, nor once all is done.
pub fn pace(
    elapsed: Duration,
    (done, total): (u64, u64),
    tokens: u64,
    work: (u64, u64),
) -> Progress {
    let (so_far, all) = if work.1 > 0 { work } else { (done, total) };
    let ms = elapsed.as_millis();
    let eta_ms = (so_far > 0 && all > so_far).then(|| {
        let left = ms * u128::from(all - so_far) / u128::from(so_far);
        u64::try_from(left).unwrap_or(u64::MAX)
    });
    Progress {
        done,
        total,
        tokens,
        counting_ms: u64::try_from(ms).unwrap_or(u64::MAX),
        eta_ms,
        ..Default::default()
    }
}

/// The error of work that stopped on request before its end, having stored nothing.
pub fn stopped() -> super::ServiceError {
    super::ServiceError::Conflict("stopped before the end: nothing stored".into())
}

/// Reads now whether the job was asked to stop (into `counters`), for work about to begin
/// after a long step no progress write ran through (loading a model).
pub async fn stop_asked(db: &Db, job: JobId, counters: &Counters) -> bool {
    match store::jobs::stop_requested(db, job).await {
        Ok(true) => counters.stop.store(true, Ordering::Relaxed),
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, %job, "job stop flag"),
    }
    counters.stopping()
}

/// [`with_progress`] for work that ends in a result: once it succeeds, the job's row says
/// `size(&out)` of `size(&out)` — the last tick may have read the counters before the work's
/// last step, and a finished job reads as all done.
pub async fn with_progress_to_the_end<T, E>(
    db: &Db,
    job: JobId,
    counters: &Counters,
    work: impl Future<Output = Result<T, E>>,
    size: impl FnOnce(&T) -> u64,
) -> Result<T, E> {
    let out = with_progress(db, job, counters, work).await?;
    let n = size(&out);
    let end = Progress {
        done: n,
        total: n,
        eta_ms: None,
        ..counters.read()
    };
    if let Err(e) = store::jobs::progress(db, job, end).await {
        tracing::warn!(error = %e, %job, "job progress");
    }
    Ok(out)
}

/// Asks a queued or running job of the study to stop: a queued one stops at once, a running
/// one at its next progress write and the next point its work can stop (a neural scoring
/// between batches or between the tensors it loads, a verification between bugs, an n-gram
/// scoring between methods), storing nothing. Returns the job's state after the request.
pub async fn stop(
    db: &Db,
    study: natstudy_vocab::ids::StudyId,
    job: JobId,
) -> super::ServiceResult<store::JobState> {
    match store::jobs::request_stop(db, study, job).await? {
        Some(state) => Ok(state),
        None => match store::jobs::get(db, study, job).await? {
            None => Err(super::ServiceError::NotFound(format!("job {job}"))),
            Some(_) => Err(super::ServiceError::Conflict(
                "the job has already ended".into(),
            )),
        },
    }
}

/// What a failed job runs again.
#[derive(Debug, Clone, PartialEq)]
pub enum Retry {
    Verify,
    Score { model: String, log10: bool },
}

/// The study's background jobs, newest first.
pub async fn list(
    db: &Db,
    study: natstudy_vocab::ids::StudyId,
) -> super::ServiceResult<Vec<natstudy_types::JobRow>> {
    Ok(store::jobs::list(db, study)
        .await?
        .into_iter()
        .map(crate::present::wire::job_row)
        .collect())
}

/// A queued job of the study (which must exist).
pub async fn create(
    db: &Db,
    study: natstudy_vocab::ids::StudyId,
    actor: Option<natstudy_vocab::ids::UserId>,
    kind: store::JobKind,
    label: &str,
    params: &str,
) -> super::ServiceResult<JobId> {
    if !super::studies::exists(db, study).await? {
        return Err(super::ServiceError::NotFound(format!("study {study}")));
    }
    Ok(store::jobs::create(db, study, actor, kind, label, params).await?)
}

/// What a job runs again: only a failed or stopped scoring or verification job may be retried.
pub async fn retry(
    db: &Db,
    study: natstudy_vocab::ids::StudyId,
    job: JobId,
) -> super::ServiceResult<Retry> {
    let (kind, state, params) = store::jobs::get(db, study, job)
        .await?
        .ok_or_else(|| super::ServiceError::NotFound(format!("job {job}")))?;
    if !matches!(state, store::JobState::Failed | store::JobState::Stopped) {
        return Err(super::ServiceError::Conflict(
            "only a failed or stopped scoring or verification job can be run again".into(),
        ));
    }
    if kind == store::JobKind::Verify {
        return Ok(Retry::Verify);
    }
    let p: serde_json::Value = serde_json::from_str(&params).unwrap_or_default();
    Ok(Retry::Score {
        model: p["model"].as_str().unwrap_or_default().to_owned(),
        log10: p["log10"].as_bool().unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The time left follows the units the cost follows where the work has them
    /// (multiply-adds: the long methods scored first do not make the rest look as slow), else
    /// the steps; none before the first step or once all is done.
    #[test]
    fn the_time_left_is_the_pace_so_far() {
        let s = Duration::from_secs;
        // 10 of 40 methods in 30 s, but 3/4 of the work: 10 s left, not 90
        let p = pace(s(30), (10, 40), 6_000, (750, 1_000));
        assert_eq!(
            p,
            Progress {
                done: 10,
                total: 40,
                tokens: 6_000,
                counting_ms: 30_000,
                eta_ms: Some(10_000),
                ..Default::default()
            }
        );
        assert_eq!(pace(s(30), (10, 40), 0, (0, 0)).eta_ms, Some(90_000));
        assert_eq!(pace(s(30), (0, 40), 0, (0, 1_000)).eta_ms, None);
        assert_eq!(pace(s(30), (40, 40), 0, (1_000, 1_000)).eta_ms, None);
        assert_eq!(pace(s(30), (0, 0), 0, (0, 0)).eta_ms, None);
    }

    /// A job past its time budget stops whether or not anyone asked, and says it was the
    /// budget; one asked to stop says that; one without a budget runs on.
    #[test]
    fn a_job_stops_at_its_time_budget_and_says_so() {
        let c = Counters::within(Some(Duration::ZERO));
        c.begin(10, 0);
        c.step(0, 0);
        assert!(c.stopping());
        let (state, why) = c.ended_by("an error".into());
        assert_eq!(state, store::JobState::Stopped);
        assert_eq!(
            why,
            "stopped at its time budget of 0 s at 1 of 10: nothing stored"
        );
        let asked = Counters::default();
        assert!(!asked.stopping(), "within the default budget");
        asked.stop.store(true, Ordering::Relaxed);
        assert!(asked
            .ended_by(String::new())
            .1
            .starts_with("stopped on request"));
        assert!(!Counters::within(None).stopping());
        let failed = Counters::within(None).ended_by("no model".into());
        assert_eq!(failed, (store::JobState::Failed, "no model".into()));
        assert_eq!(budget_words(JOB_BUDGET), "12 h");
        assert_eq!(budget_words(Duration::from_secs(5_400)), "90 min");
    }

    /// A runner of `concurrent` slots on a database in a folder of its own (kept while the
    /// folder lives).
    async fn runner_of(concurrent: usize) -> (tempfile::TempDir, JobRunner) {
        let dir = tempfile::tempdir().expect("dir");
        let db = Db::connect(&Db::sqlite_url_in(dir.path()).expect("url"))
            .await
            .expect("db");
        let limits = JobLimits {
            concurrent,
            ..Default::default()
        };
        (dir, JobRunner::new(db, limits))
    }

    /// A generator preview takes a slot of the same pool as the stored jobs: with one slot
    /// held, it waits, and is told to come back once its wait is over.
    #[tokio::test]
    async fn previews_share_the_job_slots() {
        let (_dir, runner) = runner_of(1).await;
        let a = StudyId(1);
        let held = runner
            .slot(a, Duration::from_millis(10))
            .await
            .expect("free");
        assert!(
            runner
                .slot(StudyId(2), Duration::from_millis(50))
                .await
                .is_none(),
            "busy"
        );
        drop(held);
        assert!(
            runner.slot(a, Duration::from_millis(50)).await.is_some(),
            "free again"
        );
    }

    /// With more than one slot, one study holds at most all but one: another study's work
    /// starts while the first study's waits behind its own.
    #[tokio::test]
    async fn each_study_leaves_a_slot_to_the_others() {
        let (_dir, runner) = runner_of(3).await;
        assert_eq!(runner.share(), 2);
        let (a, b) = (StudyId(1), StudyId(2));
        let wait = Duration::from_millis(50);
        let a1 = runner.slot(a, wait).await.expect("a's first");
        let _a2 = runner.slot(a, wait).await.expect("a's second");
        assert!(runner.slot(a, wait).await.is_none(), "a's share is full");
        let b1 = runner.slot(b, wait).await.expect("b finds the slot left");
        assert!(runner.slot(b, wait).await.is_none(), "every slot is held");
        drop(a1);
        assert!(
            runner.slot(b, wait).await.is_some(),
            "b's second, once a slot frees"
        );
        drop(b1);
    }
}
