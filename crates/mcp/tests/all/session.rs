//! The session's behaviour, message by message, with a judge that decides by
//! tool name (the real pipeline behind it is tested in crates/cli).

use std::sync::Mutex;

use serde_json::{Value, json};
use warden_mcp::{ASK_UNAVAILABLE, JUDGE_UNAVAILABLE, Judge, Judgement, McpCall, Route, Session};
use warden_types::decision::{Reason, Verdict};

/// Denies and asks by tool name, allows the rest; records what it judged.
#[derive(Default)]
struct ByName {
    deny: Vec<&'static str>,
    ask: Vec<&'static str>,
    unavailable: bool,
    judged: Mutex<Vec<(String, Value, Option<Value>)>>,
}

impl Judge for ByName {
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String> {
        self.judged.lock().unwrap().push((
            call.tool_name.clone(),
            call.arguments.clone(),
            call.client_info.cloned(),
        ));
        if self.unavailable {
            return Err("connection refused".into());
        }
        let name = call.tool_name.as_str();
        let (verdict, reasons) = if self.deny.contains(&name) {
            (
                Verdict::Deny,
                vec![Reason::new(
                    "perm.rule_deny",
                    format!("denied by rule {name}"),
                )],
            )
        } else if self.ask.contains(&name) {
            (Verdict::Ask, vec![Reason::new("perm.rule_ask", "asks")])
        } else {
            (Verdict::Allow, vec![])
        };
        Ok(Judgement {
            verdict,
            reasons,
            decision_id: Some("d-1".into()),
            approval_id: None,
            attestable: false,
            console_url: None,
        })
    }

    fn offered(&self, tool_name: &str) -> bool {
        !self.deny.contains(&tool_name)
    }
}

fn denying(tools: &[&'static str]) -> ByName {
    ByName {
        deny: tools.to_vec(),
        ..ByName::default()
    }
}

fn call(id: Value, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

fn to_client(route: Route) -> Value {
    match route {
        Route::Client(line) => serde_json::from_str(&line).unwrap(),
        other => panic!("expected a line to the client, got {other:?}"),
    }
}

fn to_server(route: Route) -> Value {
    match route {
        Route::Server(line) => serde_json::from_str(&line).unwrap(),
        other => panic!("expected a line to the server, got {other:?}"),
    }
}

#[test]
fn an_allowed_call_is_forwarded_as_judged_under_the_servers_prefix() {
    let judge = ByName::default();
    let session = Session::new("fs");
    let out =
        to_server(session.from_client(&call(json!(7), "read_file", json!({"path": "/a"})), &judge));
    assert_eq!(out["params"]["name"], "read_file");
    assert_eq!(out["id"], 7);
    let judged = judge.judged.lock().unwrap();
    assert_eq!(judged[0].0, "mcp__fs__read_file");
    assert_eq!(judged[0].1, json!({"path": "/a"}));
}

/// A number past 64 bits, keys out of order, an escape, a vendor field.
const EXACT: &str = r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"z": 123456789012345678901234567890, "a": 1.50, "b": "\u00e9"}, "x-vendor": [18446744073709551616]}}"#;

#[test]
fn an_allowed_call_goes_to_the_server_byte_for_byte() {
    let route = Session::new("raw").from_client(EXACT, &ByName::default());
    assert_eq!(route, Route::Server(EXACT.to_string()));
}

#[test]
fn a_message_warden_does_not_judge_goes_to_the_server_byte_for_byte() {
    let line = r#"{"method": "vendor/x", "jsonrpc": "2.0", "id": 4, "params": {"n": 123456789012345678901234567890}}"#;
    let route = Session::new("raw").from_client(line, &ByName::default());
    assert_eq!(route, Route::Server(line.to_string()));
}

#[test]
fn a_tools_call_naming_a_key_twice_is_an_invalid_request_never_forwarded() {
    let judge = ByName::default();
    let line = r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "read", "name": "write"}}"#;
    let out = to_client(Session::new("fs").from_client(line, &judge));
    assert_eq!(out["error"]["code"], -32600);
    assert!(
        out["error"]["message"].as_str().unwrap().contains("'name'"),
        "{out}"
    );
    assert!(judge.judged.lock().unwrap().is_empty());
}

