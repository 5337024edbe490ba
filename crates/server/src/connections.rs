//! Serving connections: the accept loop, the time a client may take over each
//! part of a request, the cap on open connections, and the shutdown deadline.
//!
//! Each connection is HTTP/1.1 (hyper) with a watchdog that knows its phase:
//! *idle* (no request yet, or between requests) for at most `idle_timeout_ms`,
//! *reading headers* (from a request's first byte) for at most
//! `header_read_timeout_ms`, and *busy* (a request is being answered; its body
//! must keep arriving at `min_body_bytes_per_s`, see [`super::body::MinRateBody`]).
//! A connection past its phase's time is dropped.
//!
//! At most [`Connections::cap`] connections are open: `max_connections`,
//! lowered to fit the open-file limit. A new connection at the cap (or an accept
//! that fails for want of file descriptors) closes the connection idle the
//! longest, so that clients that open connections and send nothing cannot make
//! the daemon unreachable; when none is idle, new connections wait in the
//! kernel's backlog until one ends.
//!
//! On shutdown the listener closes, idle connections close, requests in flight
//! get `shutdown_timeout_ms` to finish, and whatever is left is then dropped.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::body::MinRateBody;
use crate::limits::HttpLimits;

/// File descriptors kept for everything but connections: the listener, the
/// store and its WAL and SHM, the logs, components read on a reload, the
/// runtime's own.
const RESERVED_FDS: u64 = 64;

/// The largest request head (request line and headers) read; hyper answers
/// 431 to a larger one, or to one of more than 100 header fields (its
/// default), and closes the connection.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Each connection's read buffer: room for the largest head and the start of
/// its body, so that the head's own limit is the one a client meets.
const READ_BUFFER_BYTES: usize = MAX_HEAD_BYTES + 16 * 1024;

/// Raises the soft limit on open files to the hard limit, so that the
/// connection cap is what the operator configured rather than a login
/// shell's default of 1024. Returns the soft limit in force.
pub fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        // Linux refuses an infinite soft limit on open files: use a large
        // finite one instead.
        let hard = limit.maximum.unwrap_or(1 << 20);
        if limit.current.is_some_and(|soft| soft < hard) {
            let raised = rustix::process::Rlimit {
                current: Some(hard),
                maximum: limit.maximum,
            };
            if let Err(err) = setrlimit(Resource::Nofile, raised) {
                tracing::warn!(%err, "cannot raise the open-file limit to {hard}");
            }
        }
        open_file_limit()
    }
    #[cfg(not(unix))]
    None
}

/// The soft limit on open files, if there is one.
fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    None
}

/// The most connections this process can hold open: `configured`, lowered to
/// fit the open-file limit.
pub fn connection_cap(configured: usize) -> usize {
    match open_file_limit() {
        Some(files) => {
            let room = files.saturating_sub(RESERVED_FDS).max(files / 2).max(1);
            configured.min(usize::try_from(room).unwrap_or(usize::MAX))
        }
        None => configured,
    }
}

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request: none yet, or the previous one answered.
    Idle = 0,
    /// A request's first bytes arrived; its headers are not complete.
    Headers = 1,
    /// A request is being answered.
    Busy = 2,
}

/// What the accept loop and a connection's watchdog know of a connection.
struct Tracker {
    phase: AtomicU8,
    /// When the phase began, in milliseconds since [`Connections::epoch`].
    since: AtomicU64,
    /// Asks the connection to close if it is still idle.
    evict: Notify,
    /// The phase changed: its watchdog looks again.
    changed: Notify,
}

impl Tracker {
    fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Idle,
            1 => Phase::Headers,
            _ => Phase::Busy,
        }
    }

    fn enter(&self, phase: Phase, now_ms: u64) {
        self.since.store(now_ms, Ordering::Release);
        self.phase.store(phase as u8, Ordering::Release);
        self.changed.notify_one();
    }

    /// Not answering a request: a connection that may be closed without
    /// losing an answer.
    fn evictable(&self) -> bool {
        self.phase() != Phase::Busy
    }
}

/// Every open connection, oldest first, and the cap.
pub struct Connections {
    open: Mutex<BTreeMap<u64, Arc<Tracker>>>,
    next_id: AtomicU64,
    /// A connection ended.
    freed: Notify,
    cap: usize,
    epoch: Instant,
}

impl Connections {
    pub fn new(cap: usize) -> Connections {
        Connections {
            open: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
            freed: Notify::new(),
            cap,
            epoch: Instant::now(),
        }
    }

    /// The most connections open at once.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Tracker>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn at(&self, ms: u64) -> Instant {
        self.epoch + Duration::from_millis(ms)
    }

    fn register(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let tracker = Arc::new(Tracker {
            phase: AtomicU8::new(Phase::Idle as u8),
            since: AtomicU64::new(self.now_ms()),
            evict: Notify::new(),
            changed: Notify::new(),
        });
        self.lock().insert(id, tracker.clone());
        Registered {
            connections: self.clone(),
            id,
            tracker,
        }
    }

    /// Asks the connection idle the longest (the oldest not answering a
    /// request) to close; when every connection is answering one, nothing.
    fn evict_oldest_idle(&self) {
        let open = self.lock();
        let oldest = open
            .values()
            .filter(|t| t.evictable())
            .min_by_key(|t| t.since.load(Ordering::Acquire));
        if let Some(tracker) = oldest {
            tracker.evict.notify_one();
        }
    }
}

/// A connection's place in [`Connections`], given back when it ends.
struct Registered {
    connections: Arc<Connections>,
    id: u64,
    tracker: Arc<Tracker>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.connections.lock().remove(&self.id);
        self.connections.freed.notify_waiters();
    }
}

