//! A model file used where it lies, after KenLM's `probing` structure: the file is read into
//! memory in one piece and scored from directly — no n-gram is parsed, hashed or allocated at
//! load. The vocabulary is a table of 64-bit word hashes (FNV-1a; words themselves are not
//! needed to score), each order an open-addressing table of 64-bit n-gram hashes (of the
//! packed word ids, orders up to 4) with linear probing, 1.5 slots an entry — as KenLM, which
//! also keeps hashes, not words: two n-grams of one order sharing 64 bits is a chance of about
//! n²/2⁶⁵ (under 10⁻⁶ for millions), and the writer refuses a model where it happens.
//!
//! Layout, little-endian: magic `NSLM2\0\0\0`; order (u32); 4 bytes of zeros; the vocabulary
//! table's slot count (u64); each order's slot count (u64 × order); then the vocabulary table
//! (slots × [hash u64, id u64], empty: id `u64::MAX`), then each order's table (slots ×
//! [hash u64, log10 prob f32, log10 backoff f32], empty: hash 0). The sizes add up to the
//! file's length exactly; a probe never visits more slots than the table holds, so no file
//! makes a lookup loop.

use std::io::Write;

use super::score::{score_sentence, SentenceScore};
use super::{LmError, Model, BOS, EOS, UNK};

pub const MAGIC: &[u8; 8] = b"NSLM2\0\0\0";
const HEADER: usize = 8 + 4 + 4 + 8;
const VOCAB_SLOT: usize = 16;
const GRAM_SLOT: usize = 16;
const EMPTY_KEY: u64 = 0;
const EMPTY_ID: u64 = u64::MAX;
/// The highest order the packed keys hold.
pub const MAX_ORDER: usize = 4;

fn bad(reason: &str) -> LmError {
    LmError::Estimate(format!("binary model: {reason}"))
}

/// FNV-1a, 64 bits: the vocabulary's word hash (fixed, so files stay valid across builds).
pub fn word_hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An n-gram's hash: never 0 (the empty slot).
fn key_hash(key: u128) -> u64 {
    mix(key as u64 ^ mix((key >> 64) as u64)).max(1)
}

fn pack(words: impl IntoIterator<Item = u32>) -> u128 {
    words
        .into_iter()
        .fold(0u128, |k, w| (k << 32) | u128::from(w))
}

/// Slots for `n` entries: 1.5 × n, at least 2.
fn slots_for(n: usize) -> usize {
    (n + n / 2 + 1).max(2)
}

/// Writes `model` in the probing layout.
pub fn write(model: &Model, out: &mut dyn Write) -> Result<(), LmError> {
    let levels: Vec<Level<'_>> = model
        .grams
        .iter()
        .map(|g| Level {
            len: g.len(),
            entries: Box::new(
                g.iter()
                    .map(|(words, e)| (pack(words.iter().copied()), e.prob, e.backoff)),
            ),
        })
        .collect();
    write_levels(&model.words, levels, out)
}

/// One order's n-grams for the writer: how many, and each as (packed words — 32 bits a word,
/// the first word highest —, log10 prob, log10 backoff).
pub struct Level<'a> {
    pub len: usize,
    pub entries: Box<dyn Iterator<Item = (u128, f64, f64)> + 'a>,
}

