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

// --- the corpus: every secret format in every position ---------------------------

use warden_policy::redact::Redactor;
use warden_testkit::secrets::{
    CLIENT_PASSWORDS, KEPT, NOT_SECRETS, PLACEMENTS, QUOTED_CLIENT_PASSWORDS, TOKENS, placed,
};

#[test]
fn every_secret_of_the_corpus_is_redacted_and_the_text_around_it_kept() {
    let redactor = Redactor::builtin();
    let mut failures = Vec::new();
    for token in TOKENS {
        for placement in PLACEMENTS {
            let text = placed(token, placement);
            let out = redactor.redact(&text);
            // (A token whose alphabet has `_` takes `_keepme` with it: where it
            // ends cannot be told.)
            let lost_text = placement.1.contains(KEPT) && !out.contains(KEPT);
            if out.contains(token.value) || lost_text || redactor.redact(&out) != out {
                failures.push(format!("{} {}: {text} -> {out}", token.format, placement.0));
            }
        }
    }
    for client in CLIENT_PASSWORDS.iter().chain(QUOTED_CLIENT_PASSWORDS) {
        let out = redactor.redact(client.command);
        if out.contains(client.secret) || !out.contains(client.kept) {
            failures.push(format!("{} -> {out}", client.command));
        }
    }
    for text in NOT_SECRETS {
        if redactor.redact(text) != *text {
            failures.push(format!(
                "not a secret, changed: {text} -> {}",
                redactor.redact(text)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An allowlist that quotes a tool name it refuses, then the OAP provider,
/// which quotes a command it does not allow; every argument a secret can be
/// in is logged.
fn corpus_config() -> String {
    let passport: Value =
        serde_json::from_str(include_str!("../../../../examples/passport.json")).unwrap();
    format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {{allowed_tools: [bash], denied_tools: []}}\n    - name: oap\n      wasm: builtin:oap-passport\n      config: {}\ndecision_log:\n  arguments: {{'*': [command, argv, env]}}\n{}",
        json!({ "passport": passport }),
        server_block(false)
    )
}

/// Everything the corpus must keep out of what Warden writes.
fn every_secret() -> Vec<&'static str> {
    TOKENS
        .iter()
        .map(|t| t.value)
        .chain(CLIENT_PASSWORDS.iter().map(|c| c.secret))
        .collect()
}

#[tokio::test]
async fn no_secret_of_the_corpus_reaches_the_answer_or_the_decision_log() {
    let mut d = Daemon::start(&corpus_config());
    let mut answers = Vec::new();
    let mut unquoted = Vec::new();
    for token in TOKENS {
        for placement in PLACEMENTS {
            let text = placed(token, placement);
            let command = format!("curl {text}");
            let call = json!({
                "tool_name": "bash",
                "tool_input": {"command": command, "argv": ["curl", {"nested": [text]}], "env": {"X_AUTH": text}},
                "tool_call_id": format!("call_{}", token.value),
                "context": {"thread_id": format!("thread-{}", token.value),
                            "run_id": format!("run-{}", token.value),
                            "agent_id": format!("agent_{}", token.value)}});
            let (status, answer) = d.evaluate(AGENT, &call).await;
            assert_eq!(status, 200, "{answer}");
            let reason = answer["reasons"][0]["message"].as_str().unwrap_or_default();
            if !reason.contains("curl") {
                unquoted.push(format!("{} {}: {reason}", token.format, placement.0));
            }
            answers.push(answer);
        }
        let (status, answer) = d
            .evaluate(
                AGENT,
                &json!({"tool_name": format!("curl_{}", token.value), "tool_input": {}}),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["reasons"][0]["message"], "tool 'curl_[REDACTED]' not in allowlist",
            "{}",
            token.format
        );
        answers.push(answer);
        let (status, gated) = d
            .post(
                &format!("/v1/threads/thread-{0}/runs/run-{0}/tool-calls", token.value),
                Some(AGENT),
                &json!({"message": {"tool_calls": [{"id": format!("call_{}", token.value),
                    "name": format!("curl_{}", token.value), "args": {"command": format!("curl {}", token.value)}}]}}),
            )
            .await;
        assert_eq!(status, 200, "{gated}");
        assert_eq!(gated["calls"][0]["status"], "denied", "{gated}");
        answers.push(gated["calls"][0]["reasons"].clone());
    }
    for client in CLIENT_PASSWORDS {
        let call = json!({"tool_name": "bash", "tool_input": {
            "command": client.command,
            "argv": client.command.split(' ').collect::<Vec<_>>()}});
        let (status, answer) = d.evaluate(AGENT, &call).await;
        assert_eq!(status, 200, "{answer}");
        answers.push(answer);
    }
    assert!(
        unquoted.is_empty(),
        "the reasons should quote the command:\n{}",
        unquoted.join("\n")
    );
    d.stop();

    let answers = serde_json::to_string(&answers).unwrap();
    let log = std::fs::read_to_string(d.data_file("decisions.jsonl")).unwrap();
    for secret in every_secret() {
        assert!(
            !answers.contains(secret),
            "{secret} is in an answer: {answers}"
        );
        assert!(!log.contains(secret), "{secret} is in the log: {log}");
    }
    // The ids keep all but the secret, for tracing.
    let lines = d.log("decisions.jsonl");
    let with_ids: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["thread_id"]
                .as_str()
                .is_some_and(|t| t.starts_with("thread-"))
        })
        .collect();
    assert_eq!(with_ids.len(), TOKENS.len() * (PLACEMENTS.len() + 1));
    for line in with_ids {
        assert_eq!(line["thread_id"], "thread-[REDACTED]", "{line}");
        assert_eq!(line["run_id"], "run-[REDACTED]", "{line}");
        assert_eq!(line["tool_call_id"], "call_[REDACTED]", "{line}");
        if let Some(agent) = line.get("agent_id").filter(|a| !a.is_null()) {
            assert_eq!(agent, "agent_[REDACTED]", "{line}");
        }
    }
    let named = lines
        .iter()
        .filter(|l| l["tool_name"] == "curl_[REDACTED]")
        .count();
    assert_eq!(named, 2 * TOKENS.len(), "evaluated and gated: {log}");
}
