//! Group commit: one writer task per [`Db`](crate::store::Db) runs the short write jobs that arrive
//! together (joins, claims, votes, lease renewals) in **one** transaction, commits once, and
//! only then tells each job how the commit went. A group runs first without savepoints; when
//! a job fails, it runs again with a savepoint around each job, so one job's failure rolls
//! back only that job. The durable commit (an fsync on SQLite, a WAL flush on PostgreSQL) is
//! shared by the group, so throughput follows the disk's commit rate times the group size, and
//! "acknowledged ⇒ durable" holds: nobody is answered before the commit returned.
//!
//! SQLite serialises every writer: the group takes the database's write lock at `BEGIN
//! IMMEDIATE`, like `Db::begin_write`. PostgreSQL lets the writers of several instances run
//! their groups at the same time: a group takes the advisory lock of every study in it
//! **shared** (in ascending order), so it excludes the study's other writers
//! (`Db::begin_write` takes the lock exclusive: imports, batches, k) but not another
//! instance's group; what two groups could both check and write — room on an item — is
//! serialised per item by the jobs themselves (`store::assign`, `item_lock!`). A group that
//! loses a deadlock to another instance's (or any transaction's) is run again
//! ([`RETRIES`]).
//!
//! What the jobs of a group have in common is done once per group, in a state the store
//! defines ([`GroupState`], [`shared`]): a study's k is read once; the annotators'
//! `last_active`, what joins add that no job of the group reads back (batch memberships, order
//! seeds, audit rows) and the studies' data versions are written once, just before the commit
//! — the versions in the writer's own part (its number, [`GroupCommit::shard`]), so the groups
//! of two instances never wait for each other's commit on one hot row. This module knows no
//! table of the domain. Every statement is a round trip to the connection's thread (SQLite) or
//! server (PostgreSQL), so this is what a group's length is made of: a burst of 200 joins wrote
//! 1,000 statements one after another, now 400 and a few a group.
//!
//! No job waits for a timer: the writer takes what is queued, runs it, and while it commits
//! the next group gathers. A group holds at most [`MAX_GROUP`] jobs.
//!
//! Where the writer runs ([`spawn_writer`]): on PostgreSQL on a thread of its own, with its own
//! single-threaded runtime and its own connection, so the answers to a group's chain of
//! statements do not wait behind the requests being served; on SQLite as a task of the
//! server's runtime. Either way what runs the statements keeps the process's priority, above
//! the runtime's threads (`crate::priority`): PostgreSQL's writer thread, and sqlx's thread for
//! SQLite's write connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use sqlx::{AnyConnection, AnyPool};
use tokio::sync::mpsc;

use crate::db::{Database, Dialect, Gate};

pub mod jobs;
pub mod shared;

/// The most jobs one transaction holds.
pub const MAX_GROUP: usize = 128;
/// Jobs waiting for the writer before senders wait (back-pressure, bounded memory).
const QUEUE: usize = 4096;
/// Runs of a group after its transaction failed on a deadlock or a serialisation failure
/// (PostgreSQL chose it as the victim of a wait cycle with another instance's group): the
/// jobs run again in a new transaction; any other failure answers them at once.
pub const RETRIES: usize = 3;

/// PostgreSQL's per-item advisory lock key, two `int4` halves (a key space apart from the
/// single-`bigint` keys of the studies' locks): the class of the lock and the item's id,
/// reduced to 31 bits — two items that share a key are only serialised together. `$item` is
/// the SQL expression of the item id. A group holds at most [`MAX_GROUP`] × 8 of them (a
/// claim locks the candidates it reads), in PostgreSQL's shared lock table.
macro_rules! item_lock {
    ($f:literal, $item:literal) => {
        concat!(
            $f,
            "(1852076137, CAST(MOD(",
            $item,
            ", 2147483647) AS INTEGER))"
        )
    };
}
pub(crate) use item_lock;

