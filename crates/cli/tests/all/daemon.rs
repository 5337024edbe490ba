//! `warden serve` end to end over real HTTP: the real binary, started on a free
//! loopback port, called as harnesses and operators call it.

use crate::common::daemon::*;
use crate::common::repo_root;
use reqwest::Method;
use serde_json::{Value, json};

fn config(guardrails: &str) -> String {
    format!("{guardrails}{}", server_block(false))
}

fn bash(command: &str) -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": command}})
}

fn codes(decision: &Value) -> Vec<String> {
    decision["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect()
}

fn default_daemon() -> Daemon {
    Daemon::start(&config(&allowlist("allowlist", &["bash"], &["rm"])))
}

// --- the API -----------------------------------------------------------------

#[tokio::test]
async fn evaluate_answers_with_the_same_json_as_warden_eval() {
    let daemon = default_daemon();
    let request = json!({"tool_name": "delete_database", "tool_input": {}});
    let (status, served) = daemon.evaluate(AGENT, &request).await;
    assert_eq!(status, 200, "{served}");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["eval", "--config", "warden.yaml", "--request", "-"])
        .current_dir(daemon.dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(request.to_string().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&served), keys(&printed));
    for field in ["verdict", "allow", "reasons", "policy_id", "decided_by"] {
        assert_eq!(served[field], printed[field], "{field}");
    }
    assert_eq!(served["verdict"], "deny");
}

#[tokio::test]
async fn every_decision_names_its_log_record_in_a_header() {
    let daemon = default_daemon();
    let response = daemon
        .request(Method::POST, "/v1/evaluate", Some(AGENT))
        .json(&bash("ls"))
        .send()
        .await
        .unwrap();
    let id = response.headers()["x-warden-decision-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(id.len(), 36, "{id}");
}

#[tokio::test]
async fn healthz_is_open_and_names_the_serving_generation() {
    let daemon = default_daemon();
    let (status, health) = daemon.get("/healthz", None).await;
    assert_eq!(status, 200);
    assert_eq!(health["status"], "ok");
    assert!(health["generation"].as_u64().unwrap() >= 1);
    assert_eq!(health["providers"], 1);
}

#[tokio::test]
async fn admin_lists_the_live_providers_with_digest_limits_and_load_time() {
    let daemon = default_daemon();
    let (status, list) = daemon.get("/v1/admin/providers", Some(ADMIN)).await;
    assert_eq!(status, 200, "{list}");
    let p = &list["providers"][0];
    assert_eq!(p["name"], "allowlist");
    assert_eq!(p["version"], "0.1.0");
    assert_eq!(p["digest"].as_str().unwrap().len(), 64);
    assert_eq!(p["limits"]["timeout_ms"], 100);
    assert_eq!(p["limits"]["configure_timeout_ms"], 2_000);
    assert_eq!(p["limits"]["configure_fuel"], 2_000_000_000u64);
    assert!(p["loaded_since"].as_str().unwrap().ends_with('Z'));
    assert_eq!(list["generation"], daemon.generation().await);
}

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let daemon = default_daemon();
    let (status, body) = daemon.get("/v1/nothing", Some(AGENT)).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "not_found");
}

// --- roles and their refusals --------------------------------------------------

#[tokio::test]
async fn a_call_without_a_token_is_401_and_is_not_judged() {
    let mut daemon = default_daemon();
    let (status, body) = daemon.post("/v1/evaluate", None, &bash("ls")).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "unauthorized");
    daemon.stop();
    assert!(daemon.log("decisions.jsonl").is_empty());
}

