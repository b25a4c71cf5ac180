//! The database's connections: `sqlx::AnyPool`s over SQLite (embedded default) or PostgreSQL.
//! This module knows no table: the store's handle (`store::Db`) is these connections plus the
//! group commit (`store::group_commit`).
//!
//! Queries are portable runtime queries (see ARCHITECTURE.md): `$1`-style placeholders, which
//! both SQLite and PostgreSQL accept, `INSERT … ON CONFLICT … DO NOTHING`, `RETURNING id`,
//! BIGINT times in unix milliseconds and 0/1 flags. DDL differs per dialect and lives in
//! `migrations/sqlite` and `migrations/postgres`.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// The migrations of a `dialect` database.
fn migrator(dialect: Dialect) -> &'static sqlx::migrate::Migrator {
    match dialect {
        Dialect::Sqlite => &SQLITE_MIGRATOR,
        Dialect::Postgres => &POSTGRES_MIGRATOR,
    }
}

/// The versions of the migrations this build applies to a `dialect` database, in order.
pub fn migrations(dialect: Dialect) -> Vec<i64> {
    migrator(dialect).iter().map(|m| m.version).collect()
}

/// Which database engine a [`Database`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A migrated database: a pool for reads and one for writes, plus the facts the store needs.
///
/// **Every write goes through [`Database::write`], [`Database::begin_write`] or the group commit
/// (`store::Database::grouped`).** On SQLite the read pool's connections are read-only (`PRAGMA
/// query_only`), so a write through [`Database::pool`] fails at once instead of racing the other
/// writers for the file's lock; the write pool is one connection, handed out first come first
/// served (with the session store's writes, see `web::sessions`, and the group commit's
/// groups). SQLite's own wait for a busy lock polls with growing sleeps, so without that queue
/// a busy writer (the group commit under load) could keep taking the lock while another writer
/// sleeps for seconds. On PostgreSQL
/// both pools are the same pool and writers are serialised by advisory locks.
#[derive(Clone, Debug)]
pub struct Database {
    /// Reads (on SQLite, read-only connections).
    pub pool: AnyPool,
    /// Writes: SQLite one connection, taken in turn at [`Database::gate`]; PostgreSQL `pool` itself.
    writer: AnyPool,
    pub dialect: Dialect,
    pub url: String,
    /// SQLite: this process's writers queue here, first come first served, for the write
    /// connection (and the session store for its own).
    gate: Gate,
}

/// The writers' queue of a SQLite database: this process's writers (the group commit, the
/// session store, [`Database::write`]) take their turn here, first come first served.
pub type Gate = Arc<tokio::sync::Mutex<()>>;

/// A connection to write on, held in turn with every other writer of the process (SQLite).
/// Derefs to the connection: `query.execute(&mut *db.write().await?)`.
pub struct WriteConn<'a> {
    conn: sqlx::pool::PoolConnection<sqlx::Any>,
    _turn: Option<tokio::sync::MutexGuard<'a, ()>>,
}

impl std::ops::Deref for WriteConn<'_> {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteConn<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}

