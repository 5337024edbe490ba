//! A shadow configuration in the daemon (`shadow: {config, until, sample}`),
//! and `warden promote` / `warden rollback` with their admin routes: the
//! candidate judges beside the live set and changes no answer; a promotion
//! makes it live, survives a restart until the config file changes, and a
//! rollback restores the previous answers.

use std::process::{Command, Output};

use crate::common::daemon::*;
use serde_json::{Value, json};

/// The live set allows bash; the candidate (`candidate.yaml`) denies it.
fn live_yaml(shadow: bool) -> String {
    let shadow = if shadow {
        "shadow: {config: candidate.yaml, until: '2999-01-01T00:00:00Z'}\n"
    } else {
        ""
    };
    format!(
        "{}{shadow}{}",
        allowlist("live", &["bash"], &[]),
        server_block(false)
    )
}

const CANDIDATE: &str = "guardrails:\n  providers:\n    - name: strict\n      wasm: builtin:allowlist\n      config: {allowed_tools: [], denied_tools: [bash]}\n";

/// A daemon on [`live_yaml`] with the candidate beside its config file.
fn shadowed() -> Daemon {
    // The candidate must exist when the daemon starts: write it first in a
    // directory the daemon then uses.
    let mut daemon = Daemon::start(&live_yaml(false));
    std::fs::write(daemon.dir.path().join("candidate.yaml"), CANDIDATE).unwrap();
    daemon.write_config(&live_yaml(true));
    daemon.restart();
    daemon
}

fn bash() -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": "ls"}})
}

async fn verdict(daemon: &Daemon) -> String {
    let (status, decision) = daemon.evaluate(AGENT, &bash()).await;
    assert_eq!(status, 200, "{decision}");
    decision["verdict"].as_str().unwrap().to_string()
}

/// `warden <command>` against the daemon with the admin token.
fn admin_command(daemon: &Daemon, command: &str, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([command, "--url", &format!("http://{}", daemon.addr())])
        .args(more)
        .env("WARDEN_ADMIN_TOKEN", ADMIN)
        .output()
        .unwrap()
}

fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn a_deny_everything_candidate_changes_no_answer_and_every_line_records_both() {
    crate::shadow::every_line_records_a_deny_shadow(shadowed(), "provider:strict").await;
}

#[tokio::test]
async fn a_reload_with_an_invalid_candidate_is_refused_and_the_live_set_keeps_serving() {
    let daemon = shadowed();
    let before = daemon.generation().await;
    std::fs::write(
        daemon.dir.path().join("candidate.yaml"),
        "triage: {detectr: true}\n",
    )
    .unwrap();
    let (status, answer) = daemon.reload().await;
    assert_eq!(status, 422, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("candidate.yaml: triage.detectr"),
        "{message}"
    );
    assert_eq!(daemon.generation().await, before);
    assert_eq!(verdict(&daemon).await, "allow");
}

#[tokio::test]
async fn a_promotion_serves_after_a_restart_until_the_config_file_changes() {
    let mut daemon = shadowed();
    let report = json_out(&admin_command(&daemon, "promote", &[]));
    assert_eq!(report["providers"][0]["name"], "strict", "{report}");
    assert_eq!(verdict(&daemon).await, "deny");
    assert!(daemon.data_file("promotion.json").exists());

    daemon.restart();
    assert_eq!(verdict(&daemon).await, "deny", "{}", daemon.stderr());
    assert!(
        daemon.stderr().contains("serving the promoted candidate"),
        "{}",
        daemon.stderr()
    );

    // The file itself changes: it wins, and the record goes.
    daemon.write_config(&format!("{}# edited\n", live_yaml(true)));
    daemon.restart();
    assert_eq!(verdict(&daemon).await, "allow");
    assert!(!daemon.data_file("promotion.json").exists());
    assert!(
        daemon
            .stderr()
            .contains("the config file changed since the promotion"),
        "{}",
        daemon.stderr()
    );
}

#[tokio::test]
async fn rollback_restores_the_previous_answers_and_both_are_audited() {
    let daemon = shadowed();
    let live = daemon.generation().await;
    let (status, promoted) = daemon
        .post("/v1/admin/promote", Some(ADMIN), &Value::Null)
        .await;
    assert_eq!(status, 200, "{promoted}");
    assert_eq!(verdict(&daemon).await, "deny");

    let back = json_out(&admin_command(&daemon, "rollback", &[]));
    assert_eq!(back["generation"], live, "{back}");
    assert_eq!(verdict(&daemon).await, "allow");
    assert!(!daemon.data_file("promotion.json").exists());
    let events: Vec<_> = daemon
        .log("swaps.jsonl")
        .into_iter()
        .map(|l| l["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(events, ["promote", "rollback"]);

    let (status, again) = daemon
        .post("/v1/admin/rollback", Some(ADMIN), &Value::Null)
        .await;
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "nothing_to_roll_back");
}

#[tokio::test]
async fn rollback_after_a_restart_serves_the_config_file_again() {
    let mut daemon = shadowed();
    json_out(&admin_command(&daemon, "promote", &[]));
    daemon.restart();
    assert_eq!(verdict(&daemon).await, "deny");
    json_out(&admin_command(&daemon, "rollback", &[]));
    assert_eq!(verdict(&daemon).await, "allow");
    assert!(!daemon.data_file("promotion.json").exists());
}

#[tokio::test]
async fn promote_without_a_shadow_configuration_is_refused_with_no_shadow() {
    let daemon = Daemon::start(&live_yaml(false));
    let (status, answer) = daemon
        .post("/v1/admin/promote", Some(ADMIN), &Value::Null)
        .await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "no_shadow");
    let out = admin_command(&daemon, "promote", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "409 no_shadow: nothing to promote: the live set has no shadow configuration"
        ),
        "{stderr}"
    );
    let (status, _) = daemon
        .post("/v1/admin/promote", Some(AGENT), &Value::Null)
        .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn promote_with_write_makes_the_candidate_the_config_file() {
    let mut daemon = shadowed();
    let before = std::fs::read_to_string(daemon.config_path()).unwrap();
    let report = json_out(&admin_command(&daemon, "promote", &["--write"]));
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("promotion-previous.yaml"),
        "{report}"
    );
    let written: Value =
        serde_norway::from_str(&std::fs::read_to_string(daemon.config_path()).unwrap()).unwrap();
    assert_eq!(written["guardrails"]["providers"][0]["name"], "strict");
    assert!(written.get("shadow").is_none(), "{written}");
    assert_eq!(written["server"]["tokens"].as_array().unwrap().len(), 6);
    assert_eq!(
        std::fs::read_to_string(daemon.data_file("promotion-previous.yaml")).unwrap(),
        before
    );
    assert!(!daemon.data_file("promotion.json").exists());
    assert_eq!(verdict(&daemon).await, "deny");
    daemon.restart();
    assert_eq!(verdict(&daemon).await, "deny");
}
