//! Asking the client about a call that waits on an approval: mid-call under
//! `2025-11-25` (the held call, the client's answer recorded by the judge as
//! client-attested, what happens when it does not answer), by an
//! `InputRequiredResult` with sealed state under `2026-07-28`; by a form, or
//! the console's page where a human answers (URL mode).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden_mcp::{
    CLIENT_ANSWER_REFUSED, Judge, Judgement, McpCall, REQUEST_STATE_REFUSED, Route, Session,
};
use warden_types::decision::{Reason, Verdict};

const APPROVAL: &str = "apr_1";

/// Every call of `note` waits on the approval [`APPROVAL`] until a human
/// approved it (`approved`: the next call of `note` is allowed, once); the
/// client's answer settles it where `attestable`; records the answers it was
/// given.
struct PendingAsk {
    attestable: bool,
    console_url: Option<String>,
    refuse: bool,
    approved: AtomicBool,
    answers: Mutex<Vec<(String, String, bool)>>,
}

impl PendingAsk {
    fn new(attestable: bool) -> PendingAsk {
        PendingAsk {
            attestable,
            console_url: None,
            refuse: false,
            approved: AtomicBool::new(false),
            answers: Mutex::new(Vec::new()),
        }
    }

    fn answers(&self) -> Vec<(String, String, bool)> {
        self.answers.lock().unwrap().clone()
    }
}

impl Judge for PendingAsk {
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String> {
        if call.tool_name != "mcp__py__note" || self.approved.swap(false, Ordering::SeqCst) {
            return Ok(judgement(Verdict::Allow, vec![], None));
        }
        Ok(Judgement {
            attestable: self.attestable,
            console_url: self.console_url.clone(),
            ..judgement(
                Verdict::Deny,
                vec![
                    Reason::new("warden.approval_pending", "waits for apr_1"),
                    Reason::new("perm.rule_ask", "rule mcp__py__note asks for approval"),
                ],
                Some(APPROVAL),
            )
        })
    }

    fn offered(&self, _: &str) -> bool {
        true
    }

    fn attest(
        &self,
        call: &McpCall<'_>,
        approval_id: &str,
        approve: bool,
    ) -> Result<Judgement, String> {
        self.answers.lock().unwrap().push((
            call.tool_name.clone(),
            approval_id.to_string(),
            approve,
        ));
        if self.refuse {
            return Err("422: mcp.client_attested does not let an MCP client approve".into());
        }
        Ok(if approve {
            judgement(Verdict::Allow, vec![], None)
        } else {
            judgement(
                Verdict::Deny,
                vec![Reason::new(
                    "warden.approval_rejected",
                    "the MCP client declined",
                )],
                None,
            )
        })
    }
}

fn judgement(verdict: Verdict, reasons: Vec<Reason>, approval_id: Option<&str>) -> Judgement {
    Judgement {
        verdict,
        reasons,
        decision_id: Some("d-1".into()),
        approval_id: approval_id.map(str::to_string),
        attestable: false,
        console_url: None,
    }
}

fn initialize(session: &Session, judge: &dyn Judge, capabilities: Value) {
    let line = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "test", "version": "1"}}});
    assert!(matches!(
        session.from_client(&line.to_string(), judge),
        Route::Server(_)
    ));
}

const NOTE: &str = r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "note", "arguments": {"text": "ship it"}}}"#;

fn client_line(route: Route) -> Value {
    match route {
        Route::Client(line) => serde_json::from_str(&line).unwrap(),
        other => panic!("expected a line to the client, got {other:?}"),
    }
}

/// A session whose client declared form elicitation, asked about NOTE: the
/// question Warden sent.
fn asked(judge: &PendingAsk) -> (Session, Value) {
    let session = Session::new("py");
    initialize(&session, judge, json!({"elicitation": {"form": {}}}));
    let question = client_line(session.from_client(NOTE, judge));
    (session, question)
}

fn answer(question: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": question["id"], "result": result}).to_string()
}

