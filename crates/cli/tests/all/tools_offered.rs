//! `POST /v1/tools/offered`: which tools a gateway may list, against the real
//! daemon: the native rules that deny a tool by its name alone decide.

use crate::common::daemon::*;
use serde_json::{Value, json};

fn denying_daemon() -> Daemon {
    Daemon::start(&format!(
        "permissions:\n  mode: full_auto\n  deny: [\"mcp__fs__write_file\", \"mcp__db\", \"Write(/etc/**)\"]\n{}",
        server_block(false)
    ))
}

#[tokio::test]
async fn offered_splits_off_the_tools_a_rule_denies_by_name_in_the_order_given() {
    let daemon = denying_daemon();
    let tools = json!({"tools": ["mcp__fs__read_file", "mcp__fs__write_file", "mcp__db__drop", "mcp__fs__list", "Write"]});
    let (status, answer) = daemon.post("/v1/tools/offered", Some(AGENT), &tools).await;
    assert_eq!(status, 200, "{answer}");
    // `Write(/etc/**)` depends on the arguments: Write is offered, and judged per call.
    assert_eq!(
        answer["offered"],
        json!(["mcp__fs__read_file", "mcp__fs__list", "Write"])
    );
    assert_eq!(
        answer["denied_by_name"],
        json!(["mcp__fs__write_file", "mcp__db__drop"])
    );
    let doc: Value = serde_json::from_str(warden_server::OPENAPI).unwrap();
    assert_matches_schema(&doc, "OfferAnswer", &answer);
}

#[tokio::test]
async fn offered_needs_an_agents_token() {
    let daemon = denying_daemon();
    let tools = json!({"tools": ["mcp__fs__read_file"]});
    let (status, _) = daemon.post("/v1/tools/offered", None, &tools).await;
    assert_eq!(status, 401);
    let (status, _) = daemon
        .post("/v1/tools/offered", Some(APPROVER), &tools)
        .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn offered_refuses_a_body_that_is_not_a_list_of_names_saying_where() {
    let daemon = denying_daemon();
    let (status, answer) = daemon
        .post(
            "/v1/tools/offered",
            Some(AGENT),
            &json!({"tools": ["a", 5]}),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_request");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools[1]"),
        "{answer}"
    );
    let too_many: Vec<String> = (0..4097).map(|i| format!("t{i}")).collect();
    let (status, answer) = daemon
        .post(
            "/v1/tools/offered",
            Some(AGENT),
            &json!({"tools": too_many}),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4096"),
        "{answer}"
    );
}
