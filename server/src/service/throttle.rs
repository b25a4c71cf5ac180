//! Sign-in throttling: attempts per client address and per account name, so guessing is slow
//! whether it comes from one machine or many. Each instance keeps its own counters (in memory,
//! pruned as they go idle); the limits hold per instance.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

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

/// The counters of one instance.
#[derive(Clone)]
pub struct LoginThrottle {
    by_ip: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    by_user: Arc<DefaultKeyedRateLimiter<String>>,
}

impl std::fmt::Debug for LoginThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginThrottle").finish_non_exhaustive()
    }
}

fn quota(burst: u32, refill: Duration) -> Quota {
    let burst = NonZeroU32::new(burst.max(1)).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(refill.max(Duration::from_millis(1)))
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(burst)
}

/// The longest account name counted as its own key (longer names share one).
const KEY_LEN: usize = 64;

impl LoginThrottle {
    pub fn new(limits: LoginLimits) -> LoginThrottle {
        LoginThrottle {
            by_ip: Arc::new(RateLimiter::keyed(quota(
                limits.per_ip_burst,
                limits.per_ip_refill,
            ))),
            by_user: Arc::new(RateLimiter::keyed(quota(
                limits.per_user_burst,
                limits.per_user_refill,
            ))),
        }
    }

    /// Counts an attempt; `Err(seconds)` when it must wait that long first.
    pub fn attempt(&self, ip: Option<IpAddr>, username: &str) -> Result<(), u64> {
        let now = DefaultClock::default().now();
        let wait = |e: governor::NotUntil<_>| e.wait_time_from(now).as_secs().max(1);
        if let Some(ip) = ip {
            self.by_ip.check_key(&ip).map_err(wait)?;
        }
        let key: String = username
            .chars()
            .take(KEY_LEN)
            .collect::<String>()
            .to_lowercase();
        self.by_user.check_key(&key).map_err(wait)?;
        Ok(())
    }

    /// Forgets counters that are full again (keeps memory in proportion to recent attackers).
    pub fn prune(&self) {
        self.by_ip.retain_recent();
        self.by_user.retain_recent();
        self.by_ip.shrink_to_fit();
        self.by_user.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_waiting() {
        let t = LoginThrottle::new(LoginLimits {
            per_ip_burst: 3,
            per_ip_refill: Duration::from_secs(60),
            per_user_burst: 100,
            per_user_refill: Duration::from_secs(1),
        });
        let ip: IpAddr = [10, 0, 0, 1].into();
        for i in 0..3 {
            assert!(t.attempt(Some(ip), &format!("u{i}")).is_ok());
        }
        let wait = t.attempt(Some(ip), "u9").expect_err("throttled");
        assert!((1..=60).contains(&wait), "{wait}");
        // another address is not held back
        assert!(t.attempt(Some([10, 0, 0, 2].into()), "u9").is_ok());
    }

    #[test]
    fn one_account_from_many_addresses() {
        let t = LoginThrottle::new(LoginLimits {
            per_ip_burst: 100,
            per_ip_refill: Duration::from_secs(1),
            per_user_burst: 2,
            per_user_refill: Duration::from_secs(60),
        });
        assert!(t.attempt(Some([10, 0, 0, 1].into()), "Admin").is_ok());
        assert!(t.attempt(Some([10, 0, 0, 2].into()), "admin").is_ok());
        assert!(t.attempt(Some([10, 0, 0, 3].into()), "admin").is_err());
    }
}
