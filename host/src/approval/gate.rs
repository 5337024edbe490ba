//! The approval gate: one model response judged as a whole. Every call goes
//! through the pipeline; calls that need a human become one pending approval for
//! the run (when the run can pause), calls that cannot be answered by id are
//! removed from every surface of the message, and the run's state comes back
//! with the rewritten message.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::{ApprovalError, PendingRequest};
use super::message::{AiMessage, ModelToolCall};
use super::origin::{Reach, RunOrigin};
use super::outcome::{ApprovalRequest, CallOutcome, CallStatus, GateOutcome, Resolution, RunState};
use super::sqlite::{Durability, SqliteApprovalStore};
use super::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind, JournalledCall,
    ListFilter, StoreError, StoredRequest,
};
use super::{NonInteractive, codes};
use crate::decision::{Reason, Verdict};
use crate::pipeline::{self, CONTEXT_KEYS_DROPPED, Warden};
use crate::policy::interaction::{InteractionMode, RunInteractionPolicy};
use crate::request::{CallContext, Caller, MAX_INPUT_DEPTH, RequestError, ToolCall, now_rfc3339};

/// The largest model response accepted, in bytes.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;
/// The most tool calls one message may carry.
pub const MAX_TOOL_CALLS: usize = 256;
/// The longest thread or run id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// A model response as a harness sends it: the AI message's tool calls (with
/// their other surfaces) and the run's context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelResponse {
    pub message: AiMessage,
    #[serde(default)]
    pub context: CallContext,
}

/// The run a response belongs to (the daemon's route names both).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunRef {
    pub thread_id: String,
    pub run_id: String,
}

impl RunRef {
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunRef {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
        }
    }
}

impl ModelResponse {
    /// Parses a request body strictly: an unknown key, a wrong type or an
    /// oversized body is refused naming where.
    pub fn from_json(body: &[u8]) -> Result<ModelResponse, ApprovalError> {
        Ok(parse_body(body, MAX_RESPONSE_BYTES)?)
    }
}

/// Parses a JSON body with the key path in its errors.
pub(crate) fn parse_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
    limit: usize,
) -> Result<T, RequestError> {
    if body.len() > limit {
        return Err(RequestError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        body_error(path, err.into_inner())
    })?;
    deserializer
        .end()
        .map_err(|err| body_error(".".into(), err))?;
    Ok(value)
}

fn body_error(path: String, err: serde_json::Error) -> RequestError {
    let message = err.to_string();
    let message = match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    if err.is_syntax() || err.is_eof() {
        RequestError::Syntax {
            message,
            line: err.line(),
            column: err.column(),
        }
    } else {
        RequestError::Field {
            field: if path == "." { "<body>".into() } else { path },
            message,
        }
    }
}

/// The approval gate over one Warden and one approval store.
pub struct ApprovalGate {
    warden: Arc<Warden>,
    store: Arc<dyn ApprovalStore>,
}

impl ApprovalGate {
    pub fn new(warden: Arc<Warden>, store: Arc<dyn ApprovalStore>) -> Self {
        ApprovalGate { warden, store }
    }

    /// The gate with the SQLite store in `data_dir` (`Config::data_dir`), at
    /// `durability` (`hitl_approval.durability`).
    pub fn open(
        warden: Arc<Warden>,
        data_dir: &Path,
        durability: Durability,
    ) -> Result<Self, StoreError> {
        let store = SqliteApprovalStore::open_in(data_dir, durability)?;
        Ok(ApprovalGate::new(warden, Arc::new(store)))
    }

    pub fn warden(&self) -> &Warden {
        &self.warden
    }

    pub fn store(&self) -> &dyn ApprovalStore {
        self.store.as_ref()
    }

