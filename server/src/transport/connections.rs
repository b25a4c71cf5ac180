//! Connections: how many the server holds open and how long a client may keep one busy without
//! sending or taking anything.
//!
//! `axum::serve` holds every connection for as long as the client likes: a client that sends a
//! request head one byte a minute, or opens connections and sends nothing, keeps a task and a
//! file descriptor each, forever, and enough of them leave the process unable to open its own
//! files. Here ([`serve`]):
//! - at most [`ConnectionLimits::max`] connections are open at once. When a new one arrives
//!   with every slot taken, the oldest connection with no request under way — idle between
//!   requests, or still waiting for its first request head — is closed to make room for it
//!   (so clients that open connections and send nothing cannot keep anyone else out); only
//!   when every open connection is serving a request does the new one wait in the listen
//!   backlog until one closes;
//! - at most [`ConnectionLimits::per_client`] of them from one client address (an IPv6 client
//!   by its /64, as the throttles count it): one more is answered `503` with `Retry-After` and
//!   closed (at most [`REFUSALS`] of those at once, outside the connection limit; beyond, it
//!   is closed unanswered), so one address cannot take every connection. Behind a reverse proxy every
//!   connection comes from the proxy, and the web server turns this limit off;
//! - a request's head must arrive within [`ConnectionLimits::header`], counted from when the
//!   server starts reading it, so an idle keep-alive connection also closes after that long;
//! - a request body must deliver its next chunk within [`ConnectionLimits::body_idle`] (a
//!   stalled upload fails and frees its connection), and keep an average pace after a grace
//!   ([`ConnectionLimits::body_pace`], `transport::body_pace`): a body dripped a byte every few
//!   seconds fails too. When every slot is taken and no connection is idle, the connection
//!   whose body has come in slowest (for at least [`SLOWEST_AFTER`]) is closed to make room;
//! - a response body must produce its next chunk within [`ConnectionLimits::response_idle`]
//!   once the connection asks for it: a response stuck on the server's side ends (the client
//!   sees an incomplete response) instead of holding the connection for ever. A slow client is
//!   not cut by it: the server asks for the next chunk only once the client took the last one.
//!
//! Connections are served by hyper's HTTP/1 (the TLS proxy in front speaks HTTP/2 to browsers),
//! with `TCP_NODELAY`, so the chunks of a streamed page are not held back by Nagle's algorithm.
//! On shutdown the listener closes, open connections finish the request in flight and close;
//! after [`SHUTDOWN_GRACE`] the rest are dropped.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

use super::body_pace::{BodyMeter, BodyPace, Metered};

/// How long open connections may finish their requests after a shutdown begins.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// File descriptors kept for the process's own use (database, files, outgoing connections) when
/// the connection limit is derived from the descriptor limit.
const RESERVED_DESCRIPTORS: u64 = 256;

/// What a connection may hold (see the module's text).
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Open connections at most (further ones wait in the listen backlog).
    pub max: usize,
    /// Open connections at most from one client address (`0`: no limit).
    pub per_client: usize,
    /// A request head must arrive within this; also how long an idle connection stays open.
    pub header: Duration,
    /// A request body's next chunk must arrive within this.
    pub body_idle: Duration,
    /// A response body's next chunk must be ready within this once it is asked for.
    pub response_idle: Duration,
    /// The least average pace of a request body.
    pub body_pace: BodyPace,
}

/// How long a body must have been coming in before it may be cut as the slowest to make room:
/// a request that just began has not shown its pace.
pub const SLOWEST_AFTER: Duration = Duration::from_millis(500);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max: 4096,
            // a few browsers' worth of connections (6 each) times a class behind one router
            per_client: 256,
            // longer than the idle limit of the proxies in front (nginx's upstream keep-alive
            // and AWS's load balancers: 60 s), so that the server never closes an idle
            // connection just as the proxy sends the next request on it
            header: Duration::from_secs(75),
            body_idle: Duration::from_secs(30),
            response_idle: Duration::from_secs(120),
            body_pace: BodyPace::default(),
        }
    }
}

