//! Values computed once and shared: a least-recently-used map bounded by the bytes it holds,
//! keyed by a fingerprint of everything the value is made of (SipHash with a key chosen at
//! start, so input cannot be crafted to collide). The survey's diffs and guideline HTML live
//! here: a participant's page no longer recomputes them on every request. Values read from
//! the database (items, invites) are loaded once for all the requests that ask at the same
//! time ([`Memo::get_or_load`]).

use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Mutex};

use hashlink::LruCache;

pub struct Memo<V> {
    hasher: RandomState,
    budget: usize,
    state: Mutex<State<V>>,
    /// Keys being loaded, each with the turn its loaders take one after another.
    flights: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
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
            flights: Mutex::new(HashMap::new()),
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

    /// The value held for `key` when `is_it` recognises it as the one asked for: a value that
    /// carries what it was made from (an item its id, an invite its token) is checked against
    /// it, so two inputs that share a fingerprint never get each other's value.
    pub fn get_if(&self, key: u64, is_it: impl Fn(&V) -> bool) -> Option<Arc<V>> {
        self.get(key).filter(|v| is_it(v))
    }

    /// The value for `key`, computed by `make` (outside the lock) when absent. A value heavier
    /// than the whole budget is computed and returned but not kept.
    pub fn get_or(&self, key: u64, weight: usize, make: impl FnOnce() -> V) -> Arc<V> {
        if let Some(v) = self.get(key) {
            return v;
        }
        self.keep(key, weight, make())
    }

    /// The value held for `key` that `is_it` recognises ([`Memo::get_if`]), else the one
    /// `load` finds, kept with the weight `weigh` gives it (`None`: nothing found, nothing
    /// kept). Single flight: callers that ask for a key while it is being loaded wait for that
    /// load and take what it kept, so a burst of requests for one value reads it once, not
    /// once each. A load that fails or finds nothing leaves the next caller to try its own.
    pub async fn get_or_load<E, Fut>(
        &self,
        key: u64,
        is_it: impl Fn(&V) -> bool,
        weigh: impl FnOnce(&V) -> usize,
        load: impl FnOnce() -> Fut,
    ) -> Result<Option<Arc<V>>, E>
    where
        Fut: Future<Output = Result<Option<V>, E>>,
    {
        if let Some(v) = self.get_if(key, &is_it) {
            return Ok(Some(v));
        }
        let flight = Flight::join(&self.flights, key);
        let _turn = match &flight {
            Some(f) => Some(f.turn.lock().await),
            None => None,
        };
        // the load this one waited for may have kept it
        if let Some(v) = self.get_if(key, &is_it) {
            return Ok(Some(v));
        }
        Ok(load().await?.map(|v| {
            let weight = weigh(&v);
            self.keep(key, weight, v)
        }))
    }

    /// Keeps `v` under `key` (replacing what was there) unless it is heavier than the whole
    /// budget, then drops the least recently used values until the budget holds.
    fn keep(&self, key: u64, weight: usize, v: V) -> Arc<V> {
        let v = Arc::new(v);
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

/// A caller's place in the loads of one key (see [`Memo::get_or_load`]): the key's turn, shared
/// with the other callers that asked for it meanwhile. The last to leave — done, failed or
/// cancelled — takes the key off the list, so the list holds only keys being loaded now.
struct Flight<'a> {
    flights: &'a Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
    key: u64,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl<'a> Flight<'a> {
    /// `None` when the list cannot be used (a poisoned lock): the caller loads on its own.
    fn join(
        flights: &'a Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
        key: u64,
    ) -> Option<Self> {
        let turn = flights.lock().ok()?.entry(key).or_default().clone();
        Some(Flight { flights, key, turn })
    }
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        if let Ok(mut list) = self.flights.lock() {
            // the list's and this one's: nobody else waits for the key
            if Arc::strong_count(&self.turn) <= 2 {
                list.remove(&self.key);
            }
        }
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

    /// A burst of callers for one key reads it once; the others wait and take what it kept.
    /// A load that finds nothing or fails keeps nothing, and the next caller tries its own.
    /// Afterwards no key is left on the list of loads.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_loads_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let memo: Arc<Memo<(u32, String)>> = Arc::new(Memo::new(1 << 20));
        let loads = Arc::new(AtomicUsize::new(0));
        let key = memo.key(7u32);
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let (memo, loads) = (memo.clone(), loads.clone());
            tasks.push(tokio::spawn(async move {
                memo.get_or_load(
                    key,
                    |held| held.0 == 7,
                    |held| held.1.len(),
                    || async {
                        loads.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        Ok::<_, String>(Some((7, "seven".to_owned())))
                    },
                )
                .await
            }));
        }
        for t in tasks {
            let v = t.await.expect("task").expect("load").expect("found");
            assert_eq!(*v, (7, "seven".to_owned()));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        // a held value of another input under the same key is not taken
        let other = memo
            .get_or_load(
                key,
                |held| held.0 == 8,
                |_| 1,
                || async { Ok::<_, String>(Some((8, "eight".to_owned()))) },
            )
            .await
            .expect("load")
            .expect("found");
        assert_eq!(other.0, 8);
        // nothing found, then a failure: nothing kept, each caller loads
        let missing = memo.key(9u32);
        for _ in 0..2 {
            let none = memo
                .get_or_load(
                    missing,
                    |_| true,
                    |_| 1,
                    || async {
                        loads.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, String>(None)
                    },
                )
                .await
                .expect("load");
            assert!(none.is_none());
        }
        let failed = memo
            .get_or_load(
                missing,
                |_| true,
                |_| 1,
                || async { Err("down".to_owned()) },
            )
            .await;
        assert_eq!(failed, Err("down".to_owned()));
        assert_eq!(loads.load(Ordering::SeqCst), 3);
        assert!(memo.flights.lock().expect("list").is_empty());
    }
}
