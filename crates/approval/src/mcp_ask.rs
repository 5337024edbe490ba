//! One MCP call's ask as a one-use approval (`POST /v1/mcp/asks`), for a
//! client that cannot be asked in the middle of a call: the call is denied at
//! once naming the approval; a human answers it in the console or the API like
//! any pause; the client's identical retry consumes the answer, once.
//!
//! The store holds the whole binding, so that neither a restarted proxy nor a
//! second proxy with the same token can use one answer twice:
//! - the approval is filed on a thread of the principal named for the call,
//!   `mcp-<digest of the tool and the arguments' canonical digest>`; every
//!   proxy of the principal finds it there, and one call's ask never refuses
//!   another call (a pending pause refuses only its own thread);
//! - a retry reads the thread's newest approval: pending, it waits; resolved
//!   and not consumed, the retry consumes it by a compare-and-swap in the
//!   store ([`ApprovalStore::consume`](crate::ApprovalStore::consume)) and
//!   gets the answer; consumed, the call is asked again.

use sha2::{Digest, Sha256};
use warden_policy::clock::now_rfc3339;
use warden_types::Caller;
use warden_types::approval::{
    DecisionKind, GateOutcome, McpAskAnswer, McpAttestation, ModelResponse, RequestDecision,
    ResumeRequest, RunState,
};
use warden_types::error::{ApprovalError, StoreError};
use warden_types::message::{AiMessage, ModelToolCall};
use warden_types::request::ToolCall;

use crate::gate::{ApprovalGate, RunRef};
use crate::grant::args_digest;
use crate::reviewer::Reviewer;
use crate::store::{
    ApprovalEvent, ApprovalKind, ApprovalRecord, ApprovalStatus, EventKind, ListFilter,
};

/// The prefix of the threads MCP asks are filed under.
pub const MCP_THREAD_PREFIX: &str = "mcp-";

/// The call's id in the one-call message each ask files.
const CALL_ID: &str = "mcp-call";

/// How many times an ask reads the thread again after another request changed
/// it in between (consumed the answer, or filed first) before it gives up.
const ATTEMPTS: usize = 4;

/// What [`ApprovalGate::mcp_ask`] did.
#[derive(Debug)]
pub struct McpAsk {
    /// The answer for the caller.
    pub answer: McpAskAnswer,
    /// The gate's outcome when the ask was filed now (for the decision log).
    pub filed: Option<GateOutcome>,
}

/// The thread a principal's ask on this call is filed under: the same for
/// the same tool and the same arguments (canonical JSON), whoever asks.
pub fn mcp_thread(tool_name: &str, args: &serde_json::Value) -> String {
    let mut hash = Sha256::new();
    hash.update(tool_name.as_bytes());
    hash.update([0]);
    hash.update(args_digest(args).as_bytes());
    let digest = hex::encode(hash.finalize());
    format!("{MCP_THREAD_PREFIX}{}", &digest[..32])
}

