//! What the test binaries share: where `shared/reference/nlm` is.

use std::path::PathBuf;

/// `shared/reference/nlm`: under `$NATSTUDY_SHARED/reference`, or beside the repository.
pub fn reference() -> PathBuf {
    match std::env::var("NATSTUDY_SHARED") {
        Ok(d) => PathBuf::from(d).join("reference"),
        Err(_) => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/reference"
        )),
    }
    .join("nlm")
}
