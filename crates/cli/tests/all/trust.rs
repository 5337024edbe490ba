//! Authority comes from the caller's credential, never from the request body:
//! the time a call is judged at is the host's unless the caller is internal,
//! and the attribution fields that grant authority (`user_role`, `user_id`,
//! `oauth_provider`, `oauth_id`) are believed only from internal callers or
//! from a token whose `asserts:` names them.

use std::process::Command;

use crate::common::daemon::{AGENT, Daemon, INTERNAL, INTERNAL_ENV, serve_refused};
use crate::common::*;
use serde_json::{Value, json};
use warden::{Caller, ToolCall, Verdict, Warden};
use warden_approval::ApprovalGate;
use warden_approval::{CallStatus, ModelResponse, RunRef};
use warden_types::{Asserts, Attribution};

const DROPPED: &str = "warden.context_keys_dropped";
/// A token that may say who the user is and what role they have.
const GATEWAY: &str = "gateway-token-0123456789abcdef";

/// The shipped example's rule: only an admin may deploy.
const ONLY_ADMINS_DEPLOY: &str = r#"
guardrails:
  providers:
    - name: team
      wasm: builtin:rules
      config:
        default: allow
        rules:
          - id: deploys-need-an-admin
            when:
              - {field: tool_name, op: eq, value: deploy}
              - {field: user_role, op: ne, value: admin}
            action: deny
            message: only an admin may deploy
"#;

fn server_block() -> String {
    format!(
        "server:\n  watch_config: false\n  tokens:\n    - {{name: harness, role: agent, token: {AGENT}}}\n    - {{name: sso-gateway, role: agent, token: {GATEWAY}, asserts: [user_role, user_id]}}\n    - {{name: gateway, role: internal, token_env: {INTERNAL_ENV}}}\n"
    )
}

fn deploy_as_admin() -> Value {
    json!({"tool_name": "deploy", "tool_input": {"service": "api"},
           "context": {"user_role": "admin", "user_id": "mallory"}})
}

