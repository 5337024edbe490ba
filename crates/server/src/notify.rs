//! Webhook notices of pauses (`hitl_approval.notify`): on every pause the
//! daemon POSTs a signed JSON notice to each webhook, from a background task,
//! retried with exponential backoff; the pause never waits for it.
//!
//! What is signed: the UTF-8 text `<timestamp>.<body>`, where `<timestamp>` is
//! the value of the `X-Warden-Timestamp` header (Unix seconds, decimal) and
//! `<body>` the request body exactly as sent. The `X-Warden-Signature` header
//! is `sha256=<hex of HMAC-SHA256(secret, that text)>`, the secret being the
//! bytes of the variable `secret_env` names. A receiver recomputes it, compares
//! in constant time, and refuses a timestamp too far from its clock (replay).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use axum::body::Bytes;
use hmac::{Hmac, Mac};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use prometheus::IntCounter;
use serde::Serialize;
use sha2::Sha256;

use warden_approval::NotifyHook;

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-warden-signature";
/// The header carrying the signed timestamp.
pub const TIMESTAMP_HEADER: &str = "x-warden-timestamp";

/// Tries per notice and webhook, the first included.
pub const TRIES: u32 = 4;
/// The wait before the first retry; each next wait doubles it.
pub const FIRST_RETRY: Duration = Duration::from_millis(250);
/// How long one try may take, from connecting to the response's status.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a webhook is told of a pause.
#[derive(Clone, Debug, Serialize)]
pub struct Notice {
    /// The approval waiting for a human.
    pub approval_id: String,
    /// The thread that paused.
    pub thread_id: String,
    /// The principal (token name) whose run paused.
    pub principal: String,
    /// The run that paused.
    pub run_id: String,
    /// The tools waiting for a human.
    pub tools: Vec<String>,
    /// When it paused (RFC 3339).
    pub created_at: String,
    /// The pause in the console.
    pub url: String,
}

/// One webhook, its secret read.
pub struct Target {
    url: url::Url,
    secret: Vec<u8>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        write!(f, "Target({})", self.url)
    }
}

/// Reads every hook's secret; on error, which hook and why.
pub fn resolve(
    hooks: &[NotifyHook],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Target>, String> {
    hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| {
            hook.check().map_err(|(key, message)| {
                format!("hitl_approval.notify[{i}].{key}: {message}")
            })?;
            let secret = env(&hook.secret_env).filter(|s| !s.is_empty()).ok_or_else(|| {
                format!(
                    "hitl_approval.notify[{i}].secret_env: the environment variable {} is not set (or empty); \
                     it holds the key the notices to {} are signed with",
                    hook.secret_env, hook.webhook
                )
            })?;
            let url = url::Url::parse(&hook.webhook)
                .map_err(|err| format!("hitl_approval.notify[{i}].webhook: {err}"))?;
            Ok(Target {
                url,
                secret: secret.into_bytes(),
            })
        })
        .collect()
}

