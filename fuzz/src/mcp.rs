//! The check of the `mcp_session` target: a sequence of messages from either
//! side through one `warden_mcp::Session`. Shared with the corpus replay test
//! (`crates/mcp/tests/fuzz_corpus.rs`), which runs it on the real crate.
//!
//! Input: lines; a line starting with `C` is from the client, `S` from the
//! server, the rest of the line is the message; a line `T` lets every held
//! call's time run out. The judge decides by the tool name's length (allow,
//! deny, a pending ask the client may answer, or cannot judge), records what
//! it allowed, and allows a held call the client approves.
//!
//! Invariant: never panics; every client `tools/call` gets exactly one answer
//! (under its own id) or is forwarded exactly once, or is held while Warden
//! asks the client (`elicitation/create`), and then, once the client answers,
//! cancels it or its time runs out, it gets exactly one answer or is
//! forwarded exactly once; a forwarded call is the one that was judged and
//! allowed; nothing Warden cannot read is forwarded to the server; what the
//! server sends never goes back to it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use warden_mcp::{Judge, Judgement, McpCall, Route, Session};
use warden_types::decision::{Reason, Verdict};

#[derive(Default)]
struct LengthJudge {
    allowed: Mutex<Vec<(String, Value)>>,
}

impl Judge for LengthJudge {
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String> {
        let verdict = match call.tool_name.len() % 4 {
            0 => Verdict::Allow,
            1 => Verdict::Deny,
            // A pending ask the client's own answer may settle.
            2 => {
                return Ok(Judgement {
                    verdict: Verdict::Deny,
                    reasons: vec![Reason::new("fuzz.rule", "asks")],
                    decision_id: Some("fuzz".into()),
                    approval_id: Some("apr_fuzz".into()),
                    attestable: true,
                    console_url: None,
                });
            }
            _ => return Err("the judge is unreachable".into()),
        };
        if verdict == Verdict::Allow {
            self.allowed
                .lock()
                .unwrap()
                .push((call.tool_name.clone(), call.arguments.clone()));
        }
        Ok(Judgement {
            verdict,
            reasons: vec![Reason::new("fuzz.rule", "by length")],
            decision_id: Some("fuzz".into()),
            approval_id: None,
            attestable: false,
            console_url: None,
        })
    }

    fn attest(&self, call: &McpCall<'_>, _: &str, approve: bool) -> Result<Judgement, String> {
        if approve {
            self.allowed
                .lock()
                .unwrap()
                .push((call.tool_name.clone(), call.arguments.clone()));
        }
        Ok(Judgement {
            verdict: if approve {
                Verdict::Allow
            } else {
                Verdict::Deny
            },
            reasons: vec![Reason::new("fuzz.answer", "the client answered")],
            decision_id: None,
            approval_id: None,
            attestable: false,
            console_url: None,
        })
    }

    fn offered(&self, tool_name: &str) -> bool {
        tool_name.len() % 4 != 1
    }
}

/// A client request `tools/call` with an id the session must answer or forward.
fn tools_call_id(message: &Value) -> Option<&Value> {
    (message.get("method")? == "tools/call")
        .then(|| message.get("id"))
        .flatten()
        .filter(|id| id.is_string() || id.is_number())
}

/// Checks that `forwarded` is the tools/call `expected`, judged and allowed
/// once (`allowed`: what the judge allowed while the message was handled).
fn check_forwarded_call(forwarded: &Value, expected: &Value, allowed: &[(String, Value)]) {
    let [(tool, arguments)] = allowed else {
        panic!("a tools/call was forwarded without one allow: {allowed:?}");
    };
    let params = &forwarded["params"];
    assert_eq!(
        *tool,
        format!("mcp__fz__{}", params["name"].as_str().unwrap())
    );
    let sent = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    assert_eq!(
        *arguments, sent,
        "the forwarded arguments are not the judged ones"
    );
    // A 2026-07-28 retry that Warden asked goes without its own two fields.
    let mut expected = expected.clone();
    if forwarded["params"].get("requestState").is_none()
        && let Some(Value::Object(params)) = expected.get_mut("params")
        && params
            .get("requestState")
            .and_then(Value::as_str)
            .is_some_and(|state| state.starts_with("wrs1."))
    {
        params.remove("requestState");
        params.remove("inputResponses");
    }
    assert_eq!(*forwarded, expected, "the forwarded call changed");
}