/// Writes a model given as its vocabulary (ids in order) and its orders' n-grams, one order's
/// table in memory at a time (the sorted estimator writes from its arrays this way).
pub fn write_levels(
    words: &[String],
    levels: Vec<Level<'_>>,
    out: &mut dyn Write,
) -> Result<(), LmError> {
    let order = levels.len();
    if !(1..=MAX_ORDER).contains(&order) {
        return Err(bad("the probing layout holds orders 1 to 4"));
    }
    if words.len() >= u32::MAX as usize {
        return Err(bad("vocabulary too large"));
    }
    let vocab_slots = slots_for(words.len());
    let gram_slots: Vec<usize> = levels.iter().map(|l| slots_for(l.len)).collect();
    out.write_all(MAGIC)?;
    out.write_all(&(order as u32).to_le_bytes())?;
    out.write_all(&[0u8; 4])?;
    out.write_all(&(vocab_slots as u64).to_le_bytes())?;
    for s in &gram_slots {
        out.write_all(&(*s as u64).to_le_bytes())?;
    }
    // vocabulary
    let mut table = vec![(0u64, EMPTY_ID); vocab_slots];
    for (id, w) in words.iter().enumerate() {
        let h = word_hash(w);
        let mut i = (mix(h) % vocab_slots as u64) as usize;
        while table[i].1 != EMPTY_ID {
            if table[i].0 == h {
                return Err(bad(&format!("two words share a hash ({w:?})")));
            }
            i = (i + 1) % vocab_slots;
        }
        table[i] = (h, id as u64);
    }
    let mut buf = Vec::with_capacity(vocab_slots * VOCAB_SLOT);
    for (h, id) in table {
        buf.extend_from_slice(&h.to_le_bytes());
        buf.extend_from_slice(&id.to_le_bytes());
    }
    out.write_all(&buf)?;
    drop(buf);
    // n-grams
    for (level, &slots) in levels.into_iter().zip(&gram_slots) {
        let mut table = vec![(EMPTY_KEY, 0f32, 0f32); slots];
        let mut n = 0usize;
        for (key, prob, backoff) in level.entries {
            n += 1;
            if n > level.len {
                return Err(bad("more n-grams than announced"));
            }
            let h = key_hash(key);
            let mut i = (mix(h) % slots as u64) as usize;
            while table[i].0 != EMPTY_KEY {
                if table[i].0 == h {
                    return Err(bad("two n-grams share a hash"));
                }
                i = (i + 1) % slots;
            }
            table[i] = (h, prob as f32, backoff as f32);
        }
        let mut buf = Vec::with_capacity(slots * GRAM_SLOT);
        for (k, p, b) in table {
            buf.extend_from_slice(&k.to_le_bytes());
            buf.extend_from_slice(&p.to_le_bytes());
            buf.extend_from_slice(&b.to_le_bytes());
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

/// A model in the probing layout, scored from the bytes of its file.
#[derive(Debug, Clone)]
pub struct ProbingModel {
    data: Vec<u8>,
    vocab: Table,
    grams: Vec<Table>,
    bos: u32,
    unk: u32,
    eos: u32,
}

/// Where a table lies in `data`, and its slot count.
#[derive(Debug, Clone, Copy)]
struct Table {
    at: usize,
    slots: usize,
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    data.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn f32_at(data: &[u8], at: usize) -> f32 {
    data.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0.0, f32::from_le_bytes)
}

impl ProbingModel {
    /// Takes a file's bytes; checks the header and that the tables fill the bytes exactly.
    pub fn from_bytes(data: Vec<u8>) -> Result<ProbingModel, LmError> {
        if data.len() < HEADER || &data[..8] != MAGIC {
            return Err(bad("not a natstudy probing model"));
        }
        let order = u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize;
        if !(1..=MAX_ORDER).contains(&order) {
            return Err(bad("unsupported order"));
        }
        let head = HEADER + 8 * order;
        if data.len() < head {
            return Err(bad("truncated header"));
        }
        let slots_of = |at: usize| -> Result<usize, LmError> {
            let s = u64_at(&data, at);
            if s < 2 || s > (data.len() as u64) {
                return Err(bad("a table's size is not within the file"));
            }
            Ok(s as usize)
        };
        let vocab_slots = slots_of(16)?;
        let mut at = head;
        let vocab = Table {
            at,
            slots: vocab_slots,
        };
        at += vocab_slots * VOCAB_SLOT;
        let mut grams = Vec::with_capacity(order);
        for n in 0..order {
            let slots = slots_of(HEADER + 8 * n)?;
            grams.push(Table { at, slots });
            at = at
                .checked_add(
                    slots
                        .checked_mul(GRAM_SLOT)
                        .ok_or_else(|| bad("table too large"))?,
                )
                .ok_or_else(|| bad("table too large"))?;
        }
        if at != data.len() {
            return Err(bad("the tables do not fill the file exactly"));
        }
        let mut m = ProbingModel {
            data,
            vocab,
            grams,
            bos: 1,
            unk: 0,
            eos: 2,
        };
        m.unk = m.id(UNK).unwrap_or(0);
        m.bos = m.id(BOS).unwrap_or(1);
        m.eos = m.id(EOS).unwrap_or(2);
        Ok(m)
    }

    /// Reads a model file (one read, no parsing).
    pub fn load(path: &std::path::Path) -> Result<ProbingModel, LmError> {
        ProbingModel::from_bytes(std::fs::read(path)?)
    }

    pub fn order(&self) -> usize {
        self.grams.len()
    }

    /// The word's id, or `None` when out of the vocabulary.
    pub fn id(&self, word: &str) -> Option<u32> {
        let h = word_hash(word);
        let t = self.vocab;
        let mut i = (mix(h) % t.slots as u64) as usize;
        for _ in 0..t.slots {
            let at = t.at + i * VOCAB_SLOT;
            let id = u64_at(&self.data, at + 8);
            if id == EMPTY_ID {
                return None;
            }
            if u64_at(&self.data, at) == h {
                return u32::try_from(id).ok();
            }
            i = (i + 1) % t.slots;
        }
        None
    }

    /// (log10 prob, log10 backoff) of a packed n-gram of order `n` (1-based).
    fn entry(&self, n: usize, key: u128) -> Option<(f32, f32)> {
        let t = self.grams[n - 1];
        let h = key_hash(key);
        let mut i = (mix(h) % t.slots as u64) as usize;
        for _ in 0..t.slots {
            let at = t.at + i * GRAM_SLOT;
            let k = u64_at(&self.data, at);
            if k == h {
                return Some((f32_at(&self.data, at + 8), f32_at(&self.data, at + 12)));
            }
            if k == EMPTY_KEY {
                return None;
            }
            i = (i + 1) % t.slots;
        }
        None
    }

    /// log10 p(word | history) with backoff, as [`Model::log10_prob`].
    pub fn log10_prob(&self, history: &[u32], word: u32) -> f64 {
        let h = &history[history.len().saturating_sub(self.order() - 1)..];
        let mut backoff = 0.0;
        for start in 0..=h.len() {
            let ctx = &h[start..];
            let gram = pack(ctx.iter().copied().chain(std::iter::once(word)));
            if let Some((p, _)) = self.entry(ctx.len() + 1, gram) {
                return f64::from(p) + backoff;
            }
            if !ctx.is_empty() {
                if let Some((_, b)) = self.entry(ctx.len(), pack(ctx.iter().copied())) {
                    backoff += f64::from(b);
                }
            }
        }
        backoff
    }

    /// Scores one sentence of tokens, as [`Model::score`].
    pub fn score(&self, tokens: &[&str]) -> SentenceScore {
        score_sentence(
            tokens.iter().map(|t| self.id(t)),
            [self.bos, self.unk, self.eos],
            |h, w| self.log10_prob(h, w),
        )
    }

    /// The bytes the model holds.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Entry;

    fn tiny() -> Model {
        let mut m = Model::default();
        for w in [UNK, BOS, EOS, "a", "b"] {
            m.intern(w);
        }
        let e = |prob, backoff| Entry { prob, backoff };
        let mut uni = std::collections::HashMap::new();
        uni.insert(vec![0], e(-2.0, 0.0));
        uni.insert(vec![1], e(-99.0, -0.5));
        uni.insert(vec![2], e(-1.0, 0.0));
        uni.insert(vec![3], e(-0.5, -0.25));
        uni.insert(vec![4], e(-0.75, -0.125));
        let mut bi = std::collections::HashMap::new();
        bi.insert(vec![1, 3], e(-0.125, 0.0));
        bi.insert(vec![3, 4], e(-0.25, 0.0));
        m.grams = vec![uni, bi];
        m
    }

    fn bytes(m: &Model) -> Vec<u8> {
        let mut b = Vec::new();
        write(m, &mut b).expect("write");
        b
    }

    #[test]
    fn scores_as_the_model_with_backoff_and_unknown_words() {
        let m = tiny();
        let p = ProbingModel::from_bytes(bytes(&m)).expect("load");
        for s in [&["a", "b"][..], &["b", "a", "zzz"], &[], &["zzz", "zzz"]] {
            assert_eq!(p.score(s), m.score(s), "{s:?}");
        }
        assert_eq!(p.id("b"), Some(4));
        assert_eq!(p.id("zzz"), None);
    }

    #[test]
    fn hostile_files_are_refused_or_harmless() {
        let good = bytes(&tiny());
        let refuse = |b: Vec<u8>, why: &str| {
            assert!(ProbingModel::from_bytes(b).is_err(), "{why}");
        };
        refuse(b"NSLM1\0\0\0".to_vec(), "another magic");
        refuse(good[..good.len() - 1].to_vec(), "truncated");
        let mut longer = good.clone();
        longer.push(0);
        refuse(longer, "trailing bytes");
        let mut order = good.clone();
        order[8] = 5;
        refuse(order, "order 5");
        let mut slots = good.clone();
        slots[16..24].copy_from_slice(&1u64.to_le_bytes());
        refuse(slots, "fewer than two slots");
        let mut huge = good.clone();
        huge[16..24].copy_from_slice(&(1u64 << 62).to_le_bytes());
        refuse(huge, "a size beyond the file");
        // every slot taken and nothing matching: lookups still end
        let mut full = good.clone();
        let p = ProbingModel::from_bytes(good).expect("load");
        for t in std::iter::once(p.vocab).chain(p.grams.iter().copied()) {
            let width = if t.at == p.vocab.at {
                VOCAB_SLOT
            } else {
                GRAM_SLOT
            };
            for i in 0..t.slots {
                let at = t.at + i * width;
                full[at..at + 8].copy_from_slice(&[7u8; 8]);
                if width == VOCAB_SLOT {
                    full[at + 8..at + 16].copy_from_slice(&[7u8; 8]);
                }
            }
        }
        let p = ProbingModel::from_bytes(full).expect("well-formed sizes");
        assert_eq!(p.id("a"), None);
        let s = p.score(&["a", "b"]);
        assert_eq!(s.token_log10.len(), 3);
    }
}
