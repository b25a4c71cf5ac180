//! The estimator the way `lmplz` works, for orders up to 4: word ids packed into one `u128` key
//! per n-gram (32 bits a word, the first word most significant, so numeric order is
//! lexicographic order and an n-gram's context is `key >> 32`), counting by sorting keys, and
//! every later step a streaming pass over sorted arrays — adjusted counts from the sorted
//! suffixes of the order above, discounts from counts-of-counts, per-context sums over
//! contiguous runs, backoffs by merging contexts with the order below. Memory is a few words
//! per distinct n-gram; the raw counts, the only part proportional to the corpus, are spilled
//! to disk as sorted runs and merged when they outgrow the memory budget.
//!
//! It computes what [`super::estimate::estimate_general`] computes (the tests compare them
//! n-gram by n-gram) and is what [`super::estimate::estimate`] runs when the order allows.

use std::collections::{BinaryHeap, HashMap};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use rayon::prelude::*;

use super::discounts::Discounts;
use super::{Entry, LmError, Model, BOS, EOS, UNK};

/// The highest order the packed keys hold (4 words of 32 bits).
pub const MAX_PACKED_ORDER: usize = super::probing::MAX_ORDER;

const BITS: u32 = 32;

/// How much memory the raw counts may take before they are spilled, and where to.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Bytes of raw n-gram keys held in memory before a sorted run goes to disk.
    pub memory: usize,
    /// Where the runs go (the system's temporary directory when `None`).
    pub temp_dir: Option<PathBuf>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            memory: 1 << 30,
            temp_dir: None,
        }
    }
}

/// An estimated model in sorted form: per order, the n-gram keys in increasing order with
/// their log10 probabilities and backoffs.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub words: Vec<String>,
    pub orders: Vec<Order>,
    pub discounts: Vec<Discounts>,
    /// Sorted runs written to disk while counting (0 when everything fitted in memory).
    pub spilled_runs: usize,
}

/// The n-grams of one order.
#[derive(Debug, Clone, Default)]
pub struct Order {
    pub keys: Vec<u128>,
    pub prob: Vec<f64>,
    pub backoff: Vec<f64>,
}

fn key_of(words: &[u32]) -> u128 {
    words
        .iter()
        .fold(0u128, |k, &w| (k << BITS) | u128::from(w))
}

fn words_of(key: u128, n: usize) -> impl Iterator<Item = u32> {
    (0..n)
        .rev()
        .map(move |i| (key >> (BITS as usize * i)) as u32)
}

fn mask(n: usize) -> u128 {
    if n >= 4 {
        u128::MAX
    } else {
        (1u128 << (BITS as usize * n)) - 1
    }
}

