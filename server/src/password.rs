//! argon2id password hashing. Hashing is CPU-heavy: async callers go through `spawn_blocking`.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {MIN_LEN} characters")]
    TooShort,
    #[error("cannot hash password: {0}")]
    Hash(String),
}

pub const MIN_LEN: usize = 8;

/// A PHC string (`$argon2id$v=19$…`) for `password`.
pub fn hash(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_LEN {
        return Err(PasswordError::TooShort);
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default() // argon2id, v19, OWASP-recommended parameters
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

/// Whether `password` matches the PHC string `phc`. A malformed hash never matches.
pub fn verify(password: &str, phc: &str) -> bool {
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
    fn short_passwords_are_refused() {
        assert!(matches!(hash("short"), Err(PasswordError::TooShort)));
    }
}
