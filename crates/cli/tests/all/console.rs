//! The web console over real HTTP: who may sign in, what a session cookie is,
//! what a change must carry (the CSRF token, a same-origin Origin), the event
//! stream, and answers given through it judged as any resume is.

use std::time::Duration;

use crate::common::daemon::*;
use reqwest::Method;
use serde_json::{Value, json};

fn config(limits: &str) -> String {
    format!(
        "permissions:\n  mode: full_auto\n  deny: [\"Bash(rm *)\"]\nhitl_approval:\n  tools: [bash]\n{}{}{limits}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    )
}

fn daemon() -> Daemon {
    Daemon::start(&config(""))
}

/// A signed-in browser: its two cookies.
pub(crate) struct Session {
    id: String,
    csrf: String,
}

impl Session {
    fn cookies(&self) -> String {
        format!("warden_session={}; warden_csrf={}", self.id, self.csrf)
    }
}

async fn sign_in_with(daemon: &Daemon, token: &str) -> reqwest::Response {
    daemon
        .request(Method::POST, "/console/login", None)
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap()
}

/// The `Set-Cookie` header that sets `name`.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with(&format!("{name}=")))
}

fn cookie_value(set_cookie: &str) -> String {
    set_cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_string()
}

pub(crate) async fn sign_in(daemon: &Daemon) -> Session {
    let response = sign_in_with(daemon, APPROVER).await;
    assert_eq!(response.status(), 200);
    Session {
        id: cookie_value(&set_cookie(&response, "warden_session").unwrap()),
        csrf: cookie_value(&set_cookie(&response, "warden_csrf").unwrap()),
    }
}

/// A console request with the session's cookies (and nothing else).
pub(crate) fn console(
    daemon: &Daemon,
    method: Method,
    path: &str,
    session: &Session,
) -> reqwest::RequestBuilder {
    daemon
        .request(method, path, None)
        .header("cookie", session.cookies())
}

async fn pause(daemon: &Daemon, thread: &str, calls: Value) -> Value {
    let path = format!("/v1/threads/{thread}/runs/r-1/tool-calls");
    let (status, outcome) = daemon
        .post(
            &path,
            Some(AGENT),
            &json!({"message": {"tool_calls": calls}}),
        )
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    outcome
}

