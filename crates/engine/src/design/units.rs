//! The units a designed study's participants answer — one snippet, a pair or a set — and the
//! order each participant meets them in, drawn from the snippets and a seed so that every
//! snippet is asked about as often as any other: pairs by a round-robin schedule (each
//! snippet in as many pairs as any other, ±1, no pair twice), sets round by round (each
//! snippet in as many sets as any other, ±1, never twice in a set). What is shown is
//! counterbalanced across the responses to a unit (A first in half of a pair's, each
//! snippet of a set in each place once in `set_size` responses), and each participant's
//! order is seeded and random or a row of a balanced Latin square (Williams).
//!
//! Plain data in and out: indices into the study's snippets, in their imported order.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Design, ItemOrder, Kind, Snippet};

/// All pairs are compared when there are at most this many; more snippets are compared in a
/// seeded sample of [`DEFAULT_PAIRS_PER_SNIPPET`] pairs each, unless the design says how many.
pub const MAX_ALL_PAIRS: usize = 1_000;
/// Pairs per snippet in a sample when the design does not say.
pub const DEFAULT_PAIRS_PER_SNIPPET: usize = 10;
/// The most units a study is planned with (a pair or a set is a row of the store).
pub const MAX_UNITS: usize = 200_000;

/// How long a unit is held for a participant before it may go to another (20 minutes, as a
/// batch's default lease); a page that stays open renews it up to [`MAX_HOLD_MS`] from the
/// claim.
pub const HOLD_MS: i64 = 20 * 60 * 1000;
/// The longest a page left open keeps a unit (from its claim).
pub const MAX_HOLD_MS: i64 = 2 * 60 * 60 * 1000;

/// Why no units could be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitsError {
    #[error("a pair needs two snippets; the study has {0}")]
    TooFewForPairs(usize),
    #[error("a set of {size} needs at least {size} snippets; the study has {snippets}")]
    TooFewForSets { size: usize, snippets: usize },
    #[error("{units} units is more than a study holds ({MAX_UNITS}): ask for fewer per snippet")]
    TooMany { units: usize },
}

/// The pairs to compare, each as two indices (the lower first; the side shown is
/// [`shown`]'s). Snippets with a `group` are compared within their group only (every pair
/// of it; the snippets without one form a group of their own); otherwise all pairs where
/// they are at most [`MAX_ALL_PAIRS`], else a seeded sample in which every snippet is in
/// `per_snippet` pairs (default [`DEFAULT_PAIRS_PER_SNIPPET`]; one fewer for some when the
/// count is odd), no pair twice.
pub fn pairs(
    groups: &[Option<&str>],
    per_snippet: Option<usize>,
    seed: u64,
) -> Result<Vec<[usize; 2]>, UnitsError> {
    let n = groups.len();
    if n < 2 {
        return Err(UnitsError::TooFewForPairs(n));
    }
    let mut out = Vec::new();
    if groups.iter().any(Option::is_some) {
        let mut by_group: std::collections::BTreeMap<Option<&str>, Vec<usize>> = Default::default();
        for (i, g) in groups.iter().enumerate() {
            by_group.entry(*g).or_default().push(i);
        }
        for members in by_group.values() {
            let count = members.len() * members.len().saturating_sub(1) / 2;
            if out.len() + count > MAX_UNITS {
                return Err(UnitsError::TooMany {
                    units: out.len() + count,
                });
            }
            for (x, &a) in members.iter().enumerate() {
                for &b in &members[x + 1..] {
                    out.push([a, b]);
                }
            }
        }
        return Ok(out);
    }
    let all = n * (n - 1) / 2;
    let rounds = match per_snippet {
        None if all <= MAX_ALL_PAIRS => n - 1 + n % 2,
        None => DEFAULT_PAIRS_PER_SNIPPET,
        Some(r) => r.max(1),
    };
    // the circle method on a seeded order: each round pairs every snippet once (one sits
    // out when n is odd), and no two rounds share a pair
    let players = n + n % 2;
    let rounds = rounds.min(players - 1);
    let units = rounds * (n / 2);
    if units > MAX_UNITS {
        return Err(UnitsError::TooMany { units });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng);
    let mut which: Vec<usize> = (0..players - 1).collect();
    which.shuffle(&mut rng);
    let fixed = players - 1;
    let player = |p: usize| (p < n).then(|| order[p]);
    for &r in &which[..rounds] {
        let mut round = vec![(fixed, r)];
        for i in 1..players / 2 {
            round.push(((r + i) % fixed, (r + fixed - i) % fixed));
        }
        for (p, q) in round {
            if let (Some(a), Some(b)) = (player(p), player(q)) {
                out.push([a.min(b), a.max(b)]);
            }
        }
    }
    Ok(out)
}