#[tokio::test]
async fn a_wrong_token_is_401_and_is_not_judged() {
    let mut daemon = default_daemon();
    let response = daemon
        .request(
            Method::POST,
            "/v1/evaluate",
            Some("not-a-token-0123456789abc"),
        )
        .json(&bash("ls"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    daemon.stop();
    assert!(daemon.log("decisions.jsonl").is_empty());
}

#[tokio::test]
async fn an_admin_token_may_not_evaluate() {
    let daemon = default_daemon();
    let (status, body) = daemon.evaluate(ADMIN, &bash("ls")).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "forbidden");
}

#[tokio::test]
async fn agent_and_internal_tokens_may_not_reload_and_nothing_is_swapped() {
    let daemon = default_daemon();
    let before = daemon.generation().await;
    for token in [AGENT, INTERNAL] {
        let (status, body) = daemon
            .post("/v1/admin/reload", Some(token), &Value::Null)
            .await;
        assert_eq!(status, 403, "{body}");
    }
    assert_eq!(daemon.generation().await, before);
    assert!(daemon.log("swaps.jsonl").is_empty());
}

#[tokio::test]
async fn an_agent_token_may_not_list_providers() {
    let daemon = default_daemon();
    let (status, _) = daemon.get("/v1/admin/providers", Some(AGENT)).await;
    assert_eq!(status, 403);
    let (status, _) = daemon.get("/v1/admin/providers", None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn agent_and_internal_tokens_may_evaluate() {
    let daemon = default_daemon();
    for token in [AGENT, INTERNAL] {
        let (status, decision) = daemon.evaluate(token, &bash("ls")).await;
        assert_eq!(status, 200, "{decision}");
        assert_eq!(decision["verdict"], "allow");
    }
}

// --- the internal-key trust boundary --------------------------------------------

#[tokio::test]
async fn an_agent_cannot_choose_the_interaction_mode() {
    let daemon = default_daemon();
    let mut call = bash("ls");
    call["context"] = json!({"interaction_mode": "autonomous", "non_interactive": true});
    let (status, decision) = daemon.evaluate(AGENT, &call).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["interaction_mode"], "interactive");
    assert!(codes(&decision).contains(&"warden.context_keys_dropped".to_string()));
}

#[tokio::test]
async fn an_internal_caller_sets_the_interaction_mode() {
    let daemon = default_daemon();
    let mut call = bash("ls");
    call["context"] = json!({"interaction_mode": "autonomous"});
    let (status, decision) = daemon.evaluate(INTERNAL, &call).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["interaction_mode"], "autonomous");
    assert!(!codes(&decision).contains(&"warden.context_keys_dropped".to_string()));
}

// --- limits -----------------------------------------------------------------------

#[tokio::test]
async fn a_body_over_the_size_limit_is_a_deny_naming_the_limit() {
    let daemon = Daemon::start(&format!(
        "{}  limits: {{max_body_bytes: 2048}}\n",
        config(&allowlist("allowlist", &["bash"], &[]))
    ));
    let (status, decision) = daemon.evaluate(AGENT, &bash(&"x".repeat(4096))).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["reasons"][0]["code"], "warden.input_too_large");
    let message = decision["reasons"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("max_body_bytes") && message.contains("2048"),
        "{message}"
    );
}

#[tokio::test]
async fn json_nested_past_the_depth_limit_is_a_deny_naming_the_limit() {
    let daemon = default_daemon();
    let mut deep = json!(1);
    for _ in 0..80 {
        deep = json!([deep]);
    }
    let (status, decision) = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "bash", "tool_input": {"a": deep}}),
        )
        .await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["reasons"][0]["code"], "warden.input_too_deep");
    assert!(
        decision["reasons"][0]["message"]
            .as_str()
            .unwrap()
            .contains("max_json_depth")
    );
}

#[tokio::test]
async fn a_malformed_request_is_400_saying_what_is_wrong() {
    let daemon = default_daemon();
    let (status, body) = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "bash", "context": {"is_subagnet": true}}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is_subagnet")
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_is_refused() {
    let daemon = default_daemon();
    let response = daemon
        .request(Method::POST, "/v1/evaluate", Some(AGENT))
        .header("content-type", "text/plain")
        .body("tool_name=bash")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
}

// --- reloads ------------------------------------------------------------------------

#[tokio::test]
async fn a_reload_swaps_in_the_new_provider_set() {
    let daemon = default_daemon();
    let before = daemon.generation().await;
    daemon.write_config(&config(&allowlist("strict", &["read_file"], &[])));
    let (status, report) = daemon.reload().await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["previous_generation"], before);
    assert_eq!(report["providers"][0]["name"], "strict");
    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["generation"], report["generation"]);
    assert_eq!(provider_stages(&decision)[0]["stage"], "provider:strict");
}

