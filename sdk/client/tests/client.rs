//! The Rust client against the real daemon: the library's server on a free
//! loopback port, with the shipped allowlist provider.

use serde_json::json;
use warden_client::{
    CallContext, Client, Error, GrantScope, InteractionMode, ListedTools, ToolCall, Verdict,
};
use warden_server::{ServeOptions, Server};

const AGENT: &str = "client-agent-token-0123456789";
const INTERNAL: &str = "client-internal-token-0123456789";
const ADMIN: &str = "client-admin-token-0123456789";
const APPROVER: &str = "client-approver-token-0123456789";
const RELAY: &str = "client-relay-token-0123456789";

struct Running {
    server: Server,
    _dir: tempfile::TempDir,
}

impl Running {
    async fn start() -> Running {
        Running::start_with("").await
    }

    async fn start_with(extra: &str) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("warden.yaml");
        std::fs::write(
            &config,
            format!(
                "{extra}guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {{allowed_tools: [bash], denied_tools: [rm]}}\nserver:\n  watch_config: false\n  tokens:\n    - {{name: harness, role: agent, token: {AGENT}}}\n    - {{name: gateway, role: internal, token: {INTERNAL}}}\n    - {{name: ops, role: admin, token: {ADMIN}}}\n    - {{name: alice, role: approver, token: {APPROVER}}}\n    - {{name: gateway-relay, role: agent, relay: true, token: {RELAY}}}\n"
            ),
        )
        .unwrap();
        let options = ServeOptions {
            listen: Some("127.0.0.1:0".parse().unwrap()),
            data_dir: Some(dir.path().join("data")),
            ..Default::default()
        };
        let server = Server::start(&config, options).await.unwrap();
        Running { server, _dir: dir }
    }

    fn client(&self, token: &str) -> Client {
        Client::builder(format!("http://{}", self.server.local_addr()))
            .token(token)
            .build()
            .unwrap()
    }
}

fn bash() -> ToolCall {
    ToolCall::new("bash", json!({"command": "git status"}))
}

#[tokio::test]
async fn evaluate_returns_a_typed_decision_with_its_log_id() {
    let daemon = Running::start().await;
    let decision = daemon
        .client(AGENT)
        .evaluate(&bash().tool_call_id("call-1"))
        .await
        .unwrap();
    let e = decision.evaluation;
    assert_eq!(e.verdict, Verdict::Allow);
    assert!(e.allow);
    assert_eq!(e.decided_by.as_deref(), Some("provider:allowlist"));
    let provider = e
        .stages
        .iter()
        .find(|s| s.stage == "provider:allowlist")
        .unwrap();
    assert_eq!(provider.digest.as_ref().map(String::len), Some(64));
    assert_eq!(decision.decision_id.map(|id| id.len()), Some(36));
}

#[tokio::test]
async fn a_deny_comes_with_its_reasons() {
    let daemon = Running::start().await;
    let e = daemon
        .client(AGENT)
        .evaluate(&ToolCall::new("rm", json!({})))
        .await
        .unwrap()
        .evaluation;
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.reasons[0].code, "oap.tool_not_allowed");
}

#[tokio::test]
async fn an_internal_token_sets_the_interaction_mode() {
    let daemon = Running::start().await;
    let call = bash().context(CallContext {
        interaction_mode: Some("scheduled".into()),
        ..Default::default()
    });
    let internal = daemon.client(INTERNAL).evaluate(&call).await.unwrap();
    assert_eq!(
        internal.evaluation.interaction_mode,
        InteractionMode::Scheduled
    );
    let agent = daemon.client(AGENT).evaluate(&call).await.unwrap();
    assert_eq!(
        agent.evaluation.interaction_mode,
        InteractionMode::Interactive
    );
}

#[tokio::test]
async fn interaction_gives_the_runs_resolved_policy() {
    let daemon = Running::start().await;
    let plain = daemon.client(AGENT).interaction(None).await.unwrap();
    assert_eq!(plain.mode, InteractionMode::Interactive);
    assert!(plain.can_ask_human);
    assert_eq!(plain.caller.role, "agent");
    let query = warden_client::InteractionQuery {
        context: CallContext {
            interaction_mode: Some("scheduled".into()),
            ..Default::default()
        },
        tools: Some(vec!["bash".into(), "ask_clarification".into()]),
    };
    let scheduled = daemon
        .client(INTERNAL)
        .interaction(Some(&query))
        .await
        .unwrap();
    assert_eq!(scheduled.mode, InteractionMode::Scheduled);
    assert!(!scheduled.can_ask_human);
    assert_eq!(scheduled.offered_tools, Some(vec!["bash".to_string()]));
    assert_eq!(scheduled.withheld_tools, ["ask_clarification"]);
    assert_eq!(scheduled.approval_listed_tools, ListedTools::Deny);
}

