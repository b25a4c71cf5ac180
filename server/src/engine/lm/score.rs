//! Scoring with backoff, as KenLM's `query`: log10 probabilities per token (`</s>` included,
//! `<s>` as the first context), out-of-vocabulary words scored as `<unk>`.

use super::{Model, BOS, EOS, UNK};

/// A sentence's score.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceScore {
    /// log10 probability of each token and of `</s>`.
    pub token_log10: Vec<f64>,
    pub total_log10: f64,
    pub oov: usize,
}

impl SentenceScore {
    /// Cross-entropy in bits per token (tokens and `</s>`).
    pub fn bits_per_token(&self) -> f64 {
        -self.total_log10 / self.token_log10.len().max(1) as f64 * std::f64::consts::LOG2_10
    }

    /// The published tool's figure: −score / length in log10 units.
    pub fn log10_per_token(&self) -> f64 {
        -self.total_log10 / self.token_log10.len().max(1) as f64
    }
}

impl Model {
    /// log10 p(word | history) with backoff; `history` ends with the word just before.
    pub fn log10_prob(&self, history: &[u32], word: u32) -> f64 {
        let order = self.order();
        let h = &history[history.len().saturating_sub(order - 1)..];
        let mut backoff = 0.0;
        // longest match first
        for start in 0..=h.len() {
            let mut gram: Vec<u32> = h[start..].to_vec();
            gram.push(word);
            if let Some(e) = self.grams[gram.len() - 1].get(&gram) {
                return e.prob + backoff;
            }
            let ctx = &h[start..];
            if !ctx.is_empty() {
                if let Some(e) = self.grams[ctx.len() - 1].get(ctx) {
                    backoff += e.backoff;
                }
            }
        }
        backoff
    }

    /// Scores one sentence of tokens.
    pub fn score(&self, tokens: &[&str]) -> SentenceScore {
        let unk = self.id(UNK).unwrap_or(0);
        let mut history = vec![self.id(BOS).unwrap_or(1)];
        let mut out = Vec::with_capacity(tokens.len() + 1);
        let mut oov = 0;
        for t in tokens.iter().copied().chain(std::iter::once(EOS)) {
            let id = match self.id(t) {
                Some(id) => id,
                None => {
                    oov += 1;
                    unk
                }
            };
            out.push(self.log10_prob(&history, id));
            history.push(id);
        }
        let total = out.iter().sum();
        SentenceScore {
            token_log10: out,
            total_log10: total,
            oov,
        }
    }
}