impl ApprovalGate {
    /// An ask on one MCP call of `principal`: the answer a human gave to its
    /// earlier ask, consumed now (once, whoever asks), else its pending ask,
    /// else a new ask filed through the gate (which judges the call again).
    pub fn mcp_ask(
        &self,
        principal: &str,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<McpAsk, ApprovalError> {
        let thread_id = mcp_thread(&call.tool_name, &call.tool_input);
        for _ in 0..ATTEMPTS {
            if let Some(pending) = self.pending_on_thread(principal, &thread_id)? {
                return Ok(McpAsk {
                    answer: McpAskAnswer::Pending {
                        approval_id: pending.approval_id.clone(),
                        thread_id: pending.thread_id.clone(),
                        client_attested: self.client_attested_may_approve(call),
                        console_url: None,
                    },
                    filed: None,
                });
            }
            let newest = self
                .store()
                .list(&ListFilter {
                    principal: Some(principal.to_string()),
                    thread_id: Some(thread_id.clone()),
                    include_resolved: true,
                })?
                .pop();
            match newest {
                Some(answered)
                    if answered.status != ApprovalStatus::Pending
                        && answered.consumed_at.is_none() =>
                {
                    let Some(resolution) = answered.resolution.clone() else {
                        return Err(corrupt(&answered, "resolved without a resolution"));
                    };
                    if self.store().consume(
                        &answered.approval_id,
                        &now_rfc3339(),
                        &consumed(&answered, "read by the identical retry of the MCP call"),
                    )? {
                        return Ok(McpAsk {
                            answer: McpAskAnswer::Answered {
                                resolution: Box::new(resolution),
                            },
                            filed: None,
                        });
                    }
                    // Another retry consumed it first: this call is asked again.
                }
                _ => match self.file(principal, &thread_id, call, caller) {
                    Ok(filed) => return Ok(filed),
                    // Another request filed this call's ask first: it waits on that one.
                    Err(ApprovalError::ApprovalPending { .. }) => {}
                    Err(err) => return Err(err),
                },
            }
        }
        Err(ApprovalError::Store(StoreError::Database(format!(
            "the approvals of thread {thread_id} kept changing while an MCP ask read them"
        ))))
    }

    /// An MCP client's own answer to the elicitation `warden mcp` sent it on
    /// the pending ask `approval_id` of `call`, for `principal`: recorded as
    /// the approval's answer, client-attested, and consumed at once by the
    /// call that waits on it (no retry can use it again). A decline rejects
    /// the ask. An approval is refused (422) where `mcp.client_attested`
    /// does not let the client approve this call: the ask stays pending for
    /// a human.
    pub fn mcp_attest(
        &self,
        principal: &str,
        attestation: &McpAttestation,
    ) -> Result<McpAsk, ApprovalError> {
        let call = &attestation.call;
        let thread_id = mcp_thread(&call.tool_name, &call.tool_input);
        let approval_id = attestation.approval_id.as_str();
        let not_found = || ApprovalError::NotFound {
            thread_id: thread_id.clone(),
            approval_id: Some(approval_id.to_string()),
        };
        // Bound to the call: the principal's ask on this tool with these
        // canonical arguments, and no other approval.
        let record = self.store().get(approval_id)?.ok_or_else(not_found)?;
        if record.principal != principal
            || record.thread_id != thread_id
            || record.kind != ApprovalKind::McpCall
        {
            return Err(not_found());
        }
        if attestation.approve && !self.client_attested_may_approve(call) {
            return Err(ApprovalError::InvalidDecision {
                field: "approve".into(),
                message: format!(
                    "mcp.client_attested does not let an MCP client approve '{}': a human answers approval {approval_id} in the console or the API",
                    call.tool_name
                ),
            });
        }
        let (decision, message) = if attestation.approve {
            (DecisionKind::Approve, None)
        } else {
            (
                DecisionKind::Reject,
                Some("the MCP client declined (client-attested)".to_string()),
            )
        };
        let request = ResumeRequest {
            decisions: Some(
                record
                    .requests
                    .iter()
                    .map(|r| RequestDecision {
                        request_id: r.request_id.clone(),
                        decision,
                        args: None,
                        message: message.clone(),
                        grant: None,
                    })
                    .collect(),
            ),
            ..ResumeRequest::default()
        };
        let reviewer = Reviewer::client_attested(principal);
        let resolution = self.resume(&reviewer, &thread_id, Some(approval_id), &request)?;
        let Some(resolved) = self.store().get(approval_id)? else {
            return Err(not_found());
        };
        // The call that waits on the elicitation reads the answer now; of a
        // retry racing it, only one gets it.
        if !self.store().consume(
            approval_id,
            &now_rfc3339(),
            &consumed(&resolved, "read by the MCP call its client answered"),
        )? {
            return Err(ApprovalError::AlreadyResolved {
                approval_id: approval_id.to_string(),
                status: resolved.status,
                resolved_by: Some(resolution.resolved_by),
            });
        }
        Ok(McpAsk {
            answer: McpAskAnswer::Answered {
                resolution: Box::new(resolution),
            },
            filed: None,
        })
    }

    /// Whether the live policy lets a client's own answer approve `call`.
    fn client_attested_may_approve(&self, call: &ToolCall) -> bool {
        self.warden().snapshot().client_attested_may_approve(call)
    }

    /// Files a new ask: the call through the gate, as an approval of its own kind.
    fn file(
        &self,
        principal: &str,
        thread_id: &str,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<McpAsk, ApprovalError> {
        let run =
            RunRef::new(thread_id, format!("run-{}", uuid::Uuid::new_v4().simple())).of(principal);
        let mut context = call.context.clone();
        // The thread is the store's choice, bound to the call.
        context.thread_id = None;
        context.run_id = None;
        let response = ModelResponse {
            message: AiMessage {
                tool_calls: vec![ModelToolCall {
                    id: Some(CALL_ID.into()),
                    name: call.tool_name.clone(),
                    args: call.tool_input.clone(),
                    kind: None,
                }],
                ..AiMessage::default()
            },
            context,
        };
        let outcome = self.submit_as(&run, &response, caller, ApprovalKind::McpCall)?;
        let answer = match (&outcome.run_state, &outcome.approval_id) {
            (RunState::WaitingForInput, Some(approval_id)) => McpAskAnswer::Pending {
                approval_id: approval_id.clone(),
                thread_id: thread_id.to_string(),
                client_attested: self.client_attested_may_approve(call),
                console_url: None,
            },
            _ => match outcome.calls.first() {
                Some(call) => McpAskAnswer::Judged {
                    call: Box::new(call.clone()),
                },
                None => {
                    return Err(ApprovalError::Store(StoreError::Database(
                        "the gate listed no call for an MCP ask".into(),
                    )));
                }
            },
        };
        Ok(McpAsk {
            answer,
            filed: Some(outcome),
        })
    }
}

fn consumed(record: &ApprovalRecord, note: &str) -> ApprovalEvent {
    ApprovalEvent {
        seq: 0,
        at: now_rfc3339(),
        kind: EventKind::Consumed,
        principal: record.principal.clone(),
        thread_id: record.thread_id.clone(),
        approval_id: record.approval_id.clone(),
        run_id: record.run_id.clone(),
        reviewer: None,
        relayed_by: None,
        note: Some(note.into()),
        calls: Vec::new(),
    }
}

fn corrupt(record: &ApprovalRecord, message: &str) -> ApprovalError {
    ApprovalError::Store(StoreError::Corrupt {
        approval_id: record.approval_id.clone(),
        message: message.to_string(),
    })
}