#[tokio::test]
async fn a_reload_with_a_bad_digest_fails_and_the_old_set_keeps_serving() {
    let mut daemon = default_daemon();
    let before = daemon.generation().await;
    let pinned = format!(
        "{}      sha256: {}\n",
        allowlist("strict", &["read_file"], &[]),
        "0".repeat(64)
    );
    daemon.write_config(&config(&pinned));
    let (status, body) = daemon.reload().await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "reload_failed");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("SHA-256 mismatch"), "{message}");
    assert!(
        message.contains(&format!("generation {before} keeps serving")),
        "{message}"
    );

    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(decision["verdict"], "allow");
    assert_eq!(decision["generation"], before);
    let metrics = daemon.metrics().await;
    assert!(
        metrics.contains("warden_config_last_reload_successful 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"warden_reload_failures_total{error="load"} 1"#),
        "{metrics}"
    );
    daemon.stop();
    assert!(daemon.stderr().contains("reload failed"));
    let audit = daemon.log("swaps.jsonl");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["event"], "reload_failed");
    assert_eq!(audit[0]["who"], "token:ops");
    assert_eq!(audit[0]["old"]["generation"], before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_build_that_traps_is_refused_by_its_vectors_while_calls_are_served() {
    let daemon = std::sync::Arc::new(default_daemon());
    let before = daemon.generation().await;
    let hostile = crate::common::guest("hostile");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        std::fs::read(&hostile).unwrap(),
    ));
    std::fs::write(
        daemon.dir.path().join("gate.jsonl"),
        r#"{"name": "bash is allowed", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "allow"}}"#,
    )
    .unwrap();
    daemon.write_config(&config(&format!(
        "guardrails:\n  providers:\n    - name: trapping\n      wasm: {}\n      sha256: {digest}\n      config: {{behaviour: panic}}\n      vectors: gate.jsonl\n",
        hostile.display()
    )));

    let reloaded = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (daemon, reloaded) = (daemon.clone(), reloaded.clone());
        tokio::spawn(async move {
            let mut answers = Vec::new();
            loop {
                let done = reloaded.load(std::sync::atomic::Ordering::Acquire);
                let (status, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
                answers.push((
                    status,
                    decision["verdict"].clone(),
                    decision["generation"].clone(),
                ));
                // One call more once the attempt is over: the set left serving.
                if done {
                    return answers;
                }
            }
        })
    };
    let (status, body) = daemon.reload().await;
    reloaded.store(true, std::sync::atomic::Ordering::Release);
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("provider 'trapping': vectors ")
            && message
                .contains("vector 'bash is allowed' (line 1) fails: expected allow, got deny"),
        "{message}"
    );
    let answers = load.await.unwrap();
    let served = (200, json!("allow"), json!(before));
    assert!(answers.iter().all(|a| *a == served), "{answers:?}");
    assert!(
        daemon
            .metrics()
            .await
            .contains(r#"warden_reload_failures_total{error="vectors"} 1"#)
    );
}

#[tokio::test]
async fn a_reload_whose_provider_cannot_be_configured_fails() {
    let daemon = default_daemon();
    let before = daemon.generation().await;
    daemon.write_config(&config(
        "guardrails:\n  providers:\n    - name: broken\n      wasm: builtin:allowlist\n      config: {allowed_tools: 7}\n",
    ));
    let (status, body) = daemon.reload().await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'broken'"),
        "{body}"
    );
    assert_eq!(daemon.generation().await, before);
}

#[tokio::test]
async fn a_reload_of_an_invalid_config_file_fails_naming_the_key() {
    let daemon = default_daemon();
    daemon.write_config(&config("guardrails:\n  enabeld: false\n"));
    let (status, body) = daemon.reload().await;
    assert_eq!(status, 422);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("enabeld"),
        "{body}"
    );
}