/// Accepts and serves connections until `stop` fires, then shuts down: see
/// the module's documentation.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    connections: Arc<Connections>,
    limits: Arc<ArcSwap<HttpLimits>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> io::Result<()> {
    let (draining, drain) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut exhausted_reported = false;
    'accepting: loop {
        // Make room first: close the connection idle the longest, or wait for
        // one to end.
        while connections.open() >= connections.cap() {
            let freed = connections.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            connections.evict_oldest_idle();
            tokio::select! {
                _ = &mut freed => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                Some(_) = tasks.join_next() => {}
                _ = &mut stop => break 'accepting,
            }
        }
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    exhausted_reported = false;
                    // Answers are small and each is written at once: do not
                    // let Nagle's algorithm hold them back.
                    let _ = stream.set_nodelay(true);
                    let registered = connections.register();
                    tasks.spawn(connection(
                        stream,
                        peer,
                        registered,
                        router.clone(),
                        limits.clone(),
                        drain.clone(),
                    ));
                }
                Err(err) if out_of_files(&err) => {
                    if !exhausted_reported {
                        tracing::warn!(%err, open = connections.open(), "out of file descriptors: closing the connection idle the longest");
                        exhausted_reported = true;
                    }
                    connections.evict_oldest_idle();
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                // A connection reset before it was accepted, and the like.
                Err(err) => {
                    tracing::debug!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            },
            Some(_) = tasks.join_next() => {}
            _ = &mut stop => break,
        }
    }

    drop(listener);
    let _ = draining.send(true);
    let deadline = limits.load().shutdown_timeout();
    let finished = tokio::time::timeout(deadline, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            left = tasks.len(),
            "connections still open after server.limits.shutdown_timeout_ms ({} ms): dropping them",
            deadline.as_millis()
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    Ok(())
}

fn out_of_files(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            err.raw_os_error(),
            Some(code) if code == rustix::io::Errno::MFILE.raw_os_error()
                || code == rustix::io::Errno::NFILE.raw_os_error()
                || code == rustix::io::Errno::NOBUFS.raw_os_error()
                || code == rustix::io::Errno::NOMEM.raw_os_error()
        )
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// Serves one connection until it ends, times out, is evicted, or the
/// shutdown drops it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    registered: Registered,
    router: Router,
    limits: Arc<ArcSwap<HttpLimits>>,
    mut drain: watch::Receiver<bool>,
) {
    let connections = registered.connections.clone();
    let tracker = registered.tracker.clone();
    let io = TokioIo::new(Watched {
        stream,
        tracker: tracker.clone(),
        connections: connections.clone(),
    });
    let service = {
        let (tracker, connections, limits) = (tracker.clone(), connections.clone(), limits.clone());
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let answering = Answering::start(tracker.clone(), connections.clone());
            let limits = **limits.load();
            let mut request = request.map(|body| Body::new(MinRateBody::new(body, &limits)));
            // Where it came from, for admission (`X-Forwarded-For` is
            // believed only from a trusted proxy).
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut router = router.clone();
            async move {
                // The connection stays busy until the body is written, not just
                // its head: a long-lived stream (the console's events) is an
                // answer in progress, never cut as idle nor evicted.
                let response = tower_service::Service::call(&mut router, request).await;
                response.map(|r| {
                    r.map(|body| {
                        Body::new(Answered {
                            body,
                            _answering: answering,
                        })
                    })
                })
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(READ_BUFFER_BYTES)
        .max_header_size(MAX_HEAD_BYTES);
    let served = http.serve_connection(io, service);
    tokio::pin!(served);
    let mut draining = *drain.borrow();
    if draining {
        served.as_mut().graceful_shutdown();
    }
    loop {
        let limits = **limits.load();
        let (phase, since) = (tracker.phase(), tracker.since.load(Ordering::Acquire));
        let deadline = match phase {
            Phase::Idle => connections.at(since) + limits.idle_timeout(),
            Phase::Headers => connections.at(since) + limits.header_read_timeout(),
            // Look again later: the body keeps its own time.
            Phase::Busy => Instant::now() + limits.header_read_timeout().min(limits.idle_timeout()),
        };
        tokio::select! {
            _ = served.as_mut() => break,
            _ = tokio::time::sleep_until(deadline) => {
                let unchanged = tracker.phase() == phase && tracker.since.load(Ordering::Acquire) == since;
                if phase != Phase::Busy && unchanged {
                    tracing::debug!(?phase, "closing a connection past its time");
                    break;
                }
            }
            _ = tracker.changed.notified() => {}
            _ = tracker.evict.notified() => {
                if tracker.evictable() {
                    tracing::debug!("closing the connection idle the longest to make room");
                    break;
                }
            }
            _ = drain.changed(), if !draining => {
                draining = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
    drop(registered);
}

/// Marks its connection busy while a request is answered.
struct Answering {
    tracker: Arc<Tracker>,
    connections: Arc<Connections>,
}

impl Answering {
    fn start(tracker: Arc<Tracker>, connections: Arc<Connections>) -> Answering {
        tracker.enter(Phase::Busy, connections.now_ms());
        Answering {
            tracker,
            connections,
        }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.tracker.enter(Phase::Idle, self.connections.now_ms());
    }
}

/// A response body that keeps its connection busy until it is dropped.
struct Answered {
    body: Body,
    _answering: Answering,
}

impl http_body::Body for Answered {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The connection's socket, noting when a request's first bytes arrive.
struct Watched {
    stream: TcpStream,
    tracker: Arc<Tracker>,
    connections: Arc<Connections>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before && this.tracker.phase() == Phase::Idle {
            this.tracker
                .enter(Phase::Headers, this.connections.now_ms());
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
