//! argon2id password hashing. Hashing is CPU-heavy and takes ~19 MiB a call: async callers use
//! [`hash_async`] / [`verify_async`], which run at most one hash per core at a time (a flood of
//! sign-ins queues instead of filling the blocking pool and the memory).

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {MIN_LEN} characters")]
    TooShort,
    #[error("password must be at most {MAX_LEN} characters")]
    TooLong,
    #[error("cannot hash password: {0}")]
    Hash(String),
    /// Every core has been busy with other hashes for [`QUEUE_WAIT`]: the server is flooded.
    #[error("the server is busy: try again shortly")]
    Busy,
}

pub const MIN_LEN: usize = 8;
/// Longer inputs are refused before hashing (and never verified: see [`verify`]).
pub const MAX_LEN: usize = 1024;

/// A PHC string (`$argon2id$v=19$…`) for `password`.
pub fn hash(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_LEN {
        return Err(PasswordError::TooShort);
    }
    if password.len() > MAX_LEN {
        return Err(PasswordError::TooLong);
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default() // argon2id, v19, OWASP-recommended parameters
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

/// Whether `password` matches the PHC string `phc`. A malformed hash never matches.
pub fn verify(password: &str, phc: &str) -> bool {
    if password.len() > MAX_LEN {
        return false;
    }
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A hash to verify against when the user does not exist, so timing does not reveal it.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash("not-a-real-password").unwrap_or_default())
}

/// Hashes running at once: one per core.
fn permits() -> &'static tokio::sync::Semaphore {
    static LIMIT: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        tokio::sync::Semaphore::new(cores)
    })
}

/// How long a hash waits for a core before the caller is told the server is busy.
pub const QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

async fn permit() -> Result<tokio::sync::SemaphorePermit<'static>, PasswordError> {
    match tokio::time::timeout(QUEUE_WAIT, permits().acquire()).await {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(PasswordError::Hash(e.to_string())),
        Err(_) => Err(PasswordError::Busy),
    }
}

/// [`hash`] off the async threads, one per core at a time.
pub async fn hash_async(password: String) -> Result<String, PasswordError> {
    let _permit = permit().await?;
    tokio::task::spawn_blocking(move || hash(&password))
        .await
        .map_err(|e| PasswordError::Hash(e.to_string()))?
}

/// [`verify`] off the async threads, one per core at a time.
pub async fn verify_async(password: String, phc: String) -> Result<bool, PasswordError> {
    let _permit = permit().await?;
    Ok(tokio::task::spawn_blocking(move || verify(&password, &phc))
        .await
        .unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_and_verify() {
        let h = hash("correct horse").expect("hash");
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify("correct horse", &h));
        assert!(!verify("wrong horse", &h));
        assert!(!verify("correct horse", "garbage"));
    }

    #[test]
    fn short_and_huge_passwords_are_refused() {
        assert!(matches!(hash("short"), Err(PasswordError::TooShort)));
        let huge = "x".repeat(MAX_LEN + 1);
        assert!(matches!(hash(&huge), Err(PasswordError::TooLong)));
        assert!(!verify(&huge, dummy_hash()));
    }
}