/// `sha256=<hex>`: the signature of `body` sent at `timestamp`.
pub fn sign(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The counters of `/metrics`.
#[derive(Clone)]
pub struct Counters {
    /// Notices a webhook accepted (a 2xx answer).
    pub sent: IntCounter,
    /// Notices given up after every try.
    pub failed: IntCounter,
    /// Tries after a failed one.
    pub retried: IntCounter,
}

/// The webhooks in force, replaced on a reload.
pub struct Notifier {
    targets: ArcSwap<Vec<Arc<Target>>>,
    counters: Counters,
}

impl Notifier {
    /// No webhook yet; deliveries count into `counters`.
    pub fn new(counters: Counters) -> Notifier {
        Notifier {
            targets: ArcSwap::from_pointee(Vec::new()),
            counters,
        }
    }

    /// Replaces the webhooks (on a start or a reload).
    pub fn set(&self, targets: Vec<Target>) {
        self.targets
            .store(Arc::new(targets.into_iter().map(Arc::new).collect()));
    }

    /// Sends `notice` to every webhook, each from its own task on the current
    /// runtime: returns at once.
    pub fn send(&self, notice: &Notice) {
        let targets = self.targets.load();
        if targets.is_empty() {
            return;
        }
        let body = match serde_json::to_vec(notice) {
            Ok(body) => Bytes::from(body),
            Err(err) => {
                tracing::error!(%err, "cannot serialise a pause notice");
                return;
            }
        };
        for target in targets.iter() {
            tokio::spawn(deliver(
                target.clone(),
                body.clone(),
                self.counters.clone(),
                notice.approval_id.clone(),
            ));
        }
    }
}

/// Tries `TRIES` times, waiting `FIRST_RETRY`, then twice as long each time.
async fn deliver(target: Arc<Target>, body: Bytes, counters: Counters, approval_id: String) {
    let mut wait = FIRST_RETRY;
    for attempt in 1..=TRIES {
        let tried = tokio::time::timeout(ATTEMPT_TIMEOUT, post(&target, body.clone())).await;
        let failure = match tried {
            Ok(Ok(status)) if status.is_success() => {
                counters.sent.inc();
                tracing::debug!(webhook = %target.url, %approval_id, attempt, "pause notice sent");
                return;
            }
            Ok(Ok(status)) => format!("answered {status}"),
            Ok(Err(err)) => err,
            Err(_) => format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()),
        };
        if attempt == TRIES {
            counters.failed.inc();
            tracing::warn!(webhook = %target.url, %approval_id, attempt, %failure,
                "pause notice not delivered; giving up");
            return;
        }
        tracing::info!(webhook = %target.url, %approval_id, attempt, %failure,
            retry_in_ms = wait.as_millis() as u64, "pause notice not delivered; retrying");
        counters.retried.inc();
        tokio::time::sleep(wait).await;
        wait *= 2;
    }
}

/// One POST over a fresh connection; the answer's status.
async fn post(target: &Target, body: Bytes) -> Result<hyper::StatusCode, String> {
    let url = &target.url;
    let host = url.host_str().ok_or("the webhook names no host")?;
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect(format!("{host}:{port}"))
        .await
        .map_err(|err| format!("cannot connect to {host}:{port}: {err}"))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|err| format!("HTTP handshake with {host}:{port} failed: {err}"))?;
    let driver = tokio::spawn(connection);
    let timestamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let request = hyper::Request::post(if path.is_empty() { "/" } else { path })
        .header(hyper::header::HOST, authority)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(
            hyper::header::USER_AGENT,
            concat!("warden/", env!("CARGO_PKG_VERSION")),
        )
        .header(TIMESTAMP_HEADER, timestamp.to_string())
        .header(SIGNATURE_HEADER, sign(&target.secret, timestamp, &body))
        .body(Full::new(body))
        .map_err(|err| format!("cannot build the request: {err}"))?;
    let answered = sender.send_request(request).await;
    driver.abort();
    answered
        .map(|response| response.status())
        .map_err(|err| format!("the request to {host}:{port} failed: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_covers_the_timestamp_and_the_body() {
        let a = sign(b"k", 1, b"{}");
        assert!(a.starts_with("sha256=") && a.len() == 7 + 64, "{a}");
        assert_ne!(a, sign(b"k", 2, b"{}"));
        assert_ne!(a, sign(b"k", 1, b"{ }"));
        assert_ne!(a, sign(b"j", 1, b"{}"));
    }

    #[test]
    fn a_missing_secret_is_refused_naming_the_variable() {
        let hook = NotifyHook {
            webhook: "http://127.0.0.1:9/hook".into(),
            secret_env: "WARDEN_HOOK_SECRET".into(),
        };
        let err = resolve(&[hook], |_| None).unwrap_err();
        assert!(
            err.contains("notify[0].secret_env") && err.contains("WARDEN_HOOK_SECRET"),
            "{err}"
        );
    }

    #[test]
    fn an_https_webhook_is_refused_with_the_reason() {
        let hook = NotifyHook {
            webhook: "https://hooks.example/x".into(),
            secret_env: "S".into(),
        };
        let (key, message) = hook.check().unwrap_err();
        assert_eq!(key, "webhook");
        assert!(message.contains("TLS"), "{message}");
    }
}