    /// Judges one model response (`POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`).
    ///
    /// Refused with 409 `approval_pending` while the thread waits for a human,
    /// unless this is the same submission again (then the same answer).
    pub fn submit(
        &self,
        run: &RunRef,
        response: &ModelResponse,
        caller: Caller,
    ) -> Result<GateOutcome, ApprovalError> {
        check_id("thread_id", &run.thread_id)?;
        check_id("run_id", &run.run_id)?;
        let context = bind_context(&response.context, run)?;
        if response.message.tool_calls.len() > MAX_TOOL_CALLS {
            return Err(RequestError::Field {
                field: "message.tool_calls".into(),
                message: format!(
                    "has {} calls; the limit is {MAX_TOOL_CALLS}",
                    response.message.tool_calls.len()
                ),
            }
            .into());
        }
        let policy = RunInteractionPolicy::resolve(&context, caller)?;
        let origin = RunOrigin::resolve(&context, caller)?;
        let response_digest = submission_digest(caller, &context, &response.message);

        if let Some(pending) = self.store.pending_on_thread(&run.thread_id)? {
            if pending.run_id == run.run_id && pending.response_digest == response_digest {
                return Ok(replay(&pending));
            }
            return Err(pending_error(&pending));
        }

        let snapshot = self.warden.snapshot();
        let reach = Reach::of(&policy, origin);
        let mut calls = Vec::with_capacity(response.message.tool_calls.len());
        let mut removed: HashSet<Option<String>> = HashSet::new();
        for (index, (call, problem)) in response
            .message
            .tool_calls
            .iter()
            .zip(response.message.addressability())
            .enumerate()
        {
            let outcome = match problem {
                Some(problem) => {
                    removed.insert(call.id.clone());
                    removed_call(index, call, &problem)
                }
                None => judge(&snapshot, index, call, &context, caller, &reach),
            };
            calls.push(outcome);
        }
        let mut message = response.message.clone();
        message.remove_calls(&removed);

        let mut notices = Vec::new();
        if caller != Caller::Internal && context.run_origin.is_some() {
            notices.push(Reason::new(
                CONTEXT_KEYS_DROPPED,
                "context key run_origin is honoured only from internal callers and was ignored",
            ));
        }
        let mut outcome = GateOutcome {
            thread_id: run.thread_id.clone(),
            run_id: run.run_id.clone(),
            run_state: RunState::Running,
            approval_id: None,
            requests: Vec::new(),
            calls,
            message,
            interaction_mode: policy.mode,
            generation: snapshot.providers.generation(),
            notices,
        };
        if outcome
            .calls
            .iter()
            .any(|c| c.status == CallStatus::Pending)
        {
            self.pause(&mut outcome, caller, &context, response_digest)?;
        }
        Ok(outcome)
    }

    /// Stores the pending approval: one per run, with a request id per call.
    fn pause(
        &self,
        outcome: &mut GateOutcome,
        caller: Caller,
        context: &CallContext,
        response_digest: String,
    ) -> Result<(), ApprovalError> {
        let approval_id = format!("apr_{}", uuid::Uuid::new_v4().simple());
        for call in outcome
            .calls
            .iter_mut()
            .filter(|c| c.status == CallStatus::Pending)
        {
            let id = call.id.as_deref().unwrap_or_default();
            let request_id = request_id(&approval_id, id, &call.name, &call.args);
            outcome.requests.push(ApprovalRequest {
                request_id: request_id.clone(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.args.clone(),
                reasons: call.reasons.clone(),
            });
            call.request_id = Some(request_id);
        }
        outcome.approval_id = Some(approval_id.clone());
        outcome.run_state = RunState::WaitingForInput;
        let record = ApprovalRecord {
            approval_id: approval_id.clone(),
            thread_id: outcome.thread_id.clone(),
            run_id: outcome.run_id.clone(),
            status: ApprovalStatus::Pending,
            version: 1,
            created_at: now_rfc3339(),
            caller,
            context: persistable(context),
            message: outcome.message.clone(),
            requests: outcome
                .requests
                .iter()
                .map(|r| StoredRequest {
                    request_id: r.request_id.clone(),
                    tool_call_id: r.tool_call_id.clone(),
                    tool_name: r.tool_name.clone(),
                })
                .collect(),
            calls: outcome.calls.clone(),
            response_digest,
            generation: outcome.generation,
            resolution: None,
        };
        let event = ApprovalEvent {
            seq: 0,
            at: record.created_at.clone(),
            kind: EventKind::Paused,
            thread_id: record.thread_id.clone(),
            approval_id,
            run_id: record.run_id.clone(),
            actor: None,
            note: None,
            calls: outcome.calls.iter().map(journalled).collect(),
        };
        if !self.store.insert(&record, &event)? {
            // Another submission paused this thread first.
            return Err(match self.store.pending_on_thread(&record.thread_id)? {
                Some(pending) => pending_error(&pending),
                None => ApprovalError::Store(StoreError::Database(
                    "the thread's pending approval vanished during the pause".into(),
                )),
            });
        }
        Ok(())
    }

    /// Refuses (409 `approval_pending`) when the thread waits for a human: for
    /// any other entry point that starts work on a thread, such as judging a
    /// single call with a `thread_id`.
    pub fn check_thread(&self, thread_id: &str) -> Result<(), ApprovalError> {
        match self.store.pending_on_thread(thread_id)? {
            Some(pending) => Err(pending_error(&pending)),
            None => Ok(()),
        }
    }

    /// Approvals with what a human needs to answer them
    /// (`GET /v1/threads/{thread_id}/approvals`): pending ones, or all.
    pub fn approvals(&self, filter: &ListFilter) -> Result<Vec<ApprovalView>, ApprovalError> {
        Ok(self
            .store
            .list(filter)?
            .iter()
            .map(ApprovalView::of)
            .collect())
    }

    /// The approval journal, oldest first.
    pub fn journal(&self, thread_id: Option<&str>) -> Result<Vec<ApprovalEvent>, ApprovalError> {
        Ok(self.store.events(thread_id)?)
    }
}

/// One approval as listed: its requests as a human answers them, and whether it
/// can take per-call decisions at all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalView {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    pub status: ApprovalStatus,
    /// `waiting_for_input` while pending; absent once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_state: Option<RunState>,
    pub created_at: String,
    pub requests: Vec<ApprovalRequest>,
    /// Why this pause cannot take per-call decisions (a pause stored by an older
    /// release with a null or shared id). It resolves by an all-reject or by
    /// `warden approvals clear`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
}

