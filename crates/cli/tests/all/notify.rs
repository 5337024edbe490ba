//! Webhook notices of pauses, to a real HTTP receiver on loopback: signed with
//! HMAC-SHA256 over `<timestamp>.<body>`, naming the approval's console page,
//! retried when refused, never holding the pause up, counted in /metrics.

use std::time::{Duration, Instant};

use crate::common::daemon::*;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const SECRET: &str = "whsec-0123456789abcdef";
const SECRET_ENV: &str = "WARDEN_TEST_HOOK_SECRET";

/// One request the receiver got.
struct Received {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {name} header"))
    }
}

/// A webhook receiver: answers the n-th request with `statuses[n]` (the last
/// one after that), and hands every request over.
async fn receiver(statuses: Vec<u16>) -> (String, mpsc::UnboundedReceiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/hooks/warden?team=ops",
        listener.local_addr().unwrap()
    );
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut data = Vec::new();
            let mut buf = [0u8; 4096];
            let (head_end, length) = loop {
                let read = stream.read(&mut buf).await.unwrap();
                assert!(read > 0, "the notice ended early");
                data.extend_from_slice(&buf[..read]);
                if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&data[..end]).to_string();
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    break (end + 4, length);
                }
            };
            while data.len() < head_end + length {
                let read = stream.read(&mut buf).await.unwrap();
                data.extend_from_slice(&buf[..read]);
            }
            let head = String::from_utf8_lossy(&data[..head_end]).to_string();
            let headers = head
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            let status = statuses[n.min(statuses.len() - 1)];
            n += 1;
            let _ = tx.send(Received {
                headers,
                body: data[head_end..head_end + length].to_vec(),
            });
            let answer =
                format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    (url, rx)
}

fn daemon_notifying(webhook: &str, extra_server: &str) -> Daemon {
    let yaml = format!(
        "hitl_approval:\n  tools: [bash]\n  notify:\n    - {{webhook: \"{webhook}\", secret_env: {SECRET_ENV}}}\n{}{}{extra_server}",
        allowlist("allowlist", &["bash"], &[]),
        server_block(false)
    );
    let prelude = format!("export {SECRET_ENV}={SECRET}");
    Daemon::launch(
        &yaml,
        Launch {
            prelude: &prelude,
            ..Launch::default()
        },
    )
}

async fn pause(daemon: &Daemon, thread: &str) -> Value {
    let (status, outcome) = daemon
        .post(
            &format!("/v1/threads/{thread}/runs/r-1/tool-calls"),
            Some(AGENT),
            &json!({"message": {"tool_calls": [
                {"id": "c1", "name": "bash", "args": {"command": "git push"}}]}}),
        )
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    outcome
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Received>) -> Received {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("no notice within 10 s")
        .unwrap()
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0)
}

#[tokio::test]
async fn a_pause_sends_a_signed_notice_naming_the_approval() {
    let (webhook, mut rx) = receiver(vec![200]).await;
    let daemon = daemon_notifying(&webhook, "  public_url: https://warden.example.com/\n");
    let outcome = pause(&daemon, "t-1").await;
    let notice = next(&mut rx).await;

    let timestamp = notice.header("x-warden-timestamp");
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(&notice.body);
    let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(notice.header("x-warden-signature"), expected);
    let age = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .abs_diff(timestamp.parse::<u64>().unwrap());
    assert!(age < 60, "timestamp {timestamp} is {age} s off");
    assert_eq!(notice.header("content-type"), "application/json");

    let body: Value = serde_json::from_slice(&notice.body).unwrap();
    let approval_id = outcome["approval_id"].as_str().unwrap();
    assert_eq!(body["approval_id"], approval_id);
    assert_eq!(body["thread_id"], "t-1");
    assert_eq!(body["principal"], "harness");
    assert_eq!(body["run_id"], "r-1");
    assert_eq!(body["tools"], json!(["bash"]));
    assert!(body["created_at"].as_str().unwrap().len() >= 20, "{body}");
    assert_eq!(
        body["url"],
        format!("https://warden.example.com/console/approvals/{approval_id}")
    );
    // Nothing of the arguments leaves in a notice.
    assert!(!String::from_utf8_lossy(&notice.body).contains("git push"));
}

