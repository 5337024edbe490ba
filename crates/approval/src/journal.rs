//! What the gate and a resume both make of a stored pause: each call's
//! outcome, the calls journalled, the request ids recomputed from the stored
//! message, and the errors that say a pause is pending or resolved.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use warden_types::decision::Reason;

use crate::store::{ApprovalRecord, JournalledCall};
use crate::validate::request_id;
use warden::APPROVAL_STAGE;
use warden_types::approval::{CallOutcome, CallStatus};
use warden_types::error::{ApprovalError, PendingRequest};
use warden_types::message::ModelToolCall;

pub(crate) fn outcome(
    index: usize,
    call: &ModelToolCall,
    status: CallStatus,
    reasons: Vec<Reason>,
    decided_by: Option<&str>,
) -> CallOutcome {
    CallOutcome {
        index,
        id: call.id.clone(),
        name: call.name.clone(),
        status,
        removed: false,
        request_id: None,
        decision: None,
        args: call.args.clone(),
        note: None,
        reasons,
        decided_by: decided_by.map(str::to_string),
    }
}

pub(crate) fn run(
    index: usize,
    call: &ModelToolCall,
    reasons: Vec<Reason>,
    by: Option<&str>,
) -> CallOutcome {
    outcome(index, call, CallStatus::Run, reasons, by)
}

pub(crate) fn pending(
    index: usize,
    call: &ModelToolCall,
    reasons: Vec<Reason>,
    by: Option<&str>,
) -> CallOutcome {
    outcome(index, call, CallStatus::Pending, reasons, by)
}

/// A call no answer can reach: denied and taken off every surface, with a note
/// naming the tool and why.
pub(crate) fn removed_call(
    index: usize,
    call: &ModelToolCall,
    problem: &warden_types::message::Unaddressable,
) -> CallOutcome {
    let reason = Reason::new(problem.code(), problem.describe());
    let mut outcome = denied(index, call, vec![reason], Some(APPROVAL_STAGE));
    outcome.removed = true;
    outcome
}

/// The outcome of the call at `index` of a message, denied with `reasons` by `decided_by`.
pub fn denied(
    index: usize,
    call: &ModelToolCall,
    reasons: Vec<Reason>,
    by: Option<&str>,
) -> CallOutcome {
    let mut outcome = outcome(index, call, CallStatus::Denied, reasons, by);
    outcome.note = Some(denial_note(&outcome.name, &outcome.reasons));
    outcome
}

/// The visible note of a denied call, in DeerFlow's guardrail wording.
pub(crate) fn denial_note(tool: &str, reasons: &[Reason]) -> String {
    let (code, message) = reasons
        .first()
        .map(|r| (r.code.as_str(), r.message.as_str()))
        .unwrap_or((warden_types::codes::DENIED, "blocked by guardrail policy"));
    format!(
        "Guardrail denied: tool '{tool}' was blocked ({code}). Reason: {message}. Choose an alternative approach."
    )
}

pub(crate) fn pending_error(record: &ApprovalRecord) -> ApprovalError {
    ApprovalError::ApprovalPending {
        thread_id: record.thread_id.clone(),
        approval_id: record.approval_id.clone(),
        run_id: record.run_id.clone(),
        requests: record
            .requests
            .iter()
            .map(|r| PendingRequest {
                request_id: r.request_id.clone(),
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
            })
            .collect(),
    }
}

pub(crate) fn journalled(call: &CallOutcome) -> JournalledCall {
    JournalledCall {
        request_id: call.request_id.clone(),
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        status: call.status,
        decision: call.decision,
        codes: call.reasons.iter().map(|r| r.code.clone()).collect(),
        args_sha256: hex::encode(Sha256::digest(call.args.to_string().as_bytes())),
    }
}

/// The request mapping recomputed from a stored pause, and whatever makes the
/// pause unable to take per-call decisions.
pub(crate) struct Recomputed {
    /// request id → the position of its call in the stored message.
    pub mapping: Vec<(String, usize)>,
    pub problems: Vec<String>,
}

/// Recomputes every request id from the stored message: each must name exactly
/// one call, answerable by id, with the same tool and arguments.
pub(crate) fn recompute(record: &ApprovalRecord) -> Recomputed {
    let message = &record.message;
    let addressability = message.addressability();
    let mut problems: Vec<String> = addressability
        .iter()
        .zip(&message.tool_calls)
        .filter_map(|(problem, call)| {
            problem
                .as_ref()
                .map(|p| format!("call '{}': {}", call.name, p.describe()))
        })
        .collect();
    let mut mapping = Vec::new();
    let mut seen_requests = HashSet::new();
    let mut seen_calls = HashSet::new();
    for r in &record.requests {
        if !seen_requests.insert(r.request_id.as_str()) {
            problems.push(format!("request {} appears twice", r.request_id));
            continue;
        }
        let Some(id) = r.tool_call_id.as_deref() else {
            problems.push(format!(
                "request {} ('{}') names a call without an id",
                r.request_id, r.tool_name
            ));
            continue;
        };
        let Some(i) = message.position(id) else {
            if !message
                .tool_calls
                .iter()
                .any(|c| c.id.as_deref() == Some(id))
            {
                problems.push(format!(
                    "request {} names call '{id}', which the stored message does not hold",
                    r.request_id
                ));
            }
            continue;
        };
        if addressability[i].is_some() {
            continue;
        }
        let call = &message.tool_calls[i];
        if call.name != r.tool_name
            || request_id(&record.approval_id, id, &call.name, &call.args) != r.request_id
        {
            problems.push(format!(
                "request {} does not match the stored call '{id}'",
                r.request_id
            ));
            continue;
        }
        if !seen_calls.insert(i) {
            problems.push(format!("call '{id}' is named by two requests"));
            continue;
        }
        mapping.push((r.request_id.clone(), i));
    }
    Recomputed { mapping, problems }
}

/// The 409 for an approval that was already resolved, naming how.
pub fn resolved_error(record: &ApprovalRecord) -> ApprovalError {
    ApprovalError::AlreadyResolved {
        approval_id: record.approval_id.clone(),
        status: record.status,
        resolved_by: record.resolution.as_ref().map(|r| r.resolved_by.clone()),
    }
}