/// Raises the process's soft limit of open files to its hard limit (as Go's runtime and
/// nginx's `worker_rlimit_nofile` do: the soft limit a service manager hands out is often
/// 1,024) and returns the connections that fit in it: `wanted`, or fewer when the descriptors,
/// less [`RESERVED_DESCRIPTORS`] for the process's own files, do not hold that many.
pub fn fit_to_descriptors(wanted: usize) -> usize {
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-files limit");
            return wanted.max(1);
        }
    };
    let room = limit.saturating_sub(RESERVED_DESCRIPTORS).max(16);
    let fitted = wanted
        .min(usize::try_from(room).unwrap_or(usize::MAX))
        .max(1);
    if fitted < wanted {
        tracing::warn!(
            open_files = limit,
            connections = fitted,
            wanted,
            "the open-files limit holds fewer connections than asked for"
        );
    }
    fitted
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves (see the module's
/// text). Each request carries the peer's address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max.max(1)));
    let refusals = Arc::new(Semaphore::new(REFUSALS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header)
        .keep_alive(true);
    let clients = Clients::new(limits.per_client);
    let open = Open::default();
    let limits = Arc::new(limits);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(counted) = clients.admit(peer.ip()) else {
            // not a connection slot: a client over its share cannot take the others' room
            match refusals.clone().try_acquire_owned() {
                Ok(r) => {
                    tokio::spawn(refuse(stream, r));
                }
                // refusals under way at their limit: closed without an answer
                Err(_) => drop(stream),
            }
            continue;
        };
        let slot = match slots.clone().try_acquire_owned() {
            Ok(s) => s,
            Err(tokio::sync::TryAcquireError::Closed) => break,
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                // every slot taken: the oldest connection doing nothing makes room, else the
                // one whose body comes in slowest; when all are serving requests at pace, this
                // one waits for the first to close
                let mut made_room = open.close_oldest_idle();
                loop {
                    if !made_room {
                        made_room =
                            open.close_slowest_body(std::time::Instant::now(), SLOWEST_AFTER);
                    }
                    tokio::select! {
                        slot = slots.clone().acquire_owned() => match slot {
                            Ok(s) => break s,
                            Err(_) => return finish(listener, graceful).await,
                        },
                        // a body too young to judge when this one came may be old enough now
                        () = tokio::time::sleep(SLOWEST_AFTER / 5), if !made_room => {}
                        () = &mut shutdown => return finish(listener, graceful).await,
                    }
                }
            }
        };
        let (id, state) = open.add();
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, %peer, "cannot set TCP_NODELAY");
        }
        let service = {
            let app = app.clone();
            let limits = limits.clone();
            let state = state.clone();
            hyper::service::service_fn(move |req: Request<Incoming>| {
                handle(app.clone(), limits.clone(), peer, Busy::new(&state), req)
            })
        };
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        let open = open.clone();
        tokio::spawn(async move {
            tokio::select! {
                ended = connection => {
                    if let Err(e) = ended {
                        tracing::trace!(error = %e, %peer, "connection ended with an error");
                    }
                }
                () = state.close.notified() => {
                    tracing::debug!(%peer, "idle connection closed to make room");
                }
            }
            open.remove(id);
            drop(counted);
            drop(slot);
        });
    }
    finish(listener, graceful).await;
}

/// Stops listening, and lets open connections finish their requests for [`SHUTDOWN_GRACE`].
async fn finish(listener: TcpListener, graceful: hyper_util::server::graceful::GracefulShutdown) {
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period: dropped");
    }
}

/// The open connections, oldest first, each with what it is doing.
#[derive(Clone, Default)]
struct Open {
    inner: Arc<Mutex<OpenInner>>,
}

#[derive(Default)]
struct OpenInner {
    next: u64,
    by_age: std::collections::BTreeMap<u64, Arc<ConnState>>,
}

/// One connection's state: requests under way (their responses not yet sent in full), the
/// request body coming in, and the signal that closes it.
#[derive(Default)]
struct ConnState {
    busy: std::sync::atomic::AtomicUsize,
    body: Arc<BodyMeter>,
    close: tokio::sync::Notify,
}

