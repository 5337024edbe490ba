//! The HTTP client `warden mcp http` reaches its upstream with: plain HTTP/1.1
//! on kept-alive connections that acknowledge what they receive at once.
//!
//! Why not the usual client: a server that leaves Nagle's algorithm on (the
//! Python SDK's servers under uvicorn on asyncio do) writes an SSE answer's
//! headers, then holds the event itself until its headers are acknowledged.
//! A kept-alive connection that sends a request soon after its last answer
//! delays its acknowledgements (Linux's "ping-pong" mode), by 40 ms at least:
//! measured, every proxied call took 40 ms more than a direct one. Asking for
//! a quick acknowledgement after each write to the upstream leaves ping-pong
//! mode before the answer arrives, so the headers are acknowledged as soon as
//! they are read and the event follows at once.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

/// The client toward the upstream; a request's body is one message.
pub(crate) type Upstream = Client<QuickAck, Full<Bytes>>;

/// A client with `connect_timeout` for each new connection. It follows no
/// redirect (one would carry the operator's credential elsewhere).
pub(crate) fn client(connect_timeout: Duration) -> Upstream {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(connect_timeout));
    http.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(QuickAck(http))
}

/// Connects as [`HttpConnector`] does; each connection is an [`Acking`].
#[derive(Clone)]
pub(crate) struct QuickAck(HttpConnector);

impl tower_service::Service<Uri> for QuickAck {
    type Response = Acking;
    type Error = <HttpConnector as tower_service::Service<Uri>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Acking, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move { connecting.await.map(Acking) })
    }
}

/// A TCP connection that asks for a quick acknowledgement after each write.
pub(crate) struct Acking(TokioIo<TcpStream>);

impl Acking {
    /// A request went out: its answer is acknowledged as it is read. The
    /// option is a hint; a failure to set it costs only time.
    fn after_write<T>(&self, written: &Poll<io::Result<T>>) {
        if matches!(written, Poll::Ready(Ok(_))) {
            quick_ack(self.0.inner());
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn quick_ack(stream: &TcpStream) {
    let _ = stream.set_quickack(true);
}

/// Elsewhere acknowledgements are the system's own affair.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn quick_ack(_: &TcpStream) {}

impl Connection for Acking {
    fn connected(&self) -> Connected {
        self.0.connected()
    }
}

impl Read for Acking {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl Write for Acking {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.0).poll_write(cx, buf);
        self.after_write(&written);
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.0).poll_write_vectored(cx, bufs);
        self.after_write(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