impl ApprovalView {
    pub fn of(record: &ApprovalRecord) -> ApprovalView {
        let check = super::resume::recompute(record);
        let requests = record
            .requests
            .iter()
            .map(|r| {
                let call = r
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| record.message.position(id))
                    .map(|i| &record.message.tool_calls[i]);
                let reasons = record
                    .calls
                    .iter()
                    .find(|c| c.request_id.as_deref() == Some(&r.request_id))
                    .map(|c| c.reasons.clone())
                    .unwrap_or_default();
                ApprovalRequest {
                    request_id: r.request_id.clone(),
                    tool_call_id: r.tool_call_id.clone(),
                    tool_name: r.tool_name.clone(),
                    args: call.map(|c| c.args.clone()).unwrap_or(Value::Null),
                    reasons,
                }
            })
            .collect();
        let pending = record.status == ApprovalStatus::Pending;
        ApprovalView {
            approval_id: record.approval_id.clone(),
            thread_id: record.thread_id.clone(),
            run_id: record.run_id.clone(),
            status: record.status,
            run_state: pending.then_some(RunState::WaitingForInput),
            created_at: record.created_at.clone(),
            requests,
            broken: check.problems,
            resolution: record.resolution.clone(),
        }
    }
}

/// One call through the pipeline, then the approval list.
fn judge(
    snapshot: &crate::registry::Snapshot,
    index: usize,
    call: &ModelToolCall,
    context: &CallContext,
    caller: Caller,
    reach: &Reach,
) -> CallOutcome {
    let tool_call = ToolCall {
        tool_name: call.name.clone(),
        tool_input: call.args.clone(),
        tool_call_id: call.id.clone(),
        context: context.clone(),
    };
    // A malformed call from the model is refused on its own; the rest of the
    // message is still judged and the thread stays usable.
    let evaluation = match pipeline::evaluate(snapshot, &tool_call, caller) {
        Ok(evaluation) => evaluation,
        Err(err) => {
            let reason = Reason::new(codes::INVALID_CALL, format!("invalid tool call: {err}"));
            return denied(index, call, vec![reason], Some(codes::STAGE));
        }
    };
    let decided_by = evaluation.decided_by.as_deref();
    let listed = snapshot
        .approval_list
        .requires_approval(&tool_call, &snapshot.permissions);
    match (evaluation.verdict, listed) {
        (Verdict::Deny, _) => denied(index, call, evaluation.reasons, decided_by),
        (Verdict::Ask, _) => match reach {
            Reach::Pause => pending(index, call, evaluation.reasons, decided_by),
            // Only a listed tool follows `non_interactive`; an ask from any
            // stage in a run that cannot pause is a deny.
            Reach::Unattended(why) | Reach::Never(why) => {
                let mut reasons = vec![pipeline::ask_unavailable(why)];
                reasons.extend(evaluation.reasons);
                denied(index, call, reasons, decided_by)
            }
        },
        (Verdict::Allow, None) => run(index, call, evaluation.reasons, decided_by),
        (Verdict::Allow, Some(entry)) => {
            let listed_because = format!(
                "tool '{}' is listed under hitl_approval ('{entry}')",
                call.name
            );
            match reach {
                Reach::Pause => pending(
                    index,
                    call,
                    vec![Reason::new(
                        codes::APPROVAL_REQUIRED,
                        format!("{listed_because}: a human must approve the call"),
                    )],
                    Some(codes::STAGE),
                ),
                Reach::Unattended(why)
                    if snapshot.approval_list.non_interactive() == NonInteractive::Allow =>
                {
                    let mut reasons = evaluation.reasons;
                    reasons.push(Reason::new(
                        codes::APPROVAL_WAIVED,
                        format!(
                            "{listed_because}, but {why}; hitl_approval.non_interactive is allow"
                        ),
                    ));
                    run(index, call, reasons, Some(codes::STAGE))
                }
                Reach::Unattended(why) | Reach::Never(why) => denied(
                    index,
                    call,
                    vec![Reason::new(
                        codes::APPROVAL_UNAVAILABLE,
                        format!("{listed_because} and needs a human's approval, but {why}: denied"),
                    )],
                    Some(codes::STAGE),
                ),
            }
        }
    }
}

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