impl Open {
    fn add(&self) -> (u64, Arc<ConnState>) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let id = g.next;
        g.next += 1;
        let state = Arc::new(ConnState::default());
        g.by_age.insert(id, state.clone());
        (id, state)
    }

    fn remove(&self, id: u64) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.by_age.remove(&id);
    }

    /// Closes the oldest connection with no request under way; `false` when every one is
    /// serving a request.
    fn close_oldest_idle(&self) -> bool {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let idle = g
            .by_age
            .iter()
            .find(|(_, s)| s.busy.load(std::sync::atomic::Ordering::Acquire) == 0)
            .map(|(id, _)| *id);
        match idle.and_then(|id| g.by_age.remove(&id)) {
            Some(state) => {
                state.close.notify_one();
                true
            }
            None => false,
        }
    }
}

impl Open {
    /// Closes the connection whose request body has come in at the lowest pace, among those
    /// that have been receiving one for at least `after`; `false` when there is none.
    fn close_slowest_body(&self, now: std::time::Instant, after: Duration) -> bool {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let slowest = g
            .by_age
            .iter()
            .filter_map(|(id, s)| s.body.pace(now, after).map(|pace| (*id, pace)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(id, _)| id);
        match slowest.and_then(|id| g.by_age.remove(&id)) {
            Some(state) => {
                tracing::debug!("the slowest request body closed to make room");
                state.close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A request under way on a connection, from its head to the last byte of its response.
struct Busy(Arc<ConnState>);

impl Busy {
    fn new(state: &Arc<ConnState>) -> Busy {
        state.busy.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Busy(state.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0
            .busy
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Open connections per client address, when they are limited.
#[derive(Clone)]
struct Clients {
    limit: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One open connection of a client, counted until it is dropped.
struct Counted {
    key: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Clients {
    fn new(limit: usize) -> Clients {
        Clients {
            limit,
            open: Arc::default(),
        }
    }

    /// Counts a new connection from `ip`; `None` when the client already has its limit
    /// (`Some(None)`: not counted, no limit).
    fn admit(&self, ip: IpAddr) -> Option<Option<Counted>> {
        if self.limit == 0 {
            return Some(None);
        }
        let key = natstudy_core::service::throttle::client_key(ip);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= self.limit {
            return None;
        }
        *n += 1;
        Some(Some(Counted {
            key,
            open: self.open.clone(),
        }))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Connections over their client's share being answered at once; more are closed unanswered.
const REFUSALS: usize = 64;

/// What a connection over its client's limit is told before it is closed.
const REFUSAL: &str = "Too many connections from your address; try again in a few seconds.";

/// Answers a connection over its client's limit with `503` and closes it: once its request
/// head has arrived (a client answered before it asked would take the answer for a fault), at
/// most 8 KiB of it read, all within a second, holding one of the [`REFUSALS`] meanwhile.
async fn refuse(mut stream: TcpStream, slot: OwnedSemaphorePermit) {
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         retry-after: 5\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{REFUSAL}",
        REFUSAL.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 1024];
        while head.len() < 8192 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await? {
                0 => break,
                n => head.extend_from_slice(&buf[..n]),
            }
        }
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    drop(slot);
}

/// One request: the body and the response's body under their idle limits, the peer's address
/// as `ConnectInfo`; the connection counts as busy until the response's body is sent or
/// dropped.
async fn handle(
    app: Router,
    limits: Arc<ConnectionLimits>,
    peer: SocketAddr,
    busy: Busy,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    use http_body_util::BodyExt;
    let meter = busy.0.body.clone();
    let mut req = req.map(|b| {
        Body::new(Metered::new(
            TimeoutBody::new(limits.body_idle, b),
            meter,
            limits.body_pace,
        ))
    });
    req.extensions_mut().insert(ConnectInfo(peer));
    let response = app.oneshot(req).await?;
    Ok(response.map(|b| {
        Body::new(
            TimeoutBody::new(limits.response_idle, b).map_frame(move |frame| {
                let _busy = &busy;
                frame
            }),
        )
    }))
}

/// An accept that failed: a connection the client dropped before it was accepted is nothing;
/// anything else (out of file descriptors, above all) is logged and retried a little later,
/// as `axum::serve` does.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "cannot accept a connection; retrying in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, post};
    use std::time::Instant;
    use tokio::net::TcpStream;

    /// A server of `app` under `limits` on a free port; it stops when the sender is dropped.
    async fn start(
        app: Router,
        limits: ConnectionLimits,
    ) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(serve(listener, app, limits, async {
            let _ = stopped.await;
        }));
        (addr, stop)
    }

    fn limits(max: usize, idle: Duration) -> ConnectionLimits {
        ConnectionLimits {
            max,
            per_client: 0,
            header: idle,
            body_idle: idle,
            response_idle: idle,
            body_pace: BodyPace::default(),
        }
    }

    fn app() -> Router {
        Router::new()
            .route(
                "/",
                get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                    format!("hello {}", peer.ip())
                }),
            )
            .route(
                "/echo",
                post(|body: axum::body::Bytes| async move { body.len().to_string() }),
            )
            .route(
                "/stuck",
                get(|| async {
                    use futures_util::StreamExt;
                    // one chunk, then nothing for ever
                    let chunks = futures_util::stream::iter([Ok::<_, Infallible>(
                        axum::body::Bytes::from_static(b"first chunk"),
                    )])
                    .chain(futures_util::stream::pending());
                    Body::from_stream(chunks)
                }),
            )
    }

    /// Reads what the server sends until it closes the connection (or `within` passes: then
    /// `None`).
    async fn until_closed(stream: &mut TcpStream, within: Duration) -> Option<String> {
        let mut got = Vec::new();
        let read = tokio::time::timeout(within, stream.read_to_end(&mut got)).await;
        match read {
            Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
            Err(_) => None,
        }
    }

    /// Connects, sends `raw` and reads what comes back until the server closes the connection
    /// (`None`: not within 10 s).
    async fn exchange(addr: SocketAddr, raw: &[u8]) -> Option<String> {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(raw).await.expect("write");
        until_closed(&mut s, Duration::from_secs(10)).await
    }

    async fn get_text(addr: SocketAddr, path: &str) -> String {
        let head = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
        exchange(addr, head.as_bytes()).await.expect("an answer")
    }

    /// `n` connections, each answered one request and kept open (keep-alive).
    async fn answered_and_held(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
        let mut held = Vec::new();
        for _ in 0..n {
            let mut s = TcpStream::connect(addr).await.expect("connect");
            s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .expect("write");
            let mut buf = [0u8; 512];
            let got = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
                .await
                .expect("answered in time")
                .expect("read");
            assert!(buf[..got].starts_with(b"HTTP/1.1 200"));
            held.push(s);
        }
        held
    }

    #[tokio::test]
    async fn requests_are_served_with_the_peer_address() {
        let (addr, _stop) = start(app(), limits(8, Duration::from_secs(5))).await;
        let answer = get_text(addr, "/").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("hello 127.0.0.1"), "{answer}");
    }

    #[tokio::test]
    async fn a_slow_or_silent_client_is_disconnected() {
        let (addr, _stop) = start(app(), limits(8, Duration::from_millis(300))).await;
        // nothing at all
        let mut silent = TcpStream::connect(addr).await.expect("connect");
        // half a request head
        let mut slow = TcpStream::connect(addr).await.expect("connect");
        slow.write_all(b"GET / HTTP/1.1\r\nhost:")
            .await
            .expect("write");
        let started = Instant::now();
        for s in [&mut silent, &mut slow] {
            let answer = until_closed(s, Duration::from_secs(10)).await;
            assert!(
                answer.is_some(),
                "the server keeps a slow client's connection"
            );
        }
        assert!(started.elapsed() >= Duration::from_millis(250));
        // an idle keep-alive connection closes too, after its request was answered
        let answer = exchange(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("the idle connection is closed");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    #[tokio::test]
    async fn a_stalled_upload_fails() {
        let (addr, _stop) = start(app(), limits(8, Duration::from_millis(300))).await;
        let answer = exchange(
            addr,
            b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n0123456789",
        )
        .await
        .expect("the stalled upload ends");
        assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
        // the whole body in time is served
        let answer = exchange(
            addr,
            b"POST /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 10\r\n\r\n0123456789",
        )
        .await
        .expect("answer");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n10"), "{answer}");
    }

    #[tokio::test]
    async fn a_stuck_response_ends() {
        let (addr, _stop) = start(app(), limits(8, Duration::from_millis(300))).await;
        let answer = exchange(addr, b"GET /stuck HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("the stuck response is cut");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("first chunk"), "{answer}");
        // cut: the chunked body has no last (empty) chunk
        assert!(!answer.ends_with("0\r\n\r\n"), "{answer}");
    }

    /// Connections serving a request (here: a response stuck after its first chunk) are
    /// never closed to make room: with both slots serving, a third waits for one to close.
    /// Clients that drip their bodies a byte at a time (under the idle limit, so it never
    /// trips) cannot keep a new client out: with every slot taken, the slowest body is cut and
    /// the newcomer is answered within a second; and each dripping body fails on its own once
    /// past its grace. A body sent at pace is served.
    #[tokio::test]
    async fn dripped_bodies_make_room_and_fail() {
        let mut l = limits(4, Duration::from_secs(5));
        l.body_pace = BodyPace {
            grace: Duration::from_millis(1500),
            min_bytes_per_sec: 100,
        };
        let (addr, _stop) = start(app(), l).await;
        let mut drips = Vec::new();
        for _ in 0..4 {
            let mut s = TcpStream::connect(addr).await.expect("connect");
            drips.push(tokio::spawn(async move {
                s.write_all(b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n")
                    .await
                    .expect("head");
                // a byte every 200 ms until the server ends the request or the connection
                let started = Instant::now();
                for _ in 0..200 {
                    if s.write_all(b"a").await.is_err() {
                        break;
                    }
                    let mut buf = [0u8; 256];
                    match tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf)).await {
                        Ok(Ok(0)) | Ok(Err(_)) => break,
                        Ok(Ok(n)) if buf[..n].starts_with(b"HTTP/1.1 200") => {
                            panic!("a dripped body was served")
                        }
                        Ok(Ok(_)) => break,
                        Err(_) => {}
                    }
                }
                started.elapsed()
            }));
        }
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let asked = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(1), get_text(addr, "/"))
            .await
            .expect("answered within a second beside four dripping bodies");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(asked.elapsed() < Duration::from_secs(1));
        for drip in drips {
            let lasted = tokio::time::timeout(Duration::from_secs(10), drip)
                .await
                .expect("every dripping body ends")
                .expect("task");
            assert!(lasted < Duration::from_secs(6), "{lasted:?}");
        }
        let answer = exchange(
            addr,
            b"POST /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 10\r\n\r\n0123456789",
        )
        .await
        .expect("answer");
        assert!(answer.ends_with("\r\n\r\n10"), "{answer}");
    }

    #[tokio::test]
    async fn connections_beyond_the_limit_wait_while_all_are_serving() {
        let (addr, _stop) = start(app(), limits(2, Duration::from_secs(30))).await;
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut s = TcpStream::connect(addr).await.expect("connect");
            s.write_all(b"GET /stuck HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .expect("write");
            let mut buf = [0u8; 512];
            let got = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
                .await
                .expect("first chunk in time")
                .expect("read");
            assert!(buf[..got].starts_with(b"HTTP/1.1 200"));
            held.push(s);
        }
        let third = tokio::spawn(async move { get_text(addr, "/").await });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !third.is_finished(),
            "a third connection was served beside two serving ones"
        );
        drop(held.pop());
        let answer = tokio::time::timeout(Duration::from_secs(10), third)
            .await
            .expect("served once a connection closed")
            .expect("task");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// Every slot taken by connections that do nothing — idle after a request, or never sending
    /// a head — keeps no one out: a new client is served at once, and the oldest idle
    /// connection is the one closed to make room.
    #[tokio::test]
    async fn idle_connections_make_room_for_new_clients() {
        let (addr, _stop) = start(app(), limits(3, Duration::from_secs(60))).await;
        let mut kept = answered_and_held(addr, 1).await;
        let mut oldest = kept.pop().expect("one");
        let mut silent = Vec::new();
        for _ in 0..2 {
            silent.push(TcpStream::connect(addr).await.expect("connect"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let started = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(5), get_text(addr, "/"))
            .await
            .expect("served without waiting for a slot");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        // the oldest of them was closed, the younger ones stay
        assert_eq!(
            until_closed(&mut oldest, Duration::from_secs(5)).await,
            Some(String::new()),
            "the oldest idle connection is closed"
        );
        assert!(
            until_closed(&mut silent[1], Duration::from_millis(300))
                .await
                .is_none(),
            "the youngest is still open"
        );
    }

    #[tokio::test]
    async fn one_address_gets_its_share_of_the_connections() {
        let limits = ConnectionLimits {
            per_client: 2,
            ..limits(8, Duration::from_secs(30))
        };
        let (addr, _stop) = start(app(), limits).await;
        let mut held = answered_and_held(addr, 2).await;
        // a third from the same address is refused at once, saying when to come back
        let refused = get_text(addr, "/").await;
        assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
        assert!(refused.contains("retry-after: 5\r\n"), "{refused}");
        assert!(
            refused.ends_with(&format!("{}\r\n\r\n{REFUSAL}", REFUSAL.len())),
            "{refused}"
        );
        // once one closes, the address is served again
        drop(held.pop());
        let mut served = false;
        for _ in 0..100 {
            if get_text(addr, "/").await.starts_with("HTTP/1.1 200") {
                served = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(served, "a closed connection is still counted");
    }

    /// A client over its share takes no connection slot: another client is served beside it,
    /// and past [`REFUSALS`] pending answers its connections are closed unanswered.
    #[tokio::test]
    async fn a_client_over_its_share_takes_no_other_room() {
        let limits = ConnectionLimits {
            per_client: 1,
            ..limits(2, Duration::from_secs(30))
        };
        let (addr, _stop) = start(app(), limits).await;
        let _held = answered_and_held(addr, 1).await;
        // silent connections over the share: the first REFUSALS wait for their heads
        let mut extra = Vec::new();
        for _ in 0..REFUSALS + 8 {
            extra.push(TcpStream::connect(addr).await.expect("connect"));
        }
        let mut last = extra.pop().expect("one");
        let closed = until_closed(&mut last, Duration::from_millis(500))
            .await
            .expect("closed at once");
        assert_eq!(closed, "", "closed without an answer");
        // another address (all of 127/8 is loopback) takes the second slot
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind("127.0.0.2:0".parse().expect("addr"))
            .expect("bind");
        let mut other = socket.connect(addr).await.expect("connect");
        other
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .expect("write");
        let answer = until_closed(&mut other, Duration::from_millis(900))
            .await
            .expect("served while the refusals wait");
        assert!(answer.ends_with("hello 127.0.0.2"), "{answer}");
    }

    #[test]
    fn clients_are_counted_by_their_key() {
        let clients = Clients::new(1);
        let a = clients.admit("2001:db8::1".parse().expect("ip"));
        assert!(matches!(a, Some(Some(_))));
        // the same /64
        assert!(clients.admit("2001:db8::2".parse().expect("ip")).is_none());
        // another /64, and an IPv4 client
        assert!(clients
            .admit("2001:db8:0:1::1".parse().expect("ip"))
            .is_some());
        assert!(clients.admit("192.0.2.1".parse().expect("ip")).is_some());
        drop(a);
        assert!(clients.admit("2001:db8::2".parse().expect("ip")).is_some());
        // no limit: nothing counted
        assert!(matches!(
            Clients::new(0).admit("192.0.2.1".parse().expect("ip")),
            Some(None)
        ));
    }

    #[tokio::test]
    async fn shutdown_stops_accepting() {
        let (addr, stop) = start(app(), limits(8, Duration::from_secs(30))).await;
        assert!(get_text(addr, "/").await.starts_with("HTTP/1.1 200"));
        drop(stop);
        let mut refused = false;
        for _ in 0..100 {
            if TcpStream::connect(addr).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(refused, "the listener is still open after shutdown");
    }

    #[test]
    fn the_limit_fits_the_descriptors() {
        let n = fit_to_descriptors(usize::MAX);
        let (soft, _) = rlimit::getrlimit(rlimit::Resource::NOFILE).expect("limit");
        assert!(n as u64 <= soft.saturating_sub(RESERVED_DESCRIPTORS).max(16));
        assert_eq!(fit_to_descriptors(10), 10);
    }
}
