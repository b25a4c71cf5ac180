//! The `tokenizers` crate's tokenizer behind a guard. A model's files are input, and the crate
//! panics on some hostile `tokenizer.json` files — found by mutating the reference ones:
//! a `continuing_subword_prefix` that cuts a byte-level token inside a character and a
//! `Precompiled` normalizer of garbage bytes panic while the file is parsed; a template that
//! names a special token it does not list panics when a text is encoded. Every call into the
//! crate here runs under `catch_unwind`: a panic is an error naming the file, not a dead job
//! or command — and not a "thread … panicked" line on stderr before that error: the process's
//! panic hook, wrapped once, keeps quiet about a panic the guard catches and reports every
//! other panic as it did.
//!
//! The file's own truncation and padding are dropped: transformers' `tokenize` and its
//! fill-mask pipeline apply neither, where the crate's `encode` would cut a method to the
//! file's length and pad it with tokens that would then be scored.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::{NlmError, NlmResult};

/// A tokenizer and where it came from (a `tokenizer.json`, a GGUF file), for its errors.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    source: String,
}

impl Tokenizer {
    /// The tokenizer a `tokenizer.json`'s text describes; `source` names the file.
    pub fn parse(text: &str, source: &str) -> NlmResult<Tokenizer> {
        Tokenizer::new(source, || {
            text.parse::<tokenizers::Tokenizer>()
                .map_err(|e| NlmError::Tokenizer(e.to_string()))
        })
    }

    /// The tokenizer `build` makes (from a GGUF file's metadata), its panics guarded as the
    /// parse's are and its errors prefixed with `source`.
    pub fn new(
        source: &str,
        build: impl FnOnce() -> NlmResult<tokenizers::Tokenizer>,
    ) -> NlmResult<Tokenizer> {
        let mut inner = guard(source, "reading it", build)?.map_err(|e| match e {
            NlmError::Tokenizer(m) => NlmError::Tokenizer(format!("{source}: {m}")),
            e => e,
        })?;
        inner
            .with_truncation(None)
            .map_err(|e| NlmError::Tokenizer(format!("{source}: {e}")))?
            .with_padding(None);
        Ok(Tokenizer {
            inner,
            source: source.to_owned(),
        })
    }

    /// The token ids of a text, with the special tokens the file's post-processor adds or
    /// without.
    pub fn encode(&self, text: &str, special: bool) -> NlmResult<Vec<u32>> {
        guard(&self.source, "encoding a text", || {
            self.inner
                .encode(text, special)
                .map(|e| e.get_ids().to_vec())
        })?
        .map_err(|e| NlmError::Tokenizer(format!("{}: {e}", self.source)))
    }

    /// The id of a token, if the vocabulary has it.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        guard(&self.source, "looking up a token", || {
            self.inner.token_to_id(token)
        })
        .ok()
        .flatten()
    }

    /// A token as the vocabulary spells it.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        guard(&self.source, "looking up a token", || {
            self.inner.id_to_token(id)
        })
        .ok()
        .flatten()
    }

    /// The text of token ids, if they decode.
    pub fn decode(&self, ids: &[u32]) -> Option<String> {
        guard(&self.source, "decoding", || {
            self.inner.decode(ids, false).ok()
        })
        .ok()
        .flatten()
    }
}

/// `f`, a panic in it an error naming `source`, what was being done and the panic's message.
fn guard<T>(source: &str, doing: &str, f: impl FnOnce() -> T) -> NlmResult<T> {
    quiet_when_guarded();
    let outer = GUARDED.replace(true);
    let out = catch_unwind(AssertUnwindSafe(f));
    GUARDED.set(outer);
    out.map_err(|p| {
        let why = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        NlmError::Tokenizer(format!(
            "{source}: the tokenizers library failed {doing}: {why}"
        ))
    })
}

thread_local! {
    /// Whether this thread runs a guarded call (a panic here becomes the guard's error).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Wraps the process's panic hook, once, in one that says nothing of a panic in a guarded
/// call (its message is in the error the guard returns) and hands every other panic to the
/// hook that was there. A hook set later replaces this one; guarded panics are then reported
/// twice, as before, and nothing else changes.
fn quiet_when_guarded() {
    static WRAPPED: Once = Once::new();
    WRAPPED.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.get() {
                report(info)
            }
        }));
    });
}
