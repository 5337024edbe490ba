//! The Rust client against the real daemon: the library's server on a free
//! loopback port, with the shipped allowlist provider.

use serde_json::json;
use warden_client::{CallContext, Client, Error, InteractionMode, ToolCall, Verdict};
use warden_host::server::{ServeOptions, Server};

const AGENT: &str = "client-agent-token-0123456789";
const INTERNAL: &str = "client-internal-token-0123456789";
const ADMIN: &str = "client-admin-token-0123456789";

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
                "{extra}guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {{allowed_tools: [bash], denied_tools: [rm]}}\nserver:\n  watch_config: false\n  tokens:\n    - {{name: harness, role: agent, token: {AGENT}}}\n    - {{name: gateway, role: internal, token: {INTERNAL}}}\n    - {{name: ops, role: admin, token: {ADMIN}}}\n"
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

#[tokio::test]
async fn a_paused_call_is_listed_and_resumed() {
    use warden_client::{
        AiMessage, CallStatus, DecisionKind, ModelResponse, ModelToolCall, RequestDecision,
        ResumeRequest, RunState,
    };
    let daemon = Running::start_with("hitl_approval:\n  tools: [bash]\n").await;
    let client = daemon.client(AGENT);
    let response = ModelResponse {
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
    };
    let outcome = client
        .submit_tool_calls("thread/1", "run-1", &response)
        .await
        .unwrap();
    assert_eq!(outcome.run_state, RunState::WaitingForInput);
    let listed = client.approvals("thread/1", false).await.unwrap();
    assert_eq!(listed.len(), 1);
    let approval = outcome.approval_id.unwrap();
    let answer = ResumeRequest::decisions(vec![RequestDecision {
        request_id: outcome.requests[0].request_id.clone(),
        decision: DecisionKind::Approve,
        args: None,
        message: None,
    }]);
    let resolution = client.resume("thread/1", &approval, &answer).await.unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Run);
    let err = client
        .resume("thread/1", &approval, &answer)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));
}
