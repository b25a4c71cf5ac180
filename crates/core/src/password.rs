//! argon2id password hashing. Hashing is CPU-heavy and takes ~19 MiB a call: async callers use
//! [`hash_async`] / [`verify_async`], which run at most one hash per core at a time (a flood of
//! sign-ins queues instead of filling the blocking pool and the memory).

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordVerifier, SaltString};
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

/// The working memory of hashes, kept and reused: one buffer of argon2's default size (19 MiB)
/// per core that may hash at once ([`permits`]). A flood of sign-ins reuses the same few
/// buffers instead of allocating and freeing 19 MiB per attempt, which the allocator kept.
struct Buffers {
    free: std::sync::Mutex<Vec<Vec<argon2::Block>>>,
}

impl Buffers {
    fn get() -> &'static Buffers {
        static BUFFERS: std::sync::OnceLock<Buffers> = std::sync::OnceLock::new();
        BUFFERS.get_or_init(|| Buffers {
            free: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Runs `f` with a buffer of at least `blocks` blocks (a kept one when it is big enough).
    fn with<T>(&self, blocks: usize, f: impl FnOnce(&mut [argon2::Block]) -> T) -> T {
        let kept = self.free.lock().ok().and_then(|mut v| v.pop());
        let mut buf = match kept {
            Some(b) if b.len() >= blocks => b,
            _ => vec![argon2::Block::default(); blocks.max(DEFAULT_BLOCKS)],
        };
        let out = f(&mut buf[..blocks]);
        // kept only at the default size, and no more than one per core
        if buf.len() == DEFAULT_BLOCKS {
            if let Ok(mut v) = self.free.lock() {
                if v.len() < max_hashes() {
                    v.push(buf);
                }
            }
        }
        out
    }

    /// Buffers kept now (for tests).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.free.lock().map(|v| v.len()).unwrap_or(0)
    }
}

/// argon2's default working memory, in 1 KiB blocks.
const DEFAULT_BLOCKS: usize = argon2::Params::DEFAULT_M_COST as usize;

/// A PHC string (`$argon2id$v=19$…`) for `password`.
pub fn hash(password: &str) -> Result<String, PasswordError> {
    use argon2::password_hash::{Output, ParamsString};
    if password.chars().count() < MIN_LEN {
        return Err(PasswordError::TooShort);
    }
    if password.len() > MAX_LEN {
        return Err(PasswordError::TooLong);
    }
    let fail = |e: &dyn std::fmt::Display| PasswordError::Hash(e.to_string());
    let salt = SaltString::generate(&mut OsRng);
    let mut salt_buf = [0u8; 64];
    let salt_bytes = salt.decode_b64(&mut salt_buf).map_err(|e| fail(&e))?;
    let argon = Argon2::default(); // argon2id, v19, OWASP-recommended parameters
    let params = argon2::Params::default();
    let mut out = [0u8; argon2::Params::DEFAULT_OUTPUT_LEN];
    Buffers::get()
        .with(params.block_count(), |blocks| {
            argon.hash_password_into_with_memory(password.as_bytes(), salt_bytes, &mut out, blocks)
        })
        .map_err(|e| fail(&e))?;
    let phc = PasswordHash {
        algorithm: argon2::Algorithm::Argon2id.ident(),
        version: Some(argon2::Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(|e| fail(&e))?,
        salt: Some(salt.as_salt()),
        hash: Some(Output::new(&out).map_err(|e| fail(&e))?),
    };
    Ok(phc.to_string())
}

/// Whether `password` matches the PHC string `phc`. A malformed hash never matches; the hash
/// is recomputed in a kept buffer ([`Buffers`]) and compared in constant time.
pub fn verify(password: &str, phc: &str) -> bool {
    if password.len() > MAX_LEN {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) = (
        argon2::Algorithm::try_from(parsed.algorithm),
        argon2::Params::try_from(&parsed),
    ) else {
        return false;
    };
    let version = match parsed.version.map(argon2::Version::try_from) {
        None => argon2::Version::V0x13,
        Some(Ok(v)) => v,
        Some(Err(_)) => return false,
    };
    // no stored hash of ours asks for more than the default's memory; a larger one is
    // checked by the library as before (and allocates)
    if params.block_count() > DEFAULT_BLOCKS {
        return Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok();
    }
    let mut salt_buf = [0u8; 64];
    let Ok(salt_bytes) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    let argon = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.len()];
    let done = Buffers::get().with(params.block_count(), |blocks| {
        argon.hash_password_into_with_memory(password.as_bytes(), salt_bytes, &mut out, blocks)
    });
    done.is_ok() && argon2::password_hash::Output::new(&out).is_ok_and(|o| o == expected)
}

/// A hash to verify against when the user does not exist, so timing does not reveal it.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash("not-a-real-password").unwrap_or_default())
}

/// Hashes running at once: one per core.
fn max_hashes() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The permits of [`max_hashes`].
fn permits() -> &'static tokio::sync::Semaphore {
    static LIMIT: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| tokio::sync::Semaphore::new(max_hashes()))
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
    use argon2::password_hash::PasswordHasher;

    #[test]
    fn hashes_are_argon2id_and_verify() {
        let h = hash("correct horse").expect("hash");
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify("correct horse", &h));
        assert!(!verify("wrong horse", &h));
        assert!(!verify("correct horse", "garbage"));
    }

    /// Hashes of the library's own making verify here and the other way round; the working
    /// memory is kept and reused, never more than one buffer a core.
    #[test]
    fn hashes_match_the_library_and_reuse_their_memory() {
        let ours = hash("correct horse").expect("hash");
        let parsed = PasswordHash::new(&ours).expect("phc");
        assert!(Argon2::default()
            .verify_password(b"correct horse", &parsed)
            .is_ok());
        let theirs = Argon2::default()
            .hash_password(b"battery staple", &SaltString::generate(&mut OsRng))
            .expect("library hash")
            .to_string();
        assert!(verify("battery staple", &theirs));
        assert!(!verify("battery stapler", &theirs));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| assert!(verify("battery staple", &theirs)));
            }
        });
        let kept = Buffers::get().kept();
        assert!((1..=max_hashes()).contains(&kept), "{kept} buffers kept");
    }

    #[test]
    fn short_and_huge_passwords_are_refused() {
        assert!(matches!(hash("short"), Err(PasswordError::TooShort)));
        let huge = "x".repeat(MAX_LEN + 1);
        assert!(matches!(hash(&huge), Err(PasswordError::TooLong)));
        assert!(!verify(&huge, dummy_hash()));
    }
}
