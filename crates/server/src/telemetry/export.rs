//! The exporter: one thread of its own, away from the daemon's runtime,
//! that takes what waits in the queue, every `export_interval_ms` or once
//! `MAX_BATCH` wait, and POSTs it to the collector (OTLP/HTTP, protobuf),
//! over one kept-alive connection. What the collector refuses or does not
//! answer within `ATTEMPT_TIMEOUT` is counted as failed and not sent again:
//! a slow collector fills the queue, and the queue counts what it drops.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use prometheus::IntCounterVec;

use super::otlp;
use super::queue::{Item, Queue};

/// The counters of `/metrics`, by signal (`traces`, `logs`).
#[derive(Clone)]
pub struct Counters {
    /// Spans and log records the collector accepted.
    pub exported: IntCounterVec,
    /// Traces and lines dropped because the queue was full.
    pub dropped: IntCounterVec,
    /// Spans and log records the collector did not take (refused, or not
    /// reached in time).
    pub failed: IntCounterVec,
}

/// Spans or records sent in one request at most.
pub(super) const MAX_BATCH: usize = 512;

/// How long one export may take, connection included.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// The collector's address, as `telemetry.otlp_endpoint` gives it.
#[derive(Clone, Debug)]
pub(super) struct Endpoint {
    host: String,
    port: u16,
    /// The path the signals' paths go under, without a trailing slash.
    base: String,
}

impl Endpoint {
    /// Reads `http://host[:port][/path]`; anything else is refused, saying why.
    pub(super) fn parse(text: &str) -> Result<Endpoint, String> {
        let url = url::Url::parse(text).map_err(|err| format!("'{text}' is not a URL: {err}"))?;
        if url.scheme() != "http" {
            return Err(format!(
                "'{text}': only http:// is supported; send to a collector on this host or a \
                 sidecar, which forwards over TLS"
            ));
        }
        let host = url
            .host_str()
            .ok_or_else(|| format!("'{text}' names no host"))?;
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return Err(format!(
                "'{text}': give the collector's base address only (no query, fragment or user)"
            ));
        }
        Ok(Endpoint {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port: url.port_or_known_default().unwrap_or(80),
            base: url.path().trim_end_matches('/').to_string(),
        })
    }
}

pub(super) struct Exporter {
    pub(super) endpoint: Endpoint,
    /// The encoded `Resource` every request carries.
    pub(super) resource: Vec<u8>,
    pub(super) interval: Duration,
    pub(super) counters: Counters,
}

impl Exporter {
    /// Sends what waits in `queue` until it is closed, then what is left.
    pub(super) fn run(self, queue: Arc<Queue>) {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(err) => {
                tracing::error!(%err, "telemetry: cannot start the exporter; nothing is sent");
                return;
            }
        };
        let mut connection: Option<SendRequest<Full<Bytes>>> = None;
        loop {
            let due = Instant::now() + self.interval;
            let Some(items) = queue.take(due) else {
                return;
            };
            runtime.block_on(self.send(&mut connection, items));
        }
    }

    /// Sends `items`, at most `MAX_BATCH` traces or lines a request.
    async fn send(&self, connection: &mut Option<SendRequest<Full<Bytes>>>, items: Vec<Item>) {
        let (mut traces, mut lines) = (Vec::new(), Vec::new());
        for item in &items {
            match item {
                Item::Trace { spans, encoded } => traces.push((*spans, encoded.as_slice())),
                Item::Line(encoded) => lines.push(encoded.as_slice()),
            }
        }
        // Once a request fails, the rest of the batch is counted as failed
        // without being sent: a collector that is down is not waited on once
        // a chunk, and a stop is not held for each.
        let mut reachable = true;
        for chunk in traces.chunks(MAX_BATCH) {
            let count = chunk.iter().map(|(spans, _)| spans).sum();
            reachable = reachable && {
                let spans: Vec<&[u8]> = chunk.iter().map(|(_, encoded)| *encoded).collect();
                let body = otlp::traces(&self.resource, &spans);
                self.post(connection, "traces", body, count).await
            };
            if !reachable {
                self.counters
                    .failed
                    .with_label_values(&["traces"])
                    .inc_by(count as u64);
            }
        }
        for chunk in lines.chunks(MAX_BATCH) {
            reachable = reachable && {
                let body = otlp::logs(&self.resource, chunk);
                self.post(connection, "logs", body, chunk.len()).await
            };
            if !reachable {
                self.counters
                    .failed
                    .with_label_values(&["logs"])
                    .inc_by(chunk.len() as u64);
            }
        }
    }

    /// POSTs one export request of `count` items, counting them when the
    /// collector took them; says whether it did.
    async fn post(
        &self,
        connection: &mut Option<SendRequest<Full<Bytes>>>,
        signal: &'static str,
        body: Vec<u8>,
        count: usize,
    ) -> bool {
        let sent = tokio::time::timeout(
            ATTEMPT_TIMEOUT,
            self.post_once(connection, signal, Bytes::from(body)),
        )
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs())));
        match sent {
            Ok(()) => {
                let exported = self.counters.exported.with_label_values(&[signal]);
                exported.inc_by(count as u64);
                true
            }
            Err(failure) => {
                // A connection that failed is not used again.
                *connection = None;
                tracing::warn!(signal, count, %failure, "telemetry: an export failed");
                false
            }
        }
    }

    async fn post_once(
        &self,
        connection: &mut Option<SendRequest<Full<Bytes>>>,
        signal: &str,
        body: Bytes,
    ) -> Result<(), String> {
        let Endpoint { host, port, base } = &self.endpoint;
        let open = match connection.take() {
            Some(sender) if !sender.is_closed() => sender,
            _ => {
                let stream = tokio::net::TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(|err| format!("cannot connect to {host}:{port}: {err}"))?;
                let _ = stream.set_nodelay(true);
                let (sender, driver) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|err| format!("HTTP handshake with {host}:{port} failed: {err}"))?;
                tokio::spawn(driver);
                sender
            }
        };
        let mut sender = open;
        sender
            .ready()
            .await
            .map_err(|err| format!("the connection to {host}:{port} closed: {err}"))?;
        let request = hyper::Request::post(format!("{base}/v1/{signal}"))
            .header(hyper::header::HOST, format!("{host}:{port}"))
            .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
            .header(
                hyper::header::USER_AGENT,
                concat!("warden/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(body))
            .map_err(|err| format!("cannot build the request: {err}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|err| format!("the request to {host}:{port} failed: {err}"))?;
        let status = response.status();
        // The answer's body (an ExportServiceResponse, maybe with partial
        // success) is read to its end so the connection can carry the next.
        let _ = http_body_util::BodyExt::collect(response.into_body()).await;
        *connection = Some(sender);
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the collector answered {status}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_an_http_base_address() {
        let e = Endpoint::parse("http://127.0.0.1:4318/").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.base.as_str()),
            ("127.0.0.1", 4318, "")
        );
        let e = Endpoint::parse("http://collector/otlp").unwrap();
        assert_eq!((e.port, e.base.as_str()), (80, "/otlp"));
        for bad in ["https://c:4318", "c:4318", "http://c:4318/?x=1", "ftp://c"] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