/// Sorted (key, count) pairs of a sorted key list.
fn run_lengths(sorted: &[u128]) -> Vec<(u128, u64)> {
    let mut out: Vec<(u128, u64)> = Vec::new();
    for &k in sorted {
        match out.last_mut() {
            Some((last, c)) if *last == k => *c += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// The raw counts of the highest order, in memory or as sorted runs on disk.
struct Counter {
    keys: Vec<u128>,
    limit: usize,
    runs: Vec<tempfile::NamedTempFile>,
    temp_dir: Option<PathBuf>,
}

impl Counter {
    fn new(budget: &Budget) -> Counter {
        let limit = (budget.memory / std::mem::size_of::<u128>()).max(1024);
        Counter {
            keys: Vec::new(),
            limit,
            runs: Vec::new(),
            temp_dir: budget.temp_dir.clone(),
        }
    }

    fn push(&mut self, key: u128) -> Result<(), LmError> {
        self.keys.push(key);
        if self.keys.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Sorts what is in memory and writes it as a run of (key, count) records.
    fn spill(&mut self) -> Result<(), LmError> {
        self.keys.par_sort_unstable();
        let file = match &self.temp_dir {
            Some(d) => tempfile::NamedTempFile::new_in(d)?,
            None => tempfile::NamedTempFile::new()?,
        };
        let mut w = BufWriter::with_capacity(1 << 20, file.as_file());
        for (k, c) in run_lengths(&self.keys) {
            w.write_all(&k.to_le_bytes())?;
            w.write_all(&c.to_le_bytes())?;
        }
        w.flush()?;
        drop(w);
        self.keys.clear();
        self.runs.push(file);
        Ok(())
    }

    /// The distinct keys with their counts, in order.
    fn finish(mut self) -> Result<(Vec<(u128, u64)>, usize), LmError> {
        if self.runs.is_empty() {
            self.keys.par_sort_unstable();
            return Ok((run_lengths(&self.keys), 0));
        }
        if !self.keys.is_empty() {
            self.spill()?;
        }
        let runs = self.runs.len();
        let mut readers: Vec<BufReader<std::fs::File>> = self
            .runs
            .iter()
            .map(|f| f.reopen().map(|f| BufReader::with_capacity(1 << 20, f)))
            .collect::<Result<_, _>>()?;
        let next = |r: &mut BufReader<std::fs::File>| -> Result<Option<(u128, u64)>, LmError> {
            let mut b = [0u8; 24];
            match r.read_exact(&mut b) {
                Ok(()) => {
                    let mut k = [0u8; 16];
                    let mut c = [0u8; 8];
                    k.copy_from_slice(&b[..16]);
                    c.copy_from_slice(&b[16..]);
                    Ok(Some((u128::from_le_bytes(k), u64::from_le_bytes(c))))
                }
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                Err(e) => Err(e.into()),
            }
        };
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some((k, c)) = next(r)? {
                heap.push(std::cmp::Reverse((k, i, c)));
            }
        }
        let mut out: Vec<(u128, u64)> = Vec::new();
        while let Some(std::cmp::Reverse((k, i, c))) = heap.pop() {
            match out.last_mut() {
                Some((last, n)) if *last == k => *n += c,
                _ => out.push((k, c)),
            }
            if let Some((k, c)) = next(&mut readers[i])? {
                heap.push(std::cmp::Reverse((k, i, c)));
            }
        }
        Ok((out, runs))
    }
}

/// Estimates a model of `order` ≤ [`MAX_PACKED_ORDER`] from sentences of tokens.
pub fn estimate<I, S>(sentences: I, order: usize, budget: &Budget) -> Result<Estimate, LmError>
where
    I: IntoIterator<Item = Vec<S>>,
    S: AsRef<str>,
{
    if !(1..=MAX_PACKED_ORDER).contains(&order) {
        return Err(LmError::Estimate(format!(
            "the sorted estimator takes orders 1–{MAX_PACKED_ORDER}"
        )));
    }
    let mut words: Vec<String> = Vec::new();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut intern = |w: &str| -> u32 {
        if let Some(&id) = ids.get(w) {
            return id;
        }
        let id = words.len() as u32;
        words.push(w.to_owned());
        ids.insert(w.to_owned(), id);
        id
    };
    let unk = intern(UNK);
    let bos = intern(BOS);
    let eos = intern(EOS);

    // 1. raw counts: the highest order (at most one leading <s>), and for each lower order the
    //    one <s>-initial n-gram of every sentence long enough to have it
    let mut counter = Counter::new(budget);
    let mut bos_initial: Vec<Vec<u128>> = vec![Vec::new(); order];
    let mut sentence: Vec<u32> = Vec::new();
    for s in sentences {
        sentence.clear();
        sentence.extend(s.iter().map(|t| intern(t.as_ref())));
        sentence.push(eos);
        let mut window = [bos; MAX_PACKED_ORDER];
        for &w in &sentence {
            window.rotate_left(1);
            window[MAX_PACKED_ORDER - 1] = w;
            for n in 1..=order {
                let gram = &window[MAX_PACKED_ORDER - n..];
                if n >= 2 && gram[1] == bos {
                    continue; // "<s> <s> …": padding only
                }
                if n == order {
                    counter.push(key_of(gram))?;
                } else if gram[0] == bos {
                    bos_initial[n - 1].push(key_of(gram));
                }
            }
        }
    }
    let (top, spilled_runs) = counter.finish()?;

    // 2. adjusted counts: continuation counts (the distinct words to the left: the suffixes of
    //    the order above, counted) merged with the <s>-initial raw counts
    let mut adjusted: Vec<Vec<(u128, u64)>> = vec![Vec::new(); order];
    adjusted[order - 1] = top;
    for n in (1..order).rev() {
        let m = mask(n);
        let mut suffixes: Vec<u128> = adjusted[n].iter().map(|(k, _)| k & m).collect();
        suffixes.par_sort_unstable();
        let continuation = run_lengths(&suffixes);
        drop(suffixes);
        let mut raw = std::mem::take(&mut bos_initial[n - 1]);
        raw.par_sort_unstable();
        let raw = run_lengths(&raw);
        adjusted[n - 1] = merge(continuation, raw);
    }
    // <unk> and <s> are unigrams with count 0
    for w in [unk, bos] {
        let k = u128::from(w);
        let uni = &mut adjusted[0];
        match uni.binary_search_by(|(x, _)| x.cmp(&k)) {
            Ok(i) => uni[i].1 = 0,
            Err(i) => uni.insert(i, (k, 0)),
        }
    }

    // 3. discounts from counts-of-counts
    let discounts = adjusted
        .iter()
        .enumerate()
        .map(|(i, grams)| {
            let mut n = [0u64; 5];
            for &(_, c) in grams {
                if (1..5).contains(&c) {
                    n[c as usize] += 1;
                }
            }
            Discounts::from_counts_of_counts(i + 1, n)
        })
        .collect::<Result<Vec<_>, _>>()?;

    // 4. per context (a contiguous run of the sorted keys): denominator and gamma
    let contexts: Vec<Contexts> = adjusted
        .par_iter()
        .zip(&discounts)
        .map(|(grams, d)| Contexts::of(grams, d))
        .collect();

    // 5. interpolation, lowest order first; 6. backoffs: gamma of the n-gram as a context of
    //    the order above (a merge of two sorted lists)
    let vocab = (words.len() - 1) as f64; // with <unk>, without <s>
    let mut orders: Vec<Order> = Vec::with_capacity(order);
    for (i, grams) in adjusted.iter().enumerate() {
        let ctx = &contexts[i];
        let d = &discounts[i];
        let mut prob = Vec::with_capacity(grams.len());
        let mut c_at = 0usize;
        for &(k, c) in grams {
            let context = k >> BITS;
            while ctx.keys[c_at] != context {
                c_at += 1;
            }
            let u = (c as f64 - d.of(c)) / ctx.denom[c_at];
            let lower = if i == 0 {
                1.0 / vocab
            } else {
                let below = &orders[i - 1];
                let suffix = k & mask(i);
                below
                    .keys
                    .binary_search(&suffix)
                    .map(|j| below.prob[j])
                    .unwrap_or(0.0)
            };
            prob.push(u + ctx.gamma[c_at] * lower);
        }
        orders.push(Order {
            keys: grams.iter().map(|(k, _)| *k).collect(),
            prob,
            backoff: Vec::new(),
        });
    }
    drop(adjusted);
    for (i, o) in orders.iter_mut().enumerate() {
        let above = contexts.get(i + 1);
        let mut backoff = vec![0.0; o.keys.len()];
        if let Some(above) = above {
            let mut j = 0usize;
            for (b, &k) in backoff.iter_mut().zip(&o.keys) {
                while j < above.keys.len() && above.keys[j] < k {
                    j += 1;
                }
                let last = k as u32;
                if j < above.keys.len() && above.keys[j] == k && last != unk && last != eos {
                    *b = above.gamma[j].log10();
                }
            }
        }
        for (p, &k) in o.prob.iter_mut().zip(&o.keys) {
            *p = if i == 0 && k == u128::from(bos) {
                0.0
            } else {
                p.log10()
            };
        }
        o.backoff = backoff;
    }
    Ok(Estimate {
        words,
        orders,
        discounts,
        spilled_runs,
    })
}

/// Two sorted (key, count) lists with distinct keys merged into one.
fn merge(a: Vec<(u128, u64)>, b: Vec<(u128, u64)>) -> Vec<(u128, u64)> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
            out.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j].0 < a[i].0 {
            out.push(b[j]);
            j += 1;
        } else {
            out.push((a[i].0, a[i].1 + b[j].1));
            i += 1;
            j += 1;
        }
    }
    out
}

