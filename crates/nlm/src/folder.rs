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
/// its merges is a few tens of megabytes (Gemma 3's, 262,144 tokens: 33 MB). Parsed, a file
/// takes about twelve times its size (a 118 MiB one of five million tokens: 1.46 GB).
pub const TOKENIZER_LIMIT: u64 = 64 << 20;

/// The most bytes of a `tokenizer.json` for each token of the configuration's vocabulary
/// (`vocab_size`): real files take 40–130 (CodeLlama's 56, Llama 3's 71, Gemma 3's 126).
pub const TOKENIZER_BYTES_PER_TOKEN: u64 = 512;

/// The least bound of a `tokenizer.json`, whatever the vocabulary.
const TOKENIZER_FLOOR: u64 = 8 << 20;

/// One `tokenizer.json` parsed at a time in the process: three uploads at once took three
/// times the parse's memory.
static PARSING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The text of `path`, an error naming it when it is larger than `limit` bytes.
pub fn text(path: &Path, limit: u64) -> NlmResult<String> {
    let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| at(e.to_string()))?;
    // a file past the bound is refused by its size, unread
    if let Ok(bytes) = file.metadata().map(|m| m.len()) {
        if bytes > limit {
            return Err(at(format!(
                "larger than the {} natstudy reads of such a file ({} bytes)",
                size(limit),
                bytes
            )));
        }
    }
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

/// The folder's `tokenizer.json`, at most [`TOKENIZER_BYTES_PER_TOKEN`] bytes for each token of
/// the vocabulary its `config.json` states (at least 8 MiB, at most [`TOKENIZER_LIMIT`]), checked
/// before it is read; parsed one at a time ([`PARSING`]).
pub fn tokenizer(dir: &Path) -> NlmResult<crate::tokenizer::Tokenizer> {
    let path = dir.join("tokenizer.json");
    let limit = tokenizer_limit(dir);
    let _one_at_a_time = PARSING.lock().unwrap_or_else(|p| p.into_inner());
    crate::tokenizer::Tokenizer::parse(&text(&path, limit)?, &path.display().to_string())
}

/// The bound of the folder's `tokenizer.json`, from its configuration's `vocab_size`
/// ([`TOKENIZER_LIMIT`] when it states none).
fn tokenizer_limit(dir: &Path) -> u64 {
    json(&dir.join("config.json"))
        .ok()
        .and_then(|c| c.get("vocab_size").and_then(serde_json::Value::as_u64))
        .map_or(TOKENIZER_LIMIT, |vocab| {
            vocab
                .saturating_mul(TOKENIZER_BYTES_PER_TOKEN)
                .clamp(TOKENIZER_FLOOR, TOKENIZER_LIMIT)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tokenizer.json` is bounded by the vocabulary the configuration states: a file past
    /// the bound is refused unread, naming the bound; without a configuration, the cap.
    #[test]
    fn a_tokenizer_is_bounded_by_the_vocabulary() {
        let dir = tempfile::tempdir().expect("dir");
        assert_eq!(tokenizer_limit(dir.path()), TOKENIZER_LIMIT);
        let config = |vocab: u64| {
            std::fs::write(
                dir.path().join("config.json"),
                format!(r#"{{"vocab_size": {vocab}}}"#),
            )
            .expect("config")
        };
        config(1000);
        assert_eq!(tokenizer_limit(dir.path()), TOKENIZER_FLOOR);
        config(49_152);
        assert_eq!(
            tokenizer_limit(dir.path()),
            49_152 * TOKENIZER_BYTES_PER_TOKEN
        );
        config(5_000_000);
        assert_eq!(tokenizer_limit(dir.path()), TOKENIZER_LIMIT);
        config(1000);
        let big = std::fs::File::create(dir.path().join("tokenizer.json")).expect("file");
        big.set_len(TOKENIZER_FLOOR + 1).expect("size");
        let e = tokenizer(dir.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("tokenizer.json") && e.contains("larger than the 8 MiB"),
            "{e}"
        );
    }

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
        assert_eq!(size(TOKENIZER_LIMIT), "64 MiB");
        assert_eq!(size(3 << 10), "3 KiB");
    }
}
