//! A model folder's small files — `config.json`, the shard index, `tokenizer.json` — read
//! under a bound: an uploaded folder may be hostile, and each of these is read whole and
//! parsed, which takes several times its size in memory.

use std::io::Read;
use std::path::Path;

use crate::{NlmError, NlmResult};

/// The most bytes of a configuration or a shard index read: a real one is a few kilobytes (an
/// index names each tensor's shard in about 80 bytes: 300 tensors, 24 KB).
pub const JSON_LIMIT: u64 = 1 << 20;

/// The most bytes of a `tokenizer.json` read: a vocabulary of a quarter of a million tokens with
/// its merges is a few tens of megabytes.
pub const TOKENIZER_LIMIT: u64 = 128 << 20;

/// The text of `path`, an error naming it when it is larger than `limit` bytes.
pub fn text(path: &Path, limit: u64) -> NlmResult<String> {
    let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| at(e.to_string()))?;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(|e| at(e.to_string()))?;
    if text.len() as u64 > limit {
        return Err(at(format!(
            "larger than the {} natstudy reads of such a file",
            size(limit)
        )));
    }
    Ok(text)
}

/// A bound as a reader would write it: in MiB or KiB where it is a whole number of them.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// `path` parsed as JSON, at most [`JSON_LIMIT`] bytes.
pub fn json(path: &Path) -> NlmResult<serde_json::Value> {
    serde_json::from_str(&text(path, JSON_LIMIT)?)
        .map_err(|e| NlmError::Model(format!("{}: {e}", path.display())))
}

/// The folder's `tokenizer.json`, at most [`TOKENIZER_LIMIT`] bytes.
pub fn tokenizer(dir: &Path) -> NlmResult<crate::tokenizer::Tokenizer> {
    let path = dir.join("tokenizer.json");
    crate::tokenizer::Tokenizer::parse(&text(&path, TOKENIZER_LIMIT)?, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file past the bound is an error naming it and the bound; one within is read whole.
    #[test]
    fn files_past_their_bound_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("config.json");
        std::fs::write(&p, "x".repeat(2048)).expect("write");
        assert_eq!(text(&p, 2048).expect("within").len(), 2048);
        let e = text(&p, 2047).expect_err("past").to_string();
        assert!(
            e.contains("config.json") && e.contains("the 2047 bytes natstudy reads"),
            "{e}"
        );
        let big = format!("{{\"a\": \"{}\"}}", "x".repeat(JSON_LIMIT as usize));
        std::fs::write(&p, big).expect("write");
        let e = json(&p).expect_err("past").to_string();
        assert!(e.contains("larger than the 1 MiB natstudy reads"), "{e}");
        assert_eq!(size(TOKENIZER_LIMIT), "128 MiB");
        assert_eq!(size(3 << 10), "3 KiB");
    }
}
