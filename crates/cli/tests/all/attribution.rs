//! Every decision log line says who the call is attributed to, as honoured
//! and, where the trust rules dropped or replaced a field, as claimed; which
//! node judged it and the configuration (digest, generation) it was judged
//! under, as `/healthz` and `/v1/admin/providers` say too. The library and the
//! Python module write the same lines when asked, which `warden log verify`
//! accepts.

use std::process::Command;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use warden::{Caller, Config, ToolCall, Warden};

use crate::common::daemon::{ADMIN, AGENT, Daemon, INTERNAL, serve_refused, server_block};

/// A token that may assert the user's role, and nothing else.
const ROLE_GATEWAY: &str = "role-gateway-token-0123456789abcdef";

fn config(node: &str) -> String {
    format!(
        "permissions:\n  mode: full_auto\n  allow: [\"Bash(*)\"]\n{}    - {{name: role-gateway, role: agent, token: {ROLE_GATEWAY}, asserts: [user_role]}}\n  node_name: {node}\n",
        server_block(false)
    )
}

fn file_sha256(path: &std::path::Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

fn attributed() -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": "ls"}, "tool_call_id": "call-1",
           "context": {"agent_id": "agent-a", "thread_id": "t-1", "run_id": "r-1",
                       "user_id": "mallory", "user_role": "admin",
                       "oauth_provider": "github", "oauth_id": "42",
                       "is_subagent": true, "timestamp": "2020-01-01T00:00:00Z"}})
}

#[tokio::test]
async fn a_field_the_trust_rules_drop_is_logged_as_claimed_and_not_honoured() {
    let mut d = Daemon::start(&config("node-a"));
    let (status, _) = d.evaluate(AGENT, &attributed()).await;
    assert_eq!(status, 200);
    let (_, _) = d.evaluate(ROLE_GATEWAY, &attributed()).await;
    d.stop();
    let log = d.log("decisions.jsonl");
    let agent = &log[0]["attribution"];
    assert_eq!(
        agent["claimed"],
        json!({"user_id": "mallory", "user_role": "admin", "oauth_provider": "github",
               "oauth_id": "42", "timestamp": "2020-01-01T00:00:00Z"}),
        "{agent}"
    );
    let honoured = &agent["honoured"];
    for dropped in ["user_id", "user_role", "oauth_provider", "oauth_id"] {
        assert!(honoured.get(dropped).is_none(), "{dropped}: {honoured}");
    }
    assert_eq!(honoured["agent_id"], "agent-a");
    assert_eq!(honoured["thread_id"], "t-1");
    assert_eq!(honoured["run_id"], "r-1");
    assert_eq!(honoured["tool_call_id"], "call-1");
    assert_eq!(honoured["is_subagent"], true);
    assert_eq!(honoured["timestamp"], log[0]["judged_at"]);
    // A token that may assert the role: the role honoured, the rest claimed.
    let gateway = &log[1]["attribution"];
    assert_eq!(gateway["honoured"]["user_role"], "admin", "{gateway}");
    assert!(gateway["claimed"].get("user_role").is_none(), "{gateway}");
    assert_eq!(gateway["claimed"]["user_id"], "mallory", "{gateway}");
}

#[tokio::test]
async fn an_internal_callers_claims_are_all_honoured_and_none_repeated() {
    let mut d = Daemon::start(&config("node-a"));
    d.evaluate(INTERNAL, &attributed()).await;
    d.stop();
    let line = &d.log("decisions.jsonl")[0];
    let attribution = &line["attribution"];
    assert!(attribution.get("claimed").is_none(), "{attribution}");
    assert_eq!(attribution["honoured"]["user_role"], "admin");
    assert_eq!(attribution["honoured"]["timestamp"], "2020-01-01T00:00:00Z");
}

#[tokio::test]
async fn the_configured_passport_replaces_the_agent_id_and_the_log_shows_both() {
    let yaml = format!("guardrails:\n  passport: agent-7\n{}", config("node-a"));
    let mut d = Daemon::start(&yaml);
    d.evaluate(AGENT, &attributed()).await;
    d.stop();
    let attribution = &d.log("decisions.jsonl")[0]["attribution"];
    assert_eq!(attribution["honoured"]["agent_id"], "agent-7");
    assert_eq!(attribution["claimed"]["agent_id"], "agent-a");
}

