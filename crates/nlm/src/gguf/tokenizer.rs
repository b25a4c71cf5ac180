//! The tokenizer a GGUF file describes in its metadata (`tokenizer.ggml.*`), built as
//! transformers builds it when it loads the file (`gguf_file=`), so that a method gets the token
//! ids the published tool would give it:
//! - `llama` (SentencePiece, CodeLlama): a BPE with byte fallback over the file's pieces, its
//!   merges those the file lists or, as SentencePiece files list none, the ones its scores imply
//!   (transformers' `generate_merges`); `▁` for spaces and one at the start (`Metaspace`,
//!   prepend "first", no split);
//! - `gpt2` (byte-level BPE: StarCoder, SmolLM2): the file's tokens in the byte alphabet and its
//!   merges, split by GPT-2's expression, or by the one the file's `tokenizer.ggml.pre` names.
//!
//! Tokens the file marks as control become special tokens, and user-defined ones added tokens:
//! both are matched whole in the text.

use std::collections::HashMap;

use candle_core::quantized::gguf_file::Value;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

use crate::{NlmError, NlmResult};

/// `tokenizer.ggml.token_type`: llama.cpp's token kinds.
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;

/// The split of Llama 3's byte-level BPE (and others that learned their merges on it).
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The splits transformers knows by `tokenizer.ggml.pre`; any other name is split as GPT-2.
fn split_of(pre: &str) -> Option<&'static str> {
    match pre {
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "smaug-bpe" | "dbrx" => {
            Some(LLAMA3_SPLIT)
        }
        _ => None,
    }
}

/// What a GGUF file says of its tokenizer.
#[derive(Debug, Default)]
pub struct Spec {
    pub model: String,
    pub pre: Option<String>,
    pub tokens: Vec<String>,
    pub scores: Option<Vec<f64>>,
    pub types: Option<Vec<i64>>,
    pub merges: Option<Vec<String>>,
}

impl Spec {
    pub fn read(md: &HashMap<String, Value>) -> NlmResult<Spec> {
        let strings = |key: &str| -> NlmResult<Option<Vec<String>>> {
            match md.get(key) {
                None => Ok(None),
                Some(v) => v
                    .to_vec()
                    .and_then(|vs| vs.iter().map(|s| s.to_string().cloned()).collect())
                    .map(Some)
                    .map_err(|e| NlmError::Tokenizer(format!("{key}: {e}"))),
            }
        };
        let numbers = |key: &str| -> NlmResult<Option<Vec<f64>>> {
            match md.get(key) {
                None => Ok(None),
                Some(v) => v
                    .to_vec()
                    .map_err(|e| NlmError::Tokenizer(format!("{key}: {e}")))?
                    .iter()
                    .map(|x| {
                        super::number(x)
                            .ok_or_else(|| NlmError::Tokenizer(format!("{key}: not a number")))
                    })
                    .collect::<NlmResult<Vec<f64>>>()
                    .map(Some),
            }
        };
        let model = md
            .get("tokenizer.ggml.model")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .ok_or_else(|| NlmError::Tokenizer("the file names no tokenizer.ggml.model".into()))?;
        let tokens = strings("tokenizer.ggml.tokens")?
            .ok_or_else(|| NlmError::Tokenizer("the file lists no tokenizer.ggml.tokens".into()))?;
        let scores = numbers("tokenizer.ggml.scores")?;
        let types = numbers("tokenizer.ggml.token_type")?
            .map(|t| t.into_iter().map(|x| x as i64).collect());
        Ok(Spec {
            model,
            pre: md
                .get("tokenizer.ggml.pre")
                .and_then(|v| v.to_string().ok())
                .cloned(),
            tokens,
            scores,
            types,
            merges: strings("tokenizer.ggml.merges")?,
        })
    }

