//! Answering a pending approval: a resume (a decision per request, or one
//! all-reject), an operator's clear, and the restore of a consumed approval whose
//! run could not be handed over. The request ids are recomputed from the stored
//! message before any decision applies, and consumption is the store's
//! compare-and-swap, so of two resumes exactly one wins.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codes;
use super::error::{ApprovalError, Mismatch};
use super::gate::{
    ApprovalGate, check_args, check_id, denied, journalled, outcome, parse_body, removed_call,
    request_id,
};
use super::message::{AiMessage, ModelToolCall};
use super::outcome::{CallOutcome, CallStatus, DecisionKind, Resolution, ResolvedBy, RunState};
use super::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, EventKind, Expected, JournalledCall, ListFilter,
    requests_digest,
};
use crate::decision::{Reason, Verdict};
use crate::pipeline;
use crate::request::{CallContext, ToolCall, now_rfc3339};

/// The largest resume body accepted, in bytes.
pub const MAX_RESUME_BYTES: usize = 4 << 20;
/// The longest message a human may attach to a rejection, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// A human's answer to a pending approval (the resume route's body): either a
/// decision for every pending request, or one all-reject.
///
/// ```json
/// {"decisions": [{"request_id": "req_…", "decision": "approve"},
///                {"request_id": "req_…", "decision": "reject", "message": "not on main"},
///                {"request_id": "req_…", "decision": "edit", "args": {"command": "git status"}}]}
/// {"reject_all": {"message": "wrong thread"}}
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<RequestDecision>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_all: Option<RejectAll>,
    /// The run that carries the answered calls on, to which the journal
    /// attributes them. Default: the run that paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// The decision on one pending request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestDecision {
    pub request_id: String,
    pub decision: DecisionKind,
    /// An edit's new arguments (a JSON object); judged again before the call runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// A rejection's message, shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Reject every pending request at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RejectAll {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ResumeRequest {
    /// Parses a resume body strictly, naming where it is wrong.
    pub fn from_json(body: &[u8]) -> Result<ResumeRequest, ApprovalError> {
        let request: ResumeRequest =
            parse_body(body, MAX_RESUME_BYTES).map_err(|err| match err {
                crate::request::RequestError::Field { field, message } => {
                    ApprovalError::InvalidDecision { field, message }
                }
                other => ApprovalError::Request(other),
            })?;
        request.check()?;
        Ok(request)
    }

    /// A decision per request.
    pub fn decide(decisions: Vec<RequestDecision>) -> Self {
        ResumeRequest {
            decisions: Some(decisions),
            ..ResumeRequest::default()
        }
    }

    /// One all-reject.
    pub fn reject_all(message: Option<String>) -> Self {
        ResumeRequest {
            reject_all: Some(RejectAll { message }),
            ..ResumeRequest::default()
        }
    }

    /// Attributes the resume to this run.
    pub fn by_run(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// What the body must satisfy before it is matched against a pause.
    pub fn check(&self) -> Result<(), ApprovalError> {
        let invalid = |field: String, message: &str| ApprovalError::InvalidDecision {
            field,
            message: message.to_string(),
        };
        if self.decisions.is_some() == self.reject_all.is_some() {
            return Err(invalid(
                "<body>".into(),
                "give either `decisions` (one per pending request) or `reject_all`",
            ));
        }
        if let Some(run_id) = &self.run_id {
            check_id("run_id", run_id)?;
        }
        if let Some(RejectAll { message: Some(m) }) = &self.reject_all
            && m.len() > MAX_MESSAGE_BYTES
        {
            return Err(invalid("reject_all.message".into(), "is too long"));
        }
        for (i, d) in self.decisions.iter().flatten().enumerate() {
            let at = |field: &str| format!("decisions[{i}].{field}");
            match (d.decision, &d.args) {
                (DecisionKind::Edit, None) => {
                    return Err(invalid(at("args"), "an edit needs the new arguments"));
                }
                (DecisionKind::Edit, Some(args)) => check_args(&at("args"), args)?,
                (_, Some(_)) => return Err(invalid(at("args"), "only an edit carries arguments")),
                (_, None) => {}
            }
            match &d.message {
                Some(_) if d.decision != DecisionKind::Reject => {
                    return Err(invalid(at("message"), "only a rejection carries a message"));
                }
                Some(m) if m.len() > MAX_MESSAGE_BYTES => {
                    return Err(invalid(at("message"), "is too long"));
                }
                _ => {}
            }
        }
        Ok(())
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

/// How each pending call is answered.
enum Answers<'a> {
    /// A decision per request, by request id.
    Each(HashMap<&'a str, &'a RequestDecision>),
    /// Everything rejected, with this reason.
    RejectAll(Reason),
}

impl ApprovalGate {
    /// Answers a pending approval (`POST /v1/threads/{thread_id}/approvals/{approval_id}/resume`).
    /// Without `approval_id`, the thread's pending approval.
    ///
    /// The decisions must name exactly the pending request ids (422 otherwise);
    /// a pause that cannot take per-call decisions takes only an all-reject
    /// (422 `broken_pause`); a resume that lost to another gets 409.
    pub fn resume(
        &self,
        thread_id: &str,
        approval_id: Option<&str>,
        request: &ResumeRequest,
    ) -> Result<Resolution, ApprovalError> {
        check_id("thread_id", thread_id)?;
        request.check()?;
        let record = self.pending(thread_id, approval_id)?;
        let check = recompute(&record);
        let resume_run = request
            .run_id
            .clone()
            .unwrap_or_else(|| record.run_id.clone());
        let answers = match (&request.decisions, &request.reject_all) {
            (Some(decisions), _) => {
                if !check.problems.is_empty() {
                    return Err(ApprovalError::BrokenPause {
                        thread_id: record.thread_id.clone(),
                        approval_id: record.approval_id.clone(),
                        problems: check.problems,
                    });
                }
                let mismatch = mismatch(decisions, &check.mapping);
                if !mismatch.is_empty() {
                    return Err(ApprovalError::DecisionMismatch {
                        approval_id: record.approval_id.clone(),
                        mismatch,
                    });
                }
                Answers::Each(
                    decisions
                        .iter()
                        .map(|d| (d.request_id.as_str(), d))
                        .collect(),
                )
            }
            (None, reject) => {
                let message = reject.as_ref().and_then(|r| r.message.as_deref());
                Answers::RejectAll(rejection("a human reviewer", message))
            }
        };
        self.settle(
            &record,
            &check,
            &answers,
            ResolvedBy::Resume { run_id: resume_run },
        )
    }

    /// Resumes, then hands the resolution over (to a worker, to stdout); if the
    /// hand-off fails, restores exactly this consumption so that the resume can
    /// be retried, and reports both.
    pub fn resume_and_hand_off<E: std::fmt::Display>(
        &self,
        thread_id: &str,
        approval_id: Option<&str>,
        request: &ResumeRequest,
        hand_off: impl FnOnce(&Resolution) -> Result<(), E>,
    ) -> Result<Resolution, ApprovalError> {
        let resolution = self.resume(thread_id, approval_id, request)?;
        if let Err(err) = hand_off(&resolution) {
            let mut message = err.to_string();
            let restored = match self.restore(&resolution, &message) {
                Ok(restored) => restored,
                Err(restore_error) => {
                    tracing::error!(approval_id = %resolution.approval_id, %restore_error, "restore after a failed hand-off");
                    message = format!("{message} (and the restore failed: {restore_error})");
                    false
                }
            };
            return Err(ApprovalError::HandOff {
                approval_id: resolution.approval_id,
                message,
                restored,
            });
        }
        Ok(resolution)
    }

    /// Puts a consumed approval back to `waiting_for_input` after its run could
    /// not be handed over: only if it is still consumed by exactly this
    /// resolution. Returns whether it was restored.
    pub fn restore(&self, resolution: &Resolution, why: &str) -> Result<bool, ApprovalError> {
        let ResolvedBy::Resume { run_id } = &resolution.resolved_by else {
            return Ok(false);
        };
        let event = ApprovalEvent {
            seq: 0,
            at: now_rfc3339(),
            kind: EventKind::Restored,
            thread_id: resolution.thread_id.clone(),
            approval_id: resolution.approval_id.clone(),
            run_id: run_id.clone(),
            actor: None,
            note: Some(format!("hand-off failed: {why}")),
            calls: Vec::new(),
        };
        Ok(self
            .store()
            .restore(&resolution.approval_id, &resolution.consumption_id, &event)?)
    }

    /// Rejects the thread's pending approval as a whole, as an operator
    /// (`warden approvals clear`), with a journal entry naming the actor. Works
    /// on any pause, including one that cannot take per-call decisions.
    /// `Ok(None)` when nothing was pending.
    pub fn clear(
        &self,
        thread_id: &str,
        actor: &str,
        reason: Option<&str>,
    ) -> Result<Option<Resolution>, ApprovalError> {
        check_id("thread_id", thread_id)?;
        let Some(record) = self.store().pending_on_thread(thread_id)? else {
            return Ok(None);
        };
        let check = recompute(&record);
        let answers = Answers::RejectAll(rejection(&format!("operator {actor}"), reason));
        let by = ResolvedBy::Clear {
            actor: actor.to_string(),
            reason: reason.map(str::to_string),
        };
        self.settle(&record, &check, &answers, by).map(Some)
    }

    /// The approval a resume answers: it must exist on this thread and still be pending.
    fn pending(
        &self,
        thread_id: &str,
        approval_id: Option<&str>,
    ) -> Result<ApprovalRecord, ApprovalError> {
        let not_found = || ApprovalError::NotFound {
            thread_id: thread_id.to_string(),
            approval_id: approval_id.map(str::to_string),
        };
        let record = match approval_id {
            Some(id) => self
                .store()
                .get(id)?
                .filter(|r| r.thread_id == thread_id)
                .ok_or_else(not_found)?,
            None => match self.store().pending_on_thread(thread_id)? {
                Some(record) => record,
                None => self
                    .store()
                    .list(&ListFilter {
                        thread_id: Some(thread_id.to_string()),
                        include_resolved: true,
                    })?
                    .pop()
                    .ok_or_else(not_found)?,
            },
        };
        if record.status != ApprovalStatus::Pending {
            return Err(resolved_error(&record));
        }
        Ok(record)
    }

    /// Applies the answers to the stored message and consumes the approval.
    /// A resume is journalled under the resuming run; a clear under the paused
    /// run, naming the operator.
    fn settle(
        &self,
        record: &ApprovalRecord,
        check: &Recomputed,
        answers: &Answers<'_>,
        resolved_by: ResolvedBy,
    ) -> Result<Resolution, ApprovalError> {
        let (kind, attributed_to, actor, note) = match &resolved_by {
            ResolvedBy::Resume { run_id } => (
                EventKind::Resumed,
                run_id.clone(),
                None,
                (*run_id != record.run_id).then(|| format!("resumes run '{}'", record.run_id)),
            ),
            ResolvedBy::Clear { actor, reason } => (
                EventKind::Cleared,
                record.run_id.clone(),
                Some(actor.clone()),
                reason.clone(),
            ),
        };
        let (calls, message, journal) = self.answer(record, check, answers, &attributed_to);
        let resolution = Resolution {
            approval_id: record.approval_id.clone(),
            thread_id: record.thread_id.clone(),
            run_id: record.run_id.clone(),
            resolved_by,
            consumption_id: format!("con_{}", uuid::Uuid::new_v4().simple()),
            resolved_at: now_rfc3339(),
            run_state: RunState::Running,
            calls,
            message,
        };
        let event = ApprovalEvent {
            seq: 0,
            at: resolution.resolved_at.clone(),
            kind,
            thread_id: record.thread_id.clone(),
            approval_id: record.approval_id.clone(),
            run_id: attributed_to,
            actor,
            note,
            calls: journal,
        };
        let digest = requests_digest(&record.requests);
        let expected = Expected {
            approval_id: &record.approval_id,
            version: record.version,
            requests_digest: &digest,
        };
        if self.store().resolve(&expected, &resolution, &event)? {
            return Ok(resolution);
        }
        // Lost the compare-and-swap: say who won.
        Err(match self.store().get(&record.approval_id)? {
            Some(now) => resolved_error(&now),
            None => ApprovalError::NotFound {
                thread_id: record.thread_id.clone(),
                approval_id: Some(record.approval_id.clone()),
            },
        })
    }

    /// Every call of the paused message, answered; the rewritten message; and
    /// the calls the journal adopts for the resolving run.
    fn answer(
        &self,
        record: &ApprovalRecord,
        check: &Recomputed,
        answers: &Answers<'_>,
        attributed_to: &str,
    ) -> (Vec<CallOutcome>, AiMessage, Vec<JournalledCall>) {
        let message = &record.message;
        let addressability = message.addressability();
        // The pause's verdicts on the calls still in the message, in order.
        let live: Vec<&CallOutcome> = record.calls.iter().filter(|c| !c.removed).collect();
        let consistent = live.len() == message.tool_calls.len();
        let by_position: HashMap<usize, &str> = check
            .mapping
            .iter()
            .map(|(rid, i)| (*i, rid.as_str()))
            .collect();
        let requested: HashSet<Option<&str>> = record
            .requests
            .iter()
            .map(|r| r.tool_call_id.as_deref())
            .collect();
        let judge = Rejudge {
            snapshot: self.warden().snapshot(),
            context: CallContext {
                run_id: Some(attributed_to.to_string()),
                ..record.context.clone()
            },
            caller: record.caller,
        };

        let mut rewritten = message.clone();
        let mut removed = HashSet::new();
        let mut calls: Vec<CallOutcome> =
            record.calls.iter().filter(|c| c.removed).cloned().collect();
        let mut journal = Vec::new();
        for (j, call) in message.tool_calls.iter().enumerate() {
            let index = if consistent { live[j].index } else { j };
            let base = live.get(j).filter(|_| consistent);
            let outcome = if let Some(problem) = &addressability[j] {
                // Only a pause from an older release holds such a call: it
                // cannot carry an answer, so it goes from every surface.
                removed.insert(call.id.clone());
                let mut o = removed_call(index, call, problem);
                if requested.contains(&call.id.as_deref()) {
                    o.decision = Some(DecisionKind::Reject);
                }
                o
            } else if let Some(rid) = by_position.get(&j) {
                decide(index, call, rid, answers, &judge)
            } else if let Some(base) = base.filter(|b| b.status != CallStatus::Pending) {
                // Not asked about: the pause's verdict stands.
                calls.push((*base).clone());
                continue;
            } else {
                // Pending without a request the mapping reaches (a broken
                // pause), or without any stored verdict: it never runs.
                match answers {
                    Answers::RejectAll(reason) => {
                        let mut o = denied(index, call, vec![reason.clone()], Some(codes::STAGE));
                        o.decision = Some(DecisionKind::Reject);
                        o
                    }
                    Answers::Each(_) => {
                        let reason = Reason::new(
                            codes::APPROVAL_UNAVAILABLE,
                            "the pause holds no verdict for this call",
                        );
                        denied(index, call, vec![reason], Some(codes::STAGE))
                    }
                }
            };
            if outcome.decision == Some(DecisionKind::Edit)
                && outcome.status == CallStatus::Run
                && let Some(id) = call.id.as_deref()
            {
                rewritten.replace_args(id, &outcome.args);
            }
            journal.push(journalled(&outcome));
            calls.push(outcome);
        }
        rewritten.remove_calls(&removed);
        calls.sort_by_key(|c| c.index);
        (calls, rewritten, journal)
    }
}

/// What an edited call is judged again with: the policy live now, the paused
/// run's context attributed to the resuming run, and the caller that paused.
struct Rejudge {
    snapshot: std::sync::Arc<crate::registry::Snapshot>,
    context: CallContext,
    caller: crate::request::Caller,
}

/// One pending call, answered.
fn decide(
    index: usize,
    call: &ModelToolCall,
    rid: &str,
    answers: &Answers<'_>,
    judge: &Rejudge,
) -> CallOutcome {
    let mut o = match answers {
        Answers::RejectAll(reason) => denied(index, call, vec![reason.clone()], Some(codes::STAGE)),
        Answers::Each(decisions) => {
            let d = decisions[rid];
            match d.decision {
                DecisionKind::Approve => {
                    let granted =
                        Reason::new(codes::APPROVAL_GRANTED, "approved by a human reviewer");
                    outcome(
                        index,
                        call,
                        CallStatus::Run,
                        vec![granted],
                        Some(codes::STAGE),
                    )
                }
                DecisionKind::Reject => {
                    let reason = rejection("a human reviewer", d.message.as_deref());
                    denied(index, call, vec![reason], Some(codes::STAGE))
                }
                DecisionKind::Edit => {
                    rejudge(index, call, d.args.clone().unwrap_or(Value::Null), judge)
                }
            }
        }
    };
    o.decision = Some(match answers {
        Answers::RejectAll(_) => DecisionKind::Reject,
        Answers::Each(decisions) => decisions[rid].decision,
    });
    o.request_id = Some(rid.to_string());
    o
}

/// The reason of a rejection.
fn rejection(by: &str, message: Option<&str>) -> Reason {
    let text = match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => format!("rejected by {by}: {m}"),
        None => format!("rejected by {by}"),
    };
    Reason::new(codes::APPROVAL_REJECTED, text)
}