pub fn mcp_session(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let session = Session::new("fz")
        .with_elicitation_timeout(Duration::from_secs(60))
        .with_state_key([7; 32]);
    let judge = LengthJudge::default();
    // Calls held for the client's answer, by the id of Warden's question.
    let mut held: HashMap<String, Value> = HashMap::new();
    for line in text.lines() {
        if line == "T" {
            let lines = session.expired(Instant::now() + Duration::from_secs(3600));
            assert_eq!(lines.len(), 2 * held.len(), "every held call is let go");
            for pair in lines.chunks(2) {
                let withdrawn: Value = serde_json::from_str(&pair[0]).unwrap();
                let answer: Value = serde_json::from_str(&pair[1]).unwrap();
                let call = held
                    .remove(withdrawn["params"]["requestId"].as_str().unwrap())
                    .expect("a question Warden asked");
                assert_eq!(answer["id"], call["id"], "the answer is not to the call");
            }
            continue;
        }
        let (from_client, message) = match line.split_at_checked(1) {
            Some(("C", message)) => (true, message),
            Some(("S", message)) => (false, message),
            _ => continue,
        };
        if !from_client {
            let route = session.from_server(message, &judge);
            assert!(
                !matches!(route, Route::Server(_)),
                "a server message went back to the server"
            );
            continue;
        }
        let before = judge.allowed.lock().unwrap().len();
        let read = serde_json::from_str::<Value>(message).ok();
        // The client's answer to a question Warden asked about a held call.
        let releases = read
            .as_ref()
            .filter(|m| m.get("method").is_none())
            .and_then(|m| m.get("id")?.as_str())
            .and_then(|id| held.remove(id));
        let route = session.from_client(message, &judge);
        let allowed = judge.allowed.lock().unwrap()[before..].to_vec();
        if let Some(call) = releases {
            match &route {
                Route::Server(forwarded) => {
                    let forwarded: Value =
                        serde_json::from_str(forwarded).expect("what is forwarded is JSON");
                    check_forwarded_call(&forwarded, &call, &allowed);
                }
                Route::Client(answer) => {
                    let answer: Value = serde_json::from_str(answer).expect("Warden answers JSON");
                    assert_eq!(
                        answer.get("id"),
                        call.get("id"),
                        "the answer is not to the call"
                    );
                    assert!(
                        allowed.is_empty(),
                        "an approved call was answered, not forwarded"
                    );
                }
                Route::Drop(why) => panic!("a held call's answer was dropped: {why}"),
            }
            continue;
        }
        match &route {
            Route::Server(forwarded) => {
                assert!(read.is_some(), "an unreadable message was forwarded");
                let forwarded: Value =
                    serde_json::from_str(forwarded).expect("what is forwarded is JSON");
                if forwarded.get("method").and_then(Value::as_str) == Some("tools/call") {
                    check_forwarded_call(&forwarded, read.as_ref().unwrap(), &allowed);
                }
            }
            Route::Client(answer) => {
                let answer: Value = serde_json::from_str(answer).expect("Warden answers JSON");
                if let Some(id) = read.as_ref().and_then(tools_call_id) {
                    assert!(
                        allowed.is_empty(),
                        "an allowed call was answered, not forwarded"
                    );
                    if answer.get("method").and_then(Value::as_str) == Some("elicitation/create") {
                        let ours = answer["id"].as_str().expect("Warden's question has its id");
                        held.insert(ours.to_string(), read.clone().unwrap());
                    } else {
                        assert_eq!(answer.get("id"), Some(id), "the answer is not to the call");
                    }
                }
            }
            Route::Drop(_) => {
                if let Some(message) = &read {
                    assert!(
                        tools_call_id(message).is_none(),
                        "a tools/call with an id was dropped unanswered"
                    );
                    // A cancel of a held call lets it go: never forwarded.
                    if message.get("method").and_then(Value::as_str)
                        == Some("notifications/cancelled")
                    {
                        let cancelled = &message["params"]["requestId"];
                        held.retain(|_, call| call.get("id") != Some(cancelled));
                    }
                }
            }
        }
    }
    assert_eq!(
        session.held(),
        held.len(),
        "the session holds what it asked about"
    );
}