#[tokio::test]
async fn every_line_healthz_and_the_provider_list_name_the_node_the_config_and_its_generation() {
    let mut d = Daemon::start(&config("warden-eu-1"));
    let digest = file_sha256(&d.config_path());
    let (_, health) = d.get("/healthz", None).await;
    assert_eq!(health["node_name"], "warden-eu-1", "{health}");
    assert_eq!(health["config_sha256"], digest.as_str(), "{health}");
    let (_, providers) = d.get("/v1/admin/providers", Some(ADMIN)).await;
    assert_eq!(providers["node_name"], "warden-eu-1", "{providers}");
    assert_eq!(providers["config_sha256"], digest.as_str(), "{providers}");
    assert_eq!(providers["generation"], health["generation"]);
    d.evaluate(AGENT, &attributed()).await;

    // A reload: the next lines name the new file's digest and generation.
    d.write_config(&format!("# changed\n{}", config("warden-eu-1")));
    let (status, report) = d.reload().await;
    assert_eq!(status, 200, "{report}");
    let reloaded = file_sha256(&d.config_path());
    assert_ne!(reloaded, digest);
    let (_, health) = d.get("/healthz", None).await;
    assert_eq!(health["config_sha256"], reloaded.as_str(), "{health}");
    d.evaluate(AGENT, &attributed()).await;
    d.stop();
    let log = d.log("decisions.jsonl");
    let lines: Vec<_> = log.iter().filter(|l| l.get("verdict").is_some()).collect();
    assert_eq!(lines.len(), 2, "{log:?}");
    for line in &lines {
        assert_eq!(line["node_name"], "warden-eu-1", "{line}");
    }
    assert_eq!(lines[0]["config_sha256"], digest.as_str());
    assert_eq!(lines[1]["config_sha256"], reloaded.as_str());
    assert_eq!(lines[1]["generation"], report["generation"]);
    assert_ne!(lines[0]["generation"], lines[1]["generation"]);
}

#[tokio::test]
async fn without_a_node_name_the_daemon_names_itself_by_the_host_name() {
    let yaml = config("x").replace("  node_name: x\n", "");
    let mut d = Daemon::start(&yaml);
    let (_, health) = d.get("/healthz", None).await;
    d.stop();
    let host = warden_log::host_name().unwrap();
    assert_eq!(health["node_name"], host.as_str(), "{health}");
}

#[test]
fn a_node_name_that_is_not_a_host_name_is_refused_at_start_naming_the_key() {
    let (code, stderr) = serve_refused(&config("\"eu 1\""), |c: &mut Command| {
        c.env(crate::common::daemon::INTERNAL_ENV, INTERNAL);
    });
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("server.node_name"), "{stderr}");
    assert!(stderr.contains("' '"), "{stderr}");
}

/// `warden log verify FILE --checkpoints F`: its exit code and stdout.
fn verify(log: &std::path::Path) -> (Option<i32>, String) {
    let mut checkpoints = log.as_os_str().to_owned();
    checkpoints.push(".checkpoints");
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("log")
        .arg("verify")
        .arg(log)
        .arg("--checkpoints")
        .arg(&checkpoints)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_library_writes_the_daemons_lines_which_log_verify_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warden.yaml");
    std::fs::write(
        &path,
        "permissions:\n  mode: full_auto\n  allow: [\"Bash(ls *)\"]\n  deny: [\"Bash(rm *)\"]\n\
         data_dir: state\ndecision_log:\n  checkpoint_every: 3\n  arguments: {bash: [command]}\n",
    )
    .unwrap();
    let config = Config::load(&path).unwrap();
    let warden = Warden::new(&config).unwrap();
    warden.log_decisions(&config).unwrap();
    for i in 0..7 {
        let command = if i % 2 == 0 {
            "ls -la"
        } else {
            "rm -rf /tmp/x"
        };
        let mut call = ToolCall::new("bash", json!({ "command": command }));
        call.context.user_role = Some("admin".into());
        warden.evaluate(&call, Caller::Agent).unwrap();
    }
    let log_path = warden.decision_log().unwrap().path().unwrap().to_path_buf();
    drop(warden);
    assert_eq!(log_path, dir.path().join("state/decisions.jsonl"));
    let (code, stdout) = verify(&log_path);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("intact"), "{stdout}");
    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l.get("verdict").is_some())
        .collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert_eq!(lines[0]["verdict"], "allow");
    assert_eq!(lines[1]["verdict"], "deny");
    assert_eq!(lines[0]["arguments"], json!({"command": "ls -la"}));
    assert_eq!(lines[0]["config_sha256"], file_sha256(&path).as_str());
    assert_eq!(
        lines[0]["node_name"],
        warden_log::host_name().unwrap().as_str()
    );
    assert_eq!(lines[0]["attribution"]["claimed"]["user_role"], "admin");
}

#[test]
fn the_library_writes_no_log_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warden.yaml");
    std::fs::write(&path, "data_dir: state\n").unwrap();
    let warden = Warden::new(&Config::load(&path).unwrap()).unwrap();
    warden
        .evaluate(
            &ToolCall::new("bash", json!({"command": "ls"})),
            Caller::Agent,
        )
        .unwrap();
    assert!(warden.decision_log().is_none());
    drop(warden);
    assert!(!dir.path().join("state/decisions.jsonl").exists());
}

#[test]
fn the_library_refuses_to_write_a_log_from_a_section_the_daemon_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warden.yaml");
    std::fs::write(&path, "data_dir: state\ndecision_log:\n  no_such_key: 1\n").unwrap();
    let config = Config::load(&path).unwrap();
    let warden = Warden::new(&config).unwrap();
    let err = warden.log_decisions(&config).unwrap_err().to_string();
    assert!(err.contains("no_such_key"), "{err}");
    assert!(warden.decision_log().is_none());
}