/// The sets of `size` to answer best and worst about, each as indices: `per_snippet` sets a
/// snippet (default twice the set size, so that `n` snippets give `2n` sets), every snippet
/// in as many sets as any other (±1), never twice in one set; drawn round by round, each
/// round a seeded order of every snippet.
pub fn sets(
    n: usize,
    size: usize,
    per_snippet: Option<usize>,
    seed: u64,
) -> Result<Vec<Vec<usize>>, UnitsError> {
    if size == 0 || n < size {
        return Err(UnitsError::TooFewForSets { size, snippets: n });
    }
    let r = per_snippet.unwrap_or(2 * size).max(1);
    let count = n.saturating_mul(r) / size;
    if count > MAX_UNITS {
        return Err(UnitsError::TooMany { units: count });
    }
    // rounds of a seeded order each: a set takes the round's next snippets; when a round runs
    // out within a set, the next round begins with the set's snippets moved to its end (each
    // comes once a round, so no snippet is ever twice in a set and every count is within one
    // of any other); the cost is the sets' size plus a shuffle a round
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    let mut round: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    for _ in 0..count {
        let mut set = Vec::with_capacity(size);
        while set.len() < size {
            match round.pop_front() {
                Some(i) => set.push(i),
                None => {
                    let mut next: Vec<usize> = (0..n).collect();
                    next.shuffle(&mut rng);
                    let (fresh, taken): (Vec<usize>, Vec<usize>) =
                        next.into_iter().partition(|i| !set.contains(i));
                    round.extend(fresh);
                    round.extend(taken);
                }
            }
        }
        set.sort_unstable();
        out.push(set);
    }
    Ok(out)
}

/// The order a unit's snippets are shown in for its `nth` response (0-based, in the order
/// the responses' claims were made): a seeded base order per unit, then turned one place
/// for each response — a pair shows each snippet first in every other response, a set
/// shows each snippet in each place once in every `len` responses.
pub fn shown(unit: &[usize], unit_index: usize, nth: usize, seed: u64) -> Vec<usize> {
    let mut base = unit.to_vec();
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, unit_index as u64));
    base.shuffle(&mut rng);
    if base.is_empty() {
        return base;
    }
    let turn = nth % base.len();
    base.rotate_left(turn);
    base
}

/// Participant `participant`'s order of `units` units: a seeded shuffle of their own, or the
/// row of a balanced Latin square (Williams): over `units` participants (twice that for an
/// odd count) each unit comes at each place equally often and, for an even count, each unit
/// right after each other once.
pub fn participant_order(
    units: usize,
    order: ItemOrder,
    seed: u64,
    participant: u64,
) -> Vec<usize> {
    match order {
        ItemOrder::Random => {
            let mut v: Vec<usize> = (0..units).collect();
            v.shuffle(&mut ChaCha8Rng::seed_from_u64(mix(seed, participant)));
            v
        }
        ItemOrder::LatinSquare => williams_row(units, participant),
    }
}