#[tokio::test]
async fn a_reload_whose_token_variable_is_unset_fails_and_the_tokens_stay() {
    let daemon = default_daemon();
    let yaml = config(&allowlist("allowlist", &["bash"], &[]))
        .replace(INTERNAL_ENV, "WARDEN_TEST_UNSET_VARIABLE");
    daemon.write_config(&yaml);
    let (status, body) = daemon.reload().await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("WARDEN_TEST_UNSET_VARIABLE"),
        "{body}"
    );
    assert_eq!(daemon.evaluate(INTERNAL, &bash("ls")).await.0, 200);
    let metrics = daemon.metrics().await;
    assert!(
        metrics.contains(r#"warden_reload_failures_total{error="tokens"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn each_swap_is_audited_with_who_when_and_both_digests() {
    let mut daemon = default_daemon();
    daemon.write_config(&config(&allowlist("strict", &["read_file"], &[])));
    let (_, report) = daemon.reload().await;
    daemon.stop();
    let audit = daemon.log("swaps.jsonl");
    let swap = &audit[0];
    assert_eq!(swap["event"], "swap");
    assert_eq!(swap["trigger"], "admin");
    assert_eq!(swap["who"], "token:ops");
    assert!(swap["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(swap["old"]["generation"], report["previous_generation"]);
    assert_eq!(swap["new"]["generation"], report["generation"]);
    assert_eq!(swap["old"]["providers"][0]["name"], "allowlist");
    assert_eq!(swap["new"]["providers"][0]["name"], "strict");
    assert_eq!(
        swap["new"]["providers"][0]["digest"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
}

#[tokio::test]
async fn a_change_of_the_config_file_is_picked_up() {
    let daemon = Daemon::start(&format!(
        "{}{}",
        allowlist("allowlist", &["bash"], &[]),
        server_block(true)
    ));
    let before = daemon.generation().await;
    daemon.write_config(&format!(
        "{}{}",
        allowlist("strict", &["read_file"], &[]),
        server_block(true)
    ));
    let now = daemon.wait_for_new_generation(before).await;
    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(decision["generation"], now);
    assert_eq!(decision["verdict"], "deny");
}

#[tokio::test]
async fn sighup_reloads_the_config_file() {
    let daemon = default_daemon();
    let before = daemon.generation().await;
    daemon.write_config(&config(&allowlist("strict", &["read_file"], &[])));
    daemon.signal("HUP");
    let now = daemon.wait_for_new_generation(before).await;
    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(decision["generation"], now);
    assert_eq!(provider_stages(&decision)[0]["stage"], "provider:strict");
}

#[tokio::test]
async fn a_reload_rotates_the_tokens() {
    let daemon = default_daemon();
    let rotated = config(&allowlist("allowlist", &["bash"], &[]))
        .replace(AGENT, "rotated-agent-token-0123456789");
    daemon.write_config(&rotated);
    assert_eq!(daemon.reload().await.0, 200);
    assert_eq!(daemon.evaluate(AGENT, &bash("ls")).await.0, 401);
    assert_eq!(
        daemon
            .evaluate("rotated-agent-token-0123456789", &bash("ls"))
            .await
            .0,
        200
    );
}

// --- the decision log and the metrics -----------------------------------------------

#[tokio::test]
async fn the_decision_log_records_that_nobody_could_be_asked_in_an_agents_unattended_run() {
    // An agent token cannot name its run's mode (the keys are dropped, the
    // mode stays interactive), but its harness may say it cannot pause: then
    // no human is asked, and the log says so rather than only `interactive`.
    let mut daemon = default_daemon();
    let mut unattended = bash("ls");
    unattended["context"] = json!({"can_resume": false, "non_interactive": true});
    let (status, decision) = daemon.evaluate(AGENT, &unattended).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["reach"], "never");
    let mut subagent = bash("ls");
    subagent["context"] = json!({"is_subagent": true});
    assert_eq!(daemon.evaluate(AGENT, &subagent).await.1["reach"], "never");
    let (_, attended) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(attended["reach"], "pause");
    let mut scheduled = bash("ls");
    scheduled["context"] = json!({"interaction_mode": "scheduled"});
    assert_eq!(
        daemon.evaluate(INTERNAL, &scheduled).await.1["reach"],
        "unattended"
    );
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    let reach: Vec<(&str, &str)> = log
        .iter()
        .map(|l| {
            (
                l["interaction_mode"].as_str().unwrap(),
                l["reach"].as_str().unwrap_or("(none)"),
            )
        })
        .collect();
    assert_eq!(
        reach,
        [
            ("interactive", "never"),
            ("interactive", "never"),
            ("interactive", "pause"),
            ("scheduled", "unattended")
        ]
    );
}

#[tokio::test]
async fn the_decision_log_records_each_decision_without_arguments() {
    let mut daemon = default_daemon();
    let call = json!({
        "tool_name": "rm",
        "tool_input": {"path": "/secret/place"},
        "tool_call_id": "call-7",
        "context": {"thread_id": "t-1", "run_id": "r-1"}
    });
    let response = daemon
        .request(Method::POST, "/v1/evaluate", Some(AGENT))
        .json(&call)
        .send()
        .await
        .unwrap();
    let id = response.headers()["x-warden-decision-id"]
        .to_str()
        .unwrap()
        .to_string();
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    assert_eq!(log.len(), 1);
    let line = &log[0];
    assert_eq!(line["decision_id"], id.as_str());
    assert_eq!(line["thread_id"], "t-1");
    assert_eq!(line["run_id"], "r-1");
    assert_eq!(line["tool_call_id"], "call-7");
    assert_eq!(line["tool_name"], "rm");
    assert_eq!(line["verdict"], "deny");
    assert_eq!(line["reasons"][0]["code"], "oap.tool_not_allowed");
    let provider = &provider_stages(line)[0];
    assert_eq!(provider["stage"], "provider:allowlist");
    assert_eq!(provider["digest"].as_str().unwrap().len(), 64);
    assert!(line["fuel_used"].as_u64().unwrap() > 0);
    assert_eq!(line["caller"]["token"], "harness");
    assert!(line.get("arguments").is_none());
    let text = std::fs::read_to_string(daemon.data_file("decisions.jsonl")).unwrap();
    assert!(!text.contains("/secret/place"));
}

#[tokio::test]
async fn opted_in_arguments_are_logged_redacted() {
    let mut daemon = Daemon::start(&format!(
        "{}decision_log:\n  arguments: {{bash: [command]}}\n",
        config(&allowlist("allowlist", &["bash"], &[]))
    ));
    let call = json!({"tool_name": "bash", "tool_input": {"command": "deploy --password=hunter2", "env": {"X": "1"}}});
    assert_eq!(daemon.evaluate(AGENT, &call).await.0, 200);
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    let arguments = &log[0]["arguments"];
    assert_eq!(arguments["command"], "deploy --password=[REDACTED]");
    assert!(arguments.get("env").is_none());
}

#[tokio::test]
async fn metrics_count_decisions_by_verdict_stage_and_reason() {
    let daemon = default_daemon();
    daemon.evaluate(AGENT, &bash("ls")).await;
    daemon
        .evaluate(AGENT, &json!({"tool_name": "rm", "tool_input": {}}))
        .await;
    let metrics = daemon.metrics().await;
    for line in [
        r#"warden_decisions_total{decided_by="provider:allowlist",verdict="allow"} 1"#,
        r#"warden_decisions_total{decided_by="provider:allowlist",verdict="deny"} 1"#,
        r#"warden_decision_reasons_total{code="oap.tool_not_allowed",verdict="deny"} 1"#,
        r#"warden_provider_verdicts_total{provider="allowlist",verdict="deny"} 1"#,
        r#"warden_evaluate_duration_seconds_count 2"#,
        r#"warden_pool_capacity{provider="allowlist"} 4"#,
        r#"warden_http_requests_total{route="/v1/evaluate",status="200"} 2"#,
    ] {
        assert!(metrics.contains(line), "missing {line}\n{metrics}");
    }
}

#[tokio::test]
async fn provider_failures_are_counted_by_detail_code() {
    let hostile = crate::common::guest("hostile");
    let daemon = Daemon::start(&config(&format!(
        "guardrails:\n  providers:\n    - name: looping\n      wasm: {}\n      config: {{behaviour: infinite_loop}}\n      limits: {{fuel: 100000}}\n",
        hostile.display()
    )));
    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(decision["verdict"], "deny");
    let metrics = daemon.metrics().await;
    assert!(
        metrics.contains(
            r#"warden_provider_failures_total{detail="warden.fuel_exhausted",provider="looping"} 1"#
        ),
        "{metrics}"
    );
}

// --- startup --------------------------------------------------------------------------

#[test]
fn the_daemon_refuses_to_start_without_tokens() {
    let (code, stderr) = serve_refused(&allowlist("a", &["bash"], &[]), |_| {});
    assert_eq!(code, Some(2));
    assert!(stderr.contains("server.tokens"), "{stderr}");
}

#[test]
fn the_daemon_refuses_to_start_when_a_token_variable_is_unset() {
    let (code, stderr) = serve_refused(&config(&allowlist("a", &["bash"], &[])), |c| {
        c.env_remove(INTERNAL_ENV);
    });
    assert_eq!(code, Some(2));
    assert!(stderr.contains(INTERNAL_ENV), "{stderr}");
}

// --- the OpenAPI document ----------------------------------------------------------------

#[tokio::test]
async fn the_served_openapi_document_is_the_one_in_the_repository() {
    let daemon = default_daemon();
    let (status, served) = daemon.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let kept: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("docs/openapi.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(served, kept);
}

#[test]
fn the_openapi_document_describes_exactly_the_served_routes() {
    let doc: Value =
        serde_json::from_str(warden_server::OPENAPI).expect("docs/openapi.json is JSON");
    let mut documented: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    documented.sort();
    let mut served: Vec<(String, String)> = warden_server::ROUTES
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_string()))
        .collect();
    served.sort();
    assert_eq!(documented, served);
}

#[test]
fn the_openapi_document_states_the_security_of_each_route() {
    let doc: Value = serde_json::from_str(warden_server::OPENAPI).unwrap();
    for route in warden_server::ROUTES {
        let operation = &doc["paths"][route.path][route.method.to_lowercase()];
        let security = operation.get("security").unwrap_or(&doc["security"]);
        let open = security.as_array().is_some_and(|s| s.is_empty());
        assert_eq!(
            open,
            route.access.is_none(),
            "{} {}: the document and the router disagree on authentication",
            route.method,
            route.path
        );
    }
}

#[tokio::test]
async fn every_documented_route_is_served() {
    let daemon = default_daemon();
    for route in warden_server::ROUTES {
        let method = Method::from_bytes(route.method.as_bytes()).unwrap();
        let status = daemon
            .request(method, route.path, None)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        let expected = if route.access.is_some() { 401 } else { 200 };
        assert_eq!(status, expected, "{} {}", route.method, route.path);
    }
}

#[tokio::test]
async fn every_route_that_needs_a_token_refuses_a_wrong_one_and_a_role_it_does_not_allow() {
    use warden_server::Role;
    // One wrong token per route: more than the default allowance of wrong
    // credentials from one address.
    let daemon = Daemon::start(&format!(
        "{}{}  limits: {{auth_failures_burst: 1000, auth_failures_per_minute: 1000}}\n",
        allowlist("allowlist", &["bash"], &["rm"]),
        server_block(false)
    ));
    let tokens = [
        (AGENT, Role::Agent),
        (INTERNAL, Role::Internal),
        (ADMIN, Role::Admin),
        (APPROVER, Role::Approver),
    ];
    let mut forbidden = 0;
    for route in warden_server::ROUTES {
        let Some(access) = route.access else { continue };
        let method = Method::from_bytes(route.method.as_bytes()).unwrap();
        let send = async |token: &str| {
            let response = daemon
                .request(method.clone(), route.path, Some(token))
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        };
        let (status, body) = send("not-a-configured-token").await;
        assert_eq!(status, 401, "{} {}: {body}", route.method, route.path);
        assert_eq!(body["error"]["code"], "unauthorized", "{body}");
        for (token, role) in tokens {
            if access.allows(role, false) {
                continue;
            }
            let (status, body) = send(token).await;
            assert_eq!(
                status, 403,
                "{} {} as {role}: {body}",
                route.method, route.path
            );
            assert_eq!(body["error"]["code"], "forbidden", "{body}");
            forbidden += 1;
        }
    }
    assert!(forbidden > 0, "no route refuses any role");
}

#[test]
fn the_example_daemon_config_starts() {
    let data = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([
            "serve",
            "--config",
            "examples/serve.yaml",
            "--listen",
            "127.0.0.1:0",
            "--no-watch",
        ])
        .arg("--data-dir")
        .arg(data.path())
        .current_dir(repo_root())
        .env("WARDEN_AGENT_TOKEN", AGENT)
        .env("WARDEN_GATEWAY_TOKEN", INTERNAL)
        .env("WARDEN_ADMIN_TOKEN", ADMIN)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(
        line.starts_with("warden: listening on http://127.0.0.1:"),
        "{line:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn answers_have_the_shapes_the_openapi_document_gives() {
    let doc: Value = serde_json::from_str(warden_server::OPENAPI).unwrap();
    let daemon = default_daemon();
    let (_, decision) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_matches_schema(&doc, "Evaluation", &decision);
    assert_matches_schema(&doc, "StageReport", &provider_stages(&decision)[0]);
    let (_, health) = daemon.get("/healthz", None).await;
    assert_matches_schema(&doc, "Health", &health);
    let (_, list) = daemon.get("/v1/admin/providers", Some(ADMIN)).await;
    assert_matches_schema(&doc, "ProviderList", &list);
    assert_matches_schema(&doc, "ProviderStatus", &list["providers"][0]);
    let (_, report) = daemon.reload().await;
    assert_matches_schema(&doc, "ReloadReport", &report);
    let (_, error) = daemon.evaluate(ADMIN, &bash("ls")).await;
    assert_matches_schema(&doc, "Error", &error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_during_a_swap_finishes_on_the_set_it_started_with() {
    let hostile = crate::common::guest("hostile");
    let slow = format!(
        "guardrails:\n  providers:\n    - name: slow\n      wasm: {}\n      config: {{behaviour: slow, ms: 400}}\n      limits: {{timeout_ms: 5000, pool_size: 1}}\n",
        hostile.display()
    );
    let daemon = std::sync::Arc::new(Daemon::start(&config(&slow)));
    let before = daemon.generation().await;
    let in_flight = {
        let daemon = daemon.clone();
        tokio::spawn(async move { daemon.evaluate(AGENT, &bash("ls")).await })
    };
    // The call is in flight once the provider's only instance is taken.
    let mut taken = false;
    for _ in 0..500 {
        if daemon
            .metrics()
            .await
            .contains(r#"warden_pool_instances{provider="slow",state="idle"} 0"#)
        {
            taken = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    assert!(taken, "the call never started");
    daemon.write_config(&config(&allowlist("next", &["bash"], &[])));
    let (status, report) = daemon.reload().await;
    assert_eq!(status, 200, "{report}");

    let (status, decision) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["generation"], before);
    assert_eq!(provider_stages(&decision)[0]["stage"], "provider:slow");
    let (_, after) = daemon.evaluate(AGENT, &bash("ls")).await;
    assert_eq!(after["generation"], report["generation"]);
    assert_eq!(provider_stages(&after)[0]["stage"], "provider:next");
}

#[tokio::test]
async fn a_signed_decision_is_logged_under_the_id_of_its_signed_record() {
    let keys = tempfile::tempdir().unwrap();
    let prefix = keys.path().join("signing");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["keygen", "--out"])
        .arg(&prefix)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let mut daemon = Daemon::start(&format!(
        "{}signing: {{key: {}, kid: test-key}}\n",
        config(&allowlist("allowlist", &["bash"], &[])),
        prefix.with_extension("key").display()
    ));
    let response = daemon
        .request(Method::POST, "/v1/evaluate", Some(AGENT))
        .json(&bash("ls"))
        .send()
        .await
        .unwrap();
    let header = response.headers()["x-warden-decision-id"]
        .to_str()
        .unwrap()
        .to_string();
    let decision: Value = response.json().await.unwrap();
    let record = &decision["decision_record"];
    assert_eq!(record["decision_id"], header.as_str());
    daemon.stop();
    let line = &daemon.log("decisions.jsonl")[0];
    assert_eq!(line["decision_id"], header.as_str());
    assert_eq!(&line["decision_record"], record);
}
