//! The n-gram model as RenameVariable-2's ranker: the glue between the language-model crate and
//! the transformation crate, which know nothing of each other.

use std::borrow::Borrow;

use crate::lm::Scorer;
use crate::transform::NameScorer;

/// A candidate method scored by its cross-entropy (bits per token) under the n-gram model:
/// lower is more natural. Holds the model by value, by reference or behind an `Arc`.
pub struct NgramNames<M>(pub M);

impl<M: Borrow<Scorer> + Sync> NameScorer for NgramNames<M> {
    fn score(&self, method_source: &str) -> f64 {
        let toks = crate::lm::tokenize::tokens(method_source, Default::default());
        let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
        self.0.borrow().score(&refs).bits_per_token()
    }
}
