//! Throttling of what strangers can do without an account: sign-in attempts per client address
//! and per account name, so guessing is slow whether it comes from one machine or many; and
//! joins through invite links per client address, so one client cannot spend an open link's
//! places (or guess tokens) at the rate of its connection, nor hold a study's items with joins
//! that never answer (at most [`JoinLimits::unanswered`] stand at once). Each instance keeps its own counters
//! (in memory, pruned as they go idle); the limits hold per instance.
//!
//! A client is counted by its network ([`client_key`]): an IPv4 address alone, an IPv6 address
//! by its /64 — the least a provider hands one customer, so one machine owns some 2^64
//! addresses and counting each apart would let it reset its counter with every request.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use natstudy_vocab::ids::AnnotatorId;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How many sign-in attempts are allowed: a burst, then one per `refill`.
#[derive(Debug, Clone, Copy)]
pub struct LoginLimits {
    pub per_ip_burst: u32,
    pub per_ip_refill: Duration,
    pub per_user_burst: u32,
    pub per_user_refill: Duration,
}

impl Default for LoginLimits {
    fn default() -> Self {
        LoginLimits {
            per_ip_burst: 20,
            per_ip_refill: Duration::from_secs(3),
            per_user_burst: 10,
            per_user_refill: Duration::from_secs(6),
        }
    }
}

/// How many joins through invite links one client address may make: a burst, then one per
/// `refill`; and how many of its joins of the last [`UNANSWERED_WINDOW`] may stand without a
/// single answer. A class joining from behind one router needs the burst (and answers within
/// minutes); a crowd platform's participants come from addresses of their own.
#[derive(Debug, Clone, Copy)]
pub struct JoinLimits {
    /// `0`: no limit (a load test whose participants all come from one address).
    pub per_ip_burst: u32,
    pub per_ip_refill: Duration,
    /// Joins of one address that have answered nothing, at most (`0`: no limit).
    pub unanswered: usize,
}

impl Default for JoinLimits {
    fn default() -> Self {
        JoinLimits {
            per_ip_burst: 60,
            per_ip_refill: Duration::from_secs(2),
            unanswered: 60,
        }
    }
}

/// How long a join counts against its address while it has answered nothing.
pub const UNANSWERED_WINDOW: Duration = Duration::from_secs(3600);

/// The addresses whose recent joins are remembered, at most (the oldest forgotten first).
const JOIN_LEDGER_ADDRESSES: usize = 16_384;

/// Each address's recent joins: when, and who joined (to ask whether they answered since).
#[derive(Default)]
struct JoinLedger {
    by_ip: HashMap<IpAddr, VecDeque<(std::time::Instant, AnnotatorId)>>,
}

impl JoinLedger {
    /// The address's joins within the window, the older ones forgotten.
    fn recent(&mut self, key: IpAddr, now: std::time::Instant) -> Vec<AnnotatorId> {
        let Some(joins) = self.by_ip.get_mut(&key) else {
            return Vec::new();
        };
        while joins
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > UNANSWERED_WINDOW)
        {
            joins.pop_front();
        }
        if joins.is_empty() {
            self.by_ip.remove(&key);
            return Vec::new();
        }
        joins.iter().map(|(_, a)| *a).collect()
    }

    fn add(&mut self, key: IpAddr, at: std::time::Instant, who: AnnotatorId, keep: usize) {
        if !self.by_ip.contains_key(&key) && self.by_ip.len() >= JOIN_LEDGER_ADDRESSES {
            let stalest = self
                .by_ip
                .iter()
                .min_by_key(|(_, j)| j.back().map(|(t, _)| *t))
                .map(|(k, _)| *k);
            if let Some(k) = stalest {
                self.by_ip.remove(&k);
            }
        }
        let joins = self.by_ip.entry(key).or_default();
        if joins.iter().any(|(_, a)| *a == who) {
            // the same participant again (a crowd id on another device): one join
            return;
        }
        joins.push_back((at, who));
        // an address keeps at most its limit's worth (twice, for those that answered since)
        while joins.len() > keep.saturating_mul(2).max(1) {
            joins.pop_front();
        }
    }
}