fn run(index: usize, call: &ModelToolCall, reasons: Vec<Reason>, by: Option<&str>) -> CallOutcome {
    outcome(index, call, CallStatus::Run, reasons, by)
}

fn pending(
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
    problem: &super::message::Unaddressable,
) -> CallOutcome {
    let reason = Reason::new(problem.code(), problem.describe());
    let mut outcome = denied(index, call, vec![reason], Some(codes::STAGE));
    outcome.removed = true;
    outcome
}

pub(crate) fn denied(
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
fn denial_note(tool: &str, reasons: &[Reason]) -> String {
    let (code, message) = reasons
        .first()
        .map(|r| (r.code.as_str(), r.message.as_str()))
        .unwrap_or((
            crate::decision::codes::DENIED,
            "blocked by guardrail policy",
        ));
    format!(
        "Guardrail denied: tool '{tool}' was blocked ({code}). Reason: {message}. Choose an alternative approach."
    )
}

/// The id a human's decision names: derived from the approval and the call, so
/// that it can be recomputed from the stored message before a decision applies.
pub(crate) fn request_id(
    approval_id: &str,
    tool_call_id: &str,
    tool: &str,
    args: &Value,
) -> String {
    let mut hash = Sha256::new();
    for part in [approval_id, tool_call_id, tool, &args.to_string()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    format!("req_{}", &hex::encode(hash.finalize())[..24])
}

/// Identifies a submission: the same caller, context and message again is a retry.
fn submission_digest(caller: Caller, context: &CallContext, message: &AiMessage) -> String {
    let text =
        serde_json::json!({"caller": caller, "context": context, "message": message}).to_string();
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The context as it may be persisted: without the runtime-only keys, which
/// describe the current process only.
pub(crate) fn persistable(context: &CallContext) -> CallContext {
    CallContext {
        channel_name: None,
        disable_clarification: None,
        ..context.clone()
    }
}

/// The response's context, bound to the run the route names.
fn bind_context(context: &CallContext, run: &RunRef) -> Result<CallContext, ApprovalError> {
    for (field, given, route) in [
        ("thread_id", &context.thread_id, &run.thread_id),
        ("run_id", &context.run_id, &run.run_id),
    ] {
        if let Some(given) = given
            && given != route
        {
            return Err(RequestError::Field {
                field: format!("context.{field}"),
                message: format!("'{given}' does not match the run's {field} '{route}'"),
            }
            .into());
        }
    }
    Ok(CallContext {
        thread_id: Some(run.thread_id.clone()),
        run_id: Some(run.run_id.clone()),
        ..context.clone()
    })
}

pub(crate) fn check_id(field: &str, id: &str) -> Result<(), RequestError> {
    let problem = if id.is_empty() {
        Some("must not be empty".to_string())
    } else if id.len() > MAX_ID_BYTES {
        Some(format!(
            "is {} bytes; the limit is {MAX_ID_BYTES}",
            id.len()
        ))
    } else if id.chars().any(char::is_control) {
        Some("must not contain control characters".to_string())
    } else {
        None
    };
    match problem {
        Some(message) => Err(RequestError::Field {
            field: field.to_string(),
            message,
        }),
        None => Ok(()),
    }
}

/// Arguments a human wrote in an edit: an object, no deeper than a call's.
pub(crate) fn check_args(field: &str, args: &Value) -> Result<(), ApprovalError> {
    let message = if !args.is_object() {
        "must be a JSON object"
    } else if crate::request::depth(args) > MAX_INPUT_DEPTH {
        "nests too deeply"
    } else {
        return Ok(());
    };
    Err(ApprovalError::InvalidDecision {
        field: field.to_string(),
        message: message.to_string(),
    })
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

/// The answer a paused submission got, given again to its retry.
fn replay(record: &ApprovalRecord) -> GateOutcome {
    GateOutcome {
        thread_id: record.thread_id.clone(),
        run_id: record.run_id.clone(),
        run_state: RunState::WaitingForInput,
        approval_id: Some(record.approval_id.clone()),
        requests: ApprovalView::of(record).requests,
        calls: record.calls.clone(),
        message: record.message.clone(),
        // Only interactive runs pause.
        interaction_mode: InteractionMode::Interactive,
        generation: record.generation,
        notices: Vec::new(),
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