impl Database {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) and applies the migrations.
    pub async fn connect(url: &str) -> anyhow::Result<Database> {
        sqlx::any::install_default_drivers();
        let dialect = dialect_of(url)?;
        if dialect == Dialect::Sqlite && url.contains(":memory:") {
            // readers and the writer are separate connections: they must share a file
            bail!("an in-memory SQLite database cannot be shared by readers and the writer; give a file (sqlite://path/natstudy.db?mode=rwc)");
        }
        let options = AnyConnectOptions::from_str(url)
            .with_context(|| format!("invalid database URL {}", redact(url)))?;
        let open = |max: u32, read_only: bool| {
            let kept = dialect == Dialect::Sqlite && !read_only;
            AnyPoolOptions::new()
                .max_connections(max)
                // SQLite's write connection lives as long as the process: its thread, made
                // here by the caller's thread (the command's main thread), keeps that thread's
                // priority, above the runtime's (see `crate::priority`)
                .idle_timeout((!kept).then_some(Duration::from_secs(600)))
                .max_lifetime((!kept).then_some(Duration::from_secs(1800)))
                .acquire_timeout(Duration::from_secs(30))
                // a SQLite connection is a file this process holds open, not a socket that
                // can die unseen: no check before each hand-out (a round trip to the
                // connection's thread, under load the dearest part of a short read)
                .test_before_acquire(dialect == Dialect::Postgres)
                .before_acquire(move |conn, meta| {
                    Box::pin(async move {
                        if dialect == Dialect::Postgres && replan_due(meta.age, meta.idle_for) {
                            conn.execute("DISCARD PLANS").await?;
                        }
                        Ok(true)
                    })
                })
                .after_connect(move |conn, _meta| {
                    Box::pin(async move {
                        if dialect == Dialect::Sqlite {
                            // WAL for concurrent readers; FULL sync so an acknowledged vote
                            // survives a crash of the process or the machine.
                            conn.execute(
                                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
                            )
                            .await?;
                            if read_only {
                                conn.execute("PRAGMA query_only = ON").await?;
                            }
                        }
                        Ok(())
                    })
                })
                .connect_with(options.clone())
        };
        let cannot_open = || format!("cannot open database {}", redact(url));
        let (pool, writer) = match dialect {
            Dialect::Sqlite => {
                // the writer first: it creates the file (`mode=rwc`) and sets WAL
                let writer = open(1, false).await.with_context(cannot_open)?;
                (open(8, true).await.with_context(cannot_open)?, writer)
            }
            Dialect::Postgres => {
                let pool = open(16, false).await.with_context(cannot_open)?;
                (pool.clone(), pool)
            }
        };
        migrator(dialect)
            .run(&writer)
            .await
            .with_context(|| format!("cannot migrate database {}", redact(url)))?;
        Ok(Database {
            pool,
            writer,
            dialect,
            url: url.to_owned(),
            gate: Default::default(),
        })
    }

    /// A connection for auto-commit writes (each statement its own transaction), in turn with
    /// every other writer of this process on SQLite.
    pub async fn write(&self) -> sqlx::Result<WriteConn<'_>> {
        let turn = self.turn().await;
        Ok(WriteConn {
            conn: self.writer.acquire().await?,
            _turn: turn,
        })
    }

    /// SQLite: waits for this process's turn to write (first come, first served).
    async fn turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.dialect {
            Dialect::Sqlite => Some(self.gate.lock().await),
            Dialect::Postgres => None,
        }
    }

    /// The writers' queue, for the session store's own connections.
    pub fn gate(&self) -> Gate {
        self.gate.clone()
    }

    /// Closes both pools.
    pub async fn close(&self) {
        self.pool.close().await;
        self.writer.close().await;
    }

    /// A transaction that writes, in turn with this process's other writers (SQLite takes the
    /// write lock at BEGIN IMMEDIATE). No advisory lock: for writes that need no check
    /// serialised with a study's other writers.
    pub async fn begin(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
        match self.dialect {
            Dialect::Sqlite => {
                let _turn = self.turn().await;
                self.writer.begin_with("BEGIN IMMEDIATE").await
            }
            Dialect::Postgres => self.writer.begin().await,
        }
    }

    /// A transaction that writes, serialised with every other writer of `lock`: SQLite takes
    /// the write lock at BEGIN (IMMEDIATE), PostgreSQL a transaction-scoped advisory lock. Use it
    /// for check-then-write sequences (leases, votes, imports).
    pub async fn begin_write(
        &self,
        lock: impl Into<i64>,
    ) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
        let lock: i64 = lock.into();
        let mut tx = self.begin().await?;
        if self.dialect == Dialect::Postgres {
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS held")
                .bind(lock)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx)
    }

    /// The write pool, for the group commit's writer (`store::group_commit`), which takes its
    /// turn at [`Database::gate`] itself.
    pub(crate) fn writer(&self) -> &AnyPool {
        &self.writer
    }

    /// The SQLite URL for `natstudy.db` in `data_dir`, creating the directory. The database
    /// holds the cookie key and password hashes: the directory is made (and kept) readable by
    /// its owner only (0700), and the file 0600 — SQLite gives its `-wal` and `-shm` files the
    /// database file's mode.
    pub fn sqlite_url_in(data_dir: &Path) -> anyhow::Result<String> {
        private_dir(data_dir)
            .with_context(|| format!("cannot create data directory {}", data_dir.display()))?;
        let file = data_dir.join("natstudy.db");
        private_file(&file).with_context(|| format!("cannot create {}", file.display()))?;
        Ok(format!("sqlite://{}?mode=rwc", file.display()))
    }
}