/// A write job: runs on the group's connection; answers its caller once the group's
/// transaction ended.
pub trait Job<S>: Send + 'static {
    /// The advisory lock (the study) the job needs held; `None` for a write that is no study's
    /// (a session's), serialised only by the database's own row locks.
    fn lock(&self) -> Option<i64>;
    /// Does the work and keeps its result; says whether it succeeded (a failed job's writes
    /// must not be kept, and what it put in `shared` is taken back). A job may run more than
    /// once — when its group is run again — and each run replaces the result of the one before.
    fn run<'c>(&'c mut self, conn: &'c mut AnyConnection, shared: &'c mut S)
        -> BoxFuture<'c, bool>;
    /// Answers the caller: `Ok` when the transaction that holds the job's last run committed
    /// (a failed job's own result is its answer either way), else why not.
    fn finish(self: Box<Self>, commit: Result<(), &sqlx::Error>);
}

/// What the jobs of one group share, as the store defines it (`store::group_shared`): made
/// empty for each run of a group, handed to every job in turn, and written out
/// ([`GroupState::flush`]) just before the commit. A job that fails under a savepoint leaves
/// it as it was before the job (the writer keeps a copy).
pub trait GroupState: Clone + Send + 'static {
    /// A new writer's number, which every state of its groups is made with: the store keeps
    /// each writer's part of the studies' data versions under it.
    fn writer_number() -> i64;
    /// The state of a run of a group of `jobs` jobs on `dialect`, by writer `writer`.
    fn new(dialect: Dialect, jobs: usize, writer: i64) -> Self;
    /// Writes what the group's jobs deferred, in the group's transaction.
    fn flush<'c>(&'c self, conn: &'c mut AnyConnection) -> BoxFuture<'c, sqlx::Result<()>>;
}

/// The handle to a database's writer task, started on first use.
pub struct GroupCommit<S> {
    sender: Arc<OnceLock<mpsc::Sender<Box<dyn Job<S>>>>>,
    stats: Arc<Counters>,
    /// This writer's number ([`GroupState::writer_number`]).
    shard: i64,
}

impl<S> Clone for GroupCommit<S> {
    fn clone(&self) -> Self {
        GroupCommit {
            sender: self.sender.clone(),
            stats: self.stats.clone(),
            shard: self.shard,
        }
    }
}

impl<S: GroupState> Default for GroupCommit<S> {
    fn default() -> Self {
        GroupCommit {
            sender: Arc::default(),
            stats: Arc::default(),
            shard: S::writer_number(),
        }
    }
}

#[derive(Default)]
struct Counters {
    groups: AtomicU64,
    jobs: AtomicU64,
    reruns: AtomicU64,
}

/// What the writer did so far: transactions and the jobs they held, and the groups run again
/// with a savepoint around each job because one of their jobs failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupStats {
    pub groups: u64,
    pub jobs: u64,
    pub reruns: u64,
}

impl<S> std::fmt::Debug for GroupCommit<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("started", &self.sender.get().is_some())
            .field("shard", &self.shard)
            .finish()
    }
}

impl<S: GroupState> GroupCommit<S> {
    /// Transactions run and jobs they held, since the start.
    pub fn stats(&self) -> GroupStats {
        GroupStats {
            groups: self.stats.groups.load(Ordering::Relaxed),
            jobs: self.stats.jobs.load(Ordering::Relaxed),
            reruns: self.stats.reruns.load(Ordering::Relaxed),
        }
    }

    /// This writer's number ([`GroupState::writer_number`]): the store keeps the writer's part
    /// of the studies' data versions under it.
    pub fn shard(&self) -> i64 {
        self.shard
    }

