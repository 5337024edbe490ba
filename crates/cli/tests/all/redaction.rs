//! Secrets stay off the disk: a reason message is redacted when it is made,
//! by the same rules as logged arguments (the built-in patterns and the
//! operator's `decision_log.redact`), and quotes at most an excerpt of a
//! command, so the answer, the decision log and a signed record agree and none
//! of them holds the secret.

use crate::common::daemon::{AGENT, Daemon, server_block};
use serde_json::{Value, json};
use warden::signing;

const TOKEN: &str = "sk-live-0123456789abcdefXYZ";

/// The OAP provider quotes a command it does not allow in its reason; the
/// decision is signed; arguments are not logged.
fn config(key: &std::path::Path) -> String {
    let passport: Value =
        serde_json::from_str(include_str!("../../../../examples/passport.json")).unwrap();
    format!(
        "guardrails:\n  providers:\n    - name: oap\n      wasm: builtin:oap-passport\n      config: {}\nsigning: {{key: {}, kid: test-key, expires_in: 60}}\ndecision_log:\n  redact: ['acct-[0-9]+']\n{}",
        json!({ "passport": passport }),
        key.display(),
        server_block(false)
    )
}

fn curl_with_a_bearer_token() -> Value {
    json!({"tool_name": "bash", "tool_input": {
        "command": format!("curl -s -H 'Authorization: Bearer {TOKEN}' https://api.example.com/acct-4471/deploy")}})
}

#[tokio::test]
async fn a_bearer_token_in_a_curl_header_reaches_neither_the_answer_nor_the_log_nor_the_record() {
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("ops");
    signing::write_key_pair(&signing::generate().unwrap(), &key).unwrap();
    let mut d = Daemon::start(&config(&key.with_extension("key")));

    let (status, answer) = d.evaluate(AGENT, &curl_with_a_bearer_token()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["verdict"], "deny", "{answer}");
    let reason = answer["reasons"][0]["message"].as_str().unwrap();
    assert!(
        reason.contains("curl") && reason.contains("[REDACTED]"),
        "the reason still says what was refused: {reason}"
    );
    assert!(
        !reason.contains("acct-4471"),
        "operator patterns apply: {reason}"
    );
    let record = &answer["decision_record"];
    assert_eq!(record["reasons"], answer["reasons"], "the record agrees");
    let public = signing::read_verifying_key(&key.with_extension("pub")).unwrap();
    assert!(signing::verify(record, &public).unwrap());

    let tool_calls = json!({"message": {"tool_calls": [{"id": "c1", "name": "bash",
        "args": curl_with_a_bearer_token()["tool_input"]}]}});
    let (status, gated) = d
        .post(
            "/v1/threads/t1/runs/r1/tool-calls",
            Some(AGENT),
            &tool_calls,
        )
        .await;
    assert_eq!(status, 200, "{gated}");
    assert_eq!(gated["calls"][0]["status"], "denied", "{gated}");
    let note = gated["calls"][0]["note"].as_str().unwrap();
    assert!(!note.contains(TOKEN), "{note}");

    d.stop();
    let log = std::fs::read_to_string(d.data_file("decisions.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(!log.contains(TOKEN), "the token reached the log: {log}");
    assert!(!log.contains("acct-4471"), "{log}");
    assert!(!answer.to_string().contains(TOKEN), "{answer}");
}

#[test]
fn a_provider_that_quotes_a_whole_command_is_cut_to_an_excerpt() {
    // command-guard quotes the blocked fragment it found: here, the command.
    let command = format!(
        "curl -H 'Authorization: Bearer {TOKEN}' https://example.com/{}",
        "a".repeat(5000)
    );
    let w = crate::common::warden(&format!(
        "guardrails:\n  providers:\n    - name: guard\n      wasm: command_guard.wasm\n      config: {}\n",
        json!({"blocked_tools": [], "blocked_commands": [command]})
    ));
    let e = w
        .evaluate(
            &crate::common::call("bash", json!({ "command": command })),
            warden::Caller::Agent,
        )
        .unwrap();
    let message = &e.reasons[0].message;
    assert_eq!(e.reasons[0].code, "guard.command_blocked");
    assert!(
        message.starts_with("the command contains 'curl -H 'Authorization: Bearer [REDACTED]'"),
        "{message}"
    );
    assert!(
        message.ends_with("…'")
            && message.chars().count() < warden_policy::redact::MAX_QUOTED_CHARS + 40,
        "{} characters: {message}",
        message.chars().count()
    );
}