#[test]
fn a_denied_call_is_answered_in_band_as_an_error_result_and_never_forwarded() {
    let judge = denying(&["mcp__fs__write_file"]);
    let session = Session::new("fs");
    let out = to_client(session.from_client(&call(json!("a"), "write_file", json!({})), &judge));
    assert_eq!(out["id"], "a");
    assert!(
        out.get("error").is_none(),
        "a denial is not a JSON-RPC error: {out}"
    );
    let result = &out["result"];
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("perm.rule_deny") && text.contains("denied by rule"),
        "{text}"
    );
    assert_eq!(result["structuredContent"]["code"], "perm.rule_deny");
    assert_eq!(result["structuredContent"]["decision_id"], "d-1");
    assert_eq!(
        result["structuredContent"]["reasons"][0]["code"],
        "perm.rule_deny"
    );
}

#[test]
fn a_denial_for_a_legacy_client_carries_no_result_type_and_a_modern_one_does() {
    let judge = denying(&["mcp__fs__w"]);
    let session = Session::new("fs");
    let legacy = to_client(session.from_client(&call(json!(1), "w", json!({})), &judge));
    assert!(legacy["result"].get("resultType").is_none());
    let modern = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "w",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let modern = to_client(session.from_client(&modern.to_string(), &judge));
    assert_eq!(modern["result"]["resultType"], "complete");
}

#[test]
fn a_denial_for_a_tool_with_an_output_schema_keeps_the_decision_in_meta() {
    let judge = denying(&["mcp__fs__w"]);
    let session = Session::new("fs");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    to_server(session.from_client(&list, &judge));
    let tools = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "w", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]}});
    session.from_server(&tools.to_string(), &judge);
    let out = to_client(session.from_client(&call(json!(2), "w", json!({})), &judge));
    assert!(out["result"].get("structuredContent").is_none(), "{out}");
    assert_eq!(
        out["result"]["_meta"]["dev.warden/decision"]["code"],
        "perm.rule_deny"
    );
}

#[test]
fn an_ask_is_denied_naming_ask_unavailable_and_the_ask_reason() {
    let judge = ByName {
        ask: vec!["mcp__fs__w"],
        ..ByName::default()
    };
    let session = Session::new("fs");
    let out = to_client(session.from_client(&call(json!(1), "w", json!({})), &judge));
    let details = &out["result"]["structuredContent"];
    assert_eq!(details["code"], ASK_UNAVAILABLE);
    assert_eq!(details["reasons"][1]["code"], "perm.rule_ask");
}

#[test]
fn a_call_warden_cannot_judge_is_denied_in_band() {
    let judge = ByName {
        unavailable: true,
        ..ByName::default()
    };
    let session = Session::new("fs");
    let out = to_client(session.from_client(&call(json!(1), "r", json!({})), &judge));
    assert_eq!(out["result"]["isError"], true);
    assert_eq!(
        out["result"]["structuredContent"]["code"],
        JUDGE_UNAVAILABLE
    );
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_is_not_forwarded() {
    let judge = ByName::default();
    // Python's parser reads NaN; Warden's does not: the server must not see it.
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"n":NaN}}}"#;
    let out = to_client(Session::new("fs").from_client(line, &judge));
    assert_eq!(out["error"]["code"], -32700);
    assert_eq!(out["id"], Value::Null);
    assert!(judge.judged.lock().unwrap().is_empty());
}

#[test]
fn a_batch_is_an_invalid_request_and_is_not_forwarded() {
    let judge = ByName::default();
    let batch = format!("[{}]", call(json!(1), "w", json!({})));
    let out = to_client(Session::new("fs").from_client(&batch, &judge));
    assert_eq!(out["error"]["code"], -32600);
}