#[tokio::test]
async fn a_refusal_is_an_error_with_status_and_code() {
    let daemon = Running::start().await;
    let err = daemon.client(ADMIN).evaluate(&bash()).await.unwrap_err();
    assert!(
        matches!(&err, Error::Refused { status: 403, code, .. } if code == "forbidden"),
        "{err}"
    );
    let err = daemon.client(AGENT).reload().await.unwrap_err();
    assert_eq!(err.status(), Some(403));
}

#[tokio::test]
async fn admin_reloads_and_lists_the_providers() {
    let daemon = Running::start().await;
    let admin = daemon.client(ADMIN);
    let before = admin.health().await.unwrap().generation;
    let report = admin.reload().await.unwrap();
    assert_eq!(report.previous_generation, before);
    let list = admin.providers().await.unwrap();
    assert_eq!(list.generation, report.generation);
    assert_eq!(list.providers[0].name, "allowlist");
    assert_eq!(list.providers[0].limits.pool_size, 4);
}

#[tokio::test]
async fn an_unreachable_daemon_is_an_unavailable_error() {
    let daemon = Running::start().await;
    let client = daemon.client(AGENT);
    daemon.server.shutdown().await.unwrap();
    let err = client.evaluate(&bash()).await.unwrap_err();
    assert!(err.is_unavailable(), "{err}");
}

#[test]
fn a_base_url_must_be_http() {
    assert!(matches!(
        Client::builder("127.0.0.1:8787").build(),
        Err(Error::Url(_))
    ));
}

fn paused_bash() -> warden_client::ModelResponse {
    use warden_client::{AiMessage, ModelResponse, ModelToolCall};
    ModelResponse {
        message: AiMessage {
            tool_calls: vec![ModelToolCall {
                id: Some("call_1".into()),
                name: "bash".into(),
                args: json!({"command": "git push"}),
                kind: None,
            }],
            raw_tool_calls: None,
            content: None,
        },
        context: CallContext::default(),
    }
}

fn approve(outcome: &warden_client::GateOutcome) -> warden_client::ResumeRequest {
    use warden_client::{RequestDecision, ResumeRequest};
    ResumeRequest::decisions(vec![RequestDecision::approve(
        outcome.requests[0].request_id.clone(),
    )])
}

#[tokio::test]
async fn a_paused_call_is_listed_and_an_approver_resumes_it_once() {
    use warden_client::{CallStatus, ResumeRequest, RunState};
    let daemon = Running::start_with("hitl_approval:\n  tools: [bash]\n").await;
    let agent = daemon.client(AGENT);
    let outcome = agent
        .submit_tool_calls("thread/1", "run-1", &paused_bash())
        .await
        .unwrap();
    assert_eq!(outcome.run_state, RunState::WaitingForInput);
    let listed = agent.approvals("thread/1", false).await.unwrap();
    assert_eq!((listed.len(), listed[0].principal.as_str()), (1, "harness"));
    let approval = outcome.approval_id.clone().unwrap();
    let answer = approve(&outcome);
    let err = agent
        .resume("thread/1", &approval, &answer)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403), "an agent never answers: {err}");
    let approver = daemon.client(APPROVER);
    let resolution = approver
        .resume("thread/1", &approval, &answer)
        .await
        .unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Run);
    assert_eq!(resolution.reviewer.as_deref(), Some("alice"));
    assert!(!resolution.replayed);
    let again = approver
        .resume("thread/1", &approval, &answer)
        .await
        .unwrap();
    assert!(again.replayed, "the same resume gets the stored answer");
    assert_eq!(again.consumption_id, resolution.consumption_id);
    let err = approver
        .resume("thread/1", &approval, &ResumeRequest::reject_all(None))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));
}

