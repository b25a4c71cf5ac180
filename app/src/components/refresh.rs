//! A live view read again a period after its last read answered.
//!
//! A fixed interval asks again whether or not the last answer has come. Where the server
//! answers slower than the interval (a loaded machine, a slow link), the resource always has a
//! read queued behind the one in flight: it is never done loading, so a `Transition` never
//! shows a new value and the page stays on what it first showed (a finished job reading
//! "running"). Here one timer at a time asks for the next read, armed when a read answers and
//! cleared when one starts.

use std::time::Duration;

use leptos::prelude::*;

/// The tick of a live view: a resource's source reads [`Refresh::tick`], its fetcher is
/// wrapped in [`Refresh::read`].
#[derive(Clone, Copy)]
pub struct Refresh {
    tick: ReadSignal<u32>,
    set: WriteSignal<u32>,
    timer: StoredValue<Option<TimeoutHandle>>,
    period: Duration,
}

impl Refresh {
    /// A view read again `period` after each answer (in the browser; the first `period` after
    /// the page is interactive). The timer goes with the component.
    pub fn after(period: Duration) -> Refresh {
        let (tick, set) = signal(0u32);
        let r = Refresh {
            tick,
            set,
            timer: StoredValue::new(None),
            period,
        };
        r.answered();
        on_cleanup(move || r.arm(None));
        r
    }

    /// The tick, tracked (a resource's source).
    pub fn tick(&self) -> u32 {
        self.tick.get()
    }

    /// A read (a resource's fetcher), the next one asked `period` after it answers. A timer
    /// armed before is cleared as the read starts: a resource runs its reads one after the
    /// other, and a tick while one is under way would queue the next behind it. (A read that
    /// starts for another reason — an action done, its version in the resource's source —
    /// would otherwise leave the timer of the answer before it to fire mid-read; from then on
    /// each read is queued behind the last, the resource is never done loading, and the
    /// `Transition` shows nothing new again.)
    pub async fn read<T>(self, read: impl std::future::Future<Output = T>) -> T {
        self.arm(None);
        let answer = read.await;
        self.answered();
        answer
    }

    /// A read answered: the next is asked `period` from now (a timer armed before is cleared).
    fn answered(&self) {
        #[cfg(feature = "hydrate")]
        {
            let set = self.set;
            let next = set_timeout_with_handle(
                move || {
                    set.try_update(|t| *t = t.wrapping_add(1));
                },
                self.period,
            )
            .ok();
            self.arm(next);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (self.set, self.period);
    }

    /// `next` becomes the one timer; the one before is cleared.
    fn arm(&self, next: Option<TimeoutHandle>) {
        if let Some(Some(old)) = self.timer.try_update_value(|t| std::mem::replace(t, next)) {
            old.clear();
        }
    }
}