    /// Queues the job for the writer (started on first use, see [`spawn_writer`]). When the
    /// writer is gone, the job runs alone in its own transaction.
    pub(super) async fn submit(&self, db: &Database, job: Box<dyn Job<S>>) {
        let (pool, dialect, url) = (db.writer(), db.dialect, db.url.as_str());
        let gate = &db.gate();
        let sender = self.sender.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            let w = Writer {
                pool: pool.clone(),
                dialect,
                gate: gate.clone(),
                shard: self.shard,
            };
            spawn_writer(w, url.to_owned(), rx, self.stats.clone());
            tx
        });
        if let Err(mpsc::error::SendError(job)) = sender.send(job).await {
            let w = Writer {
                pool: pool.clone(),
                dialect,
                gate: gate.clone(),
                shard: self.shard,
            };
            let mut held = None;
            run_group(&w, &mut held, vec![job]).await;
            if let Some(conn) = held {
                let _ = sqlx::Connection::close(conn).await;
            }
        }
    }
}

/// What the writer task holds: never the `Db` itself, so the task ends with the last handle.
struct Writer {
    pool: AnyPool,
    dialect: Dialect,
    gate: Gate,
    shard: i64,
}

/// Starts the writer. On PostgreSQL it runs on a thread of its own, with a single-threaded
/// runtime and a connection of its own: a group is a chain of statements, each a round trip, and
/// on the server's runtime every answer woke the writer behind all the requests being served —
/// with 200 participants and no think time a fifth of the CPU sat idle while requests queued
/// for the writer (`natstudy bench http --think 0`: 841 and 899 votes/s on a thread of its own
/// against 558 in the same series). On SQLite the statements already run on sqlx's own thread
/// for the connection and a group's time is its commit (the fsync): a writer woken later
/// gathers bigger groups, which is what an fsync-bound commit wants — there it stays a task of
/// the server's runtime (on a thread of its own it made more, smaller groups: 954 and 979
/// votes/s against 1,081 and 1,177 in alternating runs).
/// If the thread cannot be started, the writer runs as a task of the caller's runtime.
fn spawn_writer<S: GroupState>(
    w: Writer,
    url: String,
    rx: mpsc::Receiver<Box<dyn Job<S>>>,
    stats: Arc<Counters>,
) {
    if w.dialect == Dialect::Sqlite {
        tokio::spawn(writer(w, rx, stats));
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            tracing::warn!(error = %e, "group commit: no runtime of its own; the writer shares the server's");
            tokio::spawn(writer(w, rx, stats));
            return;
        }
    };
    // at the process's priority, above the request handlers' (`crate::priority`)
    let started = crate::priority::spawn_at_base("natstudy-writer", move || {
        runtime.block_on(async move {
            let own = own_connection(&url);
            let w = Writer {
                pool: own.clone().unwrap_or(w.pool),
                ..w
            };
            writer(w, rx, stats).await;
            if let Some(pool) = own {
                pool.close().await;
            }
        })
    });
    if !started {
        // the receiver went with the closure: jobs run alone (see `submit`)
        tracing::warn!("group commit: cannot start the writer's thread");
    }
}

/// Set on the writer's own PostgreSQL connection (see [`own_connection`]).
pub const PLANNED_ONCE: &str = "SET plan_cache_mode = force_generic_plan";

/// Set on the writer's own PostgreSQL connection too: no sequential scan where an index serves
/// (see [`own_connection`]).
pub const NO_SCANS: &str = "SET enable_seqscan = off";

