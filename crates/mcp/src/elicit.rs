//! Asking the client in the middle of a call (`2025-11-25` form elicitation):
//! what the client declared it can be asked, the `elicitation/create` Warden
//! sends it, and how its answer reads. The answer is the client's word (a hook
//! or an auto-accept may give it), recorded as client-attested; the operator
//! decides whether it may approve (`mcp.client_attested`).

use std::time::Instant;

use serde_json::{Value, json};
use warden_types::codes;
use warden_types::decision::Reason;

/// The longest rendering of a call's arguments shown in the question, in
/// bytes: enough to see what the call does, short enough for a dialog.
const MAX_SHOWN_ARGUMENTS: usize = 1024;

/// How a client can be asked, as it declared in its `initialize`
/// (`capabilities.elicitation`; `{}` means form only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Modes {
    pub(crate) form: bool,
    pub(crate) url: bool,
}

impl Modes {
    /// The modes declared in an `initialize`'s `params`.
    pub(crate) fn declared(params: Option<&Value>) -> Modes {
        Modes::of(params.and_then(|p| p.get("capabilities")))
    }

    /// The modes declared in client capabilities (an `initialize`'s, or a
    /// `2026-07-28` request's `_meta`).
    pub(crate) fn of(capabilities: Option<&Value>) -> Modes {
        let Some(Value::Object(elicitation)) = capabilities.and_then(|c| c.get("elicitation"))
        else {
            return Modes::default();
        };
        let url = elicitation.get("url").is_some_and(Value::is_object);
        let form = elicitation.get("form").is_some_and(Value::is_object);
        Modes {
            // An empty object is the first revision's form-only declaration.
            form: form || elicitation.is_empty(),
            url,
        }
    }
}

/// How Warden asks the client about a held call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// A form with one boolean `approve`: the client's own answer
    /// (client-attested).
    Form,
    /// The console's page for the approval (`url`): a signed-in approver
    /// answers there (a human's answer); the client only says whether its
    /// user went, and is told to call again.
    Url(String),
}

/// A call held while the client answers Warden's elicitation on it: the
/// server has not seen it.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub(crate) asked: Asked,
    /// The call's id, as the client sent it.
    pub(crate) client_id: Value,
    /// The call, as the client wrote it: forwarded as is if approved.
    pub(crate) line: String,
    /// The tool's name at the server.
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) client_info: Option<Value>,
    pub(crate) traceparent: Option<String>,
    /// The pending approval the question is about.
    pub(crate) approval_id: String,
    /// The ask's denial, given as it is if the client does not answer.
    pub(crate) reasons: Vec<Reason>,
    pub(crate) decision_id: Option<String>,
    pub(crate) structured: bool,
    /// The client speaks `2026-07-28` (its denial carries `resultType`).
    pub(crate) modern: bool,
    /// When Warden stops waiting for the client's answer.
    pub(crate) deadline: Instant,
}

/// The client's answer to the question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Accepted, with `approve: true`.
    Approve,
    /// Declined, or accepted with `approve: false`: the client said no.
    Decline,
    /// Cancelled (dismissed), an error, or an answer Warden cannot read: no
    /// answer; the approval stays for a human.
    None,
}

impl Answer {
    /// The client's JSON-RPC response to the elicitation.
    pub(crate) fn read(response: &serde_json::Map<String, Value>) -> Answer {
        let Some(result) = response.get("result") else {
            return Answer::None;
        };
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => match result.get("content").and_then(|c| c.get("approve")) {
                Some(Value::Bool(true)) => Answer::Approve,
                Some(Value::Bool(false)) => Answer::Decline,
                _ => Answer::None,
            },
            Some("decline") => Answer::Decline,
            _ => Answer::None,
        }
    }
}

/// The `elicitation/create` request asking about the held call, under
/// Warden's request id `id`.
pub(crate) fn request(id: &str, tool_name: &str, held: &Held) -> String {
    match &held.asked {
        Asked::Form => form_request(id, tool_name, held),
        Asked::Url(url) => url_request(id, tool_name, url, held),
    }
}

/// URL mode: the console's page for the approval. `elicitationId` is the
/// approval's id.
fn url_request(id: &str, tool_name: &str, url: &str, held: &Held) -> String {
    let message = format!(
        "Warden asks a human to approve the call to {tool_name} (approval {}): open the page, sign in as an approver and answer; then call the tool again: the approved call runs once.",
        held.approval_id
    );
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "elicitationId": held.approval_id,
            "url": url,
            "message": message,
        },
    })
    .to_string()
}

