//! MCP asks through the daemon, for a client that cannot be asked in the
//! middle of a call: the call is denied at once, naming an approval filed in
//! the daemon's store; a human answers it in the console or the API; the
//! client's identical retry (same tool, same canonical arguments, same
//! principal) is let through once by that answer.
//!
//! The store holds the whole binding (`POST /v1/mcp/asks`, see
//! warden_approval::mcp_ask): the approval is filed on a thread named for the
//! call, and the retry that reads the answer consumes it by a compare-and-swap
//! in the store, so that neither a restarted proxy nor a second proxy with the
//! same token can use one answer twice. This module only words the store's
//! answer for the client.

use serde_json::Value;
use warden_types::approval::{AnsweredBy, CallStatus, McpAskAnswer, Resolution};
use warden_types::codes;
use warden_types::decision::{Reason, Verdict};

/// How an ask ends for this attempt of the call.
pub(crate) struct AskAnswer {
    pub(crate) verdict: Verdict,
    pub(crate) reasons: Vec<Reason>,
    /// The approval a denial names, while it waits.
    pub(crate) approval_id: Option<String>,
    /// Whether the client's own answer may settle that approval
    /// (`mcp.client_attested`).
    pub(crate) attestable: bool,
    /// The console's page for that approval.
    pub(crate) console_url: Option<String>,
}

/// The store's answer to an ask on the call with arguments `args`, whose own
/// reasons are `asked`.
pub(crate) fn read(answer: McpAskAnswer, args: &Value, asked: Vec<Reason>) -> AskAnswer {
    match answer {
        McpAskAnswer::Pending {
            approval_id,
            thread_id,
            client_attested,
            console_url,
        } => AskAnswer {
            attestable: client_attested,
            console_url,
            ..waiting(&approval_id, &thread_id, asked)
        },
        McpAskAnswer::Answered { resolution } => answered(&resolution, args),
        // Judged again at filing: a standing grant may allow it now, or the
        // run's mode may have nobody to ask (a deny).
        McpAskAnswer::Judged { call } if call.status == CallStatus::Run => AskAnswer {
            verdict: Verdict::Allow,
            reasons: call.reasons,
            approval_id: None,
            attestable: false,
            console_url: None,
        },
        McpAskAnswer::Judged { call } => denied(call.reasons, call.note.as_deref()),
    }
}

fn waiting(approval_id: &str, thread_id: &str, asked: Vec<Reason>) -> AskAnswer {
    let mut reasons = vec![Reason::new(
        codes::APPROVAL_PENDING,
        format!(
            "the call waits for a human's approval {approval_id} (thread {thread_id}): once it is approved in the console or the API, the same call again runs once"
        ),
    )];
    reasons.extend(asked);
    AskAnswer {
        verdict: Verdict::Deny,
        reasons,
        approval_id: Some(approval_id.to_string()),
        attestable: false,
        console_url: None,
    }
}

/// The human's answer, read by the retry that consumes it: run only the very
/// call that was approved (an edit is for the client to send; the proxy
/// forwards only what the client sent).
fn answered(resolution: &Resolution, args: &Value) -> AskAnswer {
    let Some(call) = resolution.calls.first() else {
        return denied(Vec::new(), Some("the approval's resolution lists no call"));
    };
    match call.status {
        CallStatus::Run if call.args == *args => {
            let reviewer = resolution.reviewer.as_deref().unwrap_or("a human");
            let by = match resolution.answered_by {
                AnsweredBy::Human => reviewer.to_string(),
                AnsweredBy::ClientAttested => {
                    format!("{reviewer}'s MCP client (client-attested)")
                }
            };
            AskAnswer {
                verdict: Verdict::Allow,
                reasons: vec![Reason::new(
                    codes::APPROVAL_GRANTED,
                    format!(
                        "approved by {by} (approval {}): this call, once",
                        resolution.approval_id
                    ),
                )],
                approval_id: None,
                attestable: false,
                console_url: None,
            }
        }
        CallStatus::Run => denied(
            vec![Reason::new(
                codes::APPROVAL_EDITED,
                format!(
                    "the approver edited the arguments (approval {}) to {}: call again with those to be asked again",
                    resolution.approval_id, call.args
                ),
            )],
            None,
        ),
        CallStatus::Denied | CallStatus::Pending => {
            denied(call.reasons.clone(), call.note.as_deref())
        }
    }
}

fn denied(mut reasons: Vec<Reason>, note: Option<&str>) -> AskAnswer {
    if reasons.is_empty() {
        reasons.push(Reason::new(
            codes::APPROVAL_REJECTED,
            note.unwrap_or("the approval was rejected"),
        ));
    }
    AskAnswer {
        verdict: Verdict::Deny,
        reasons,
        approval_id: None,
        attestable: false,
        console_url: None,
    }
}