#[test]
fn a_request_whose_id_is_not_a_string_or_number_is_an_invalid_request() {
    let judge = ByName::default();
    let out =
        to_client(Session::new("fs").from_client(&call(json!({"x": 1}), "w", json!({})), &judge));
    assert_eq!(out["error"]["code"], -32600);
}

#[test]
fn a_tools_call_without_an_id_is_dropped() {
    let judge = ByName::default();
    let line =
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "w"}}).to_string();
    assert!(matches!(
        Session::new("fs").from_client(&line, &judge),
        Route::Drop(_)
    ));
    assert!(judge.judged.lock().unwrap().is_empty());
}

#[test]
fn a_tools_call_whose_params_do_not_read_gets_invalid_params() {
    let judge = ByName::default();
    let line =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}});
    let out = to_client(Session::new("fs").from_client(&line.to_string(), &judge));
    assert_eq!(out["error"]["code"], -32602);
    assert_eq!(out["id"], 3);
}

#[test]
fn unknown_fields_of_a_call_survive_the_forward() {
    let judge = ByName::default();
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "x-envelope": true,
        "params": {"name": "r", "arguments": {"a": 1.5}, "task": {"ttl": 5}, "x-param": [1]}});
    let out = to_server(Session::new("fs").from_client(&line.to_string(), &judge));
    assert_eq!(out, line);
}

#[test]
fn other_client_messages_are_forwarded_whole() {
    let judge = ByName::default();
    let line = json!({"jsonrpc": "2.0", "id": 18446744073709551615u64, "method": "resources/read",
        "params": {"uri": "file:///a", "x-vendor": {}}});
    let out = to_server(Session::new("fs").from_client(&line.to_string(), &judge));
    assert_eq!(out, line);
}

#[test]
fn a_server_request_gets_an_id_of_wardens_and_the_answer_gets_the_servers_back() {
    let judge = ByName::default();
    let session = Session::new("fs");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"});
    let relayed = to_client(session.from_server(&request.to_string(), &judge));
    let ours = relayed["id"].as_str().unwrap().to_string();
    assert!(ours.starts_with("warden-"), "{ours}");
    let answer = json!({"jsonrpc": "2.0", "id": ours, "result": {"roots": []}});
    let back = to_server(session.from_client(&answer.to_string(), &judge));
    assert_eq!(back["id"], 1);
    // Answered once: a second answer has nowhere to go.
    assert!(matches!(
        session.from_client(&answer.to_string(), &judge),
        Route::Drop(_)
    ));
}

#[test]
fn a_client_error_response_with_a_null_id_is_dropped_not_answered() {
    let judge = ByName::default();
    let answer =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}});
    assert!(matches!(
        Session::new("fs").from_client(&answer.to_string(), &judge),
        Route::Drop(_)
    ));
}

#[test]
fn a_client_response_to_no_relayed_request_is_dropped() {
    let judge = ByName::default();
    let answer = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
    assert!(matches!(
        Session::new("fs").from_client(&answer.to_string(), &judge),
        Route::Drop(_)
    ));
}

#[test]
fn a_tools_list_answer_loses_the_tools_denied_by_name_and_keeps_the_rest_in_order() {
    let judge = denying(&["mcp__fs__write_file"]);
    let session = Session::new("fs");
    to_server(session.from_client(
        &json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}).to_string(),
        &judge,
    ));
    let tools = json!({"jsonrpc": "2.0", "id": "l", "result": {"nextCursor": "c", "tools": [
        {"name": "read_file", "execution": {"taskSupport": "forbidden"}},
        {"name": "write_file"},
        {"name": "list_directory"}]}});
    let out = to_client(session.from_server(&tools.to_string(), &judge));
    let names: Vec<&str> = out["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "list_directory"]);
    assert_eq!(out["result"]["nextCursor"], "c");
    assert_eq!(
        out["result"]["tools"][0]["execution"]["taskSupport"],
        "forbidden"
    );
}

#[test]
fn an_answer_with_tools_to_another_request_is_not_filtered() {
    let judge = denying(&["mcp__fs__w"]);
    let line = json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": [{"name": "w"}]}}).to_string();
    assert_eq!(
        Session::new("fs").from_server(&line, &judge),
        Route::Client(line)
    );
}

