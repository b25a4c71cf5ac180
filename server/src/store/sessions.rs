//! Web sessions: one row each, the record as the web encodes it and its expiry (Unix ms).
//! Writes are group-commit jobs (a burst of joins, or a minute's renewals, shares durable
//! commits with the survey's other writes and waits behind no other writer one by one); reads
//! use the read pool.

use sqlx::Row;

use super::grouped::grouped_unlocked;
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
