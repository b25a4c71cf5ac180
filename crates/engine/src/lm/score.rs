//! Scoring with backoff, as KenLM's `query`: log10 probabilities per token (`</s>` included,
//! `<s>` as the first context), out-of-vocabulary words scored as `<unk>`.

use rustc_hash::FxHashMap;

use super::{Entry, Model, BOS, EOS, UNK};

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
fn score_sentence(
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

/// A model's n-grams under packed keys (32 bits a word, orders up to 4) in Fx hash maps:
/// scoring without an allocation per lookup, as KenLM's `query` does.
#[derive(Debug, Clone)]
pub struct PackedModel {
    grams: Vec<FxHashMap<u128, Entry>>,
    unk: u32,
    bos: u32,
}

fn pack(words: impl IntoIterator<Item = u32>) -> u128 {
    words
        .into_iter()
        .fold(0u128, |k, w| (k << 32) | u128::from(w))
}

impl Model {
    /// The packed form of the model, when its order allows (≤ 4).
    pub fn packed(&self) -> Option<PackedModel> {
        if self.order() > super::sorted::MAX_PACKED_ORDER {
            return None;
        }
        Some(PackedModel {
            grams: self
                .grams
                .iter()
                .map(|level| {
                    level
                        .iter()
                        .map(|(g, e)| (pack(g.iter().copied()), *e))
                        .collect()
                })
                .collect(),
            unk: self.id(UNK).unwrap_or(0),
            bos: self.id(BOS).unwrap_or(1),
        })
    }
}

impl PackedModel {
    fn order(&self) -> usize {
        self.grams.len()
    }

    /// log10 p(word | history) with backoff, as [`Model::log10_prob`].
    pub fn log10_prob(&self, history: &[u32], word: u32) -> f64 {
        let h = &history[history.len().saturating_sub(self.order() - 1)..];
        let mut backoff = 0.0;
        for start in 0..=h.len() {
            let ctx = &h[start..];
            let gram = pack(ctx.iter().copied().chain(std::iter::once(word)));
            if let Some(e) = self.grams[ctx.len()].get(&gram) {
                return e.prob + backoff;
            }
            if !ctx.is_empty() {
                if let Some(e) = self.grams[ctx.len() - 1].get(&pack(ctx.iter().copied())) {
                    backoff += e.backoff;
                }
            }
        }
        backoff
    }

    /// Scores one sentence of word ids (`None`: out of the vocabulary), as [`Model::score`].
    pub fn score_ids(&self, ids: impl Iterator<Item = Option<u32>>, eos: u32) -> SentenceScore {
        score_sentence(ids, [self.bos, self.unk, eos], |h, w| self.log10_prob(h, w))
    }
}

/// Scores sentences with the packed model when the order allows, else with the model.
pub fn score_with(model: &Model, packed: Option<&PackedModel>, tokens: &[&str]) -> SentenceScore {
    match packed {
        Some(p) => p.score_ids(
            tokens.iter().map(|t| model.id(t)),
            model.id(EOS).unwrap_or(2),
        ),
        None => model.score(tokens),
    }
}

/// Cross-entropy of every (target, source), in order — bits per token, or −log10 per token
/// with `log10` — scored on all cores (rayon); `progress` is called once per method. Also the number of
/// tokens scored (`</s>` included).
pub fn score_many(
    model: &Model,
    targets: &[(String, String)],
    opts: super::tokenize::TokenizeOptions,
    log10: bool,
    progress: &(dyn Fn() + Sync),
) -> (Vec<(String, f64)>, u64) {
    use rayon::prelude::*;
    let packed = model.packed();
    let results: Vec<((String, f64), u64)> = targets
        .par_iter()
        .map(|(target, src)| {
            let toks = super::tokenize::tokens(src, opts);
            let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
            let score = score_with(model, packed.as_ref(), &refs);
            let h = if log10 {
                score.log10_per_token()
            } else {
                score.bits_per_token()
            };
            progress();
            ((target.clone(), h), score.token_log10.len() as u64)
        })
        .collect();
    let total = results.iter().map(|r| r.1).sum();
    (results.into_iter().map(|r| r.0).collect(), total)
}