/// The form's answer that approves: accepted, `approve` ticked.
fn approving() -> Value {
    json!({"action": "accept", "content": {"approve": true}})
}

#[test]
fn a_client_that_declared_form_elicitation_is_asked_naming_the_tool_the_reason_and_the_approval() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    assert_eq!(question["method"], "elicitation/create");
    assert!(question["id"].as_str().unwrap().starts_with("warden-"));
    let params = &question["params"];
    assert_eq!(params["mode"], "form");
    let message = params["message"].as_str().unwrap();
    for part in [
        "mcp__py__note",
        "rule mcp__py__note asks",
        "ship it",
        APPROVAL,
    ] {
        assert!(message.contains(part), "{part} not in {message}");
    }
    assert_eq!(
        params["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert_eq!(params["requestedSchema"]["required"], json!(["approve"]));
    assert_eq!(session.held(), 1);
}

#[test]
fn an_accept_that_approves_is_recorded_and_forwards_the_call_as_the_client_wrote_it() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let route = session.from_client(&answer(&question, approving()), &judge);
    assert_eq!(route, Route::Server(NOTE.to_string()));
    assert_eq!(
        judge.answers(),
        [("mcp__py__note".to_string(), APPROVAL.to_string(), true)]
    );
    assert_eq!(session.held(), 0);
}

#[test]
fn a_decline_is_recorded_and_denies_the_call_in_band() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let denial =
        client_line(session.from_client(&answer(&question, json!({"action": "decline"})), &judge));
    assert_eq!(denial["id"], 7);
    assert_eq!(denial["result"]["isError"], true);
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        "warden.approval_rejected"
    );
    assert!(!judge.answers()[0].2, "recorded as a decline");
}

#[test]
fn a_cancel_records_nothing_and_denies_naming_the_approval_a_human_can_still_answer() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let denial =
        client_line(session.from_client(&answer(&question, json!({"action": "cancel"})), &judge));
    let details = &denial["result"]["structuredContent"];
    assert_eq!(details["code"], "warden.approval_pending");
    assert_eq!(details["approval_id"], APPROVAL);
    assert!(judge.answers().is_empty());
}

#[test]
fn an_error_answer_counts_as_no_answer() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let error = json!({"jsonrpc": "2.0", "id": question["id"],
                       "error": {"code": -32601, "message": "no elicitation here"}});
    let denial = client_line(session.from_client(&error.to_string(), &judge));
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        "warden.approval_pending"
    );
    assert!(judge.answers().is_empty());
}

#[test]
fn an_answer_the_judge_refuses_to_record_denies_the_call_saying_why() {
    let judge = PendingAsk {
        refuse: true,
        ..PendingAsk::new(true)
    };
    let (session, question) = asked(&judge);
    let denial = client_line(session.from_client(&answer(&question, approving()), &judge));
    let details = &denial["result"]["structuredContent"];
    assert_eq!(details["code"], CLIENT_ANSWER_REFUSED);
    assert_eq!(details["approval_id"], APPROVAL);
}

#[test]
fn a_held_call_past_its_time_is_denied_and_the_question_withdrawn_and_a_late_answer_dropped() {
    let judge = PendingAsk::new(true);
    let session = Session::new("py").with_elicitation_timeout(Duration::from_secs(30));
    initialize(&session, &judge, json!({"elicitation": {}}));
    let question = client_line(session.from_client(NOTE, &judge));
    assert!(session.expired(Instant::now()).is_empty(), "not yet due");
    let lines = session.expired(Instant::now() + Duration::from_secs(31));
    let lines: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["method"], "notifications/cancelled");
    assert_eq!(lines[0]["params"]["requestId"], question["id"]);
    assert_eq!(lines[1]["id"], 7);
    assert_eq!(
        lines[1]["result"]["structuredContent"]["code"],
        "warden.approval_pending"
    );
    let late = session.from_client(&answer(&question, approving()), &judge);
    assert!(matches!(late, Route::Drop(_)), "{late:?}");
    assert!(judge.answers().is_empty());
}