/// The writer's own connection (a pool of one, opened on first use and again after a
/// failure), on the runtime this is called on. Its statements are planned once, when first
/// prepared, never again at each execution (`plan_cache_mode = force_generic_plan`): they are
/// the jobs' few fixed texts — each a lookup through the same indexes whatever the values —
/// and once the tables have statistics PostgreSQL's default plans them anew at every bind,
/// on the connection every claim and vote waits for in turn (`natstudy bench http --think 0`
/// on a database whose tables were analysed: 734 and 797 votes/s re-planning, 1,567 and 1,623
/// planned once and again every [`crate::db::REPLAN`]).
///
/// And it never plans a sequential scan where one of its indexes serves ([`NO_SCANS`];
/// PostgreSQL still scans a table that no index serves). In a study's first seconds, on tables
/// analysed while nearly empty (`natstudy bench http --analyze`), the plans made at a re-plan
/// believed the claims' and votes' tables held a few rows and scanned them: in a sample of
/// `auto_explain`, 32 of 217 open-claim statements scanned `assignments` or `votes`, and the
/// writer's statements took three times as long on average (249 µs against 84 µs on a fresh
/// database). Each of its statements is a lookup by key, for which an index is never much
/// dearer than a scan of a small table. Runs alternated with the scans allowed, `--analyze`
/// against a fresh database: 0.62–0.71 of its votes/s with them, 0.85–1.05 without.
fn own_connection(url: &str) -> Option<AnyPool> {
    let options = match url.parse::<sqlx::any::AnyConnectOptions>() {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, "group commit: the writer shares the pool");
            return None;
        }
    };
    Some(
        sqlx::any::AnyPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(std::time::Duration::from_secs(30))
            .after_connect(|conn, _meta| {
                Box::pin(async move {
                    sqlx::Executor::execute(&mut *conn, PLANNED_ONCE).await?;
                    sqlx::Executor::execute(&mut *conn, NO_SCANS).await?;
                    Ok(())
                })
            })
            .connect_lazy_with(options),
    )
}

/// The writer's loop: gathers a group, runs it, and again. On PostgreSQL it keeps its
/// connection from group to group (taken out of its pool, so the pool neither waits for it at
/// close nor counts it), given up only after a failed transaction: every hand-over of a pooled
/// connection costs its return to the pool and a round trip to check it before it is handed
/// out again (see [`begin`]).
async fn writer<S: GroupState>(
    w: Writer,
    mut rx: mpsc::Receiver<Box<dyn Job<S>>>,
    stats: Arc<Counters>,
) {
    let mut held = None;
    let mut planned = std::time::Instant::now();
    while let Some(first) = rx.recv().await {
        if planned.elapsed() >= crate::db::REPLAN {
            planned = std::time::Instant::now();
            replan(w.dialect, &mut held).await;
        }
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        stats.groups.fetch_add(1, Ordering::Relaxed);
        stats.jobs.fetch_add(jobs.len() as u64, Ordering::Relaxed);
        if run_group(&w, &mut held, jobs).await {
            stats.reruns.fetch_add(1, Ordering::Relaxed);
        }
    }
    if let Some(conn) = held {
        let _ = sqlx::Connection::close(conn).await;
    }
}

/// PostgreSQL: the writer's statements are planned once ([`PLANNED_ONCE`]) with the tables'
/// sizes of that moment, and kept until an `ANALYZE` invalidates them. A study's tables grow
/// from nothing to thousands of rows in its first minutes, faster than autovacuum analyses
/// them: a plan made for a table of a few rows (a scan) would be kept while it grows. So the
/// writer drops its plans every [`crate::db::REPLAN`] (`DISCARD PLANS`; the statements stay prepared)
/// and plans them again, once, at their next use. A connection that fails it is given up.
async fn replan(dialect: Dialect, held: &mut Option<AnyConnection>) {
    if dialect != Dialect::Postgres {
        return;
    }
    if let Some(conn) = held {
        if let Err(e) = sqlx::Executor::execute(&mut *conn, "DISCARD PLANS").await {
            tracing::warn!(error = %e, "group commit: the writer's plans could not be dropped");
            *held = None;
        }
    }
}

/// Runs the jobs in one transaction and answers each after the commit. First without
/// savepoints (the common case: every job succeeds, two statements a job saved); when a job
/// fails, that transaction is rolled back and the group runs again with a savepoint around
/// each job, so a failed job's writes alone are undone. Says whether it ran again that way.
async fn run_group<S: GroupState>(
    w: &Writer,
    held: &mut Option<AnyConnection>,
    mut jobs: Vec<Box<dyn Job<S>>>,
) -> bool {
    let mut locks: Vec<i64> = jobs.iter().filter_map(|j| j.lock()).collect();
    locks.sort_unstable();
    locks.dedup();
    let mut savepoints = false;
    let mut retries = 0;
    let outcome = loop {
        match attempt(w, held, &locks, &mut jobs, savepoints).await {
            // a job failed: again, each job in a savepoint
            Ok(false) if !savepoints => savepoints = true,
            Err(e) if retries < RETRIES && lost_a_race(&e) => {
                retries += 1;
                tracing::debug!(error = %e, retries, "group commit: the group runs again");
            }
            outcome => break outcome,
        }
    };
    let outcome = outcome.map(|_| ());
    if let Err(e) = &outcome {
        tracing::warn!(error = %e, jobs = jobs.len(), "group commit: the group's transaction failed");
        // the connection's state is unknown: the next group takes a fresh one
        *held = None;
    }
    for j in jobs {
        j.finish(outcome.as_ref().map(|_| ()));
    }
    savepoints
}

