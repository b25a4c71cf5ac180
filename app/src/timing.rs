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

#[cfg(test)]
mod tests {
    use super::*;

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