#[test]
fn a_call_the_client_cancels_while_held_is_never_forwarded() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7, "reason": "timed out"}});
    assert!(matches!(
        session.from_client(&cancel.to_string(), &judge),
        Route::Drop(_)
    ));
    let late = session.from_client(&answer(&question, approving()), &judge);
    assert!(matches!(late, Route::Drop(_)), "{late:?}");
    assert!(judge.answers().is_empty());
}

#[test]
fn a_call_under_the_id_of_a_held_call_is_refused_and_the_held_call_kept() {
    let judge = PendingAsk::new(true);
    let (session, question) = asked(&judge);
    let again = client_line(session.from_client(NOTE, &judge));
    assert_eq!(again["id"], 7, "{again}");
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still held"),
        "{again}"
    );
    assert_eq!(session.held(), 1);
    let approved = session.from_client(&answer(&question, approving()), &judge);
    assert!(matches!(approved, Route::Server(_)), "{approved:?}");
}

#[test]
fn without_client_attested_answers_the_client_is_not_asked() {
    let judge = PendingAsk::new(false);
    let session = Session::new("py");
    initialize(&session, &judge, json!({"elicitation": {"form": {}}}));
    let denial = client_line(session.from_client(NOTE, &judge));
    assert_eq!(denial["id"], 7);
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        "warden.approval_pending"
    );
}

#[test]
fn a_client_that_declared_no_form_elicitation_is_not_asked() {
    for capabilities in [json!({}), json!({"elicitation": {"url": {}}})] {
        let judge = PendingAsk::new(true);
        let session = Session::new("py");
        initialize(&session, &judge, capabilities);
        let denial = client_line(session.from_client(NOTE, &judge));
        assert_eq!(denial["id"], 7, "{denial}");
    }
}

#[test]
fn a_2026_07_28_call_is_not_asked_mid_call() {
    let judge = PendingAsk::new(true);
    let session = Session::new("py");
    initialize(&session, &judge, json!({"elicitation": {"form": {}}}));
    let modern = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "note", "arguments": {"text": "x"},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let denial = client_line(session.from_client(&modern.to_string(), &judge));
    assert_eq!(denial["id"], 8);
}

const CONSOLE: &str = "http://127.0.0.1:8787/console/approvals/apr_1";

fn with_console(attestable: bool) -> PendingAsk {
    PendingAsk {
        console_url: Some(CONSOLE.into()),
        ..PendingAsk::new(attestable)
    }
}