/// Row `row` of a Williams design for `n` treatments: the first row 0, 1, n−1, 2, n−2, …,
/// row i adds i to each (mod n); for odd n rows n..2n are rows 0..n reversed.
pub fn williams_row(n: usize, row: u64) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let rows = (if n.is_multiple_of(2) { n } else { 2 * n }) as u64;
    let r = (row % rows) as usize;
    let first = (0..n).map(|j| {
        if j == 0 {
            0
        } else if j % 2 == 1 {
            j.div_ceil(2)
        } else {
            n - j / 2
        }
    });
    let mut v: Vec<usize> = first.map(|x| (x + r % n) % n).collect();
    if r >= n {
        v.reverse();
    }
    v
}

/// The unit a participant is handed next, of the `open` ones (index, the responses it has or
/// is held for): the fewest first, so that every unit reaches k before any is asked again,
/// then the earliest in the participant's own order (`order`, a permutation of the study's
/// unit indices: [`participant_order`]). Ties cannot remain: the order ranks every unit.
pub fn next_unit(open: &[(usize, u64)], order: &[usize]) -> Option<usize> {
    let mut rank = vec![usize::MAX; order.len()];
    for (place, &unit) in order.iter().enumerate() {
        if let Some(r) = rank.get_mut(unit) {
            *r = place;
        }
    }
    open.iter()
        .min_by_key(|&&(unit, fill)| (fill, rank.get(unit).copied().unwrap_or(usize::MAX), unit))
        .map(|&(unit, _)| unit)
}

/// The units of `design` over its `snippets` (indices into them): each snippet alone, or the
/// pairs ([`pairs`], by the snippets' groups) or sets ([`sets`]) its questions ask about.
pub fn plan(
    design: &Design,
    snippets: &[Snippet],
    seed: u64,
) -> Result<Vec<Vec<usize>>, UnitsError> {
    let setting = design.questions.first().map(|q| &q.kind);
    match setting {
        Some(Kind::Pairwise(p)) => {
            let groups: Vec<Option<&str>> = snippets.iter().map(|s| s.group.as_deref()).collect();
            let per = p.per_snippet.map(|n| n as usize);
            Ok(pairs(&groups, per, seed)?
                .into_iter()
                .map(|p| p.to_vec())
                .collect())
        }
        Some(Kind::BestWorst(b)) => sets(
            snippets.len(),
            usize::from(b.set_size),
            b.per_snippet.map(|n| n as usize),
            seed,
        ),
        _ => Ok((0..snippets.len()).map(|i| vec![i]).collect()),
    }
}