/// The counters of one instance.
#[derive(Clone)]
pub struct Throttle {
    by_ip: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    /// Per account, of attempts from devices that never signed in to it.
    by_user: Arc<DefaultKeyedRateLimiter<String>>,
    /// Per account and client address, of every attempt.
    by_user_ip: Arc<DefaultKeyedRateLimiter<(String, IpAddr)>>,
    joins: Option<Arc<DefaultKeyedRateLimiter<IpAddr>>>,
    /// Each address's recent joins, and how many may stand unanswered.
    join_ledger: Arc<Mutex<JoinLedger>>,
    unanswered: usize,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle").finish_non_exhaustive()
    }
}

fn quota(burst: u32, refill: Duration) -> Quota {
    let burst = NonZeroU32::new(burst.max(1)).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(refill.max(Duration::from_millis(1)))
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(burst)
}

/// The key a client address is counted under: an IPv4 address itself (also written as an
/// IPv4-mapped IPv6 address), an IPv6 address its /64 network (the rest set to zero).
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

/// The longest account name counted as its own key (longer names share one).
const KEY_LEN: usize = 64;

type Instant = <DefaultClock as Clock>::Instant;

/// Whole seconds to wait (at least one) from a refusal.
fn wait_secs(now: Instant) -> impl Fn(governor::NotUntil<Instant>) -> u64 + Copy {
    move |e| e.wait_time_from(now).as_secs().max(1)
}

impl Throttle {
    pub fn new(limits: LoginLimits, joins: JoinLimits) -> Throttle {
        Throttle {
            by_ip: Arc::new(RateLimiter::keyed(quota(
                limits.per_ip_burst,
                limits.per_ip_refill,
            ))),
            by_user: Arc::new(RateLimiter::keyed(quota(
                limits.per_user_burst,
                limits.per_user_refill,
            ))),
            by_user_ip: Arc::new(RateLimiter::keyed(quota(
                limits.per_user_burst,
                limits.per_user_refill,
            ))),
            joins: (joins.per_ip_burst > 0).then(|| {
                Arc::new(RateLimiter::keyed(quota(
                    joins.per_ip_burst,
                    joins.per_ip_refill,
                )))
            }),
            join_ledger: Arc::default(),
            unanswered: joins.unanswered,
        }
    }

    /// Counts a join through an invite link; `Err(seconds)` when it must wait that long first.
    /// A caller whose address is unknown is not counted (only a test server has none).
    pub fn join(&self, ip: Option<IpAddr>) -> Result<(), u64> {
        match (&self.joins, ip) {
            (Some(joins), Some(ip)) => joins
                .check_key(&client_key(ip))
                .map_err(wait_secs(DefaultClock::default().now())),
            _ => Ok(()),
        }
    }

    /// The address's joins of the last [`UNANSWERED_WINDOW`] when they reach its limit of
    /// unanswered joins (the caller asks which answered since); none when fewer, when the
    /// limit is off or the address unknown.
    pub fn joins_to_check(&self, ip: Option<IpAddr>) -> Vec<AnnotatorId> {
        let Some(ip) = ip.filter(|_| self.unanswered > 0) else {
            return Vec::new();
        };
        let mut ledger = self.join_ledger.lock().unwrap_or_else(|p| p.into_inner());
        let recent = ledger.recent(client_key(ip), std::time::Instant::now());
        match recent.len() >= self.unanswered {
            true => recent,
            false => Vec::new(),
        }
    }

    /// Whether `unanswered` of the address's recent joins keep it from joining again:
    /// `Err(seconds)` to wait (until the oldest leaves the window, at most).
    pub fn unanswered_joins(&self, unanswered: usize) -> Result<(), u64> {
        match self.unanswered > 0 && unanswered >= self.unanswered {
            true => Err(60),
            false => Ok(()),
        }
    }

    /// Remembers a join from `ip` (the participant it made or found).
    pub fn joined(&self, ip: Option<IpAddr>, who: AnnotatorId) {
        if let Some(ip) = ip.filter(|_| self.unanswered > 0) {
            let mut ledger = self.join_ledger.lock().unwrap_or_else(|p| p.into_inner());
            ledger.add(
                client_key(ip),
                std::time::Instant::now(),
                who,
                self.unanswered,
            );
        }
    }