#[test]
fn a_client_that_can_open_a_url_is_sent_to_the_consoles_page_for_the_approval() {
    let judge = with_console(false);
    let session = Session::new("py");
    initialize(
        &session,
        &judge,
        json!({"elicitation": {"form": {}, "url": {}}}),
    );
    let question = client_line(session.from_client(NOTE, &judge));
    let params = &question["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(params["url"], CONSOLE);
    assert_eq!(params["elicitationId"], APPROVAL);
    assert!(
        params["message"]
            .as_str()
            .unwrap()
            .contains("call the tool again")
    );
}

#[test]
fn after_the_url_the_call_is_denied_naming_the_approval_whatever_the_client_answers() {
    for result in [json!({"action": "accept"}), json!({"action": "decline"})] {
        let judge = with_console(false);
        let session = Session::new("py");
        initialize(&session, &judge, json!({"elicitation": {"url": {}}}));
        let question = client_line(session.from_client(NOTE, &judge));
        let denial = client_line(session.from_client(&answer(&question, result), &judge));
        assert_denied_waiting(&denial, 7);
        assert!(
            judge.answers().is_empty(),
            "the client's word is not recorded"
        );
    }
}

/// `denial` answers the call `id`, naming the pending [`APPROVAL`].
fn assert_denied_waiting(denial: &Value, id: u64) {
    assert_eq!(denial["id"], id);
    let details = &denial["result"]["structuredContent"];
    assert_eq!(details["code"], "warden.approval_pending");
    assert_eq!(details["approval_id"], APPROVAL);
}

#[test]
fn where_the_client_may_answer_itself_a_form_is_preferred_to_the_url() {
    let judge = with_console(true);
    let session = Session::new("py");
    initialize(
        &session,
        &judge,
        json!({"elicitation": {"form": {}, "url": {}}}),
    );
    let question = client_line(session.from_client(NOTE, &judge));
    assert_eq!(question["params"]["mode"], "form");
}

// 2026-07-28: the ask as an InputRequiredResult with sealed state.

const KEY: [u8; 32] = [42; 32];

fn modern_note(id: u64, extra: Value) -> String {
    let mut params = json!({"name": "note", "arguments": {"text": "ship it"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// A 2026-07-28 session asked about `note`: the session and the sealed state.
fn input_required(judge: &PendingAsk) -> (Session, String) {
    let session = Session::new("py").with_state_key(KEY);
    let asked = client_line(session.from_client(&modern_note(1, json!({})), judge));
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let question = &result["inputRequests"]["dev.warden/approval"];
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["mode"], "form");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains(APPROVAL)
    );
    let state = result["requestState"].as_str().unwrap().to_string();
    (session, state)
}

/// `route` forwards the retry (id 2) of `note` without Warden's fields.
fn assert_forwarded_retry(route: Route) {
    let Route::Server(line) = route else {
        panic!("{route:?}")
    };
    let forwarded: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(forwarded["id"], 2);
    assert_eq!(forwarded["params"]["arguments"], json!({"text": "ship it"}));
    assert!(forwarded["params"].get("requestState").is_none());
    assert!(forwarded["params"].get("inputResponses").is_none());
}

fn retry(state: &str, response: Value) -> String {
    modern_note(
        2,
        json!({"requestState": state, "inputResponses": {"dev.warden/approval": response}}),
    )
}

#[test]
fn a_2026_client_that_declared_form_elicitation_gets_an_input_required_result_with_sealed_state() {
    let judge = PendingAsk::new(true);
    let (session, state) = input_required(&judge);
    assert!(state.starts_with("wrs1."), "{state}");
    assert_eq!(session.held(), 0, "nothing is held: the client retries");
}

#[test]
fn the_retry_with_the_state_and_an_approving_answer_is_recorded_and_forwarded_without_wardens_fields()
 {
    let judge = PendingAsk::new(true);
    let (session, state) = input_required(&judge);
    let route = session.from_client(&retry(&state, approving()), &judge);
    assert_forwarded_retry(route);
    assert_eq!(
        judge.answers(),
        [("mcp__py__note".to_string(), APPROVAL.to_string(), true)]
    );
}

#[test]
fn the_retry_declining_is_recorded_and_denied_as_a_complete_result() {
    let judge = PendingAsk::new(true);
    let (session, state) = input_required(&judge);
    let denial =
        client_line(session.from_client(&retry(&state, json!({"action": "decline"})), &judge));
    assert_eq!(denial["result"]["resultType"], "complete");
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        "warden.approval_rejected"
    );
    assert!(!judge.answers()[0].2, "recorded as a decline");
}

#[test]
fn an_altered_state_is_refused_and_never_read() {
    let judge = PendingAsk::new(true);
    let (session, state) = input_required(&judge);
    let mut altered = state.clone().into_bytes();
    let at = "wrs1.".len() + 2;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let denial = client_line(session.from_client(&retry(&altered, approving()), &judge));
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        REQUEST_STATE_REFUSED
    );
    assert!(judge.answers().is_empty());
}

#[test]
fn a_state_sealed_by_another_proxy_or_for_other_arguments_is_refused() {
    let judge = PendingAsk::new(true);
    let (_, state) = input_required(&judge);
    let other_proxy = Session::new("py").with_state_key([1; 32]);
    let denial = client_line(other_proxy.from_client(&retry(&state, approving()), &judge));
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        REQUEST_STATE_REFUSED
    );

    let (session, state) = input_required(&judge);
    let other_arguments = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "note", "arguments": {"text": "rm -rf /"}, "requestState": state,
        "inputResponses": {"dev.warden/approval": {"action": "accept", "content": {"approve": true}}},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}}});
    let denial = client_line(session.from_client(&other_arguments.to_string(), &judge));
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        REQUEST_STATE_REFUSED
    );
    assert!(judge.answers().is_empty());
}