/// A seed of its own for each of `seed`'s `part`s.
fn mix(seed: u64, part: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ part.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    rng.gen()
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_next_unit_is_the_least_answered_then_the_participants_own_order() {
        // fill first: unit 2 has none yet
        assert_eq!(next_unit(&[(0, 1), (1, 1), (2, 0)], &[0, 1, 2]), Some(2));
        // equal fill: the participant's order decides
        assert_eq!(next_unit(&[(0, 0), (1, 0), (2, 0)], &[2, 0, 1]), Some(2));
        assert_eq!(next_unit(&[(0, 0), (1, 0)], &[2, 1, 0]), Some(1));
        assert_eq!(next_unit(&[], &[0, 1]), None);
    }

    proptest! {
        /// Participants handed units one by one, k each, in their own seeded orders: every
        /// unit gets k responses, no participant a unit twice, and the first units of two
        /// participants differ in general (each has an order of their own).
        #[test]
        fn handing_out_fills_every_unit_to_k(units in 1usize..30, k in 1u64..6, seed in any::<u64>()) {
            let mut fill = vec![0u64; units];
            let participants = k as usize + 2;
            for p in 0..participants {
                let order = participant_order(units, ItemOrder::Random, seed, p as u64);
                let mut mine = HashSet::new();
                loop {
                    let open: Vec<(usize, u64)> = (0..units)
                        .filter(|u| fill[*u] < k && !mine.contains(u))
                        .map(|u| (u, fill[u]))
                        .collect();
                    let Some(u) = next_unit(&open, &order) else { break };
                    prop_assert!(mine.insert(u));
                    fill[u] += 1;
                }
            }
            prop_assert!(fill.iter().all(|&f| f == k));
        }
    }

    fn counts(n: usize, units: &[Vec<usize>]) -> Vec<usize> {
        let mut c = vec![0; n];
        for u in units {
            for &i in u {
                c[i] += 1;
            }
        }
        c
    }

    fn spread(c: &[usize]) -> usize {
        c.iter().max().unwrap_or(&0) - c.iter().min().unwrap_or(&0)
    }

    proptest! {
        /// A sample of pairs: no snippet with itself, no pair twice, each snippet in as many
        /// pairs as any other ±1 — exactly `r` each for an even count.
        #[test]
        fn sampled_pairs_are_balanced(n in 2usize..120, r in 1usize..12, seed in any::<u64>()) {
            let groups = vec![None; n];
            let p = pairs(&groups, Some(r), seed).expect("pairs");
            let mut seen = HashSet::new();
            for [a, b] in &p {
                prop_assert!(a < b);
                prop_assert!(seen.insert((*a, *b)), "pair {a}-{b} twice");
            }
            let c = counts(n, &p.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
            prop_assert!(spread(&c) <= 1, "{c:?}");
            let r = r.min(n - 1 + n % 2);
            if n.is_multiple_of(2) {
                prop_assert!(c.iter().all(|&x| x == r), "{c:?}");
            }
            prop_assert!(c.iter().all(|&x| x + 1 >= r), "{c:?}");
        }

        /// Sets: never a snippet twice in one, each snippet in as many sets as any other ±1,
        /// `n × r ÷ size` sets.
        #[test]
        fn sets_are_balanced(n in 3usize..80, size in 3usize..9, r in 1usize..10, seed in any::<u64>()) {
            prop_assume!(n >= size);
            let s = sets(n, size, Some(r), seed).expect("sets");
            prop_assert_eq!(s.len(), n * r / size);
            for set in &s {
                let distinct: HashSet<_> = set.iter().collect();
                prop_assert_eq!(distinct.len(), size);
            }
            let c = counts(n, &s);
            prop_assert!(spread(&c) <= 1, "{c:?}");
        }

        /// What is shown is counterbalanced: over `len` responses to a unit, each snippet
        /// comes at each place once (a pair: A first in one of every two).
        #[test]
        fn shown_orders_are_counterbalanced(len in 2usize..9, unit_index in 0usize..1000, seed in any::<u64>(), from in 0usize..5) {
            let unit: Vec<usize> = (0..len).map(|i| i * 7 + 3).collect();
            let mut at: HashMap<(usize, usize), usize> = HashMap::new();
            for nth in from * len..(from + 1) * len {
                let s = shown(&unit, unit_index, nth, seed);
                let mut sorted = s.clone();
                sorted.sort_unstable();
                prop_assert_eq!(&sorted, &unit);
                for (place, &x) in s.iter().enumerate() {
                    *at.entry((x, place)).or_default() += 1;
                }
            }
            prop_assert_eq!(at.len(), len * len);
            prop_assert!(at.values().all(|&k| k == 1));
        }

        /// A Latin square's rows: each a permutation, each unit at each place equally often
        /// over a full square; for an even count each unit right after each other once.
        #[test]
        fn latin_square_rows_are_balanced(n in 1usize..24, seed in any::<u64>()) {
            let rows = if n.is_multiple_of(2) { n } else { 2 * n };
            let square: Vec<Vec<usize>> = (0..rows as u64)
                .map(|p| participant_order(n, ItemOrder::LatinSquare, seed, p))
                .collect();
            let per_place = rows / n;
            for place in 0..n {
                let mut c = vec![0; n];
                for row in &square {
                    c[row[place]] += 1;
                }
                prop_assert!(c.iter().all(|&k| k == per_place), "place {place}: {c:?}");
            }
            let mut follows: HashMap<(usize, usize), usize> = HashMap::new();
            for row in &square {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
                for w in row.windows(2) {
                    *follows.entry((w[0], w[1])).or_default() += 1;
                }
            }
            if n.is_multiple_of(2) {
                prop_assert_eq!(follows.len(), n * (n - 1));
                prop_assert!(follows.values().all(|&k| k == 1));
            }
            // the next square repeats the first
            prop_assert_eq!(participant_order(n, ItemOrder::LatinSquare, seed, rows as u64), square[0].clone());
        }

        /// A random order is a permutation of its own per participant, the same for the same
        /// seed.
        #[test]
        fn random_orders_are_seeded_permutations(n in 0usize..60, seed in any::<u64>(), p in any::<u64>()) {
            let o = participant_order(n, ItemOrder::Random, seed, p);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            prop_assert_eq!(o, participant_order(n, ItemOrder::Random, seed, p));
        }
    }

    /// Few snippets: every pair; grouped snippets: every pair within each group, none across.
    #[test]
    fn all_pairs_and_pairs_within_groups() {
        let p = pairs(&[None; 5], None, 1).expect("pairs");
        assert_eq!(p.len(), 10);
        let groups = [Some("a"), Some("a"), Some("a"), Some("b"), Some("b"), None];
        let mut p = pairs(&groups, None, 1).expect("pairs");
        p.sort_unstable();
        assert_eq!(p, vec![[0, 1], [0, 2], [1, 2], [3, 4]]);
        // many snippets: a sample of the default size
        let many = pairs(&vec![None; 100], None, 7).expect("pairs");
        assert_eq!(many.len(), 100 / 2 * DEFAULT_PAIRS_PER_SNIPPET);
    }

    /// A design's plan: its kind's units over its snippets, the design's settings applied.
    #[test]
    fn a_design_plans_its_kinds_units() {
        let design = |kind: &str| {
            super::super::parse_design(
                "d.toml",
                &format!("title = \"T\"\n[[question]]\nid = \"q\"\nprompt = \"P\"\n{kind}\n"),
            )
            .expect("design")
        };
        let snippets: Vec<Snippet> = (0..6)
            .map(|i| Snippet {
                id: format!("S{i}"),
                code: "x".into(),
                language: "java".into(),
                original: None,
                condition: None,
                key: Default::default(),
                options: Default::default(),
                context: None,
                group: (i < 4).then(|| ["a", "b"][i % 2].to_owned()),
            })
            .collect();
        let one = plan(&design("kind = \"likert\"\npoints = 5"), &snippets, 1).expect("plan");
        assert_eq!(one, (0..6).map(|i| vec![i]).collect::<Vec<_>>());
        let mut p = plan(&design("kind = \"pairwise\""), &snippets, 1).expect("plan");
        p.sort();
        assert_eq!(p, vec![vec![0, 2], vec![1, 3], vec![4, 5]], "within groups");
        let s = plan(
            &design("kind = \"best-worst\"\nset_size = 3\nper_snippet = 2"),
            &snippets,
            1,
        )
        .expect("plan");
        assert_eq!(s.len(), 4);
    }

    /// Too few snippets, or too many units, are refused in words.
    #[test]
    fn impossible_plans_are_refused() {
        assert_eq!(pairs(&[None], None, 1), Err(UnitsError::TooFewForPairs(1)));
        assert_eq!(
            sets(3, 4, None, 1).expect_err("too few").to_string(),
            "a set of 4 needs at least 4 snippets; the study has 3"
        );
        assert!(matches!(
            sets(100_000, 4, Some(10), 1),
            Err(UnitsError::TooMany { units: 250_000 })
        ));
        // the default: 2n sets of 4
        assert_eq!(sets(10, 4, None, 1).expect("sets").len(), 20);
        // the largest study's sets are drawn at the cost of their size (a draw that sorted
        // every snippet for each set did not end here)
        let many = sets(100_000, 4, Some(8), 1).expect("sets");
        assert_eq!(many.len(), 200_000);
        let mut c = vec![0u8; 100_000];
        for s in &many {
            for &i in s {
                c[i] += 1;
            }
        }
        assert!(c.iter().all(|&k| k == 8));
    }
}