/// Whether the transaction failed only because it lost a race with another transaction
/// (PostgreSQL: a deadlock `40P01` or a serialisation failure `40001`): running it again
/// can succeed.
fn lost_a_race(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "40P01" || c == "40001")
}

/// One run of the group in a transaction: `Ok(true)` committed; `Ok(false)` a job failed
/// without savepoints (rolled back, nothing kept); `Err` the transaction failed.
async fn attempt<S: GroupState>(
    w: &Writer,
    held: &mut Option<AnyConnection>,
    locks: &[i64],
    jobs: &mut [Box<dyn Job<S>>],
    savepoints: bool,
) -> Result<bool, sqlx::Error> {
    // SQLite: the write pool's connection, for this group only
    let mut pooled = None;
    let mut tx = begin(w, held, &mut pooled, locks).await?;
    let mut shared = S::new(w.dialect, jobs.len(), w.shard);
    for job in jobs.iter_mut() {
        // what a failed job put in `shared` is taken back with its writes
        let before = savepoints.then(|| shared.clone());
        if savepoints {
            sqlx::query("SAVEPOINT natstudy_job")
                .execute(&mut *tx)
                .await?;
        }
        let ok = job.run(&mut tx, &mut shared).await;
        if let (false, Some(before)) = (ok, before) {
            shared = before;
        }
        match (ok, savepoints) {
            (true, true) => {
                sqlx::query("RELEASE SAVEPOINT natstudy_job")
                    .execute(&mut *tx)
                    .await?;
            }
            (false, true) => {
                sqlx::query("ROLLBACK TO SAVEPOINT natstudy_job")
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("RELEASE SAVEPOINT natstudy_job")
                    .execute(&mut *tx)
                    .await?;
            }
            (true, false) => {}
            (false, false) => {
                tx.rollback().await?;
                return Ok(false);
            }
        }
    }
    shared.flush(&mut tx).await?;
    tx.commit().await?;
    Ok(true)
}

/// The group's transaction. SQLite: on the write pool's one connection (`pooled`), taken in
/// turn with this process's other writers at the gate — a connection of the writer's own would
/// meet theirs at SQLite's busy wait instead. PostgreSQL: on the writer's own connection
/// (`held`, see [`writer`]).
async fn begin<'c>(
    w: &Writer,
    held: &'c mut Option<AnyConnection>,
    pooled: &'c mut Option<sqlx::pool::PoolConnection<sqlx::Any>>,
    locks: &[i64],
) -> sqlx::Result<sqlx::Transaction<'c, sqlx::Any>> {
    use sqlx::Connection;
    match w.dialect {
        Dialect::Sqlite => {
            let _turn = w.gate.lock().await;
            let conn = pooled.insert(w.pool.acquire().await?);
            conn.begin_with("BEGIN IMMEDIATE").await
        }
        Dialect::Postgres => {
            let conn = match held {
                Some(conn) => conn,
                None => held.insert(w.pool.acquire().await?.detach()),
            };
            let mut tx = conn.begin().await?;
            for &lock in locks {
                // shared: another instance's group runs beside this one (see the module)
                sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared($1)) AS held")
                    .bind(lock)
                    .execute(&mut *tx)
                    .await?;
            }
            Ok(tx)
        }
    }
}