#[test]
fn a_2026_client_that_declares_no_form_on_the_request_is_not_asked() {
    let judge = PendingAsk::new(true);
    let session = Session::new("py").with_state_key(KEY);
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "note", "arguments": {"text": "ship it"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let denial = client_line(session.from_client(&line.to_string(), &judge));
    assert_eq!(
        denial["result"]["structuredContent"]["code"],
        "warden.approval_pending"
    );
}

/// A 2026-07-28 `note` whose client declared it can open URLs, not forms.
fn modern_url_note(id: u64, extra: Value) -> String {
    let mut line: Value = serde_json::from_str(&modern_note(id, extra)).unwrap();
    line["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"url": {}}});
    line.to_string()
}

/// A 2026-07-28 session sent to the console's page about `note`: the
/// session and the sealed state.
fn sent_to_the_console(judge: &PendingAsk) -> (Session, String) {
    let session = Session::new("py").with_state_key(KEY);
    let asked = client_line(session.from_client(&modern_url_note(1, json!({})), judge));
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let params = &result["inputRequests"]["dev.warden/approval"]["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(params["url"], CONSOLE);
    assert_eq!(params["elicitationId"], APPROVAL);
    let state = result["requestState"].as_str().unwrap().to_string();
    assert!(state.starts_with("wrs1."), "{state}");
    (session, state)
}

fn url_retry(state: &str) -> String {
    modern_url_note(
        2,
        json!({"requestState": state, "inputResponses": {"dev.warden/approval": {"action": "accept"}}}),
    )
}

#[test]
fn a_2026_client_that_can_open_a_url_gets_an_input_required_result_naming_the_consoles_page() {
    let judge = with_console(false);
    sent_to_the_console(&judge);
}

#[test]
fn a_2026_retry_before_a_human_answered_is_denied_naming_the_approval_and_records_nothing() {
    let judge = with_console(false);
    let (session, state) = sent_to_the_console(&judge);
    let denial = client_line(session.from_client(&url_retry(&state), &judge));
    assert_eq!(denial["result"]["resultType"], "complete");
    assert_denied_waiting(&denial, 2);
    assert!(
        judge.answers().is_empty(),
        "the client's word is not recorded"
    );
}

#[test]
fn a_2026_retry_after_a_human_approved_is_forwarded_without_wardens_fields() {
    let judge = with_console(false);
    let (session, state) = sent_to_the_console(&judge);
    judge.approved.store(true, Ordering::SeqCst);
    let route = session.from_client(&url_retry(&state), &judge);
    assert_forwarded_retry(route);
}

#[test]
fn a_2026_call_with_a_state_of_the_servers_own_is_forwarded_as_the_client_wrote_it() {
    let judge = PendingAsk::new(false);
    let session = Session::new("py").with_state_key(KEY);
    let line = modern_note(
        3,
        json!({"name": "add", "arguments": {"a": 1}, "requestState": "server-state-1",
               "inputResponses": {"server.question": {"action": "accept"}}}),
    );
    assert_eq!(session.from_client(&line, &judge), Route::Server(line));
}

#[test]
fn a_session_that_never_asks_mid_call_denies_naming_the_approval_instead() {
    let judge = with_console(true);
    let session = Session::new("py").never_asking_mid_call();
    initialize(
        &session,
        &judge,
        json!({"elicitation": {"form": {}, "url": {}}}),
    );
    let denial = client_line(session.from_client(NOTE, &judge));
    assert_denied_waiting(&denial, 7);
    assert_eq!(session.held(), 0);
}
