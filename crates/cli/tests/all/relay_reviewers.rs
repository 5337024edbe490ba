//! Whom a relay may name as the human who answered, over real HTTP: a name
//! that reads as what it is (printable, not blank, no bidirectional or other
//! invisible characters), one its `reviewers:` grants, and never a configured
//! token's name (nor one that looks like it) unless granted by that very name.
//! The answer, the journal, the decision log and the console tell the claimed
//! name and the relay apart.

use crate::common::daemon::*;
use crate::console;
use serde_json::{Value, json};
use warden_approval::{ApprovalStore, Durability, JournalFilter, SqliteApprovalStore};

/// The test daemon, its relay token (`gateway-relay`) given `reviewers`
/// (`None`: the deprecated form without the option).
fn daemon(reviewers: Option<&str>) -> Daemon {
    let server = match reviewers {
        None => server_block(false),
        Some(list) => {
            server_block(false).replace("relay: true,", &format!("relay: true, reviewers: {list},"))
        }
    };
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n{}{server}",
        allowlist("allowlist", &["bash"], &[]),
    ))
}

/// Pauses a `bash` call of the relay's own principal on `thread`.
async fn pause(daemon: &Daemon, thread: &str) -> Value {
    let body = json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}}]}});
    let (status, outcome) = daemon
        .post(
            &format!("/v1/threads/{thread}/runs/r-1/tool-calls"),
            Some(RELAY),
            &body,
        )
        .await;
    assert_eq!(
        outcome["run_state"], "waiting_for_input",
        "{status} {outcome}"
    );
    outcome
}