fn codes(decision: &Value) -> Vec<&str> {
    decision["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect()
}

fn passport_expired_at(expires_at: &str) -> Warden {
    let mut passport: Value =
        serde_json::from_str(include_str!("../../../../examples/passport.json")).unwrap();
    passport["expires_at"] = json!(expires_at);
    warden(&format!(
        "guardrails:\n  providers:\n    - name: oap\n      wasm: builtin:oap-passport\n      config: {}\n",
        json!({ "passport": passport })
    ))
}

fn dated(timestamp: &str) -> ToolCall {
    let mut call = ToolCall::new("bash", json!({"command": "ls"}));
    call.context.timestamp = Some(timestamp.into());
    call
}

#[test]
fn an_expired_passport_denies_whatever_time_an_agent_claims() {
    let w = passport_expired_at("2026-02-01T00:00:00Z");
    for caller in [
        Caller::Agent,
        Caller::Asserting(Asserts::ALL),
        Caller::Asserting(Asserts::NONE.with(Attribution::UserRole)),
    ] {
        let e = w.evaluate(&dated("2026-01-15T00:00:00Z"), caller).unwrap();
        assert_eq!(e.verdict, Verdict::Deny, "{caller:?}: {e:?}");
        assert_eq!(e.reasons[0].code, "oap.passport_expired", "{e:?}");
        assert!(e.judged_at.as_str() > "2026-02-01", "{}", e.judged_at);
    }
}

#[test]
fn an_internal_callers_time_is_the_time_the_call_is_judged_at() {
    let w = passport_expired_at("2026-02-01T00:00:00Z");
    let e = w
        .evaluate(&dated("2026-01-15T00:00:00Z"), Caller::Internal)
        .unwrap();
    assert_eq!(e.verdict, Verdict::Allow, "{e:?}");
    assert_eq!(e.judged_at, "2026-01-15T00:00:00Z");
}

#[test]
fn a_self_declared_admin_does_not_pass_only_an_admin_may_deploy() {
    let w = warden(ONLY_ADMINS_DEPLOY);
    let call = ToolCall::from_json(deploy_as_admin().to_string().as_bytes()).unwrap();
    let e = w.evaluate(&call, Caller::Agent).unwrap();
    assert_eq!(e.verdict, Verdict::Deny, "{e:?}");
    assert_eq!(e.reasons[0].message, "only an admin may deploy");
    let notice = e.reasons.iter().find(|r| r.code == DROPPED).unwrap();
    assert!(
        notice.message.contains("user_role, user_id"),
        "{}",
        notice.message
    );
}

#[test]
fn a_token_that_may_assert_the_role_is_believed_on_it_alone() {
    let w = warden(ONLY_ADMINS_DEPLOY);
    let call = ToolCall::from_json(deploy_as_admin().to_string().as_bytes()).unwrap();
    let role_only = Caller::Asserting(Asserts::NONE.with(Attribution::UserRole));
    let e = w.evaluate(&call, role_only).unwrap();
    assert_eq!(e.verdict, Verdict::Allow, "{e:?}");
    let notice = e.reasons.iter().find(|r| r.code == DROPPED).unwrap();
    assert!(
        notice.message.contains("user_id") && !notice.message.contains("user_role"),
        "only the field it may not assert is dropped: {}",
        notice.message
    );
    let internal = w.evaluate(&call, Caller::Internal).unwrap();
    assert_eq!(internal.verdict, Verdict::Allow);
    assert!(internal.reasons.iter().all(|r| r.code != DROPPED));
}

#[test]
fn a_token_that_asserts_a_role_still_cannot_choose_the_interaction_mode() {
    let w = warden(ONLY_ADMINS_DEPLOY);
    let mut call = ToolCall::new("bash", json!({"command": "ls"}));
    call.context.interaction_mode = Some("autonomous".into());
    let e = w.evaluate(&call, Caller::Asserting(Asserts::ALL)).unwrap();
    assert_eq!(e.interaction_mode.as_str(), "interactive");
    assert!(e.reasons.iter().any(|r| r.code == DROPPED), "{e:?}");
}

#[test]
fn the_approval_gate_judges_every_call_with_the_callers_authority() {
    let dir = tempfile::tempdir().unwrap();
    let gate = ApprovalGate::open(
        std::sync::Arc::new(warden(ONLY_ADMINS_DEPLOY)),
        dir.path(),
        Default::default(),
    )
    .unwrap();
    let response = ModelResponse::from_json(
        json!({"message": {"tool_calls": [{"id": "c1", "name": "deploy", "args": {}}]},
               "context": {"user_role": "admin"}})
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    let agent = gate
        .submit(&RunRef::new("t1", "r1"), &response, Caller::Agent)
        .unwrap();
    assert_eq!(agent.calls[0].status, CallStatus::Denied, "{agent:?}");
    let asserting = gate
        .submit(
            &RunRef::new("t2", "r1"),
            &response,
            Caller::Asserting(Asserts::NONE.with(Attribution::UserRole)),
        )
        .unwrap();
    assert_eq!(asserting.calls[0].status, CallStatus::Run, "{asserting:?}");
}

#[tokio::test]
async fn the_daemon_believes_a_role_only_from_a_token_that_may_assert_it() {
    let d = Daemon::start(&format!("{ONLY_ADMINS_DEPLOY}{}", server_block()));
    let (status, agent) = d.evaluate(AGENT, &deploy_as_admin()).await;
    assert_eq!(status, 200, "{agent}");
    assert_eq!(agent["verdict"], "deny", "{agent}");
    assert!(codes(&agent).contains(&DROPPED), "{agent}");
    let (_, gateway) = d.evaluate(GATEWAY, &deploy_as_admin()).await;
    assert_eq!(gateway["verdict"], "allow", "{gateway}");
    assert!(!codes(&gateway).contains(&DROPPED), "{gateway}");
    let (_, internal) = d.evaluate(INTERNAL, &deploy_as_admin()).await;
    assert_eq!(internal["verdict"], "allow", "{internal}");
}

#[tokio::test]
async fn an_agents_timestamp_is_recorded_in_the_log_not_believed() {
    let mut d = Daemon::start(&format!("{ONLY_ADMINS_DEPLOY}{}", server_block()));
    let claimed = "2020-01-01T00:00:00Z";
    let body = json!({"tool_name": "bash", "tool_input": {"command": "ls"},
                      "context": {"timestamp": claimed}});
    let (_, answer) = d.evaluate(AGENT, &body).await;
    let judged_at = answer["judged_at"].as_str().unwrap().to_string();
    assert!(judged_at.as_str() > "2026", "{answer}");
    let (_, internal) = d.evaluate(INTERNAL, &body).await;
    assert_eq!(internal["judged_at"], claimed);
    d.stop();
    let log = d.log("decisions.jsonl");
    assert_eq!(log[0]["call_timestamp"], claimed);
    assert_eq!(log[0]["judged_at"], judged_at.as_str());
    assert_eq!(log[1]["judged_at"], claimed);
}

#[test]
fn a_token_may_not_assert_a_field_that_is_not_an_attribution_field() {
    let yaml = format!(
        "server:\n  tokens:\n    - {{name: h, role: agent, token: {AGENT}, asserts: [interaction_mode]}}\n"
    );
    let (code, stderr) = serve_refused(&yaml, |_| {});
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("asserts") && stderr.contains("'interaction_mode'"),
        "{stderr}"
    );
}

fn eval(args: &[&str], request: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("warden.yaml"), ONLY_ADMINS_DEPLOY).unwrap();
    let request_file = dir.path().join("request.json");
    std::fs::write(&request_file, request.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["eval", "--config", "warden.yaml", "--request"])
        .arg(&request_file)
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_command_line_believes_a_role_only_when_told_to() {
    assert_eq!(eval(&[], &deploy_as_admin())["verdict"], "deny");
    assert_eq!(
        eval(&["--asserts", "user_role"], &deploy_as_admin())["verdict"],
        "allow"
    );
    assert_eq!(
        eval(&["--internal"], &deploy_as_admin())["verdict"],
        "allow"
    );
}

#[tokio::test]
async fn the_example_daemon_believes_the_role_from_its_gateway_only() {
    let d = Daemon::start_example(
        "examples/serve.yaml",
        &[
            ("WARDEN_AGENT_TOKEN", AGENT),
            ("WARDEN_GATEWAY_TOKEN", GATEWAY),
            ("WARDEN_ADMIN_TOKEN", INTERNAL),
        ],
    );
    let (_, agent) = d.evaluate(AGENT, &deploy_as_admin()).await;
    let (_, gateway) = d.evaluate(GATEWAY, &deploy_as_admin()).await;
    assert_eq!(agent["verdict"], "deny", "{agent}");
    assert_eq!(gateway["verdict"], "allow", "{gateway}");
}
