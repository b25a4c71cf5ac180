//! Values computed once and shared: a least-recently-used map bounded by the bytes it holds,
//! keyed by a fingerprint of everything the value is made of (SipHash with a key chosen at
//! start, so input cannot be crafted to collide). The survey's diffs and guideline HTML live
//! here: a participant's page no longer recomputes them on every request.

use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Mutex};

use hashlink::LruCache;

pub struct Memo<V> {
    hasher: RandomState,
    budget: usize,
    state: Mutex<State<V>>,
}

struct State<V> {
    map: LruCache<u64, (Arc<V>, usize)>,
    used: usize,
}

impl<V> Memo<V> {
    /// A memo that holds values of at most `budget` bytes (by the weights callers give).
    pub fn new(budget: usize) -> Memo<V> {
        Memo {
            hasher: RandomState::new(),
            budget,
            state: Mutex::new(State {
                map: LruCache::new_unbounded(),
                used: 0,
            }),
        }
    }

    /// The fingerprint of `what` (everything the value is made of).
    pub fn key(&self, what: impl Hash) -> u64 {
        self.hasher.hash_one(what)
    }

    /// The value for `key` when held.
    pub fn get(&self, key: u64) -> Option<Arc<V>> {
        self.state
            .lock()
            .ok()
            .and_then(|mut s| s.map.get(&key).map(|(v, _)| v.clone()))
    }

    /// The value for `key`, computed by `make` (outside the lock) when absent. A value heavier
    /// than the whole budget is computed and returned but not kept.
    pub fn get_or(&self, key: u64, weight: usize, make: impl FnOnce() -> V) -> Arc<V> {
        if let Some(v) = self.get(key) {
            return v;
        }
        let v = Arc::new(make());
        if weight <= self.budget {
            if let Ok(mut s) = self.state.lock() {
                if let Some((_, old)) = s.map.insert(key, (v.clone(), weight)) {
                    s.used -= old;
                }
                s.used += weight;
                while s.used > self.budget {
                    match s.map.remove_lru() {
                        Some((_, (_, w))) => s.used -= w,
                        None => break,
                    }
                }
            }
        }
        v
    }

    /// Values held and their total weight.
    pub fn usage(&self) -> (usize, usize) {
        self.state
            .lock()
            .map(|s| (s.map.len(), s.used))
            .unwrap_or((0, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_and_stays_within_its_budget() {
        let memo: Memo<String> = Memo::new(10);
        let mut made = 0;
        let a = memo.key(("a", 1));
        for _ in 0..3 {
            let v = memo.get_or(a, 4, || {
                made += 1;
                "A".to_owned()
            });
            assert_eq!(*v, "A");
        }
        assert_eq!(made, 1);
        let b = memo.key(("b", 1));
        memo.get_or(b, 4, || "B".to_owned());
        assert_eq!(memo.usage(), (2, 8));
        // a third value pushes out the least recently used (a)
        memo.get_or(memo.key("c"), 4, || "C".to_owned());
        assert_eq!(memo.usage(), (2, 8));
        memo.get_or(a, 4, || {
            made += 1;
            "A".to_owned()
        });
        assert_eq!(made, 2, "a was evicted and made again");
        // heavier than the budget: returned, never kept
        let big = memo.get_or(memo.key("big"), 11, || "BIG".to_owned());
        assert_eq!(*big, "BIG");
        assert!(memo.usage().1 <= 10);
        assert_ne!(memo.key(("a", 1)), memo.key(("a", 2)));
    }
}
