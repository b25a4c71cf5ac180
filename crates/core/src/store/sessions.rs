//! Web sessions: one row each, the record as the web encodes it and its expiry (Unix ms).
//! Writes are group-commit jobs (a burst of joins, or a minute's renewals, shares durable
//! commits with the survey's other writes and waits behind no other writer one by one); reads
//! use the read pool.

use sqlx::Row;

use super::group_commit::jobs::grouped_unlocked;
use super::{Db, StoreResult};

/// The session's record while it has not expired at `now` (ms).
pub async fn load(db: &Db, id: &str, now: i64) -> StoreResult<Option<String>> {
    Ok(
        sqlx::query("SELECT data FROM sessions WHERE id = $1 AND expires_ms > $2")
            .bind(id)
            .bind(now)
            .fetch_optional(&db.pool)
            .await?
            .map(|r| r.try_get(0))
            .transpose()?,
    )
}

/// Stores a new session; `false` when the id is taken (the caller draws another).
pub async fn create(db: &Db, id: &str, data: &str, expires: i64) -> StoreResult<bool> {
    let (id, data) = (id.to_owned(), data.to_owned());
    grouped_unlocked(db, move |conn, _| {
        let (id, data) = (id.clone(), data.clone());
        Box::pin(async move { insert_in(conn, id, data, expires).await })
    })
    .await
}

/// Stores a new session in the caller's transaction; `false` when the id is taken.
pub async fn insert_in(
    conn: &mut sqlx::AnyConnection,
    id: String,
    data: String,
    expires: i64,
) -> StoreResult<bool> {
    let n = sqlx::query(
        "INSERT INTO sessions (id, data, expires_ms) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(data)
    .bind(expires)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// Stores the session, new or not.
pub async fn save(db: &Db, id: &str, data: &str, expires: i64) -> StoreResult<()> {
    let (id, data) = (id.to_owned(), data.to_owned());
    grouped_unlocked(db, move |conn, _| {
        let (id, data) = (id.clone(), data.clone());
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO sessions (id, data, expires_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_ms = excluded.expires_ms",
            )
            .bind(id)
            .bind(data)
            .bind(expires)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// Ends the session.
pub async fn delete(db: &Db, id: &str) -> StoreResult<()> {
    let id = id.to_owned();
    grouped_unlocked(db, move |conn, _| {
        let id = id.clone();
        Box::pin(async move {
            sqlx::query("DELETE FROM sessions WHERE id = $1")
                .bind(id)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await
}

/// Deletes the sessions expired at `now`; returns how many.
pub async fn delete_expired(db: &Db, now: i64) -> StoreResult<u64> {
    Ok(sqlx::query("DELETE FROM sessions WHERE expires_ms <= $1")
        .bind(now)
        .execute(&mut *db.write().await?)
        .await?
        .rows_affected())
}

/// Old sessions read at a time when they are moved (see [`port_legacy`]).
const PORT_PAGE: usize = 500;

/// The write lock (PostgreSQL: advisory key) under which servers starting together port the
/// old sessions one after another: the second finds the table gone.
const PORT_LOCK: i64 = -2;

/// The table an older natstudy kept its sessions in (tower-sessions' sqlx store: a row per
/// session, its record encoded as MessagePack), per database.
fn legacy_table(dialect: crate::db::Dialect) -> &'static str {
    match dialect {
        crate::db::Dialect::Sqlite => "tower_sessions",
        crate::db::Dialect::Postgres => "\"tower_sessions\".\"session\"",
    }
}

/// Moves the sessions of tower-sessions' table (made before natstudy kept its own) into
/// `sessions` and drops that table, once, in one transaction, a page at a time (memory stays
/// bounded however many rows it holds): `convert(id, data)` gives a row's stored form (key,
/// data, expiry) or `None` to leave it behind. From then on a session is read and deleted in
/// one table. Returns how many moved.
pub async fn port_legacy(
    db: &Db,
    convert: impl Fn(&str, &[u8]) -> Option<(String, String, i64)>,
) -> StoreResult<u64> {
    let mut tx = db.begin_write(PORT_LOCK).await?;
    let exists: bool = match db.dialect {
        crate::db::Dialect::Sqlite => sqlx::query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tower_sessions'",
        )
        .fetch_optional(&mut *tx)
        .await?
        .is_some(),
        crate::db::Dialect::Postgres => sqlx::query(
            "SELECT 1 FROM pg_tables WHERE schemaname = 'tower_sessions' AND tablename = 'session'",
        )
        .fetch_optional(&mut *tx)
        .await?
        .is_some(),
    };
    if !exists {
        tx.commit().await?;
        return Ok(0);
    }
    let table = legacy_table(db.dialect);
    let mut ported = 0;
    let page = format!("SELECT id, data FROM {table} WHERE id > $1 ORDER BY id LIMIT {PORT_PAGE}");
    let mut after = String::new();
    loop {
        let rows = sqlx::query(&page)
            .bind(after.as_str())
            .fetch_all(&mut *tx)
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get("id")?;
        for r in rows {
            let id: String = r.try_get("id")?;
            let data: Vec<u8> = r.try_get("data")?;
            if let Some((key, data, expires)) = convert(&id, &data) {
                ported += u64::from(insert_in(&mut tx, key, data, expires).await?);
            }
        }
    }
    sqlx::query(&format!("DROP TABLE {table}"))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ported)
}

/// The key that signs session cookies, in hex: `fresh` is stored the first time, and every
/// process reads back the one stored.
pub async fn cookie_key(db: &Db, fresh: &str) -> StoreResult<String> {
    sqlx::query("INSERT INTO settings (name, value) VALUES ('cookie_key', $1) ON CONFLICT (name) DO NOTHING")
        .bind(fresh)
        .execute(&mut *db.write().await?)
        .await?;
    Ok(
        sqlx::query("SELECT value FROM settings WHERE name = 'cookie_key'")
            .fetch_one(&db.pool)
            .await?
            .try_get(0)?,
    )
}
