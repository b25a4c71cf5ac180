//! Sessions in the database (the same one as the domain), so several `natstudy serve` processes
//! behind a load balancer share them. The cookie key lives in the `settings` table for the same
//! reason.

use std::str::FromStr;

use anyhow::Context;
use rand::RngCore;
use sqlx::Row;
use tower_sessions::cookie::Key;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::db::{Backend, Db};

/// tower-sessions' sqlx stores, one per backend, behind one type.
#[derive(Debug, Clone)]
pub enum DbSessionStore {
    /// With the database's writers' queue (`Db::gate`): session writes, on the store's own
    /// connections, take their turn like every other writer of this process.
    Sqlite(SqliteStore, crate::db::group_commit::Gate),
    Postgres(PostgresStore),
}

impl DbSessionStore {
    /// Opens the store on the same database as `db` and creates its table.
    pub async fn open(db: &Db) -> anyhow::Result<DbSessionStore> {
        let store = match db.backend {
            Backend::Sqlite => {
                let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&db.url)?
                    .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                    .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
                    .busy_timeout(std::time::Duration::from_secs(10));
                let pool = sqlx::sqlite::SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(opts)
                    .await
                    .context("session store")?;
                let s = SqliteStore::new(pool);
                s.migrate().await.context("session store migration")?;
                DbSessionStore::Sqlite(s, db.gate())
            }
            Backend::Postgres => {
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(4)
                    .connect(&db.url)
                    .await
                    .context("session store")?;
                let s = PostgresStore::new(pool);
                s.migrate().await.context("session store migration")?;
                DbSessionStore::Postgres(s)
            }
        };
        Ok(store)
    }
}

#[async_trait::async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s, gate) => {
                let _turn = gate.lock().await;
                s.create(record).await
            }
            DbSessionStore::Postgres(s) => s.create(record).await,
        }
    }
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s, gate) => {
                let _turn = gate.lock().await;
                s.save(record).await
            }
            DbSessionStore::Postgres(s) => s.save(record).await,
        }
    }
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            DbSessionStore::Sqlite(s, _) => s.load(id).await,
            DbSessionStore::Postgres(s) => s.load(id).await,
        }
    }
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s, gate) => {
                let _turn = gate.lock().await;
                s.delete(id).await
            }
            DbSessionStore::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s, gate) => {
                let _turn = gate.lock().await;
                s.delete_expired().await
            }
            DbSessionStore::Postgres(s) => s.delete_expired().await,
        }
    }
}

/// The key that signs session cookies: made once, stored in `settings`, shared by all processes.
pub async fn cookie_key(db: &Db) -> anyhow::Result<Key> {
    let mut fresh = [0u8; 64];
    rand::thread_rng().fill_bytes(&mut fresh);
    let hex: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
    sqlx::query("INSERT INTO settings (name, value) VALUES ('cookie_key', $1) ON CONFLICT (name) DO NOTHING")
        .bind(&hex)
        .execute(&mut *db.write().await?)
        .await?;
    let stored: String = sqlx::query("SELECT value FROM settings WHERE name = 'cookie_key'")
        .fetch_one(&db.pool)
        .await?
        .try_get(0)?;
    let bytes = (0..stored.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(stored.get(i..i + 2).unwrap_or("zz"), 16))
        .collect::<Result<Vec<u8>, _>>()
        .context("corrupt cookie key in settings")?;
    Key::try_from(bytes.as_slice()).context("cookie key too short")
}
