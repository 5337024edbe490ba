//! Fair admission: the body turns and the judging queue are shared between
//! tokens, so that one token's slow or numerous requests cannot starve
//! another's calls. Each test drives the real `warden serve` binary; the
//! latency under a flood is measured by `warden bench --scenario daemon-flood`
//! (docs/benchmarks.md).

use std::time::Duration;

use crate::common::daemon::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

fn bash(command: &str) -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": command}})
}

/// A client with `token` that announces a 1 MiB evaluate body, sends 64 KiB
/// of it, then one byte every 2 s, until it is aborted.
fn slow_body(addr: std::net::SocketAddr, token: &'static str) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Ok(mut stream) = TcpStream::connect(addr).await else {
            return;
        };
        let start = [
            evaluate_head(token, 1 << 20).into_bytes(),
            br#"{"tool_name":"bash","tool_input":{"pad":""#.to_vec(),
            vec![b'x'; 64 * 1024],
        ]
        .concat();
        if stream.write_all(&start).await.is_err() {
            return;
        }
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            if stream.write_all(b"x").await.is_err() {
                return;
            }
        }
    })
}

#[tokio::test]
async fn a_token_flooding_slow_bodies_does_not_starve_another_tokens_evaluate() {
    // The default limits: 32 body turns, 16 of them for any one token.
    let daemon = Daemon::start(&format!(
        "{}{}",
        allowlist("allowlist", &["bash"], &[]),
        server_block(false)
    ));
    let flood: Vec<_> = (0..40).map(|_| slow_body(daemon.addr(), AGENT)).collect();
    daemon.wait_for_load("bodies", 16).await;
    for _ in 0..5 {
        let (status, decision) = daemon.evaluate(OTHER_AGENT, &bash("ls")).await;
        assert_eq!(status, 200, "{decision}");
        assert_eq!(decision["verdict"], "allow", "{decision}");
    }
    // The flooding token holds its share of the turns, no more.
    assert_eq!(daemon.load("bodies").await, Some(16));
    for client in flood {
        client.abort();
    }
}

#[tokio::test]
async fn a_token_past_its_share_of_the_judging_queue_is_denied_while_another_tokens_call_is_queued()
{
    // The provider outlasts the test: every call admitted stays admitted.
    let daemon = stuck_daemon(
        60_000,
        "  limits: {workers: 1, queue_depth: 2, max_queued_per_principal: 2}\n",
    );
    let call = |token: &'static str| {
        let client = reqwest::Client::new();
        let url = format!("{}/v1/evaluate", daemon.url);
        tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(token)
                .json(&bash("ls"))
                .send()
                .await
                .unwrap();
            response.json::<Value>().await.unwrap()
        })
    };
    // The agent's share: one call on the worker, one in the queue.
    let held = [call(AGENT), call(AGENT)];
    daemon.wait_for_load("jobs", 2).await;
    let (status, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(decision["reasons"][1]["code"], "warden.overloaded");
    let message = decision["reasons"][1]["message"].as_str().unwrap();
    assert!(message.contains("max_queued_per_principal"), "{message}");
    // The queue has room left for another token's call.
    let other = call(OTHER_AGENT);
    daemon.wait_for_load("jobs", 3).await;
    assert!(!other.is_finished(), "{:?}", other.await);
    other.abort();
    for call in held {
        call.abort();
    }
}