    /// Counts an attempt; `Err(seconds)` when it must wait that long first. Every attempt
    /// counts per client address and per (account, address); per account only when it comes
    /// from a device that never signed in to the account (`known_device` false): strangers
    /// guessing from many addresses share that limit, and cannot lock the owner out of the
    /// browser they use (`service::devices`).
    pub fn attempt(
        &self,
        ip: Option<IpAddr>,
        username: &str,
        known_device: bool,
    ) -> Result<(), u64> {
        let wait = wait_secs(DefaultClock::default().now());
        let key: String = username
            .chars()
            .take(KEY_LEN)
            .collect::<String>()
            .to_lowercase();
        if let Some(ip) = ip {
            let ip = client_key(ip);
            self.by_ip.check_key(&ip).map_err(wait)?;
            self.by_user_ip
                .check_key(&(key.clone(), ip))
                .map_err(wait)?;
        }
        if !known_device {
            self.by_user.check_key(&key).map_err(wait)?;
        }
        Ok(())
    }

    /// Forgets counters that are full again (keeps memory in proportion to recent attackers).
    pub fn prune(&self) {
        self.by_ip.retain_recent();
        self.by_user.retain_recent();
        self.by_user_ip.retain_recent();
        self.by_ip.shrink_to_fit();
        self.by_user.shrink_to_fit();
        self.by_user_ip.shrink_to_fit();
        if let Some(joins) = &self.joins {
            joins.retain_recent();
            joins.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_waiting() {
        let t = Throttle::new(
            LoginLimits {
                per_ip_burst: 3,
                per_ip_refill: Duration::from_secs(60),
                per_user_burst: 100,
                per_user_refill: Duration::from_secs(1),
            },
            JoinLimits::default(),
        );
        let ip: IpAddr = [10, 0, 0, 1].into();
        for i in 0..3 {
            assert!(t.attempt(Some(ip), &format!("u{i}"), false).is_ok());
        }
        let wait = t.attempt(Some(ip), "u9", false).expect_err("throttled");
        assert!((1..=60).contains(&wait), "{wait}");
        // another address is not held back
        assert!(t.attempt(Some([10, 0, 0, 2].into()), "u9", false).is_ok());
    }

    /// Strangers from many addresses exhaust the account's shared limit; the owner's browser,
    /// which signed in before, is not held back by it; one address alone is held back by its
    /// own (account, address) limit, known device or not.
    #[test]
    fn strangers_cannot_lock_the_owner_out() {
        let t = Throttle::new(
            LoginLimits {
                per_ip_burst: 100,
                per_ip_refill: Duration::from_secs(1),
                per_user_burst: 3,
                per_user_refill: Duration::from_secs(600),
            },
            JoinLimits::default(),
        );
        for i in 1..=12u8 {
            let _ = t.attempt(Some([203, 0, 113, i].into()), "researcher", false);
        }
        let owner: IpAddr = [198, 51, 100, 7].into();
        assert!(
            t.attempt(Some(owner), "researcher", false).is_err(),
            "a new device waits"
        );
        for _ in 0..2 {
            assert!(
                t.attempt(Some(owner), "researcher", true).is_ok(),
                "the owner's browser"
            );
        }
        // its own address's share still bounds it: 3 per 10 minutes here (one was the try
        // as a new device)
        assert!(t.attempt(Some(owner), "researcher", true).is_err());
    }

    #[test]
    fn one_account_from_many_addresses() {
        let t = Throttle::new(
            LoginLimits {
                per_ip_burst: 100,
                per_ip_refill: Duration::from_secs(1),
                per_user_burst: 2,
                per_user_refill: Duration::from_secs(60),
            },
            JoinLimits::default(),
        );
        assert!(t
            .attempt(Some([10, 0, 0, 1].into()), "Admin", false)
            .is_ok());
        assert!(t
            .attempt(Some([10, 0, 0, 2].into()), "admin", false)
            .is_ok());
        assert!(t
            .attempt(Some([10, 0, 0, 3].into()), "admin", false)
            .is_err());
    }

    #[test]
    fn joins_per_address_and_none_when_off() {
        let joins = JoinLimits {
            per_ip_burst: 2,
            per_ip_refill: Duration::from_secs(60),
            ..JoinLimits::default()
        };
        let t = Throttle::new(LoginLimits::default(), joins);
        let ip: IpAddr = [10, 0, 0, 1].into();
        assert!(t.join(Some(ip)).is_ok());
        assert!(t.join(Some(ip)).is_ok());
        let wait = t.join(Some(ip)).expect_err("throttled");
        assert!((1..=60).contains(&wait), "{wait}");
        assert!(t.join(Some([10, 0, 0, 2].into())).is_ok());
        // sign-in attempts are counted apart from joins
        assert!(t.attempt(Some(ip), "someone", false).is_ok());

        let off = Throttle::new(
            LoginLimits::default(),
            JoinLimits {
                per_ip_burst: 0,
                ..joins
            },
        );
        for _ in 0..1000 {
            assert!(off.join(Some(ip)).is_ok());
        }
    }

    /// An address's joins count against it while they answer nothing: at its limit the ledger
    /// hands back its recent joins to ask about, and a limit of 0 is off.
    #[test]
    fn unanswered_joins_are_kept_per_address() {
        let t = Throttle::new(
            LoginLimits::default(),
            JoinLimits {
                unanswered: 3,
                ..JoinLimits::default()
            },
        );
        let ip: IpAddr = [10, 0, 0, 1].into();
        for i in 0..2 {
            t.joined(Some(ip), AnnotatorId(i));
        }
        assert!(t.joins_to_check(Some(ip)).is_empty(), "under the limit");
        t.joined(Some(ip), AnnotatorId(2));
        assert_eq!(
            t.joins_to_check(Some(ip)),
            vec![AnnotatorId(0), AnnotatorId(1), AnnotatorId(2)]
        );
        assert!(t.joins_to_check(Some([10, 0, 0, 2].into())).is_empty());
        assert!(t.unanswered_joins(2).is_ok());
        assert!(t.unanswered_joins(3).is_err());
        // at most twice the limit is kept
        for i in 3..20 {
            t.joined(Some(ip), AnnotatorId(i));
        }
        assert_eq!(t.joins_to_check(Some(ip)).len(), 6);
        let off = Throttle::new(
            LoginLimits::default(),
            JoinLimits {
                unanswered: 0,
                ..JoinLimits::default()
            },
        );
        off.joined(Some(ip), AnnotatorId(1));
        assert!(off.joins_to_check(Some(ip)).is_empty());
        assert!(off.unanswered_joins(1000).is_ok());
    }

    #[test]
    fn an_ipv6_network_is_one_client() {
        let joins = JoinLimits {
            per_ip_burst: 2,
            per_ip_refill: Duration::from_secs(60),
            ..JoinLimits::default()
        };
        let t = Throttle::new(LoginLimits::default(), joins);
        let a: IpAddr = "2001:db8:1:2::1".parse().expect("address");
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().expect("address");
        assert!(t.join(Some(a)).is_ok());
        assert!(t.join(Some(b)).is_ok());
        // a third address of the same /64 is the same client
        let c: IpAddr = "2001:db8:1:2:dead:beef::".parse().expect("address");
        assert!(t.join(Some(c)).is_err());
        // the next /64 is another
        assert!(t
            .join(Some("2001:db8:1:3::1".parse().expect("address")))
            .is_ok());
        // an IPv4 address counts the same written as IPv4-mapped IPv6
        let v4: IpAddr = [192, 0, 2, 7].into();
        assert!(t.join(Some(v4)).is_ok());
        assert!(t.join(Some(v4)).is_ok());
        assert!(t
            .join(Some("::ffff:192.0.2.7".parse().expect("address")))
            .is_err());
        // sign-in attempts are keyed the same way
        let logins = Throttle::new(
            LoginLimits {
                per_ip_burst: 1,
                per_ip_refill: Duration::from_secs(60),
                per_user_burst: 100,
                per_user_refill: Duration::from_secs(1),
            },
            JoinLimits::default(),
        );
        assert!(logins.attempt(Some(a), "x", false).is_ok());
        assert!(logins.attempt(Some(c), "y", false).is_err());
    }

    #[test]
    fn client_keys() {
        let key = |s: &str| client_key(s.parse().expect("address")).to_string();
        assert_eq!(key("10.1.2.3"), "10.1.2.3");
        assert_eq!(key("::ffff:10.1.2.3"), "10.1.2.3");
        assert_eq!(key("2001:db8:aa:bb:cc:dd:ee:ff"), "2001:db8:aa:bb::");
        assert_eq!(key("::1"), "::");
    }
}
