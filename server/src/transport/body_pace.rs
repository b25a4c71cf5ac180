//! A request body's pace. A client that sends its body a byte every few seconds never trips
//! the idle limit (`ConnectionLimits::body_idle`) and keeps its connection busy: 16 addresses
//! × 256 such connections took every slot, and a stranger's sign-in waited. So a body must keep
//! an average pace once its grace has passed ([`BodyPace`], checked as each chunk arrives), and
//! the connection knows how its body is going ([`BodyMeter`]) so that, with every slot taken,
//! the slowest body is cut to make room for a new client (`connections::Open`).
//!
//! A body's bytes also cost memory in proportion to their number, whatever the chunking: hyper
//! hands each read of the socket on as a piece of its 8 KiB read buffer, so a body dripped
//! 100 bytes at a time held 8 KiB per chunk until the handler had all of it (256 such bodies:
//! 412 MB in 20 s from 4.8 MiB sent). [`Metered`] copies small chunks into one buffer of its
//! own and hands them on in pieces of [`COALESCE`] bytes (the read buffer's slice is freed at
//! once), and cuts a body whose chunks stay small: past [`FREE_CHUNKS`] chunks they must
//! average [`MIN_CHUNK_BYTES`] ([`TooFragmented`]) — no browser's body arrives a hundred bytes
//! at a time.

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

/// Chunks of at most this many bytes are gathered before they are handed on.
pub const COALESCE: usize = 16 * 1024;
/// Chunks a body may send before their average size counts.
pub const FREE_CHUNKS: u64 = 64;
/// The least average chunk, in bytes, of a body past [`FREE_CHUNKS`] chunks.
pub const MIN_CHUNK_BYTES: u64 = 256;

/// A request body that reports its bytes to its connection's meter, fails once it falls
/// below its pace or its chunks stay too small, and hands small chunks on gathered.
pub struct Metered<B> {
    inner: Pin<Box<B>>,
    meter: Arc<BodyMeter>,
    pace: BodyPace,
    began: Instant,
    bytes: u64,
    chunks: u64,
    /// Small chunks received and not yet handed on.
    gathered: Vec<u8>,
    /// A frame that is not data (trailers), held while the gathered bytes go first.
    held: Option<Frame<Bytes>>,
    /// The inner body ended (after the gathered bytes, the end).
    ended: bool,
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
            chunks: 0,
            gathered: Vec::new(),
            held: None,
            ended: false,
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

/// The error of a body whose chunks stayed small.
#[derive(Debug, thiserror::Error)]
#[error("the request body came in {0} chunks averaging under {MIN_CHUNK_BYTES} bytes")]
pub struct TooFragmented(u64);

impl<B> Metered<B> {
    /// The gathered bytes as one frame of their exact size (the buffer is kept for more).
    fn hand_on(&mut self) -> Frame<Bytes> {
        let out = Bytes::copy_from_slice(&self.gathered);
        self.gathered.clear();
        if self.gathered.capacity() > COALESCE {
            self.gathered.shrink_to(COALESCE);
        }
        Frame::data(out)
    }
}

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
        loop {
            if this.ended || this.held.is_some() {
                if !this.gathered.is_empty() {
                    return Poll::Ready(Some(Ok(this.hand_on())));
                }
                if let Some(frame) = this.held.take() {
                    return Poll::Ready(Some(Ok(frame)));
                }
                this.meter.set(None);
                return Poll::Ready(None);
            }
            match this.inner.as_mut().poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let data = match frame.into_data() {
                        Ok(data) => data,
                        Err(other) => {
                            this.held = Some(other);
                            continue;
                        }
                    };
                    this.bytes = this.bytes.saturating_add(data.len() as u64);
                    this.chunks = this.chunks.saturating_add(1);
                    this.meter.set(Some((this.began, this.bytes)));
                    if !this.pace.kept(this.began.elapsed(), this.bytes) {
                        return Poll::Ready(Some(Err(TooSlow(this.pace.min_bytes_per_sec).into())));
                    }
                    if this.chunks > FREE_CHUNKS
                        && this.bytes < this.chunks.saturating_mul(MIN_CHUNK_BYTES)
                    {
                        return Poll::Ready(Some(Err(TooFragmented(this.chunks).into())));
                    }
                    if data.len() >= COALESCE && this.gathered.is_empty() {
                        // a large chunk is its own allocation's worth: on as it is
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                    // a small chunk is copied out, freeing the read buffer it points into
                    this.gathered.extend_from_slice(&data);
                    drop(data);
                    if this.gathered.len() >= COALESCE {
                        return Poll::Ready(Some(Ok(this.hand_on())));
                    }
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => this.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.gathered.is_empty()
            && self.held.is_none()
            && (self.ended || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let gathered = self.gathered.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(gathered));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(gathered));
        }
        hint
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

    /// A body of frames from a list, as a client's chunks arrive.
    type Listed = http_body_util::StreamBody<
        futures_util::stream::Iter<
            std::vec::IntoIter<Result<Frame<Bytes>, std::convert::Infallible>>,
        >,
    >;

    /// A body of `n` chunks of `size` bytes each.
    fn chunked(n: usize, size: usize) -> Metered<Listed> {
        let frames: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = (0..n)
            .map(|i| Ok(Frame::data(Bytes::from(vec![b'a' + (i % 26) as u8; size]))))
            .collect();
        Metered::new(
            http_body_util::StreamBody::new(futures_util::stream::iter(frames)),
            Arc::new(BodyMeter::default()),
            BodyPace::default(),
        )
    }

    /// Small chunks are handed on gathered, in pieces of at most `COALESCE` bytes, the bytes
    /// and their order unchanged; a large chunk goes on as it is.
    #[tokio::test]
    async fn small_chunks_are_gathered_and_the_bytes_kept() {
        use http_body_util::BodyExt;
        let mut body = chunked(60, 1000);
        let mut sizes = Vec::new();
        let mut all = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.expect("kept").into_data().expect("data");
            sizes.push(data.len());
            all.extend_from_slice(&data);
        }
        assert_eq!(all.len(), 60_000);
        let expected: Vec<u8> = (0..60)
            .flat_map(|i| vec![b'a' + (i % 26) as u8; 1000])
            .collect();
        assert_eq!(all, expected);
        assert!(sizes.iter().all(|s| *s <= COALESCE + 1000), "{sizes:?}");
        assert_eq!(sizes.len(), 60_000usize.div_ceil(COALESCE), "{sizes:?}");
        let big = chunked(2, 64 * 1024)
            .collect()
            .await
            .expect("kept")
            .to_bytes();
        assert_eq!(big.len(), 128 * 1024);
    }

    /// A body whose chunks stay small is cut once it has sent more than `FREE_CHUNKS`: 100
    /// bytes at a time is a drip, not a browser; 300-byte chunks pass.
    #[tokio::test]
    async fn a_body_of_tiny_chunks_is_cut() {
        use http_body_util::BodyExt;
        let e = chunked(1000, 100).collect().await.expect_err("cut");
        assert!(e.to_string().contains("chunks averaging under"), "{e}");
        let ok = chunked(1000, 300).collect().await.expect("kept").to_bytes();
        assert_eq!(ok.len(), 300_000);
        let few = chunked(FREE_CHUNKS as usize, 1)
            .collect()
            .await
            .expect("kept")
            .to_bytes();
        assert_eq!(few.len(), FREE_CHUNKS as usize);
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
