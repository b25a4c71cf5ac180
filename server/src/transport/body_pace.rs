//! A request body's pace. A client that sends its body a byte every few seconds never trips
//! the idle limit (`ConnectionLimits::body_idle`) and keeps its connection busy: 16 addresses
//! × 256 such connections took every slot, and a stranger's sign-in waited. So a body must keep
//! an average pace once its grace has passed ([`BodyPace`], checked as each chunk arrives), and
//! the connection knows how its body is going ([`BodyMeter`]) so that, with every slot taken,
//! the slowest body is cut to make room for a new client (`connections::Open`).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The least average pace a request body keeps after its grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyPace {
    /// How long a body may take before its pace counts (a phone's first packets).
    pub grace: Duration,
    /// Bytes a second, on average since the body began, from the grace on.
    pub min_bytes_per_sec: u64,
}

impl Default for BodyPace {
    fn default() -> Self {
        // a vote's kilobyte arrives in well under a second even on a 2G link; a model upload
        // at 1 KiB/s would take days
        BodyPace {
            grace: Duration::from_secs(10),
            min_bytes_per_sec: 1024,
        }
    }
}

impl BodyPace {
    /// Whether `bytes` received in `elapsed` keep the pace.
    fn kept(&self, elapsed: Duration, bytes: u64) -> bool {
        let counted = elapsed.saturating_sub(self.grace).as_secs_f64();
        bytes as f64 >= counted * self.min_bytes_per_sec as f64
    }
}

/// The body under way on a connection: when it began and the bytes received so far.
#[derive(Debug, Default)]
pub struct BodyMeter(Mutex<Option<(Instant, u64)>>);

impl BodyMeter {
    fn set(&self, to: Option<(Instant, u64)>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }

    /// The average pace (bytes a second) of the body under way, if it began at least `after`
    /// before `now`.
    pub fn pace(&self, now: Instant, after: Duration) -> Option<f64> {
        let (began, bytes) = (*self.0.lock().unwrap_or_else(|p| p.into_inner()))?;
        let elapsed = now.saturating_duration_since(began);
        (elapsed >= after).then(|| bytes as f64 / elapsed.as_secs_f64())
    }
}

/// A request body that reports its bytes to its connection's meter and fails once it falls
/// below its pace.
pub struct Metered<B> {
    inner: Pin<Box<B>>,
    meter: Arc<BodyMeter>,
    pace: BodyPace,
    began: Instant,
    bytes: u64,
}

impl<B> Metered<B> {
    pub fn new(inner: B, meter: Arc<BodyMeter>, pace: BodyPace) -> Metered<B> {
        let began = Instant::now();
        meter.set(Some((began, 0)));
        Metered {
            inner: Box::pin(inner),
            meter,
            pace,
            began,
            bytes: 0,
        }
    }
}

impl<B> Drop for Metered<B> {
    fn drop(&mut self) {
        self.meter.set(None);
    }
}

/// The error of a body that fell below its pace.
#[derive(Debug, thiserror::Error)]
#[error("the request body came in at under {0} bytes a second")]
pub struct TooSlow(u64);

impl<B> Body for Metered<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match this.inner.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.bytes = this.bytes.saturating_add(data.len() as u64);
                    this.meter.set(Some((this.began, this.bytes)));
                }
                match this.pace.kept(this.began.elapsed(), this.bytes) {
                    true => Poll::Ready(Some(Ok(frame))),
                    false => Poll::Ready(Some(Err(TooSlow(this.pace.min_bytes_per_sec).into()))),
                }
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => {
                this.meter.set(None);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_counts_after_the_grace() {
        let pace = BodyPace {
            grace: Duration::from_secs(10),
            min_bytes_per_sec: 1024,
        };
        assert!(pace.kept(Duration::from_secs(9), 0));
        assert!(pace.kept(Duration::from_secs(12), 2048));
        assert!(!pace.kept(Duration::from_secs(12), 2047));
        assert!(!pace.kept(Duration::from_secs(20), 2), "a byte every 10 s");
    }

    #[test]
    fn the_meter_says_the_pace_of_a_body_old_enough() {
        let meter = BodyMeter::default();
        let now = Instant::now();
        assert_eq!(meter.pace(now, Duration::ZERO), None, "no body");
        meter.set(Some((now - Duration::from_secs(4), 2000)));
        assert_eq!(meter.pace(now, Duration::from_secs(1)), Some(500.0));
        assert_eq!(meter.pace(now, Duration::from_secs(5)), None, "too young");
    }
}
