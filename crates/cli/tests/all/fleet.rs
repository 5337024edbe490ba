//! `deploy/fleet`, the script the image is built with and its nodes start
//! through (deploy/Dockerfile, deploy/compose.yaml), run natively as the
//! compose file runs it: PostgreSQL and two nodes on `deploy/warden.yaml`; a
//! pause made on node-1 is resumed on node-2; SIGTERM stops the whole fleet.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const AGENT: &str = "fleet-agent-token-0123456789";
const APPROVER: &str = "fleet-approver-token-0123456789";

/// A loopback port free now, with the next one free too.
fn two_free_ports() -> u16 {
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if port < u16::MAX && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn up(dir: &Path, port: u16, pg_port: u16) -> Child {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/fleet");
    Command::new("bash")
        .arg(script)
        .args(["up", "--dir"])
        .arg(dir)
        .args([
            "--port",
            &port.to_string(),
            "--pg-port",
            &pg_port.to_string(),
        ])
        .env("WARDEN", env!("CARGO_BIN_EXE_warden"))
        .env("WARDEN_AGENT_TOKEN", AGENT)
        .env("WARDEN_APPROVER_TOKEN", APPROVER)
        .env("WARDEN_ADMIN_TOKEN", "fleet-admin-token-0123456789")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

async fn healthy(http: &reqwest::Client, url: &str) -> Value {
    let started = Instant::now();
    loop {
        if let Ok(answer) = http.get(format!("{url}/healthz")).send().await
            && answer.status() == 200
        {
            return answer.json().await.unwrap();
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "{url} never became healthy"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// POSTs `body` to `url` with `token`: the JSON answer.
async fn post(http: &reqwest::Client, url: &str, token: &str, body: &Value) -> Value {
    let answer = http.post(url).bearer_auth(token).json(body).send().await;
    answer.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn the_fleet_script_runs_two_nodes_on_one_database_and_stops_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let (port, pg_port) = (two_free_ports(), free_port());
    let mut fleet = up(dir.path(), port, pg_port);
    let http = reqwest::Client::new();
    let (one, two) = (
        format!("http://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{}", port + 1),
    );
    assert_eq!(healthy(&http, &one).await["node_name"], "node-1");
    assert_eq!(healthy(&http, &two).await["node_name"], "node-2");

    let call = json!({"message": {"tool_calls": [
        {"id": "c1", "name": "bash", "args": {"command": "git push origin main"}}
    ]}});
    let outcome = post(
        &http,
        &format!("{one}/v1/threads/t-1/runs/r-1/tool-calls"),
        AGENT,
        &call,
    )
    .await;
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    let approval = outcome["approval_id"].as_str().unwrap();
    let approve = json!({"decisions": [
        {"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}
    ]});
    let resolution = post(
        &http,
        &format!("{two}/v1/threads/t-1/approvals/{approval}/resume"),
        APPROVER,
        &approve,
    )
    .await;
    assert_eq!(resolution["calls"][0]["status"], "run", "{resolution}");

    let status = Command::new("kill")
        .args(["-TERM", &fleet.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    while fleet.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the fleet did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = fleet.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("fleet: stopped"));
    for stopped in [port, port + 1, pg_port] {
        assert!(
            TcpStream::connect(("127.0.0.1", stopped)).is_err(),
            "port {stopped} still answers"
        );
    }
}