#[tokio::test]
async fn an_approver_grants_with_an_approval_lists_the_grant_and_revokes_it() {
    use warden_client::{GrantRequest, RequestDecision, ResumeRequest, RunState};
    let daemon = Running::start_with("hitl_approval:\n  tools: [bash]\n").await;
    let agent = daemon.client(AGENT);
    let approver = daemon.client(APPROVER);
    let outcome = agent
        .submit_tool_calls("t-g", "run-1", &paused_bash())
        .await
        .unwrap();
    let grant = GrantRequest {
        scope: GrantScope::Thread,
        minutes: 10,
        rule: None,
    };
    let answer = ResumeRequest::decisions(vec![
        RequestDecision::approve(outcome.requests[0].request_id.clone()).with_grant(grant),
    ]);
    approver
        .resume("t-g", outcome.approval_id.as_deref().unwrap(), &answer)
        .await
        .unwrap();
    let grants = approver.grants(false).await.unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].granted_by, "alice");
    let again = agent
        .submit_tool_calls("t-g", "run-2", &paused_bash())
        .await
        .unwrap();
    assert_eq!(again.run_state, RunState::Running, "the grant answers");
    let revoked = approver
        .revoke_grant(&grants[0].grant_id, None)
        .await
        .unwrap();
    assert_eq!(revoked.revoked_by.as_deref(), Some("alice"));
    assert!(approver.grants(false).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_relay_names_the_human_and_the_key_makes_the_resume_idempotent() {
    let daemon = Running::start_with("hitl_approval:\n  tools: [bash]\n").await;
    let relay = daemon.client(RELAY);
    let outcome = relay
        .submit_tool_calls("t-1", "run-1", &paused_bash())
        .await
        .unwrap();
    let approval = outcome.approval_id.clone().unwrap();
    let answer = approve(&outcome)
        .reviewer("bob")
        .idempotency_key("answer-1");
    let first = relay.resume("t-1", &approval, &answer).await.unwrap();
    assert_eq!(
        (first.reviewer.as_deref(), first.relayed_by.as_deref()),
        (Some("bob"), Some("gateway-relay"))
    );
    let again = relay.resume("t-1", &approval, &answer).await.unwrap();
    assert!(again.replayed);
    let err = relay
        .resume(
            "t-1",
            &approval,
            &answer.clone().idempotency_key("answer-2"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409), "another key: {err}");
}

#[tokio::test]
async fn an_approver_clears_a_pause() {
    let daemon = Running::start_with("hitl_approval:\n  tools: [bash]\n").await;
    let outcome = daemon
        .client(AGENT)
        .submit_tool_calls("t-1", "run-1", &paused_bash())
        .await
        .unwrap();
    let approval = outcome.approval_id.unwrap();
    let cleared = daemon
        .client(APPROVER)
        .clear("t-1", &approval, Some("stale"), None)
        .await
        .unwrap();
    assert_eq!(cleared.calls[0].status, warden_client::CallStatus::Denied);
    assert_eq!(cleared.reviewer.as_deref(), Some("alice"));
}

/// A listener that accepts connections and closes them at once, counting them.
async fn slamming_door() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (url, count)
}

#[tokio::test]
async fn only_idempotent_requests_are_retried() {
    use std::sync::atomic::Ordering;
    let client = |url: &str| {
        Client::builder(url)
            .token(AGENT)
            .retries(2)
            .build()
            .unwrap()
    };
    let (url, tries) = slamming_door().await;
    assert!(client(&url).health().await.unwrap_err().is_unavailable());
    assert_eq!(
        tries.load(Ordering::SeqCst),
        3,
        "a read is tried three times"
    );

    let (url, tries) = slamming_door().await;
    let answer = warden_client::ResumeRequest::reject_all(None).idempotency_key("k");
    assert!(
        client(&url)
            .resume("t", "a", &answer)
            .await
            .unwrap_err()
            .is_unavailable()
    );
    assert_eq!(tries.load(Ordering::SeqCst), 3, "a keyed resume is retried");

    let (url, tries) = slamming_door().await;
    assert!(
        client(&url)
            .evaluate(&bash())
            .await
            .unwrap_err()
            .is_unavailable()
    );
    assert_eq!(
        tries.load(Ordering::SeqCst),
        1,
        "an evaluation is sent once"
    );

    let (url, tries) = slamming_door().await;
    let err = client(&url)
        .submit_tool_calls("t", "r", &paused_bash())
        .await
        .unwrap_err();
    assert!(err.is_unavailable());
    assert_eq!(
        tries.load(Ordering::SeqCst),
        1,
        "a model response is sent once"
    );

    let (url, tries) = slamming_door().await;
    assert!(
        client(&url)
            .clear("t", "a", None, None)
            .await
            .unwrap_err()
            .is_unavailable()
    );
    assert_eq!(tries.load(Ordering::SeqCst), 1, "a clear is sent once");
}
