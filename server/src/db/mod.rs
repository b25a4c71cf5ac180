//! The database handle: one `sqlx::AnyPool` over SQLite (embedded default) or PostgreSQL.
//!
//! Queries are portable runtime queries (see ARCHITECTURE.md): `$1`-style placeholders, which
//! both SQLite and PostgreSQL accept, `INSERT … ON CONFLICT … DO NOTHING`, `RETURNING id`,
//! BIGINT times in unix milliseconds and 0/1 flags. DDL differs per backend and lives in
//! `migrations/sqlite` and `migrations/postgres`.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{bail, Context};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub mod group_commit;

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Which database engine a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A migrated connection pool plus the facts the store needs about it.
#[derive(Clone, Debug)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
    pub url: String,
    /// The writer that commits claims and votes in groups (see [`group_commit`]).
    pub group: group_commit::GroupCommit,
    /// SQLite: this process's writers take turns here, first come first served, before they
    /// take the database's write lock ([`Db::write_turn`]). SQLite's own wait for a busy lock
    /// polls with growing sleeps, so without the queue a busy writer (the group commit under
    /// load) could keep taking the lock while another writer sleeps for seconds.
    pub gate: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl Db {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) and applies the migrations.
    pub async fn connect(url: &str) -> anyhow::Result<Db> {
        sqlx::any::install_default_drivers();
        let backend = backend_of(url)?;
        let options = AnyConnectOptions::from_str(url)
            .with_context(|| format!("invalid database URL {}", redact(url)))?;
        let max = match backend {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        };
        let pool = AnyPoolOptions::new()
            .max_connections(max)
            .acquire_timeout(Duration::from_secs(30))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL for concurrent readers; FULL sync so an acknowledged vote survives
                        // a crash of the process or the machine.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .with_context(|| format!("cannot open database {}", redact(url)))?;
        let migrator = match backend {
            Backend::Sqlite => &SQLITE_MIGRATOR,
            Backend::Postgres => &POSTGRES_MIGRATOR,
        };
        migrator
            .run(&pool)
            .await
            .with_context(|| format!("cannot migrate database {}", redact(url)))?;
        Ok(Db {
            pool,
            backend,
            url: url.to_owned(),
            group: group_commit::GroupCommit::default(),
            gate: Default::default(),
        })
    }

    /// A transaction that writes, serialised with every other writer of `lock`: SQLite takes
    /// the write lock at BEGIN (IMMEDIATE), PostgreSQL a transaction-scoped advisory lock. Use it
    /// for check-then-write sequences (leases, votes, imports).
    pub async fn begin_write(
        &self,
        lock: impl Into<i64>,
    ) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
        let lock: i64 = lock.into();
        match self.backend {
            Backend::Sqlite => {
                let _turn = self.gate.lock().await;
                self.pool.begin_with("BEGIN IMMEDIATE").await
            }
            Backend::Postgres => {
                let mut tx = self.pool.begin().await?;
                sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS held")
                    .bind(lock)
                    .execute(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }

    /// Runs a short write job in the next group commit (see [`group_commit`]); the job answers
    /// its caller itself once the group's transaction ended.
    pub async fn grouped(&self, job: Box<dyn group_commit::Job>) {
        self.group
            .submit(&self.pool, self.backend, &self.gate, job)
            .await
    }

    /// A writer's turn (SQLite; nothing to wait for on PostgreSQL): hold it while a statement
    /// outside `begin_write` takes the write lock — an auto-commit write, or a write of the
    /// session store — so it queues fairly with every other writer of this process.
    pub async fn write_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.backend {
            Backend::Sqlite => Some(self.gate.lock().await),
            Backend::Postgres => None,
        }
    }

    /// The SQLite URL for `natstudy.db` in `data_dir`, creating the directory.
    pub fn sqlite_url_in(data_dir: &Path) -> anyhow::Result<String> {
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("cannot create data directory {}", data_dir.display()))?;
        let file = data_dir.join("natstudy.db");
        Ok(format!("sqlite://{}?mode=rwc", file.display()))
    }
}

fn backend_of(url: &str) -> anyhow::Result<Backend> {
    if url.starts_with("sqlite:") {
        Ok(Backend::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Backend::Postgres)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
    }

    #[test]
    fn rejects_unknown_schemes() {
        assert!(backend_of("mysql://x").is_err());
        assert_eq!(backend_of("sqlite://a").ok(), Some(Backend::Sqlite));
        assert_eq!(backend_of("postgresql://a").ok(), Some(Backend::Postgres));
    }
}