/// The contexts of one order in key order, with each one's denominator (the sum of its
/// n-grams' adjusted counts) and gamma (the mass the discounts free, per unit of it).
struct Contexts {
    keys: Vec<u128>,
    denom: Vec<f64>,
    gamma: Vec<f64>,
}

impl Contexts {
    fn of(grams: &[(u128, u64)], d: &Discounts) -> Contexts {
        let mut out = Contexts {
            keys: Vec::new(),
            denom: Vec::new(),
            gamma: Vec::new(),
        };
        let mut flush = |key: u128, total: u64, kinds: [u64; 4]| {
            let g: f64 = (1..4).map(|j| d.0[j] * kinds[j] as f64).sum::<f64>() / total as f64;
            out.keys.push(key);
            out.denom.push(total as f64);
            out.gamma.push(g);
        };
        let mut current: Option<(u128, u64, [u64; 4])> = None;
        // an order's n-grams of one context are contiguous (unigrams share the empty one, 0)
        for &(k, c) in grams {
            let ctx = k >> BITS;
            match &mut current {
                Some((key, total, kinds)) if *key == ctx => {
                    *total += c;
                    if c > 0 {
                        kinds[c.min(3) as usize] += 1;
                    }
                }
                _ => {
                    if let Some((key, total, kinds)) = current.take() {
                        flush(key, total, kinds);
                    }
                    let mut kinds = [0u64; 4];
                    if c > 0 {
                        kinds[c.min(3) as usize] += 1;
                    }
                    current = Some((ctx, c, kinds));
                }
            }
        }
        if let Some((key, total, kinds)) = current {
            flush(key, total, kinds);
        }
        out
    }
}