#[test]
fn an_unreadable_server_line_reaches_the_client_as_it_came() {
    let judge = ByName::default();
    let line = "this is not json";
    assert_eq!(
        Session::new("fs").from_server(line, &judge),
        Route::Client(line.into())
    );
}

#[test]
fn the_clients_info_reaches_the_judge_as_a_claim() {
    let judge = ByName::default();
    let session = Session::new("fs");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2"}}});
    to_server(session.from_client(&init.to_string(), &judge));
    to_server(session.from_client(&call(json!(1), "r", json!({})), &judge));
    assert_eq!(
        judge.judged.lock().unwrap()[0].2,
        Some(json!({"name": "claude-code", "version": "2"}))
    );
}

#[test]
fn a_clients_claim_for_the_log_loses_control_characters_and_is_cut_to_the_daemons_limit() {
    let info = json!({"name": format!("evil\n{}", "é".repeat(300)), "version": "1"});
    let call = McpCall {
        tool_name: "mcp__py__add".into(),
        arguments: json!({}),
        client_info: Some(&info),
        server: "py",
        traceparent: None,
    };
    let claim = call.client_claim().unwrap();
    assert!(claim.starts_with("evilé"), "{claim}");
    assert!(claim.len() <= warden_mcp::MAX_CLAIM_BYTES);
    assert!(!claim.chars().any(char::is_control));
}

// 2026-07-28: `list_changed` rides on `subscriptions/listen` streams.

fn listen(id: u64, tools: bool) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": tools, "resourceSubscriptions": ["file:///a"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    .to_string()
}

fn acknowledged(id: u64, notifications: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": notifications}})
    .to_string()
}

/// A session that announces list changes, with the listen stream `id` open.
fn listening(id: u64) -> (Session, ByName) {
    let judge = ByName::default();
    let session = Session::new("py").announcing_list_changes();
    assert_eq!(
        session.from_client(&listen(id, true), &judge),
        Route::Server(listen(id, true))
    );
    (session, judge)
}

#[test]
fn a_listen_stream_that_asked_for_tool_changes_is_told_of_a_hot_swap_under_its_subscription_id() {
    let (session, _) = listening(4);
    let lines: Vec<Value> = session
        .list_changes()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 4}}})
        ]
    );
}

#[test]
fn the_servers_acknowledgment_says_warden_honors_tool_changes_the_server_left_out() {
    let (session, judge) = listening(4);
    let ack = to_client(session.from_server(
        &acknowledged(4, json!({"resourceSubscriptions": ["file:///a"]})),
        &judge,
    ));
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///a"], "toolsListChanged": true})
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        4
    );
}

#[test]
fn an_acknowledgment_of_a_stream_that_did_not_ask_for_tool_changes_is_relayed_as_it_came() {
    let judge = ByName::default();
    let session = Session::new("py").announcing_list_changes();
    session.from_client(&listen(5, false), &judge);
    let ack = acknowledged(5, json!({}));
    assert_eq!(session.from_server(&ack, &judge), Route::Client(ack));
    assert!(session.list_changes().is_empty());
}

#[test]
fn a_listen_stream_the_server_ended_or_the_client_cancelled_is_no_longer_told() {
    let (session, judge) = listening(4);
    let end = json!({"jsonrpc": "2.0", "id": 4, "result": {}}).to_string();
    assert_eq!(session.from_server(&end, &judge), Route::Client(end));
    assert!(session.list_changes().is_empty());

    let (session, judge) = listening(6);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 6}})
    .to_string();
    assert_eq!(session.from_client(&cancel, &judge), Route::Server(cancel));
    assert!(session.list_changes().is_empty());
}

#[test]
fn a_session_that_does_not_announce_list_changes_tells_a_listen_stream_nothing() {
    let judge = ByName::default();
    let session = Session::new("py");
    session.from_client(&listen(4, true), &judge);
    assert!(session.list_changes().is_empty());
}