/// The key of Warden's question in an `InputRequiredResult`'s
/// `inputRequests` (and of the client's answer in `inputResponses`).
pub(crate) const INPUT_KEY: &str = "dev.warden/approval";

/// A `2026-07-28` client's answer to Warden's question, from a retry's
/// `inputResponses`.
pub(crate) fn input_answer(responses: &serde_json::Map<String, Value>) -> Answer {
    match responses.get(INPUT_KEY) {
        Some(Value::Object(response)) => {
            let mut wrapped = serde_json::Map::new();
            wrapped.insert("result".into(), Value::Object(response.clone()));
            Answer::read(&wrapped)
        }
        _ => Answer::None,
    }
}

/// The `InputRequiredResult` (`2026-07-28`) asking about the held call: the
/// same question (a form, or the console's page), as an input request, with
/// the sealed `state`.
pub(crate) fn input_required(id: &Value, tool_name: &str, held: &Held, state: &str) -> String {
    let question: Value =
        serde_json::from_str(&request("", tool_name, held)).expect("Warden's own request is JSON");
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                INPUT_KEY: {"method": "elicitation/create", "params": question["params"]},
            },
            "requestState": state,
        },
    })
    .to_string()
}

/// Form mode: whether the call may run, one boolean `approve`.
fn form_request(id: &str, tool_name: &str, held: &Held) -> String {
    let why: Vec<&str> = held
        .reasons
        .iter()
        .filter(|r| r.code != codes::APPROVAL_PENDING)
        .map(|r| r.message.as_str())
        .collect();
    let why = if why.is_empty() {
        "the policy asks for approval".to_string()
    } else {
        why.join("; ")
    };
    let message = format!(
        "Warden asks: may the call to {tool_name} run? Why it asks: {why}. Arguments: {}. (approval {})",
        shown(&held.arguments),
        held.approval_id
    );
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "approve": {
                        "type": "boolean",
                        "title": "Approve this call",
                        "description": format!("Run {tool_name} once with these arguments"),
                        "default": false,
                    }
                },
                "required": ["approve"],
            },
        },
    })
    .to_string()
}

/// `notifications/cancelled` for Warden's own request `id` to the client.
pub(crate) fn cancelled(id: &str, reason: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": reason},
    })
    .to_string()
}

/// The arguments as compact JSON, cut at a character boundary.
fn shown(arguments: &Value) -> String {
    let text = arguments.to_string();
    if text.len() <= MAX_SHOWN_ARGUMENTS {
        return text;
    }
    let mut end = MAX_SHOWN_ARGUMENTS;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_elicitation_capability_is_form_only_and_named_modes_count() {
        let declared = |caps: Value| Modes::declared(Some(&json!({"capabilities": caps})));
        assert_eq!(declared(json!({})), Modes::default());
        assert_eq!(
            declared(json!({"elicitation": {}})),
            Modes {
                form: true,
                url: false
            }
        );
        assert_eq!(
            declared(json!({"elicitation": {"url": {}}})),
            Modes {
                form: false,
                url: true
            }
        );
        assert_eq!(
            declared(json!({"elicitation": {"form": {}, "url": {}}})),
            Modes {
                form: true,
                url: true
            }
        );
        assert_eq!(declared(json!({"elicitation": true})), Modes::default());
    }

    #[test]
    fn only_an_accept_with_approve_true_approves() {
        let read = |response: Value| Answer::read(response.as_object().unwrap());
        assert_eq!(
            read(json!({"result": {"action": "accept", "content": {"approve": true}}})),
            Answer::Approve
        );
        assert_eq!(
            read(json!({"result": {"action": "accept", "content": {"approve": false}}})),
            Answer::Decline
        );
        assert_eq!(
            read(json!({"result": {"action": "accept", "content": {"approve": "yes"}}})),
            Answer::None
        );
        assert_eq!(read(json!({"result": {"action": "accept"}})), Answer::None);
        assert_eq!(
            read(json!({"result": {"action": "decline"}})),
            Answer::Decline
        );
        assert_eq!(read(json!({"result": {"action": "cancel"}})), Answer::None);
        assert_eq!(
            read(json!({"error": {"code": -32601, "message": "no"}})),
            Answer::None
        );
    }

    #[test]
    fn long_arguments_are_cut_at_a_character_boundary() {
        let long = json!({"text": "é".repeat(2000)});
        let shown = shown(&long);
        assert!(shown.len() <= MAX_SHOWN_ARGUMENTS + '…'.len_utf8());
        assert!(shown.ends_with('…'));
    }
}