impl Estimate {
    /// The model with hash-map tables (what scoring and the binary writer take).
    pub fn into_model(self) -> Model {
        let mut model = Model::default();
        for w in &self.words {
            model.intern(w);
        }
        model.grams = self
            .orders
            .into_iter()
            .enumerate()
            .map(|(i, o)| {
                o.keys
                    .iter()
                    .zip(o.prob.iter().zip(&o.backoff))
                    .map(|(&k, (&prob, &backoff))| {
                        (words_of(k, i + 1).collect(), Entry { prob, backoff })
                    })
                    .collect()
            })
            .collect();
        model
    }

    /// Writes the model in the probing layout (`probing.rs`) straight from the sorted arrays:
    /// the keys are already packed as the layout packs them.
    pub fn write_probing(&self, out: &mut dyn Write) -> Result<(), LmError> {
        let levels = self
            .orders
            .iter()
            .map(|o| super::probing::Level {
                len: o.keys.len(),
                entries: Box::new(
                    o.keys
                        .iter()
                        .zip(o.prob.iter().zip(&o.backoff))
                        .map(|(&k, (&p, &b))| (k, p, b)),
                ),
            })
            .collect();
        super::probing::write_levels(&self.words, levels, out)
    }

    /// How many n-grams each order has.
    pub fn sizes(&self) -> Vec<usize> {
        self.orders.iter().map(|o| o.keys.len()).collect()
    }

    /// Writes the model as an ARPA file, n-grams in key order, numbers with seven decimals
    /// (formatted without going through `format!`).
    pub fn write_arpa(&self, out: &mut dyn Write) -> Result<(), LmError> {
        let mut w = BufWriter::with_capacity(1 << 20, out);
        writeln!(w, "\\data\\")?;
        for (i, o) in self.orders.iter().enumerate() {
            writeln!(w, "ngram {}={}", i + 1, o.keys.len())?;
        }
        let top = self.orders.len();
        let mut line: Vec<u8> = Vec::with_capacity(256);
        for (i, o) in self.orders.iter().enumerate() {
            writeln!(w, "\n\\{}-grams:", i + 1)?;
            for ((&k, &p), &b) in o.keys.iter().zip(&o.prob).zip(&o.backoff) {
                line.clear();
                fixed7(p, &mut line);
                line.push(b'\t');
                for (j, word) in words_of(k, i + 1).enumerate() {
                    if j > 0 {
                        line.push(b' ');
                    }
                    line.extend_from_slice(self.words[word as usize].as_bytes());
                }
                if i + 1 < top {
                    line.push(b'\t');
                    fixed7(b, &mut line);
                }
                line.push(b'\n');
                w.write_all(&line)?;
            }
        }
        writeln!(w, "\n\\end\\")?;
        w.flush()?;
        Ok(())
    }
}

