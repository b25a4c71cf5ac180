//! Planning annotation batches: fixed groups of k annotators, balanced by load, and a seeded
//! order per annotator that avoids two transformations of the same bug in a row.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// An item as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub id: i64,
    pub bug: String,
}

/// One planned assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub item: i64,
    pub annotator: i64,
    pub position: i64,
    pub group: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("fixed groups need at least k = {k} annotators, got {got}")]
    TooFewAnnotators { k: usize, got: usize },
    #[error("k must be at least 1")]
    ZeroK,
}

/// Splits `annotators` into ⌊n/k⌋ groups of k (the rest are reserves who take released items),
/// gives each item to the group with the least load so far, and orders each annotator's items
/// with a seeded shuffle (per annotator) that avoids consecutive items of the same bug when
/// `avoid_same_bug` holds and the items allow it.
pub fn plan_fixed_groups(
    items: &[PlanItem],
    annotators: &[i64],
    k: usize,
    seed: u64,
    avoid_same_bug: bool,
) -> Result<Vec<Planned>, PlanError> {
    if k == 0 {
        return Err(PlanError::ZeroK);
    }
    if annotators.len() < k {
        return Err(PlanError::TooFewAnnotators {
            k,
            got: annotators.len(),
        });
    }
    let groups: Vec<&[i64]> = annotators.chunks_exact(k).collect();
    let mut load = vec![0usize; groups.len()];
    let mut per_group: Vec<Vec<&PlanItem>> = vec![Vec::new(); groups.len()];
    // Items of one bug are spread over groups before a group gets a second one.
    let mut sorted: Vec<&PlanItem> = items.iter().collect();
    sorted.sort_by(|a, b| a.bug.cmp(&b.bug).then(a.id.cmp(&b.id)));
    for item in sorted {
        let g = (0..groups.len()).min_by_key(|&g| (load[g], g)).unwrap_or(0);
        load[g] += 1;
        per_group[g].push(item);
    }
    let mut out = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        for &annotator in *members {
            let ordered = order_for(&per_group[g], seed, annotator, avoid_same_bug);
            out.extend(ordered.into_iter().enumerate().map(|(pos, item)| Planned {
                item: item.id,
                annotator,
                position: pos as i64,
                group: g,
            }));
        }
    }
    Ok(out)
}

/// The per-annotator seed recorded with the annotator.
pub fn annotator_seed(seed: u64, annotator: i64) -> u64 {
    seed ^ (annotator as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn order_for<'a>(
    items: &[&'a PlanItem],
    seed: u64,
    annotator: i64,
    avoid_same_bug: bool,
) -> Vec<&'a PlanItem> {
    let mut rng = ChaCha8Rng::seed_from_u64(annotator_seed(seed, annotator));
    let mut v: Vec<&PlanItem> = items.to_vec();
    v.shuffle(&mut rng);
    if avoid_same_bug {
        spread_bugs(&mut v);
    }
    v
}

/// Reorders greedily so that neighbours differ in bug where possible (keeps the shuffled order
/// otherwise).
pub fn spread_bugs(v: &mut Vec<&PlanItem>) {
    let mut rest: Vec<&PlanItem> = std::mem::take(v);
    while !rest.is_empty() {
        let prev = v.last().map(|p| p.bug.clone());
        // Prefer the bug with the most remaining items among those that differ from prev,
        // so the tail does not end up as a run of one bug.
        let mut best: Option<usize> = None;
        let mut best_count = 0;
        for (i, it) in rest.iter().enumerate() {
            if Some(&it.bug) == prev.as_ref() {
                continue;
            }
            let count = rest.iter().filter(|o| o.bug == it.bug).count();
            if best.is_none() || count > best_count {
                best = Some(i);
                best_count = count;
            }
        }
        let pick = best.unwrap_or(0);
        v.push(rest.remove(pick));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize, bugs: usize) -> Vec<PlanItem> {
        (0..n)
            .map(|i| PlanItem {
                id: i as i64 + 1,
                bug: format!("B{}", i % bugs),
            })
            .collect()
    }

    #[test]
    fn every_item_gets_exactly_k_annotators_of_one_group() {
        let plan = plan_fixed_groups(&items(23, 5), &(1..=10).collect::<Vec<_>>(), 5, 7, true)
            .expect("plan");
        for item in 1..=23 {
            let who: Vec<&Planned> = plan.iter().filter(|p| p.item == item).collect();
            assert_eq!(who.len(), 5, "item {item}");
            assert!(who.iter().all(|p| p.group == who[0].group));
        }
        // balanced: groups differ by at most one item
        let g0 = plan.iter().filter(|p| p.annotator == 1).count();
        let g1 = plan.iter().filter(|p| p.annotator == 6).count();
        assert!(g0.abs_diff(g1) <= 1, "{g0} vs {g1}");
    }

    #[test]
    fn order_is_seeded_and_avoids_same_bug_in_a_row() {
        let a = plan_fixed_groups(&items(12, 4), &[1, 2, 3], 3, 42, true).expect("plan");
        let b = plan_fixed_groups(&items(12, 4), &[1, 2, 3], 3, 42, true).expect("plan");
        assert_eq!(a, b, "same seed, same plan");
        let c = plan_fixed_groups(&items(12, 4), &[1, 2, 3], 3, 43, true).expect("plan");
        assert_ne!(a, c, "another seed, another order");
        for annotator in 1..=3 {
            let mut mine: Vec<&Planned> = a.iter().filter(|p| p.annotator == annotator).collect();
            mine.sort_by_key(|p| p.position);
            let bugs: Vec<String> = mine
                .iter()
                .map(|p| format!("B{}", (p.item - 1) % 4))
                .collect();
            assert!(bugs.windows(2).all(|w| w[0] != w[1]), "{bugs:?}");
        }
    }

    #[test]
    fn too_few_annotators_is_an_error() {
        assert_eq!(
            plan_fixed_groups(&items(3, 1), &[1, 2], 5, 0, false),
            Err(PlanError::TooFewAnnotators { k: 5, got: 2 })
        );
    }
}
