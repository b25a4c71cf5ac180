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
        score_sentence(
            tokens.iter().map(|t| self.id(t)),
            [self.id(BOS).unwrap_or(1), unk, self.id(EOS).unwrap_or(2)],
            |h, w| self.log10_prob(h, w),
        )
    }
}

/// Scores one sentence of word ids (`None`: out of the vocabulary, scored as `<unk>`) with
/// `log10_prob(history, word)`; `[bos, unk, eos]` are the special words' ids.
pub(super) fn score_sentence(
    ids: impl Iterator<Item = Option<u32>>,
    [bos, unk, eos]: [u32; 3],
    log10_prob: impl Fn(&[u32], u32) -> f64,
) -> SentenceScore {
    let mut history = vec![bos];
    let mut out = Vec::new();
    let mut oov = 0;
    for id in ids.chain(std::iter::once(Some(eos))) {
        let id = id.unwrap_or_else(|| {
            oov += 1;
            unk
        });
        out.push(log10_prob(&history, id));
        history.push(id);
    }
    let total = out.iter().sum();
    SentenceScore {
        token_log10: out,
        total_log10: total,
        oov,
    }
}

/// Cross-entropy of every (target, source), in order — bits per token, or −log10 per token
/// with `log10` — scored on all cores (rayon); `progress` is called once per method scored and
/// says whether to go on: once it says no, each thread stops after the method it is on, and
/// the result is `None`. Also the number of tokens scored (`</s>` included).
pub fn score_many(
    model: &super::Scorer,
    targets: &[(String, String)],
    opts: super::tokenize::TokenizeOptions,
    log10: bool,
    progress: &(dyn Fn() -> bool + Sync),
) -> Option<(Vec<(String, f64)>, u64)> {
    use rayon::prelude::*;
    let results: Vec<((String, f64), u64)> = targets
        .par_iter()
        .map(|(target, src)| {
            let toks = super::tokenize::tokens(src, opts);
            let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
            let score = model.score(&refs);
            let h = if log10 {
                score.log10_per_token()
            } else {
                score.bits_per_token()
            };
            progress().then(|| ((target.clone(), h), score.token_log10.len() as u64))
        })
        .collect::<Option<_>>()?;
    let total = results.iter().map(|r| r.1).sum();
    Some((results.into_iter().map(|r| r.0).collect(), total))
}