#[tokio::test]
async fn a_notice_refused_twice_is_delivered_on_the_third_try() {
    let (webhook, mut rx) = receiver(vec![503, 500, 200]).await;
    let daemon = daemon_notifying(&webhook, "");
    let outcome = pause(&daemon, "t-2").await;
    let tries = [
        next(&mut rx).await,
        next(&mut rx).await,
        next(&mut rx).await,
    ];
    for notice in &tries {
        let body: Value = serde_json::from_slice(&notice.body).unwrap();
        assert_eq!(body["approval_id"], outcome["approval_id"]);
    }
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = daemon.metrics().await;
        if metric(&metrics, "warden_notify_sent_total") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(metric(&metrics, "warden_notify_sent_total"), 1, "{metrics}");
    assert_eq!(metric(&metrics, "warden_notify_retries_total"), 2);
    assert_eq!(metric(&metrics, "warden_notify_failed_total"), 0);
    // Without public_url, the link is the daemon's own address.
    let body: Value = serde_json::from_slice(&tries[2].body).unwrap();
    assert!(
        body["url"].as_str().unwrap().starts_with(&daemon.url),
        "{body}"
    );
}

#[tokio::test]
async fn a_webhook_that_never_answers_does_not_delay_the_pause() {
    // Accepts connections and never answers: every try waits out its time.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let webhook = format!("http://{}/hook", silent.local_addr().unwrap());
    let daemon = daemon_notifying(&webhook, "");
    // The first pause pays for warming up; the second is measured.
    pause(&daemon, "t-warm").await;
    let started = Instant::now();
    pause(&daemon, "t-3").await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "the pause took {took:?}");
    drop(silent);
}

#[tokio::test]
async fn an_unreachable_webhook_is_counted_failed_after_its_retries() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let daemon = daemon_notifying(&format!("http://127.0.0.1:{port}/hook"), "");
    pause(&daemon, "t-4").await;
    let mut metrics = String::new();
    for _ in 0..200 {
        metrics = daemon.metrics().await;
        if metric(&metrics, "warden_notify_failed_total") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        metric(&metrics, "warden_notify_failed_total"),
        1,
        "{metrics}"
    );
    assert_eq!(metric(&metrics, "warden_notify_retries_total"), 3);
    assert_eq!(metric(&metrics, "warden_notify_sent_total"), 0);
}

#[test]
fn a_daemon_whose_webhook_secret_is_unset_does_not_start() {
    let yaml = format!(
        "hitl_approval:\n  tools: [bash]\n  notify:\n    - {{webhook: \"http://127.0.0.1:9/h\", secret_env: WARDEN_TEST_UNSET_SECRET}}\n{}",
        server_block(false)
    );
    let (code, stderr) = serve_refused(&yaml, |c| {
        c.env(INTERNAL_ENV, INTERNAL)
            .env_remove("WARDEN_TEST_UNSET_SECRET");
    });
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("hitl_approval.notify[0].secret_env")
            && stderr.contains("WARDEN_TEST_UNSET_SECRET"),
        "{stderr}"
    );
}

#[test]
fn an_https_webhook_is_refused_at_load_with_the_reason() {
    let err = warden::Config::parse(
        "hitl_approval:\n  notify:\n    - {webhook: \"https://hooks.example/w\", secret_env: S}\n",
        "warden.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hitl_approval.notify[0].webhook") && err.contains("TLS"),
        "{err}"
    );
}

#[test]
fn a_secret_variable_name_that_is_not_one_is_refused() {
    let err = warden::Config::parse(
        "hitl_approval:\n  notify:\n    - {webhook: \"http://127.0.0.1:9/w\", secret_env: \"my secret\"}\n",
        "warden.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("hitl_approval.notify[0].secret_env"), "{err}");
}