/// An edited call goes through the whole pipeline again. A deny stands; an
/// ask is the question the human just answered by writing these arguments.
fn rejudge(index: usize, call: &ModelToolCall, args: Value, judge: &Rejudge) -> CallOutcome {
    let edited = ModelToolCall {
        args: args.clone(),
        ..call.clone()
    };
    let tool_call = ToolCall {
        tool_name: call.name.clone(),
        tool_input: args,
        tool_call_id: call.id.clone(),
        context: judge.context.clone(),
    };
    match pipeline::evaluate(&judge.snapshot, &tool_call, judge.caller) {
        Err(err) => {
            let reason = Reason::new(codes::INVALID_CALL, format!("invalid edited call: {err}"));
            // The model's own call stays in the message; the note answers it.
            denied(index, call, vec![reason], Some(codes::STAGE))
        }
        Ok(e) if e.verdict == Verdict::Deny => {
            denied(index, call, e.reasons, e.decided_by.as_deref())
        }
        Ok(e) => {
            let mut reasons = vec![Reason::new(
                codes::APPROVAL_EDITED,
                "edited and approved by a human reviewer",
            )];
            reasons.extend(e.reasons);
            outcome(index, &edited, CallStatus::Run, reasons, Some(codes::STAGE))
        }
    }
}

/// How the decisions differ from the pending request ids.
fn mismatch(decisions: &[RequestDecision], mapping: &[(String, usize)]) -> Mismatch {
    let expected: HashSet<&str> = mapping.iter().map(|(rid, _)| rid.as_str()).collect();
    let mut result = Mismatch::default();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (i, d) in decisions.iter().enumerate() {
        let id = d.request_id.as_str();
        if id.trim().is_empty() {
            result.empty.push(i);
            continue;
        }
        let count = counts.entry(id).or_default();
        *count += 1;
        if *count == 2 {
            result.duplicated.push(id.to_string());
        }
        if *count == 1 && !expected.contains(id) {
            result.extra.push(id.to_string());
        }
    }
    result.missing = mapping
        .iter()
        .filter(|(rid, _)| !counts.contains_key(rid.as_str()))
        .map(|(rid, _)| rid.clone())
        .collect();
    result
}

fn resolved_error(record: &ApprovalRecord) -> ApprovalError {
    ApprovalError::AlreadyResolved {
        approval_id: record.approval_id.clone(),
        status: record.status,
        resolved_by: record.resolution.as_ref().map(|r| r.resolved_by.clone()),
    }
}
