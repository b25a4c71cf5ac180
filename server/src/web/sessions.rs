//! Sessions in the database (the same one as the domain), so several `natstudy serve` processes
//! behind a load balancer share them; their writes share the survey's group commit. The cookie
//! key lives in the `settings` table for the same reason.

use anyhow::Context;
use rand::RngCore;
use tower_sessions::cookie::Key;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};

use natstudy_core::service;
use natstudy_core::service::Db;

/// Sessions in natstudy's `sessions` table (`store::sessions`: writes in the group commit),
/// encoded as JSON.
#[derive(Clone)]
pub struct DbSessionStore {
    db: Db,
}

impl std::fmt::Debug for DbSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbSessionStore").finish_non_exhaustive()
    }
}

impl DbSessionStore {
    /// Opens the store on the same database as `db`, after moving in the sessions an older
    /// natstudy kept in tower-sessions' table ([`port_legacy`]).
    pub async fn open(db: &Db) -> anyhow::Result<DbSessionStore> {
        let ported = port_legacy(db).await.context("session store")?;
        if ported > 0 {
            tracing::info!(ported, "sessions moved from tower-sessions' table");
        }
        Ok(DbSessionStore { db: db.clone() })
    }
}

/// Moves the live sessions of tower-sessions' table (made before natstudy kept its own) into
/// `sessions` and drops that table, once (`store::sessions::port_legacy`): a session signed in
/// before the upgrade stays signed in. Expired sessions and records that do not decode are left
/// behind with the table. Returns how many moved.
pub async fn port_legacy(db: &Db) -> anyhow::Result<u64> {
    let now = tower_sessions::cookie::time::OffsetDateTime::now_utc();
    let ported = service::sessions::port_legacy(db, |id, data| {
        let record: Record = match rmp_serde::from_slice(data) {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(id = %id, error = %e, "an old session that does not decode is dropped");
                return None;
            }
        };
        if record.expiry_date <= now {
            return None;
        }
        encode(&record).ok()
    })
    .await?;
    Ok(ported)
}

fn backend_error(e: service::ServiceError) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

/// The key a session is stored under: the SHA-256 of its id, in hex. The id itself (what the
/// signed cookie carries) is never written, so a copy of the database — a backup, a stolen
/// file — holds no session anyone could resume, even with the cookie key beside it.
fn key_of(id: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// A record's data and expiry as stored, without its id.
#[derive(serde::Serialize)]
struct Stored<'r> {
    data: &'r std::collections::HashMap<String, serde_json::Value>,
    expiry_date: &'r tower_sessions::cookie::time::OffsetDateTime,
}

/// [`Stored`], read back.
#[derive(serde::Deserialize)]
struct Loaded {
    data: std::collections::HashMap<String, serde_json::Value>,
    expiry_date: tower_sessions::cookie::time::OffsetDateTime,
}

/// A record as stored: its key ([`key_of`]), its data without the id, its expiry (Unix ms).
fn encode(record: &Record) -> session_store::Result<(String, String, i64)> {
    let data = serde_json::to_string(&Stored {
        data: &record.data,
        expiry_date: &record.expiry_date,
    })
    .map_err(|e| session_store::Error::Encode(e.to_string()))?;
    let expires = (record.expiry_date.unix_timestamp_nanos() / 1_000_000) as i64;
    Ok((key_of(&record.id.to_string()), data, expires))
}

/// The record stored as [`encode`] wrote it, under the id it was asked for by.
fn decode(id: &Id, data: &str) -> session_store::Result<Record> {
    let loaded: Loaded =
        serde_json::from_str(data).map_err(|e| session_store::Error::Decode(e.to_string()))?;
    Ok(Record {
        id: *id,
        data: loaded.data,
        expiry_date: loaded.expiry_date,
    })
}

#[async_trait::async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        loop {
            let (id, data, expires) = encode(record)?;
            if service::sessions::create(&self.db, &id, &data, expires)
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
        service::sessions::save(&self.db, &id, &data, expires)
            .await
            .map_err(backend_error)
    }
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let found = service::sessions::load(
            &self.db,
            &key_of(&id.to_string()),
            natstudy_core::db::now_ms(),
        )
        .await
        .map_err(backend_error)?;
        found.map(|data| decode(id, &data)).transpose()
    }
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        service::sessions::delete(&self.db, &key_of(&id.to_string()))
            .await
            .map_err(backend_error)
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        service::sessions::delete_expired(&self.db, natstudy_core::db::now_ms())
            .await
            .map(|_| ())
            .map_err(backend_error)
    }
}

/// The key that signs session cookies: made once, stored in `settings`, shared by all processes.
pub async fn cookie_key(db: &Db) -> anyhow::Result<Key> {
    let mut fresh = [0u8; 64];
    rand::thread_rng().fill_bytes(&mut fresh);
    let stored = service::sessions::cookie_key(db, &hex::encode(fresh)).await?;
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

    /// A fresh SQLite database in a temporary directory (kept while the directory lives).
    async fn temp_sqlite() -> (Db, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::connect(&Db::sqlite_url_in(dir.path()).expect("url"))
            .await
            .expect("db");
        (db, dir)
    }

    /// A session comes back as it was stored until it expires, and not after its deletion
    /// (sessions an older natstudy kept elsewhere: `tests/tests/abuse.rs`,
    /// `old_sessions_move_once_*`).
    #[tokio::test]
    async fn sessions_come_back_until_they_end() {
        let (db, _dir) = temp_sqlite().await;
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

        store.delete(&live.id).await.expect("delete");
        assert_eq!(store.load(&live.id).await.expect("load"), None);
    }

    /// The database holds no session id: a row's key is the id's hash, and its data does not
    /// carry the id either; the session still comes back by its id.
    #[tokio::test]
    async fn the_database_holds_no_session_id() {
        let (db, _dir) = temp_sqlite().await;
        let store = DbSessionStore::open(&db).await.expect("store");
        let mut live = record(7, Duration::hours(1));
        store.create(&mut live).await.expect("create");
        let plain = live.id.to_string();
        let (key, data): (String, String) = sqlx::query_as("SELECT id, data FROM sessions")
            .fetch_one(&db.pool)
            .await
            .expect("row");
        assert_eq!(key.len(), 64, "a SHA-256 in hex: {key}");
        assert_ne!(key, plain);
        assert!(!data.contains(&plain), "{data}");
        assert!(!data.contains(&live.id.0.to_string()), "{data}");
        assert_eq!(store.load(&live.id).await.expect("load"), Some(live));
    }
}
