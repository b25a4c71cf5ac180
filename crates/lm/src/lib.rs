//! The n-gram language model: interpolated modified Kneser-Ney estimation as KenLM's `lmplz`
//! computes it, ARPA files, and scoring with backoff (log10, as KenLM's `query`).
//!
//! Pure: token sequences in, numbers out. Sentences get `<s>` before and `</s>` after.

pub mod arpa;
pub mod binary;
pub mod discounts;
pub mod estimate;
pub mod probing;
pub mod score;
pub mod sorted;
pub mod tokenize;

#[cfg(test)]
mod testdata;

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

/// A model ready to score: in the probing layout (orders ≤ 4: one block of memory, used as
/// loaded, whatever file it came from), else the general model. Exactly one form is held.
#[derive(Debug, Clone)]
pub enum Scorer {
    Probing(probing::ProbingModel),
    General(Model),
}

impl Scorer {
    /// The scoring form of a model: the probing layout when the order allows (the model is
    /// consumed: never held twice).
    pub fn from_model(model: Model) -> Result<Scorer, LmError> {
        if !(1..=probing::MAX_ORDER).contains(&model.order()) {
            return Ok(Scorer::General(model));
        }
        let mut bytes = Vec::new();
        probing::write(&model, &mut bytes)?;
        drop(model);
        Ok(Scorer::Probing(probing::ProbingModel::from_bytes(bytes)?))
    }

    pub fn order(&self) -> usize {
        match self {
            Scorer::Probing(p) => p.order(),
            Scorer::General(m) => m.order(),
        }
    }

    /// Scores one sentence of tokens (`</s>` added, `<s>` as the first context).
    pub fn score(&self, tokens: &[&str]) -> score::SentenceScore {
        match self {
            Scorer::Probing(p) => p.score(tokens),
            Scorer::General(m) => m.score(tokens),
        }
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
