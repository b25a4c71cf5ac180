//! The n-gram language model: interpolated modified Kneser-Ney estimation as KenLM's `lmplz`
//! computes it, ARPA files, and scoring with backoff (log10, as KenLM's `query`).
//!
//! Pure: token sequences in, numbers out. Sentences get `<s>` before and `</s>` after.

pub mod arpa;
pub mod binary;
pub mod estimate;
pub mod score;
pub mod sorted;
pub mod tokenize;

use std::collections::HashMap;

pub const UNK: &str = "<unk>";
pub const BOS: &str = "<s>";
pub const EOS: &str = "</s>";

/// One n-gram's entry: log10 probability and log10 backoff (0 when not a context).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    pub prob: f64,
    pub backoff: f64,
}

/// A backoff language model. `grams[n - 1]` holds the n-grams (as word ids) of order n.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub words: Vec<String>,
    pub ids: HashMap<String, u32>,
    pub grams: Vec<HashMap<Vec<u32>, Entry>>,
}

impl Model {
    pub fn order(&self) -> usize {
        self.grams.len()
    }

    pub fn id(&self, word: &str) -> Option<u32> {
        self.ids.get(word).copied()
    }

    /// Adds a word to the vocabulary (if new) and returns its id.
    pub fn intern(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = self.words.len() as u32;
        self.words.push(word.to_owned());
        self.ids.insert(word.to_owned(), id);
        id
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LmError {
    #[error("{0}")]
    Estimate(String),
    #[error("ARPA line {line}: {reason}")]
    Arpa { line: usize, reason: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
