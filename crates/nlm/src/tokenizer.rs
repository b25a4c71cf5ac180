//! The `tokenizers` crate's tokenizer behind a guard. A model's files are input, and the crate
//! panics on some hostile `tokenizer.json` files — found by mutating the reference ones:
//! a `continuing_subword_prefix` that cuts a byte-level token inside a character and a
//! `Precompiled` normalizer of garbage bytes panic while the file is parsed; a template that
//! names a special token it does not list panics when a text is encoded. Every call into the
//! crate here runs under [`crate::guard`]: a panic is an error naming the file, printed once.
//!
//! The file's own truncation and padding are dropped: transformers' `tokenize` and its
//! fill-mask pipeline apply neither, where the crate's `encode` would cut a method to the
//! file's length and pad it with tokens that would then be scored.

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
    crate::guard::guard(f, |why| {
        NlmError::Tokenizer(format!(
            "{source}: the tokenizers library failed {doing}: {why}"
        ))
    })
}