/// `x` as `format!("{:.7}", x)` writes it (and `0` for zero), without allocating.
pub(super) fn fixed7(x: f64, out: &mut Vec<u8>) {
    if x == 0.0 {
        out.push(b'0');
        return;
    }
    let scaled = (x.abs() * 1e7).round();
    if !scaled.is_finite() || scaled >= 9.0e18 {
        out.extend_from_slice(format!("{x:.7}").as_bytes());
        return;
    }
    let scaled = scaled as u64;
    if x < 0.0 {
        out.push(b'-');
    }
    let mut buf = itoa::Buffer::new();
    out.extend_from_slice(buf.format(scaled / 10_000_000).as_bytes());
    out.push(b'.');
    let frac = scaled % 10_000_000;
    let digits = buf.format(frac);
    out.extend(std::iter::repeat_n(b'0', 7 - digits.len()));
    out.extend_from_slice(digits.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed7_writes_what_format_writes() {
        for x in [
            -0.5,
            -1.25,
            -99.0,
            -2.345_678_91,
            -0.000_000_04,
            -0.000_000_06,
            1.5,
            -12.000_000_5,
            -2.718_281_9,
        ] {
            let mut b = Vec::new();
            fixed7(x, &mut b);
            let ours = String::from_utf8(b).expect("utf8");
            let theirs = format!("{x:.7}");
            // the same text, or the same number to the last digit (ties round differently)
            assert!(
                ours == theirs || (ours.parse::<f64>().expect("f64") - x).abs() <= 0.5e-7 + 1e-12,
                "{x}: {ours} vs {theirs}"
            );
        }
    }

    #[test]
    fn keys_are_lexicographic_and_contexts_are_prefixes() {
        let a = key_of(&[1, 2, 3]);
        let b = key_of(&[1, 3, 0]);
        assert!(a < b);
        assert_eq!(a >> BITS, key_of(&[1, 2]));
        assert_eq!(a & mask(2), key_of(&[2, 3]));
        assert_eq!(words_of(a, 3).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn a_tiny_memory_budget_spills_sorted_runs_and_gives_the_same_model() {
        let sentences = crate::testdata::corpus(3000);
        let arpa = |budget: &Budget| {
            let e = estimate(sentences.clone(), 4, budget).expect("estimate");
            let mut out = Vec::new();
            e.write_arpa(&mut out).expect("arpa");
            (out, e.spilled_runs)
        };
        let (in_memory, none) = arpa(&Budget::default());
        let dir = tempfile::tempdir().expect("dir");
        let (spilled, runs) = arpa(&Budget {
            memory: 16 * 1024,
            temp_dir: Some(dir.path().to_owned()),
        });
        assert_eq!(none, 0);
        assert!(runs > 5, "{runs} runs");
        assert!(in_memory == spilled, "the same ARPA");
        // the runs are gone with the estimate
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }

    #[test]
    fn the_probing_layout_scores_as_the_model_does() {
        let sentences = crate::testdata::corpus(3000);
        let model = estimate(sentences[..2500].to_vec(), 4, &Budget::default())
            .expect("estimate")
            .into_model();
        let mut bytes = Vec::new();
        crate::probing::write(&model, &mut bytes).expect("write");
        // the sorted arrays written straight out: the same tables (slots may differ where
        // entries collide, as they are inserted in another order), the same scores
        let mut straight = Vec::new();
        estimate(sentences[..2500].to_vec(), 4, &Budget::default())
            .expect("estimate")
            .write_probing(&mut straight)
            .expect("write");
        assert_eq!(straight.len(), bytes.len());
        let straight = crate::probing::ProbingModel::from_bytes(straight).expect("read");
        let probing = crate::probing::ProbingModel::from_bytes(bytes).expect("read");
        let mut oov = 0;
        for s in &sentences[2500..] {
            let refs: Vec<&str> = s.iter().map(String::as_str).collect();
            let ours = probing.score(&refs);
            assert_eq!(straight.score(&refs), ours);
            let theirs = model.score(&refs);
            assert_eq!(ours.oov, theirs.oov);
            assert_eq!(ours.token_log10.len(), theirs.token_log10.len());
            // the file holds f32, as KenLM's does
            for (a, b) in ours.token_log10.iter().zip(&theirs.token_log10) {
                assert!((a - b).abs() < 1e-5, "{a} vs {b}");
            }
            oov += ours.oov;
        }
        assert!(
            oov > 0,
            "held-out words outside the vocabulary are scored too"
        );
    }
}
