//! Sessions in the database (the same one as the domain), so several `natstudy serve` processes
//! behind a load balancer share them; their writes share the survey's group commit. The cookie
//! key lives in the `settings` table for the same reason.

use std::str::FromStr;

use anyhow::Context;
use rand::RngCore;
use sqlx::Row;
use tower_sessions::cookie::Key;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::db::{Backend, Db};
use crate::store::sessions;

/// Sessions in natstudy's `sessions` table (`store::sessions`: writes in the group commit),
/// encoded as JSON. Sessions made before that table existed are read from tower-sessions' sqlx
/// store (its table) when a session is not found, and deleted from both.
#[derive(Clone)]
pub struct DbSessionStore {
    db: Db,
    legacy: Legacy,
}

#[derive(Debug, Clone)]
enum Legacy {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl std::fmt::Debug for DbSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbSessionStore").finish_non_exhaustive()
    }
}

impl DbSessionStore {
    /// Opens the store on the same database as `db` (with tower-sessions' table, read for
    /// sessions made before natstudy kept its own).
    pub async fn open(db: &Db) -> anyhow::Result<DbSessionStore> {
        let legacy = match db.backend {
            Backend::Sqlite => {
                let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&db.url)?
                    .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                    .busy_timeout(std::time::Duration::from_secs(10));
                let pool = sqlx::sqlite::SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(opts)
                    .await
                    .context("session store")?;
                let s = SqliteStore::new(pool);
                {
                    // its table, created once (a write: in turn with the other writers)
                    let gate = db.gate();
                    let _turn = gate.lock().await;
                    s.migrate().await.context("session store migration")?;
                }
                Legacy::Sqlite(s)
            }
            Backend::Postgres => {
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(1)
                    .connect(&db.url)
                    .await
                    .context("session store")?;
                let s = PostgresStore::new(pool);
                s.migrate().await.context("session store migration")?;
                Legacy::Postgres(s)
            }
        };
        Ok(DbSessionStore {
            db: db.clone(),
            legacy,
        })
    }
}

fn backend_error(e: crate::store::StoreError) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn encode(record: &Record) -> session_store::Result<(String, String, i64)> {
    let data =
        serde_json::to_string(record).map_err(|e| session_store::Error::Encode(e.to_string()))?;
    let expires = (record.expiry_date.unix_timestamp_nanos() / 1_000_000) as i64;
    Ok((record.id.to_string(), data, expires))
}

#[async_trait::async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        loop {
            let (id, data, expires) = encode(record)?;
            if sessions::create(&self.db, &id, &data, expires)
                .await
                .map_err(backend_error)?
            {
                return Ok(());
            }
            // the id is taken (a 2^-128 event): another one
            record.id = Id::default();
        }
    }
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let (id, data, expires) = encode(record)?;
        sessions::save(&self.db, &id, &data, expires)
            .await
            .map_err(backend_error)
    }
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let found = sessions::load(&self.db, &id.to_string(), crate::db::now_ms())
            .await
            .map_err(backend_error)?;
        match found {
            Some(data) => serde_json::from_str(&data)
                .map(Some)
                .map_err(|e| session_store::Error::Decode(e.to_string())),
            None => match &self.legacy {
                Legacy::Sqlite(s) => s.load(id).await,
                Legacy::Postgres(s) => s.load(id).await,
            },
        }
    }
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sessions::delete(&self.db, &id.to_string())
            .await
            .map_err(backend_error)
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        sessions::delete_expired(&self.db, crate::db::now_ms())
            .await
            .map_err(backend_error)?;
        // the legacy table's (a write: in turn with this process's other writers)
        match &self.legacy {
            Legacy::Sqlite(s) => {
                let gate = self.db.gate();
                let _turn = gate.lock().await;
                s.delete_expired().await
            }
            Legacy::Postgres(s) => s.delete_expired().await,
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

#[cfg(test)]
mod tests {
    use super::*;
    use tower_sessions::cookie::time::{Duration, OffsetDateTime};

    fn record(participant: i64, expires_in: Duration) -> Record {
        Record {
            id: Id::default(),
            data: [("participant".to_owned(), serde_json::json!(participant))]
                .into_iter()
                .collect(),
            expiry_date: OffsetDateTime::now_utc() + expires_in,
        }
    }

    /// A session comes back as it was stored until it expires, and not after its deletion;
    /// a session tower-sessions' store wrote before natstudy kept its own is still read, and
    /// deleted with the new ones.
    #[tokio::test]
    async fn sessions_come_back_until_they_end() {
        let (db, _dir) = crate::db::temp_sqlite().await;
        let store = DbSessionStore::open(&db).await.expect("store");

        let mut live = record(7, Duration::hours(1));
        store.create(&mut live).await.expect("create");
        assert_eq!(
            store.load(&live.id).await.expect("load"),
            Some(live.clone())
        );
        live.data.insert("seen".into(), serde_json::json!(12));
        store.save(&live).await.expect("save");
        assert_eq!(
            store.load(&live.id).await.expect("load"),
            Some(live.clone())
        );

        let expired = record(8, Duration::seconds(-1));
        store.save(&expired).await.expect("save");
        assert_eq!(store.load(&expired.id).await.expect("load"), None);
        store.delete_expired().await.expect("cleanup");
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions")
            .fetch_one(&db.pool)
            .await
            .expect("count");
        assert_eq!(rows, 1, "only the live session is left");

        let Legacy::Sqlite(legacy) = &store.legacy else {
            panic!("a SQLite store")
        };
        let mut old = record(9, Duration::hours(1));
        {
            let gate = db.gate();
            let _turn = gate.lock().await;
            legacy.create(&mut old).await.expect("legacy create");
        }
        assert_eq!(store.load(&old.id).await.expect("load"), Some(old.clone()));
        for id in [live.id, old.id] {
            store.delete(&id).await.expect("delete");
            assert_eq!(store.load(&id).await.expect("load"), None);
        }
    }
}
