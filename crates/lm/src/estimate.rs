//! Interpolated modified Kneser-Ney (Chen & Goodman; Heafield et al. 2013, as `lmplz`):
//! adjusted counts (continuation counts, except n-grams that start with `<s>` and the highest
//! order, which keep raw counts), three discounts per order from counts-of-counts, and
//! interpolation down to a uniform distribution over the vocabulary (with `<unk>`, without `<s>`).

use std::collections::HashMap;

pub use super::discounts::Discounts;
use super::{Entry, LmError, Model, BOS, EOS, UNK};

/// Estimates a model of `order` from sentences of tokens: the sorted estimator
/// ([`super::sorted`]) for orders up to 4, the general one above.
pub fn estimate<I, S>(sentences: I, order: usize) -> Result<(Model, Vec<Discounts>), LmError>
where
    I: IntoIterator<Item = Vec<S>>,
    S: AsRef<str>,
{
    if (1..=super::sorted::MAX_PACKED_ORDER).contains(&order) {
        let e = super::sorted::estimate(sentences, order, &super::sorted::Budget::default())?;
        let discounts = e.discounts.clone();
        return Ok((e.into_model(), discounts));
    }
    estimate_general(sentences, order)
}

/// Estimates a model of any `order` with hash maps of n-grams (the reference the sorted
/// estimator is tested against; slower and larger).
pub fn estimate_general<I, S>(
    sentences: I,
    order: usize,
) -> Result<(Model, Vec<Discounts>), LmError>
where
    I: IntoIterator<Item = Vec<S>>,
    S: AsRef<str>,
{
    if order < 1 {
        return Err(LmError::Estimate("order must be at least 1".into()));
    }
    let mut model = Model::default();
    let unk = model.intern(UNK);
    let bos = model.intern(BOS);
    let eos = model.intern(EOS);
    // raw counts: the highest order, and <s>-initial n-grams of every order
    let mut adjusted: Vec<HashMap<Vec<u32>, u64>> = vec![HashMap::new(); order];
    let mut padded: Vec<u32> = Vec::new();
    for sentence in sentences {
        padded.clear();
        padded.extend(std::iter::repeat_n(bos, order - 1));
        for t in &sentence {
            padded.push(model.intern(t.as_ref()));
        }
        padded.push(eos);
        let start = order - 1; // index of the first real token
        for end in start..padded.len() {
            for n in 1..=order {
                let from = end + 1 - n;
                let gram = &padded[from..=end];
                if n >= 2 && gram[1] == bos {
                    continue; // "<s> <s> …": padding only
                }
                if n == order || gram[0] == bos {
                    *adjusted[n - 1].entry(gram.to_vec()).or_default() += 1;
                }
            }
        }
    }
    // continuation counts of the other n-grams: the distinct words seen to their left, i.e. the
    // (n+1)-grams of the table above that end with them (every such (n+1)-gram is one of its
    // keys), computed from the highest order down so each table is complete when read
    for n in (1..order).rev() {
        let (lower, higher) = adjusted.split_at_mut(n);
        let lower = &mut lower[n - 1];
        for k in higher[0].keys() {
            *lower.entry(k[1..].to_vec()).or_default() += 1;
        }
    }
    adjusted[0].insert(vec![unk], 0);
    adjusted[0].insert(vec![bos], 0);
    // discounts from counts-of-counts of adjusted counts
    let mut discounts = Vec::with_capacity(order);
    for (i, grams) in adjusted.iter().enumerate() {
        let mut n = [0u64; 5];
        for &c in grams.values() {
            if (1..5).contains(&c) {
                n[c as usize] += 1;
            }
        }
        discounts.push(Discounts::from_counts_of_counts(i + 1, n)?);
    }
    // per context: denominator and gamma
    let mut gamma: Vec<HashMap<Vec<u32>, f64>> = vec![HashMap::new(); order];
    let mut denom: Vec<HashMap<Vec<u32>, f64>> = vec![HashMap::new(); order];
    for (i, grams) in adjusted.iter().enumerate() {
        let mut sums: HashMap<&[u32], (u64, [u64; 4])> = HashMap::new();
        for (g, &c) in grams {
            let e = sums.entry(&g[..g.len() - 1]).or_default();
            e.0 += c;
            if c > 0 {
                e.1[c.min(3) as usize] += 1;
            }
        }
        for (ctx, (total, kinds)) in sums {
            let d = &discounts[i];
            let g: f64 = (1..4).map(|j| d.0[j] * kinds[j] as f64).sum::<f64>() / total as f64;
            gamma[i].insert(ctx.to_vec(), g);
            denom[i].insert(ctx.to_vec(), total as f64);
        }
    }
    // interpolation, lowest order first
    let vocab = (model.words.len() - 1) as f64; // with <unk>, without <s>
    let mut probs: Vec<HashMap<Vec<u32>, f64>> = vec![HashMap::new(); order];
    for i in 0..order {
        let mut level = HashMap::with_capacity(adjusted[i].len());
        for (g, &c) in &adjusted[i] {
            let ctx = &g[..g.len() - 1];
            let u = (c as f64 - discounts[i].of(c)) / denom[i][ctx];
            let lower = if i == 0 {
                1.0 / vocab
            } else {
                probs[i - 1].get(&g[1..]).copied().unwrap_or(0.0)
            };
            level.insert(g.clone(), u + gamma[i][ctx] * lower);
        }
        probs[i] = level;
    }
    // only the probabilities and the backoffs are needed from here: free the rest first
    drop(denom);
    drop(adjusted);
    model.grams = probs
        .into_iter()
        .enumerate()
        .map(|(i, level)| {
            level
                .into_iter()
                .map(|(g, p)| {
                    let last = *g.last().unwrap_or(&unk);
                    let backoff = if i + 1 < order && last != unk && last != eos {
                        gamma[i + 1].get(&g).map(|b| b.log10()).unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    let prob = if g.as_slice() == [bos] {
                        0.0
                    } else {
                        p.log10()
                    };
                    (g, Entry { prob, backoff })
                })
                .collect()
        })
        .collect();
    Ok((model, discounts))
}

#[cfg(test)]
mod tests {
    use super::super::sorted::{self, MAX_PACKED_ORDER};
    use super::*;

    #[test]
    fn the_sorted_estimator_computes_what_the_general_one_does() {
        let sentences = crate::testdata::corpus(3000);
        for order in 1..=MAX_PACKED_ORDER {
            let (general, gd) = estimate_general(sentences.clone(), order).expect("general");
            let e = sorted::estimate(sentences.clone(), order, &sorted::Budget::default())
                .expect("sorted");
            assert_eq!(e.discounts, gd, "order {order}: discounts");
            let sorted = e.into_model();
            assert_eq!(sorted.words, general.words, "order {order}: vocabulary");
            for (n, (ours, theirs)) in sorted.grams.iter().zip(&general.grams).enumerate() {
                assert_eq!(ours.len(), theirs.len(), "order {order}: {}-grams", n + 1);
                for (g, e) in theirs {
                    let o = ours.get(g).expect("the same n-grams");
                    assert!(
                        (o.prob - e.prob).abs() <= 1e-12 * e.prob.abs().max(1.0)
                            && (o.backoff - e.backoff).abs() <= 1e-12 * e.backoff.abs().max(1.0),
                        "order {order}, {g:?}: {o:?} vs {e:?}"
                    );
                }
            }
        }
    }
}
