//! Sign-in throttling: wrong bearer tokens and wrong console sign-ins are
//! limited per source address (a forwarded address is believed only from a
//! configured proxy), answered 429 with `Retry-After` past the limit, counted
//! in `/metrics` and logged without the guessed token. Each test drives the
//! real `warden serve` binary; a second source address is another loopback
//! address (127.0.0.2).

use std::net::IpAddr;

use crate::common::daemon::*;
use serde_json::{Value, json};

/// Five failures in a row, then one a minute: the sixth is refused.
const FIVE_THEN_THROTTLED: &str =
    "  limits: {auth_failures_burst: 5, auth_failures_per_minute: 1}\n";

const WRONG: &str = "wrong-token-0123456789abcdef-guess";

fn config(extra: &str) -> String {
    format!(
        "{}{}{extra}",
        allowlist("allowlist", &["bash"], &[]),
        server_block(false)
    )
}

fn bash() -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": "ls"}})
}

/// A client whose connections come from `source`.
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// An evaluate with `token` from `client`, with `X-Forwarded-For` when given:
/// its status and its `Retry-After`, if any.
async fn evaluate_from(
    daemon: &Daemon,
    client: &reqwest::Client,
    token: &str,
    forwarded_for: Option<&str>,
) -> (u16, Option<u64>) {
    let mut request = client
        .post(format!("{}/v1/evaluate", daemon.url))
        .bearer_auth(token)
        .json(&bash());
    if let Some(address) = forwarded_for {
        request = request.header("x-forwarded-for", address);
    }
    let response = request.send().await.unwrap();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    (response.status().as_u16(), retry_after)
}

/// A console sign-in with `token` from `client`: its status.
async fn sign_in_from(daemon: &Daemon, client: &reqwest::Client, token: &str) -> u16 {
    client
        .post(format!("{}/console/login", daemon.url))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The value of a counter line of the metrics, 0 when absent.
fn counter(metrics: &str, line: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(line)?.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn wrong_bearer_tokens_are_answered_429_once_the_default_limit_is_passed() {
    let daemon = Daemon::start(&config(""));
    let client = client_from("127.0.0.1");
    let mut refused = Vec::new();
    for _ in 0..40 {
        let (status, retry_after) = evaluate_from(&daemon, &client, WRONG, None).await;
        refused.push(status);
        if status == 429 {
            assert!(retry_after.is_some_and(|s| s >= 1), "{retry_after:?}");
            break;
        }
        assert_eq!(status, 401);
    }
    assert_eq!(refused.last(), Some(&429), "{refused:?}");
}

#[tokio::test]
async fn wrong_bearer_tokens_past_the_burst_are_refused_counted_and_logged_without_the_token() {
    let daemon = Daemon::start(&config(FIVE_THEN_THROTTLED));
    let client = client_from("127.0.0.1");
    for _ in 0..5 {
        assert_eq!(evaluate_from(&daemon, &client, WRONG, None).await.0, 401);
    }
    let (status, retry_after) = evaluate_from(&daemon, &client, WRONG, None).await;
    assert_eq!(status, 429);
    // One failure a minute: the next is allowed within a minute.
    assert!(
        retry_after.is_some_and(|s| (1..=60).contains(&s)),
        "{retry_after:?}"
    );
    let metrics = daemon.metrics().await;
    assert_eq!(
        counter(
            &metrics,
            "warden_auth_failures_total{credential=\"bearer\"}"
        ),
        5,
        "{metrics}"
    );
    assert_eq!(
        counter(
            &metrics,
            "warden_auth_throttled_total{credential=\"bearer\"}"
        ),
        1
    );
    let stderr = daemon.stderr();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("127.0.0.1"))
        .collect();
    assert!(warnings.len() >= 5, "{stderr}");
    assert!(
        !stderr.contains(WRONG),
        "the guessed token was logged:\n{stderr}"
    );
}

#[tokio::test]
async fn a_throttled_address_is_refused_even_the_right_token_while_another_address_is_served() {
    let daemon = Daemon::start(&config(FIVE_THEN_THROTTLED));
    let guesser = client_from("127.0.0.1");
    for _ in 0..5 {
        assert_eq!(evaluate_from(&daemon, &guesser, WRONG, None).await.0, 401);
    }
    // From the guessing address, a right token says nothing either.
    assert_eq!(evaluate_from(&daemon, &guesser, AGENT, None).await.0, 429);
    let neighbour = client_from("127.0.0.2");
    assert_eq!(evaluate_from(&daemon, &neighbour, AGENT, None).await.0, 200);
    // Open routes stay open to the guessing address.
    let health = guesser
        .get(format!("{}/healthz", daemon.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn wrong_console_sign_ins_past_the_burst_are_refused_and_the_right_token_signs_in_from_another_address()
 {
    let daemon = Daemon::start(&config(FIVE_THEN_THROTTLED));
    let guesser = client_from("127.0.0.1");
    for _ in 0..5 {
        assert_eq!(sign_in_from(&daemon, &guesser, WRONG).await, 401);
    }
    assert_eq!(sign_in_from(&daemon, &guesser, WRONG).await, 429);
    assert_eq!(sign_in_from(&daemon, &guesser, APPROVER).await, 429);
    assert_eq!(
        sign_in_from(&daemon, &client_from("127.0.0.2"), APPROVER).await,
        200
    );
    let metrics = daemon.metrics().await;
    assert_eq!(
        counter(
            &metrics,
            "warden_auth_failures_total{credential=\"console\"}"
        ),
        5,
        "{metrics}"
    );
    assert_eq!(
        counter(
            &metrics,
            "warden_auth_throttled_total{credential=\"console\"}"
        ),
        2
    );
    assert!(!daemon.stderr().contains(WRONG));
}

#[tokio::test]
async fn a_forwarded_address_is_believed_only_from_a_trusted_proxy() {
    let daemon = Daemon::start(&config(&format!(
        "{FIVE_THEN_THROTTLED}  trusted_proxies: [127.0.0.1]\n"
    )));
    let proxy = client_from("127.0.0.1");
    for _ in 0..5 {
        let (status, _) = evaluate_from(&daemon, &proxy, WRONG, Some("203.0.113.7")).await;
        assert_eq!(status, 401);
    }
    let guesser = evaluate_from(&daemon, &proxy, AGENT, Some("203.0.113.7")).await;
    assert_eq!(guesser.0, 429);
    // Another client behind the same proxy is not the guesser.
    let neighbour = evaluate_from(&daemon, &proxy, AGENT, Some("203.0.113.8")).await;
    assert_eq!(neighbour.0, 200);

    // A client that is not a trusted proxy cannot name another address.
    let direct = client_from("127.0.0.2");
    for i in 0..5 {
        let spoofed = format!("198.51.100.{i}");
        let (status, _) = evaluate_from(&daemon, &direct, WRONG, Some(&spoofed)).await;
        assert_eq!(status, 401);
    }
    let (status, _) = evaluate_from(&daemon, &direct, AGENT, Some("198.51.100.99")).await;
    assert_eq!(status, 429);
}
