//! Sessions as the web's session store keeps them (`web::sessions` adapts tower-sessions to
//! these): rows keyed by the SHA-256 of the session id, written in the group commit.

use super::ServiceResult;
use crate::store::sessions;
use crate::store::Db;

pub async fn load(db: &Db, key: &str, now: i64) -> ServiceResult<Option<String>> {
    Ok(sessions::load(db, key, now).await?)
}

/// Stores a new session; `false` when the key is taken.
pub async fn create(db: &Db, key: &str, data: &str, expires: i64) -> ServiceResult<bool> {
    Ok(sessions::create(db, key, data, expires).await?)
}

pub async fn save(db: &Db, key: &str, data: &str, expires: i64) -> ServiceResult<()> {
    Ok(sessions::save(db, key, data, expires).await?)
}

pub async fn delete(db: &Db, key: &str) -> ServiceResult<()> {
    Ok(sessions::delete(db, key).await?)
}

/// Deletes the sessions past their expiry: how many.
pub async fn delete_expired(db: &Db, now: i64) -> ServiceResult<u64> {
    Ok(sessions::delete_expired(db, now).await?)
}

/// Moves an older natstudy's sessions into the table, once (see
/// `store::sessions::port_legacy`).
pub async fn port_legacy(
    db: &Db,
    convert: impl Fn(&str, &[u8]) -> Option<(String, String, i64)>,
) -> ServiceResult<u64> {
    Ok(sessions::port_legacy(db, convert).await?)
}

/// The cookie-signing key in hex, `fresh` the first time.
pub async fn cookie_key(db: &Db, fresh: &str) -> ServiceResult<String> {
    Ok(sessions::cookie_key(db, fresh).await?)
}
