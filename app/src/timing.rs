//! Time on item as the participant spends it: counted from first render to submit, without the
//! time the tab is hidden and without idle gaps longer than [`IDLE_MS`].

/// A gap without any activity longer than this is idle and does not count.
pub const IDLE_MS: f64 = 120_000.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveTimer {
    active_ms: f64,
    last_mark: f64,
    hidden: bool,
}

impl ActiveTimer {
    pub fn start(now: f64) -> ActiveTimer {
        ActiveTimer {
            active_ms: 0.0,
            last_mark: now,
            hidden: false,
        }
    }

    /// A timer that already holds `earlier` active seconds (the time spent on the item before
    /// a reload of its page), counting on from `now`.
    pub fn resume(now: f64, earlier: f64) -> ActiveTimer {
        ActiveTimer {
            active_ms: earlier.max(0.0) * 1000.0,
            ..ActiveTimer::start(now)
        }
    }

    /// Counts the time since the last mark if the tab was visible and the gap was not idle.
    pub fn mark(&mut self, now: f64) {
        if !self.hidden {
            let gap = now - self.last_mark;
            if (0.0..=IDLE_MS).contains(&gap) {
                self.active_ms += gap;
            }
        }
        self.last_mark = now;
    }

    /// Any input by the participant.
    pub fn activity(&mut self, now: f64) {
        self.mark(now);
    }

    pub fn hidden(&mut self, now: f64) {
        self.mark(now);
        self.hidden = true;
    }

    pub fn visible(&mut self, now: f64) {
        if self.hidden {
            self.hidden = false;
            self.last_mark = now;
        }
    }

    /// Active seconds up to `now`, without marking (the current gap counts if it is not idle).
    pub fn peek(&self, now: f64) -> f64 {
        let gap = now - self.last_mark;
        let open = if !self.hidden && (0.0..=IDLE_MS).contains(&gap) {
            gap
        } else {
            0.0
        };
        (self.active_ms + open) / 1000.0
    }

    /// Active seconds up to `now`.
    pub fn seconds(&mut self, now: f64) -> f64 {
        self.mark(now);
        self.active_ms / 1000.0
    }
}

/// The time kept for an item across a reload of its page, as stored: when it was first shown
/// (ms since the epoch) and the active seconds so far.
pub fn kept_text(started_ms: f64, secs: f64) -> String {
    format!("{started_ms:.0}:{secs:.3}")
}

/// [`kept_text`] read back (`None`: not one of ours, or not a sane time).
pub fn parse_kept(text: &str) -> Option<(f64, f64)> {
    let (started, secs) = text.split_once(':')?;
    let (started, secs): (f64, f64) = (started.parse().ok()?, secs.parse().ok()?);
    (started.is_finite() && started > 0.0 && secs.is_finite() && secs >= 0.0)
        .then_some((started, secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reload's timer goes on from the time kept, and the kept text reads back.
    #[test]
    fn a_resumed_timer_adds_the_time_kept() {
        let mut t = ActiveTimer::resume(1_000.0, 20.0);
        assert_eq!(t.seconds(4_000.0), 23.0);
        assert_eq!(parse_kept(&kept_text(1.7e12, 20.25)), Some((1.7e12, 20.25)));
        assert_eq!(parse_kept("x:1"), None);
        assert_eq!(parse_kept("5:-1"), None);
        assert_eq!(parse_kept("5:NaN"), None);
        assert_eq!(parse_kept("51"), None);
    }

    #[test]
    fn hidden_time_and_long_idle_gaps_do_not_count() {
        let mut t = ActiveTimer::start(0.0);
        t.activity(5_000.0);
        t.hidden(10_000.0);
        t.visible(70_000.0); // a minute in another tab
        t.activity(72_000.0);
        assert_eq!(t.seconds(75_000.0), 15.0);
        // three idle minutes, then a key press: the gap is dropped
        t.activity(255_000.0);
        assert_eq!(t.seconds(256_000.0), 16.0);
        // peeking does not turn an idle stretch into activity
        assert_eq!(t.peek(257_000.0), 17.0);
        assert_eq!(t.peek(500_000.0), 16.0);
    }
}