    pub fn build(&self) -> NlmResult<Tokenizer> {
        let bad = |e: tokenizers::Error| NlmError::Tokenizer(e.to_string());
        let byte_level = match self.model.as_str() {
            "llama" => false,
            "gpt2" => true,
            other => {
                return Err(NlmError::Tokenizer(format!(
                    "tokenizer.ggml.model `{other}`: natstudy reads llama and gpt2 tokenizers"
                )))
            }
        };
        let spelling = byte_alphabet();
        let alphabet: std::collections::HashSet<char> = spelling.iter().copied().collect();
        let tokens: Vec<String> = if byte_level {
            self.tokens
                .iter()
                .map(|t| {
                    if t.chars().all(|c| alphabet.contains(&c)) {
                        t.clone()
                    } else {
                        t.bytes().map(|b| spelling[b as usize]).collect()
                    }
                })
                .collect()
        } else {
            self.tokens.clone()
        };
        // a token listed twice keeps its last id, as a Python dict does
        let vocab: tokenizers::models::bpe::Vocab = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let merges: Vec<(String, String)> = match &self.merges {
            Some(list) => list
                .iter()
                .filter_map(|m| {
                    let mut parts = m.split(' ');
                    Some((parts.next()?.to_owned(), parts.next()?.to_owned()))
                })
                .collect(),
            None if byte_level => {
                return Err(NlmError::Tokenizer(
                    "a gpt2 tokenizer without tokenizer.ggml.merges".into(),
                ))
            }
            None => {
                let scores = self.scores.as_ref().ok_or_else(|| {
                    NlmError::Tokenizer("a llama tokenizer with neither merges nor scores".into())
                })?;
                if scores.len() != self.tokens.len() {
                    return Err(NlmError::Tokenizer(format!(
                        "{} scores for {} tokens",
                        scores.len(),
                        self.tokens.len()
                    )));
                }
                generate_merges(&tokens, scores)
            }
        };
        let bpe = BPE::builder()
            .vocab_and_merges(vocab.clone(), merges)
            .fuse_unk(!byte_level)
            .byte_fallback(!byte_level)
            .build()
            .map_err(bad)?;
        let mut tokenizer = Tokenizer::new(bpe);
        let pre: PreTokenizerWrapper = if byte_level {
            match self.pre.as_deref().and_then(split_of) {
                Some(expr) => Sequence::new(vec![
                    Split::new(
                        SplitPattern::Regex(expr.to_owned()),
                        SplitDelimiterBehavior::Isolated,
                        false,
                    )
                    .map_err(bad)?
                    .into(),
                    ByteLevel::new(false, true, false).into(),
                ])
                .into(),
                None => ByteLevel::new(false, true, true).into(),
            }
        } else {
            Metaspace::new('▁', PrependScheme::First, false).into()
        };
        tokenizer.with_pre_tokenizer(Some(pre));
        if let Some(types) = &self.types {
            let mut special = Vec::new();
            let mut user = Vec::new();
            for (t, kind) in tokens.iter().zip(types) {
                if *kind == CONTROL && (!byte_level || t.chars().all(|c| alphabet.contains(&c))) {
                    special.push(AddedToken::from(t.clone(), true).normalized(false));
                } else if *kind == USER_DEFINED && vocab.contains_key(t) {
                    user.push(AddedToken::from(t.clone(), false).normalized(false));
                }
            }
            tokenizer.add_special_tokens(special).map_err(bad)?;
            tokenizer.add_tokens(user).map_err(bad)?;
        }
        Ok(tokenizer)
    }
}

/// GPT-2's printable spelling of the 256 bytes (`bytes_to_unicode`).
fn byte_alphabet() -> Vec<char> {
    let mut printable: Vec<u32> = (u32::from(b'!')..=u32::from(b'~'))
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .collect();
    let mut chars = printable.clone();
    let mut n = 0;
    for b in 0..256u32 {
        if !printable.contains(&b) {
            printable.push(b);
            chars.push(256 + n);
            n += 1;
        }
    }
    let mut spelling = vec!['\0'; 256];
    for (b, c) in printable.iter().zip(chars) {
        spelling[*b as usize] = char::from_u32(c).unwrap_or('\0');
    }
    spelling
}

/// The merges a SentencePiece vocabulary implies, as transformers' `generate_merges` finds them
/// from the pieces' scores: every split of a piece into two pieces of the vocabulary, ordered by
/// the piece's score, best first, then by the lengths of the two halves (longest first), ties
/// in the order the file lists them.
pub fn generate_merges(tokens: &[String], scores: &[f64]) -> Vec<(String, String)> {
    // the vocabulary maps a token to its last index; the scores are visited in the order each
    // token first appears, with the score of its last appearance (a Python dict's behaviour)
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(tokens.len());
    let mut first: Vec<&str> = Vec::with_capacity(tokens.len());
    let mut score: HashMap<&str, f64> = HashMap::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        if index.insert(t.as_str(), i).is_none() {
            first.push(t.as_str());
        }
        score.insert(t.as_str(), scores[i]);
    }
    let mut merges: Vec<(&str, &str, f64)> = Vec::new();
    for piece in first {
        let s = score[piece];
        let mut local: Vec<(&str, &str)> = piece
            .char_indices()
            .skip(1)
            .map(|(at, _)| piece.split_at(at))
            .filter(|(l, r)| index.contains_key(l) && index.contains_key(r))
            .collect();
        local.sort_by_key(|(l, r)| (index[l], index[r]));
        merges.extend(local.into_iter().map(|(l, r)| (l, r, s)));
    }
    // Python's sorted(..., reverse=True) is stable: equal keys keep their order
    merges.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| b.0.chars().count().cmp(&a.0.chars().count()))
            .then_with(|| b.1.chars().count().cmp(&a.1.chars().count()))
    });
    merges
        .into_iter()
        .map(|(l, r, _)| (l.to_owned(), r.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_alphabet_is_gpt2s() {
        let a = byte_alphabet();
        assert_eq!(a[b'a' as usize], 'a');
        assert_eq!(a[b' ' as usize], 'Ġ');
        assert_eq!(a[b'\n' as usize], 'Ċ');
        assert_eq!(a[0], 'Ā');
        let distinct: std::collections::HashSet<char> = a.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
    }

    /// transformers' order: by score, then the longer left half, then the file's order.
    #[test]
    fn merges_follow_the_scores() {
        let tokens: Vec<String> = ["a", "b", "c", "ab", "bc", "abc", "▁"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let scores = [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, 0.0];
        let m = generate_merges(&tokens, &scores);
        let m: Vec<(&str, &str)> = m.iter().map(|(l, r)| (l.as_str(), r.as_str())).collect();
        assert_eq!(m, vec![("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc")]);
    }
}