/// Creates `dir` (and its parents) if needed, and makes it its owner's only (0700 on Unix).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Creates `file` empty if it does not exist, and makes it and its SQLite companions
/// (`-wal`, `-shm`) their owner's only (0600 on Unix).
fn private_file(file: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let mut with_companions = vec![file.to_path_buf()];
        for suffix in ["-wal", "-shm"] {
            let mut name = file.as_os_str().to_owned();
            name.push(suffix);
            with_companions.push(name.into());
        }
        for f in with_companions.iter().filter(|f| f.exists()) {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

fn dialect_of(url: &str) -> anyhow::Result<Dialect> {
    if url.starts_with("sqlite:") {
        Ok(Dialect::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Dialect::Postgres)
    } else {
        bail!(
            "unsupported database URL {} (use sqlite:// or postgres://)",
            redact(url)
        )
    }
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..scheme + 3], user, &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// Milliseconds since the unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// How long a PostgreSQL connection of natstudy's keeps its plans: the pool's (see
/// [`replan_due`]) and the group commit's writer's (`store::group_commit::replan`).
pub const REPLAN: Duration = Duration::from_secs(2);

/// Whether a pooled PostgreSQL connection's plans are dropped (`DISCARD PLANS`) before it is
/// handed out: when its age passed a multiple of [`REPLAN`] while it sat in the pool.
/// PostgreSQL keeps a prepared statement's generic plan until an `ANALYZE` invalidates it; one
/// made while a study's tables held a few rows (after an `ANALYZE` that found them nearly
/// empty) scans them whole, and the tables grow faster than autovacuum analyses them: every
/// state request then read all of `assignments` (`natstudy bench http --analyze`). Planned
/// again, the statement sees the tables' sizes of now. The writer does the same on its own
/// connection (`store::group_commit::replan`).
fn replan_due(age: Duration, idle_for: Duration) -> bool {
    let every = REPLAN.as_millis();
    age.as_millis() / every != age.saturating_sub(idle_for).as_millis() / every
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh SQLite database in a temporary directory (kept while the directory lives).
    async fn temp_sqlite() -> (Database, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = Database::sqlite_url_in(dir.path()).expect("url");
        (Database::connect(&url).await.expect("db"), dir)
    }

    #[test]
    fn plans_are_dropped_once_a_period() {
        let p = REPLAN;
        let ms = Duration::from_millis;
        // handed back just before a period ended, asked for just after: dropped
        assert!(replan_due(p * 5 + ms(200), ms(700)));
        // handed back and asked for within one period: kept
        assert!(!replan_due(p * 5 + ms(900), ms(600)));
        assert!(!replan_due(p + ms(10), ms(5)));
        // several periods in the pool: dropped once, at this hand-out
        assert!(replan_due(p * 12, p * 10));
        // never handed out before (idle since it was opened) within its first period: kept
        assert!(!replan_due(p / 2, p / 2));
    }

    /// SQLite's write connection is never closed for its age or idleness (its thread keeps
    /// the priority of the thread that opened it, `crate::priority`); the reads' are.
    /// The data directory and the database files are their owner's only (0700, 0600), also
    /// when they existed before with wider modes; the `-wal` file SQLite makes follows.
    #[cfg(unix)]
    #[tokio::test]
    async fn the_data_directory_and_database_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("data");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        let url = Database::sqlite_url_in(&dir).expect("url");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("natstudy.db")), 0o600);
        let db = Database::connect(&url).await.expect("connect");
        sqlx::query("INSERT INTO settings (name, value) VALUES ('x', 'y')")
            .execute(&mut *db.write().await.expect("write"))
            .await
            .expect("write");
        assert_eq!(mode(&dir.join("natstudy.db-wal")), 0o600, "SQLite's WAL");
        drop(db);
        // an older data directory made with the umask's modes is made private
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let file = dir.join("natstudy.db");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        Database::sqlite_url_in(&dir).expect("url");
        assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
    }

    #[tokio::test]
    async fn the_sqlite_write_connection_is_kept() {
        let (db, _dir) = temp_sqlite().await;
        let w = db.writer.options();
        assert_eq!((w.get_idle_timeout(), w.get_max_lifetime()), (None, None));
        let r = db.pool.options();
        assert!(r.get_idle_timeout().is_some() && r.get_max_lifetime().is_some());
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
    }

    /// SQLite: a write through the read pool fails at once; the write connection writes, and
    /// what it committed is what the readers see. In-memory databases are refused (the readers
    /// would not share the writer's database).
    #[tokio::test]
    async fn sqlite_writes_only_through_the_write_connection() {
        let (db, _dir) = temp_sqlite().await;
        let write = "INSERT INTO settings (name, value) VALUES ('probe', 'x')";
        let err = sqlx::query(write)
            .execute(&db.pool)
            .await
            .expect_err("the read pool must not write");
        assert!(err.to_string().contains("readonly"), "{err}");
        sqlx::query(write)
            .execute(&mut *db.write().await.expect("turn"))
            .await
            .expect("the write connection writes");
        let mut tx = db.begin().await.expect("begin");
        sqlx::query("UPDATE settings SET value = 'y' WHERE name = 'probe'")
            .execute(&mut *tx)
            .await
            .expect("update");
        tx.commit().await.expect("commit");
        let seen: String = sqlx::query_scalar("SELECT value FROM settings WHERE name = 'probe'")
            .fetch_one(&db.pool)
            .await
            .expect("read");
        assert_eq!(seen, "y");
        db.close().await;
        let err = Database::connect("sqlite::memory:")
            .await
            .expect_err("in-memory");
        assert!(err.to_string().contains("in-memory"), "{err}");
    }

    #[test]
    fn rejects_unknown_schemes() {
        assert!(dialect_of("mysql://x").is_err());
        assert_eq!(dialect_of("sqlite://a").ok(), Some(Dialect::Sqlite));
        assert_eq!(dialect_of("postgresql://a").ok(), Some(Dialect::Postgres));
    }
}