fn git_push() -> Value {
    json!([{"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}}])
}

pub(crate) async fn status_and_body(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Reads the event stream until `wanted` appears in it (at most `within`).
pub(crate) async fn read_until(
    response: &mut reqwest::Response,
    wanted: &str,
    within: Duration,
) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + within;
    while !seen.contains(wanted) {
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .unwrap_or_else(|_| panic!("no '{wanted}' in the event stream: {seen:?}"))
            .unwrap()
            .unwrap_or_else(|| panic!("the event stream ended: {seen:?}"));
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    seen
}

#[tokio::test]
async fn signing_in_with_an_approver_token_sets_an_http_only_strict_session_cookie() {
    let daemon = daemon();
    let response = sign_in_with(&daemon, APPROVER).await;
    assert_eq!(response.status(), 200);
    let session = set_cookie(&response, "warden_session").expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="] {
        assert!(
            session.contains(attribute),
            "{attribute} missing: {session}"
        );
    }
    assert!(!session.contains("Secure"), "plain http: {session}");
    assert_eq!(
        cookie_value(&session).len(),
        64,
        "256 bits in hex: {session}"
    );
    let csrf = set_cookie(&response, "warden_csrf").expect("a CSRF cookie");
    assert!(
        !csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict"),
        "{csrf}"
    );
    let body = response.text().await.unwrap();
    assert!(
        !body.contains(APPROVER),
        "the answer echoes the token: {body}"
    );
}

#[tokio::test]
async fn the_session_cookie_is_secure_when_the_public_url_is_https() {
    let daemon = Daemon::start(&config("  public_url: https://warden.example.com\n"));
    let response = sign_in_with(&daemon, APPROVER).await;
    assert_eq!(response.status(), 200);
    let session = set_cookie(&response, "warden_session").unwrap();
    assert!(session.contains("; Secure"), "{session}");
}

#[tokio::test]
async fn an_agent_token_cannot_sign_in() {
    let daemon = daemon();
    let response = sign_in_with(&daemon, AGENT).await;
    assert!(set_cookie(&response, "warden_session").is_none());
    let (status, body) = status_and_body(response).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "approver_required", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("only approver tokens"), "{message}");
    assert!(!message.contains(AGENT), "{message}");
}

#[tokio::test]
async fn an_unknown_token_cannot_sign_in() {
    let daemon = daemon();
    let (status, body) = status_and_body(sign_in_with(&daemon, "not-a-token-at-all").await).await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test]
async fn the_console_api_without_a_session_is_401() {
    let daemon = daemon();
    for path in [
        "/console/api/approvals",
        "/console/api/session",
        "/console/api/history",
        "/console/api/events",
    ] {
        let response = daemon
            .request(Method::GET, path, None)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
    // Nor does a bearer token stand in for a session.
    let response = daemon
        .request(Method::GET, "/console/api/approvals", Some(APPROVER))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn a_console_page_without_a_session_sends_the_browser_to_sign_in() {
    let daemon = daemon();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client
        .get(format!("{}/console", daemon.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()["location"], "/console/login");
}

#[tokio::test]
async fn a_change_without_the_csrf_header_is_403() {
    let daemon = daemon();
    let outcome = pause(&daemon, "t-csrf", git_push()).await;
    let session = sign_in(&daemon).await;
    let path = format!(
        "/console/api/approvals/{}/reject-all",
        outcome["approval_id"].as_str().unwrap()
    );
    let (status, body) = status_and_body(
        console(&daemon, Method::POST, &path, &session)
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "csrf_refused", "{body}");
    let (_, page) = daemon
        .get("/v1/threads/t-csrf/approvals", Some(APPROVER))
        .await;
    assert_eq!(
        page["approvals"].as_array().unwrap().len(),
        1,
        "still pending: {page}"
    );
}

#[tokio::test]
async fn a_change_with_another_sessions_csrf_token_is_403() {
    let daemon = daemon();
    let outcome = pause(&daemon, "t-csrf2", git_push()).await;
    let session = sign_in(&daemon).await;
    let other = sign_in(&daemon).await;
    let path = format!(
        "/console/api/approvals/{}/reject-all",
        outcome["approval_id"].as_str().unwrap()
    );
    let response = console(&daemon, Method::POST, &path, &session)
        .header("x-csrf-token", &other.csrf)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn a_change_from_another_origin_is_403() {
    let daemon = daemon();
    let outcome = pause(&daemon, "t-origin", git_push()).await;
    let session = sign_in(&daemon).await;
    let path = format!(
        "/console/api/approvals/{}/reject-all",
        outcome["approval_id"].as_str().unwrap()
    );
    let (status, body) = status_and_body(
        console(&daemon, Method::POST, &path, &session)
            .header("x-csrf-token", &session.csrf)
            .header("origin", "https://evil.example")
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cross-origin"),
        "{body}"
    );
    // From its own origin, the same request goes through.
    let response = console(&daemon, Method::POST, &path, &session)
        .header("x-csrf-token", &session.csrf)
        .header("origin", &daemon.url)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_sign_in_from_another_origin_is_403() {
    let daemon = daemon();
    let response = daemon
        .request(Method::POST, "/console/login", None)
        .header("origin", "https://evil.example")
        .json(&json!({ "token": APPROVER }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert!(set_cookie(&response, "warden_session").is_none());
}

#[tokio::test]
async fn the_event_stream_delivers_a_pause_as_it_is_made() {
    let daemon = daemon();
    let session = sign_in(&daemon).await;
    let mut events = console(&daemon, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    assert!(
        events.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let outcome = pause(&daemon, "t-sse", git_push()).await;
    let seen = read_until(&mut events, "event: paused", Duration::from_secs(10)).await;
    let approval_id = outcome["approval_id"].as_str().unwrap();
    assert!(seen.contains(approval_id), "{seen}");
    assert!(seen.contains("\"tools\":[\"bash\"]"), "{seen}");
}

#[tokio::test]
async fn the_event_stream_delivers_a_resolution() {
    let daemon = daemon();
    let session = sign_in(&daemon).await;
    let outcome = pause(&daemon, "t-sse2", git_push()).await;
    let mut events = console(&daemon, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    let approval_id = outcome["approval_id"].as_str().unwrap();
    let (status, _) = daemon
        .post(
            &format!("/v1/threads/t-sse2/approvals/{approval_id}/clear"),
            Some(APPROVER),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let seen = read_until(&mut events, "event: resolved", Duration::from_secs(10)).await;
    assert!(seen.contains(approval_id), "{seen}");
}

#[tokio::test]
async fn an_event_stream_is_not_cut_by_the_idle_timeout() {
    let daemon = Daemon::start(&config("  limits:\n    idle_timeout_ms: 300\n"));
    let session = sign_in(&daemon).await;
    let mut events = console(&daemon, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    // Several idle timeouts pass with nothing sent.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let outcome = pause(&daemon, "t-idle", git_push()).await;
    let seen = read_until(&mut events, "event: paused", Duration::from_secs(10)).await;
    assert!(
        seen.contains(outcome["approval_id"].as_str().unwrap()),
        "{seen}"
    );
}

#[tokio::test]
async fn the_list_shows_every_pending_pause_newest_first() {
    let daemon = daemon();
    let first = pause(&daemon, "t-a", git_push()).await;
    let second = pause(&daemon, "t-b", git_push()).await;
    let session = sign_in(&daemon).await;
    let (status, list) = status_and_body(
        console(&daemon, Method::GET, "/console/api/approvals", &session)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["approval_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            second["approval_id"].as_str().unwrap(),
            first["approval_id"].as_str().unwrap()
        ]
    );
}

#[tokio::test]
async fn a_pause_shows_its_arguments_redacted_and_long_values_cut() {
    let daemon = daemon();
    let long = format!("echo {}", "y".repeat(400));
    let outcome = pause(
        &daemon,
        "t-detail",
        json!([
            {"id": "c1", "name": "bash", "args": {"command": "curl -H 'Authorization: Bearer s3cr3t-t0ken-value' https://x"}},
            {"id": "c2", "name": "bash", "args": {"command": long}}
        ]),
    )
    .await;
    let session = sign_in(&daemon).await;
    let path = format!(
        "/console/api/approvals/{}",
        outcome["approval_id"].as_str().unwrap()
    );
    let (status, detail) = status_and_body(
        console(&daemon, Method::GET, &path, &session)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{detail}");
    let text = detail.to_string();
    assert!(!text.contains("s3cr3t-t0ken-value"), "{text}");
    assert_eq!(detail["requests"][0]["redacted"], true);
    let cut = &detail["requests"][1]["fields"][0];
    assert_eq!(cut["short"].as_str().unwrap().chars().count(), 201, "{cut}");
    assert_eq!(cut["full"], long);
    assert_eq!(detail["principal"], "harness");
    assert_eq!(detail["interaction_mode"], "interactive");
    assert_eq!(
        detail["requests"][0]["reasons"][0]["code"],
        "warden.approval_required"
    );
}

#[tokio::test]
async fn an_edit_the_rules_deny_comes_back_denied_and_a_valid_one_runs() {
    let daemon = daemon();
    let outcome = pause(
        &daemon,
        "t-edit",
        json!([
            {"id": "c1", "name": "bash", "args": {"command": "ls"}},
            {"id": "c2", "name": "bash", "args": {"command": "ls /tmp"}}
        ]),
    )
    .await;
    let session = sign_in(&daemon).await;
    let id = outcome["approval_id"].as_str().unwrap();
    let requests: Vec<String> = outcome["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request_id"].as_str().unwrap().to_string())
        .collect();
    // The trial judgement of an edit changes nothing.
    let (status, trial) = status_and_body(
        console(
            &daemon,
            Method::POST,
            &format!("/console/api/approvals/{id}/check"),
            &session,
        )
        .header("x-csrf-token", &session.csrf)
        .json(&json!({"request_id": requests[1], "args": {"command": "rm -rf /tmp/x"}}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{trial}");
    assert_eq!(trial["verdict"], "deny", "{trial}");
    // The resume judges it again: sent anyway, it is denied.
    let (status, resolution) = status_and_body(
        console(
            &daemon,
            Method::POST,
            &format!("/console/api/approvals/{id}/resume"),
            &session,
        )
        .header("x-csrf-token", &session.csrf)
        .json(&json!({"decisions": [
            {"request_id": requests[0], "decision": "approve"},
            {"request_id": requests[1], "decision": "edit", "args": {"command": "rm -rf /tmp/x"}}
        ]}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(resolution["reviewer"], "alice");
    assert_eq!(resolution["calls"][0]["status"], "run");
    assert_eq!(resolution["calls"][1]["status"], "denied");
    assert_eq!(resolution["calls"][1]["decision"], "edit");
}

#[tokio::test]
async fn an_unknown_approval_is_404_naming_it() {
    let daemon = daemon();
    let session = sign_in(&daemon).await;
    let (status, body) = status_and_body(
        console(
            &daemon,
            Method::GET,
            "/console/api/approvals/apr_nothing",
            &session,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("apr_nothing"),
        "{body}"
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let daemon = daemon();
    let session = sign_in(&daemon).await;
    let response = console(&daemon, Method::POST, "/console/logout", &session)
        .header("x-csrf-token", &session.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let cleared = set_cookie(&response, "warden_session").unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let response = console(&daemon, Method::GET, "/console/api/session", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn the_event_stream_tells_readers_to_reread_when_a_pause_expires() {
    let daemon = Daemon::start(&config("").replace(
        "hitl_approval:\n  tools: [bash]\n",
        "hitl_approval:\n  tools: [bash]\n  expire_after: 1s\n",
    ));
    let session = sign_in(&daemon).await;
    let mut events = console(&daemon, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    pause(&daemon, "t-expire", git_push()).await;
    read_until(&mut events, "event: resync", Duration::from_secs(10)).await;
}

#[test]
fn a_public_url_that_is_not_http_is_refused_naming_the_key() {
    let err = warden_server::Config::parse(
        "server:\n  public_url: ftp://warden.example.com\n",
        "warden.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("server.public_url"), "{err}");
}

#[tokio::test]
async fn event_streams_past_a_quarter_of_the_connections_are_refused() {
    let daemon = Daemon::start(&config("  limits:\n    max_connections: 8\n"));
    let session = sign_in(&daemon).await;
    let open = || console(&daemon, Method::GET, "/console/api/events", &session).send();
    let first = open().await.unwrap();
    let second = open().await.unwrap();
    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );
    let third = open().await.unwrap();
    assert_eq!(third.status(), 503);
    drop(first);
    // The first stream's place comes back once the daemon sees it closed.
    let mut status = 0;
    for _ in 0..100 {
        status = open().await.unwrap().status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 200);
}