/// The relay answers `thread`'s pause naming `reviewer`: the status and body.
async fn relay_naming(daemon: &Daemon, thread: &str, reviewer: &str) -> (u16, Value) {
    let outcome = pause(daemon, thread).await;
    let path = format!(
        "/v1/threads/{thread}/approvals/{}/resume",
        outcome["approval_id"].as_str().unwrap()
    );
    let answer = json!({"reviewer": reviewer, "decisions": [
        {"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}]});
    daemon.post(&path, Some(RELAY), &answer).await
}

/// The relay names each of `names`, on a thread of its own: each answer is
/// `status` with the error `code`; the bodies, for more checks.
async fn assert_each_refused(
    daemon: &Daemon,
    names: &[&str],
    status: u16,
    code: &str,
) -> Vec<Value> {
    let mut bodies = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (got, body) = relay_naming(daemon, &format!("refused-{i}"), name).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{name:?}: {body}"
        );
        bodies.push(body);
    }
    bodies
}

#[tokio::test]
async fn a_relay_cannot_name_a_blank_or_disguised_reviewer() {
    let daemon = daemon(None);
    let names: [&str; 8] = [
        " ",
        "alice\u{202e}",
        "bob\u{200b}",
        "\u{2066}bob",
        " bob",
        "bob\u{a0}",
        "bob\tsmith",
        &"b".repeat(129),
    ];
    for body in assert_each_refused(&daemon, &names, 422, "invalid_decision").await {
        assert_eq!(body["error"]["details"]["field"], "reviewer", "{body}");
    }
}

#[tokio::test]
async fn a_relay_cannot_name_a_configured_token_or_a_lookalike() {
    let daemon = daemon(None);
    // An approver and lookalikes (upper case, a Cyrillic а, a capital I for
    // the l), another agent, the relay itself.
    let names = [
        "alice",
        "ALICE",
        "\u{430}lice",
        "aIice",
        "harness",
        "gateway-relay",
    ];
    assert_each_refused(&daemon, &names, 403, "reviewer_not_granted").await;
}

#[tokio::test]
async fn a_relay_without_reviewers_still_names_anyone_else_and_is_warned_about() {
    let daemon = daemon(None);
    let (status, body) = relay_naming(&daemon, "t-1", "bob").await;
    assert_eq!(status, 200, "{body}");
    let stderr = daemon.stderr();
    assert!(
        stderr.contains("server.tokens[5] ('gateway-relay') relays without `reviewers:`")
            && stderr.contains("deprecated"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_relay_names_only_the_reviewers_it_is_granted() {
    let daemon = daemon(Some(r#"["*@example.com", carol]"#));
    for (i, name) in ["bob@example.com", "Bob@Example.COM", "carol"]
        .into_iter()
        .enumerate()
    {
        let (status, body) = relay_naming(&daemon, &format!("ok-{i}"), name).await;
        assert_eq!(status, 200, "{name}: {body}");
    }
    let others = ["bob@example.org", "dave", "bob@example.com.evil"];
    assert_each_refused(&daemon, &others, 403, "reviewer_not_granted").await;
    assert!(
        !daemon.stderr().contains("relays without `reviewers:`"),
        "{}",
        daemon.stderr()
    );
}

#[tokio::test]
async fn a_pattern_never_grants_a_configured_name_and_the_name_itself_does() {
    let everyone = daemon(Some(r#"["*"]"#));
    assert_each_refused(&everyone, &["alice"], 403, "reviewer_not_granted").await;

    let alice = daemon(Some("[alice]"));
    let (status, body) = relay_naming(&alice, "t-1", "alice").await;
    assert_eq!(status, 200, "granted by name: {body}");
}

#[tokio::test]
async fn the_answer_the_journal_the_log_and_the_console_tell_the_claimed_name_from_the_relay() {
    let mut daemon = daemon(Some(r#"["*@example.com"]"#));
    let (status, resolution) = relay_naming(&daemon, "t-1", "bob@example.com").await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(
        (&resolution["reviewer"], &resolution["relayed_by"]),
        (&json!("bob@example.com"), &json!("gateway-relay"))
    );
    assert_eq!(
        resolution["calls"][0]["reasons"][0]["message"],
        "approved by \"bob@example.com\", relayed by gateway-relay"
    );

    let store =
        SqliteApprovalStore::open(&daemon.data_file("approvals.sqlite3"), Durability::Normal)
            .unwrap();
    let resumed = store
        .events(&JournalFilter::default())
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(
        (resumed.reviewer.as_deref(), resumed.relayed_by.as_deref()),
        (Some("bob@example.com"), Some("gateway-relay"))
    );

    let approval_id = resolution["approval_id"].as_str().unwrap().to_string();
    let session = console::sign_in(&daemon).await;
    let (status, view) = console::status_and_body(
        console::console(
            &daemon,
            reqwest::Method::GET,
            &format!("/console/api/approvals/{approval_id}"),
            &session,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(
        (
            &view["resolution"]["reviewer"],
            &view["resolution"]["relayed_by"]
        ),
        (&json!("bob@example.com"), &json!("gateway-relay")),
        "{view}"
    );

    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    let answered = log
        .iter()
        .find(|l| l["source"] == "resume" && l["human_decision"] == "approve")
        .expect("the resume is logged");
    assert_eq!(
        (&answered["reviewer"], &answered["relayed_by"]),
        (&json!("bob@example.com"), &json!("gateway-relay"))
    );
}

/// What `warden serve` says when the only token is `{token}` (its fields,
/// without the braces) and it refuses to start.
fn refused_token(fields: &str) -> String {
    let (code, stderr) = serve_refused(
        &format!("server:\n  tokens:\n    - {{{fields}, token: {AGENT}}}\n"),
        |_| {},
    );
    assert_eq!(code, Some(2), "{fields}: {stderr}");
    stderr
}

#[test]
fn reviewers_on_a_token_that_does_not_relay_stop_the_daemon_from_starting() {
    let stderr = refused_token("name: harness, role: agent, reviewers: [bob]");
    assert!(
        stderr.contains("server.tokens[0].reviewers") && stderr.contains("relay: true"),
        "{stderr}"
    );
}

#[test]
fn a_blank_or_disguised_reviewers_entry_stops_the_daemon_from_starting() {
    for entry in ["' '", "\"bob\\u202e\""] {
        let stderr = refused_token(&format!(
            "name: gw, role: agent, relay: true, reviewers: [carol, {entry}]"
        ));
        assert!(
            stderr.contains("server.tokens[0].reviewers[1]"),
            "{entry}: {stderr}"
        );
    }
}
