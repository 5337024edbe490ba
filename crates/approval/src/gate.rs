//! The approval gate: one model response judged as a whole. Every call goes
//! through the pipeline; calls that need a human become one pending approval for
//! the run (when the run can pause), calls that cannot be answered by id are
//! removed from every surface of the message, and the run's state comes back
//! with the rewritten message.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use warden::{Evaluation, Listed, Shadow, Snapshot, Warden, codes::CONTEXT_KEYS_DROPPED};
use warden_policy::clock::now_rfc3339;
use warden_policy::interaction::{InteractionMode, RunInteractionPolicy};
use warden_policy::origin::{Reach, RunOrigin};
use warden_types::Caller;
use warden_types::decision::{Reason, Verdict};
use warden_types::request::{CallContext, RequestError, ToolCall};

use crate::grant::{Grant, GrantExt, GrantFilter};
use crate::journal::{
    denial_note, denied, journalled, pending, pending_error, recompute, removed_call, run,
};
use crate::reviewer::Reviewer;
use crate::store::{
    ApprovalEvent, ApprovalKind, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind,
    Inserted, JournalFilter, LOCAL_PRINCIPAL, ListFilter, StoreError, StoredRequest, now_ms,
};
pub use crate::validate::MAX_ID_BYTES;
use crate::validate::{check_id, persistable, request_id};
use warden::APPROVAL_STAGE;
use warden_types::approval::{ApprovalRequest, CallOutcome, CallStatus, GateOutcome, RunState};
use warden_types::codes;
use warden_types::error::ApprovalError;
use warden_types::message::{AiMessage, ModelToolCall};
use warden_types::surfaces::SurfaceMismatch;

/// The stage in `decided_by` of a call denied because the approval store
/// could not say whether its thread waits for a human.
pub const STORE_STAGE: &str = "store";

/// The most tool calls one message may carry.
pub const MAX_TOOL_CALLS: usize = 256;

pub use warden_types::approval::{ApprovalView, MAX_RESPONSE_BYTES, ModelResponse};

/// The run a response belongs to (the daemon's route names both), and the
/// principal whose thread it is (the daemon: the token's name).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunRef {
    /// The principal (a token's name, or the local user) whose thread it is.
    pub principal: String,
    /// The conversation thread.
    pub thread_id: String,
    /// The run within the thread.
    pub run_id: String,
}

impl RunRef {
    /// A run of the local principal (the command line, an embedding program).
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunRef {
            principal: LOCAL_PRINCIPAL.to_string(),
            thread_id: thread_id.into(),
            run_id: run_id.into(),
        }
    }

    /// The same run, on a thread of `principal`.
    pub fn of(mut self, principal: impl Into<String>) -> Self {
        self.principal = principal.into();
        self
    }
}

/// The approval gate over one Warden and one approval store.
pub struct ApprovalGate {
    warden: Arc<Warden>,
    store: Arc<dyn ApprovalStore>,
}

impl ApprovalGate {
    /// A gate judging with `warden`'s live policy and keeping pauses in `store`.
    pub fn new(warden: Arc<Warden>, store: Arc<dyn ApprovalStore>) -> Self {
        ApprovalGate { warden, store }
    }

    /// The gate with the SQLite store in `data_dir` (`Config::data_dir`), at
    /// `durability` (`hitl_approval.durability`).
    #[cfg(feature = "sqlite")]
    pub fn open(
        warden: Arc<Warden>,
        data_dir: &std::path::Path,
        durability: crate::durability::Durability,
    ) -> Result<Self, StoreError> {
        let store = crate::sqlite::SqliteApprovalStore::open_in(data_dir, durability)?;
        Ok(ApprovalGate::new(warden, Arc::new(store)))
    }

    /// The library the gate judges with.
    pub fn warden(&self) -> &Warden {
        &self.warden
    }

    /// The store that keeps pauses, grants and the journal.
    pub fn store(&self) -> &dyn ApprovalStore {
        self.store.as_ref()
    }

    /// Judges one model response (`POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`).
    ///
    /// Refused with 409 `approval_pending` while the thread waits for a human,
    /// unless this is the same submission again (then the same answer).
    /// Where the embedder opened the library's decision log
    /// ([`Warden::log_decisions`]), each call of the answer is written to it,
    /// as the daemon writes them to its own.
    pub fn submit(
        &self,
        run: &RunRef,
        response: &ModelResponse,
        caller: Caller,
    ) -> Result<GateOutcome, ApprovalError> {
        let outcome = self.submit_as(run, response, caller, ApprovalKind::Pause)?;
        self.log_outcome(&outcome);
        Ok(outcome)
    }

    /// Writes a model response's calls to the library's decision log, where
    /// one is open (the daemon's Warden has none: it writes its own).
    fn log_outcome(&self, outcome: &GateOutcome) {
        if let Some(log) = self.warden.decision_log() {
            let generation = self.warden.generation(outcome.generation);
            log.record_gate_under(outcome, None, generation.as_ref());
            log.sync_now();
        }
    }

    /// [`ApprovalGate::submit`], pausing as an approval of `kind`.
    pub(crate) fn submit_as(
        &self,
        run: &RunRef,
        response: &ModelResponse,
        caller: Caller,
        kind: ApprovalKind,
    ) -> Result<GateOutcome, ApprovalError> {
        check_id("thread_id", &run.thread_id)?;
        check_id("run_id", &run.run_id)?;
        let context = bind_context(&response.context, run)?;
        if response.message.tool_calls.len() > MAX_TOOL_CALLS {
            // The model wrote them: a decision, never an error.
            let reason = Reason::new(
                codes::TOO_MANY_CALLS,
                format!(
                    "the response asks for {} tool calls; the limit is {MAX_TOOL_CALLS}, so none runs",
                    response.message.tool_calls.len()
                ),
            );
            return Ok(self.refused(run, Some(&response.message), reason));
        }
        let policy = RunInteractionPolicy::resolve(&context, caller)?;
        let origin = RunOrigin::resolve(&context, caller)?;
        let response_digest = submission_digest(caller, &context, &response.message);

        if let Some(pending) = self.pending_on_thread(&run.principal, &run.thread_id)? {
            if pending.run_id == run.run_id && pending.response_digest == response_digest {
                return Ok(replay(&pending));
            }
            return Err(pending_error(&pending));
        }

        let snapshot = self.warden.snapshot();
        let reach = Reach::of(&policy, origin);
        let addressability = response.message.addressability();
        let removed: HashSet<Option<String>> = response
            .message
            .tool_calls
            .iter()
            .zip(&addressability)
            .filter(|(_, problem)| problem.is_some())
            .map(|(call, _)| call.id.clone())
            .collect();
        // What a harness could run from another surface must be what is judged.
        let mismatches = response.message.surface_mismatches(&removed);
        let mismatch = (!mismatches.is_empty()).then(|| {
            let reason = surface_mismatch(&mismatches);
            let message = snapshot
                .redactor()
                .reason_message(&reason.message, &Value::Null);
            Reason { message, ..reason }
        });
        let mut calls = Vec::with_capacity(response.message.tool_calls.len());
        for (index, (call, problem)) in response
            .message
            .tool_calls
            .iter()
            .zip(addressability)
            .enumerate()
        {
            let outcome = match (problem, &mismatch) {
                (Some(problem), _) => removed_call(index, call, &problem),
                (None, Some(reason)) => {
                    denied(index, call, vec![reason.clone()], Some(APPROVAL_STAGE))
                }
                (None, None) => judge(&snapshot, index, call, &context, caller, &reach),
            };
            calls.push(outcome);
        }
        self.apply_grants(&snapshot, &run.principal, &context, &mut calls)?;
        let mut message = response.message.clone();
        message.remove_mismatched(&mismatches);
        message.remove_calls(&removed);

        let mut notices = Vec::new();
        if caller != Caller::Internal && context.run_origin.is_some() {
            notices.push(Reason::new(
                CONTEXT_KEYS_DROPPED,
                "context key run_origin is honoured only from internal callers and was ignored",
            ));
        }
        let generation = snapshot.generation();
        let mut outcome = running(run, calls, message, policy.mode, generation, notices);
        if outcome
            .calls
            .iter()
            .any(|c| c.status == CallStatus::Pending)
        {
            self.pause(
                &mut outcome,
                &run.principal,
                caller,
                &context,
                response_digest,
                kind,
            )?;
        }
        Ok(outcome)
    }

    /// The answer to a model response refused as a whole, because of what its
    /// model wrote (too large, not JSON, too deep, a duplicate key, too many
    /// calls): every call is denied with `reason` and nothing waits. `message` is
    /// the response's message when it could be read (its calls are listed, so the
    /// harness can answer each); otherwise no call is listed and none runs.
    /// Logged as [`ApprovalGate::submit`] logs.
    pub fn refuse(&self, run: &RunRef, message: Option<&AiMessage>, reason: Reason) -> GateOutcome {
        let outcome = self.refused(run, message, reason);
        self.log_outcome(&outcome);
        outcome
    }

    fn refused(&self, run: &RunRef, message: Option<&AiMessage>, reason: Reason) -> GateOutcome {
        let message = message.cloned().unwrap_or_default();
        let calls = message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| denied(index, call, vec![reason.clone()], Some(APPROVAL_STAGE)))
            .collect();
        let generation = self.warden.snapshot().generation();
        let mode = InteractionMode::Interactive;
        running(run, calls, message, mode, generation, vec![reason])
    }

    /// Stores the pending approval: one per run, with a request id per call.
    fn pause(
        &self,
        outcome: &mut GateOutcome,
        principal: &str,
        caller: Caller,
        context: &CallContext,
        response_digest: String,
        kind: ApprovalKind,
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
            principal: principal.to_string(),
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
            resume_key: None,
            expires_at_ms: self
                .warden
                .snapshot()
                .hitl_approval()
                .expiry()
                .map(|after| now_ms() + after.as_millis() as i64),
            kind,
            consumed_at: None,
        };
        let event = ApprovalEvent {
            seq: 0,
            at: record.created_at.clone(),
            kind: EventKind::Paused,
            principal: record.principal.clone(),
            thread_id: record.thread_id.clone(),
            approval_id,
            run_id: record.run_id.clone(),
            reviewer: None,
            relayed_by: None,
            note: None,
            calls: outcome.calls.iter().map(journalled).collect(),
        };
        let quota = self
            .warden
            .snapshot()
            .hitl_approval()
            .max_pending_per_principal;
        match self.store.insert(&record, &event, Some(quota))? {
            Inserted::Paused => Ok(()),
            // Another submission paused this thread first.
            Inserted::ThreadBusy => Err(
                match self
                    .store
                    .pending_on_thread(&record.principal, &record.thread_id)?
                {
                    Some(pending) => pending_error(&pending),
                    None => ApprovalError::Store(StoreError::Database(
                        "the thread's pending approval vanished during the pause".into(),
                    )),
                },
            ),
            Inserted::OverQuota { pending } => {
                over_quota(outcome, principal, pending, quota);
                Ok(())
            }
        }
    }

    /// Judges one lone call of `principal`, as `POST /v1/evaluate` and the
    /// Python module's `evaluate` do: a thread that waits for a human starts
    /// nothing new (a deny, `warden.approval_pending`, naming the pause, its
    /// details in `metadata`); not knowing whether it waits is a deny too
    /// (`warden.store_unavailable`, `decided_by: store`); then
    /// [`Warden::evaluate`]. An error only for what the harness got wrong in
    /// the call's context.
    pub fn evaluate(
        &self,
        principal: &str,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Evaluation, RequestError> {
        self.evaluate_shadowed(principal, call, caller)
            .map(|(evaluation, _)| evaluation)
    }

    /// As [`ApprovalGate::evaluate`], with the call's shadow judgment
    /// ([`Warden::evaluate_shadowed`]) when the pipeline judged it.
    pub fn evaluate_shadowed(
        &self,
        principal: &str,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<(Evaluation, Option<Shadow>), RequestError> {
        if let Some(thread_id) = &call.context.thread_id {
            match self.check_thread(principal, thread_id) {
                Ok(()) => {}
                Err(err @ ApprovalError::ApprovalPending { .. }) => {
                    let mut evaluation = self
                        .warden
                        .refusal(codes::APPROVAL_PENDING, &err.to_string());
                    if let Value::Object(details) = err.details() {
                        evaluation.metadata = details;
                    }
                    return Ok((evaluation, None));
                }
                // Fail closed: whatever kept the store from answering.
                Err(err) => {
                    let generation = self.warden.snapshot().generation();
                    let message = format!("the approval store could not be read: {err}");
                    return crate::unjudged::evaluation(
                        call,
                        caller,
                        generation,
                        STORE_STAGE,
                        warden::codes::STORE_UNAVAILABLE,
                        &message,
                    )
                    .map(|evaluation| (evaluation, None));
                }
            }
        }
        self.warden.evaluate_shadowed(call, caller)
    }

    /// As [`ApprovalGate::evaluate_shadowed`], only when that cannot wait for
    /// the approval store: the call names no thread, or the store tells at
    /// once that its thread is free ([`ApprovalStore::free_at_once`]).
    /// `None` otherwise (the thread may wait for a human, the store is busy
    /// or would need a round trip): judge it with `evaluate_shadowed`, on a
    /// thread that may wait. The providers' own time is the caller's to
    /// bound (`Snapshot::worst_case`).
    pub fn evaluate_at_once(
        &self,
        principal: &str,
        call: &ToolCall,
        caller: Caller,
    ) -> Option<Result<(Evaluation, Option<Shadow>), RequestError>> {
        if let Some(thread_id) = &call.context.thread_id
            && !self.store.free_at_once(principal, thread_id)
        {
            return None;
        }
        Some(self.warden.evaluate_shadowed(call, caller))
    }

    /// Refuses (409 `approval_pending`) when the principal's thread waits for a
    /// human: for any other entry point that starts work on a thread, such as
    /// judging a single call with a `thread_id`.
    pub fn check_thread(&self, principal: &str, thread_id: &str) -> Result<(), ApprovalError> {
        // A shared store's index may know the thread free without a round
        // trip (crate::waiting); it never knows one waiting.
        if self.store.known_free(principal, thread_id) {
            return Ok(());
        }
        match self.pending_on_thread(principal, thread_id)? {
            Some(pending) => Err(pending_error(&pending)),
            None => Ok(()),
        }
    }

    /// The principal's pending approval on a thread; one past its expiry is
    /// expired first (whether or not the sweeper got to it), so that an
    /// approval never outlives `hitl_approval.expire_after`.
    pub(crate) fn pending_on_thread(
        &self,
        principal: &str,
        thread_id: &str,
    ) -> Result<Option<ApprovalRecord>, ApprovalError> {
        match self.store.pending_on_thread(principal, thread_id)? {
            Some(record) if record.is_overdue(now_ms()) => {
                self.expire(&record)?;
                Ok(self.store.pending_on_thread(principal, thread_id)?)
            }
            found => Ok(found),
        }
    }

    /// Purges the arguments of approvals resolved more than the replay window
    /// ago ([`super::purge`]); returns how many (the daemon's sweeper).
    pub fn purge_resolved(&self) -> Result<usize, ApprovalError> {
        self.purge_resolved_at(now_ms())
    }

    /// [`Self::purge_resolved`] as if it were `now_ms`.
    pub fn purge_resolved_at(&self, now_ms: i64) -> Result<usize, ApprovalError> {
        let before = now_ms - super::purge::REPLAY_WINDOW_MS;
        let mut purged = 0;
        loop {
            match self.store.purge_resolved(before)? {
                0 => return Ok(purged),
                n => purged += n,
            }
        }
    }

    /// Expires every pending approval past its expiry (the daemon's sweeper);
    /// returns how many this call expired.
    pub fn expire_overdue(&self) -> Result<usize, ApprovalError> {
        let mut expired = 0;
        for record in self.store.overdue(now_ms())? {
            if self.expire(&record)? {
                expired += 1;
            }
        }
        Ok(expired)
    }

    /// Lets the live grants of the principal answer the calls that would wait
    /// for a human: each becomes a call that runs, with the grant's reason
    /// first. Denied calls stay denied: a grant never overrides a deny.
    pub(crate) fn apply_grants(
        &self,
        snapshot: &warden::Snapshot,
        principal: &str,
        context: &CallContext,
        calls: &mut [CallOutcome],
    ) -> Result<(), ApprovalError> {
        if !calls.iter().any(|c| c.status == CallStatus::Pending) {
            return Ok(());
        }
        let now = now_ms();
        let grants = self
            .store
            .live_grants(principal, context.thread_id.as_deref(), now)?;
        if grants.is_empty() {
            return Ok(());
        }
        for call in calls.iter_mut().filter(|c| c.status == CallStatus::Pending) {
            let tool_call = ToolCall {
                tool_name: call.name.clone(),
                tool_input: call.args.clone(),
                tool_call_id: call.id.clone(),
                context: context.clone(),
            };
            if let Some(grant) = grants.iter().find(|g| g.allows(snapshot, &tool_call, now)) {
                call.status = CallStatus::Run;
                call.reasons.insert(0, grant.reason());
                call.decided_by = Some(APPROVAL_STAGE.to_string());
            }
        }
        Ok(())
    }

    /// Standing grants, newest first (`GET /v1/grants`).
    pub fn grants(&self, filter: &GrantFilter) -> Result<Vec<Grant>, ApprovalError> {
        Ok(self.store.grants(filter, now_ms())?)
    }

    /// Revokes a grant, journalled with the reviewer's name; revoking one that
    /// already ended changes nothing and returns it as it is.
    pub fn revoke_grant(
        &self,
        reviewer: &Reviewer,
        grant_id: &str,
    ) -> Result<Grant, ApprovalError> {
        check_id("grant_id", grant_id)?;
        let not_found = || ApprovalError::GrantNotFound {
            grant_id: grant_id.to_string(),
        };
        let found = self
            .store
            .grants(
                &GrantFilter {
                    principal: reviewer.scope().map(str::to_string),
                    include_inactive: true,
                },
                now_ms(),
            )?
            .into_iter()
            .find(|g| g.grant_id == grant_id)
            .ok_or_else(not_found)?;
        let event = ApprovalEvent {
            seq: 0,
            at: now_rfc3339(),
            kind: EventKind::Revoked,
            principal: found.principal.clone(),
            thread_id: found.thread_id.clone().unwrap_or_default(),
            approval_id: found.approval_id.clone(),
            run_id: String::new(),
            reviewer: Some(reviewer.name.clone()),
            relayed_by: reviewer.relayed_by.clone(),
            note: Some(format!("revoked grant {grant_id}")),
            calls: Vec::new(),
        };
        self.store
            .revoke_grant(grant_id, &reviewer.describe(), now_ms(), &event)?
            .ok_or_else(not_found)
    }

    /// Approvals with what a human needs to answer them
    /// (`GET /v1/threads/{thread_id}/approvals`): pending ones, or all.
    pub fn approvals(&self, filter: &ListFilter) -> Result<Vec<ApprovalView>, ApprovalError> {
        Ok(self
            .store
            .list(filter)?
            .iter()
            .map(ApprovalView::from)
            .collect())
    }

    /// The approval journal, oldest first.
    pub fn journal(&self, filter: &JournalFilter) -> Result<Vec<ApprovalEvent>, ApprovalError> {
        Ok(self.store.events(filter)?)
    }
}

/// An outcome on which the run goes on (before any pause).
fn running(
    run: &RunRef,
    calls: Vec<CallOutcome>,
    message: AiMessage,
    interaction_mode: InteractionMode,
    generation: u64,
    notices: Vec<Reason>,
) -> GateOutcome {
    GateOutcome {
        thread_id: run.thread_id.clone(),
        run_id: run.run_id.clone(),
        run_state: RunState::Running,
        approval_id: None,
        requests: Vec::new(),
        calls,
        message,
        interaction_mode,
        generation,
        notices,
    }
}

/// One approval as listed (`ApprovalView::from(record)`): its requests as a
/// human answers them, and whether it can take per-call decisions at all.
impl From<&ApprovalRecord> for ApprovalView {
    fn from(record: &ApprovalRecord) -> ApprovalView {
        let check = recompute(record);
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
            principal: record.principal.clone(),
            thread_id: record.thread_id.clone(),
            run_id: record.run_id.clone(),
            status: record.status,
            run_state: pending.then_some(RunState::WaitingForInput),
            created_at: record.created_at.clone(),
            expires_at: record.expires_at_ms.map(super::grant::rfc3339),
            requests,
            broken: check.problems,
            resolution: record.resolution.clone(),
            kind: record.kind,
            consumed_at: record.consumed_at.clone(),
        }
    }
}

/// One call through the pipeline, then the approval list.
pub(crate) fn judge(
    snapshot: &warden::Snapshot,
    index: usize,
    call: &ModelToolCall,
    context: &CallContext,
    caller: Caller,
    reach: &Reach,
) -> CallOutcome {
    let tool_call = call.tool_call(context);
    // A malformed call from the model is refused on its own; the rest of the
    // message is still judged and the thread stays usable. The approval list
    // is applied below, where the gate can pause.
    let evaluation = match snapshot.evaluate_in_response(&tool_call, caller) {
        Ok(evaluation) => evaluation,
        Err(err) => {
            let message = format!("invalid tool call: {err}");
            let message = snapshot.redactor().reason_message(&message, &call.args);
            let reason = Reason::new(codes::INVALID_CALL, message);
            return denied(index, call, vec![reason], Some(APPROVAL_STAGE));
        }
    };
    let decided_by = evaluation.decided_by.as_deref();
    match evaluation.verdict {
        Verdict::Deny => denied(index, call, evaluation.reasons, decided_by),
        Verdict::Ask => match reach {
            Reach::Pause => pending(index, call, evaluation.reasons, decided_by),
            // Only a listed tool follows `non_interactive`; an ask from any
            // stage in a run that cannot pause is a deny.
            Reach::Unattended(why) | Reach::Never(why) => {
                let mut reasons = vec![Snapshot::ask_unavailable(why)];
                reasons.extend(evaluation.reasons);
                denied(index, call, reasons, decided_by)
            }
        },
        Verdict::Allow => match snapshot.listed(&tool_call, reach) {
            None => run(index, call, evaluation.reasons, decided_by),
            Some(Listed::Pause(reason)) => pending(index, call, vec![reason], Some(APPROVAL_STAGE)),
            Some(Listed::Waived(reason)) => {
                let mut reasons = evaluation.reasons;
                reasons.push(reason);
                run(index, call, reasons, Some(APPROVAL_STAGE))
            }
            Some(Listed::Unavailable(reason)) => {
                denied(index, call, vec![reason], Some(APPROVAL_STAGE))
            }
        },
    }
}

/// The reason every call of a message is denied when its surfaces disagree.
fn surface_mismatch(mismatches: &[SurfaceMismatch]) -> Reason {
    const SHOWN: usize = 3;
    let mut listed: Vec<String> = mismatches
        .iter()
        .take(SHOWN)
        .map(|m| m.to_string())
        .collect();
    if mismatches.len() > SHOWN {
        listed.push(format!("and {} more", mismatches.len() - SHOWN));
    }
    Reason::new(
        codes::SURFACE_MISMATCH,
        format!(
            "the response's other surfaces hold calls that were not judged ({}); \
             no call of this message may run, and those entries were removed",
            listed.join("; ")
        ),
    )
}

/// A pause past the principal's quota is not made: the calls that would have
/// waited for a human are denied, and the run goes on with the others.
fn over_quota(outcome: &mut GateOutcome, principal: &str, pending: u64, quota: u64) {
    let reason = Reason::new(
        codes::APPROVAL_QUOTA_EXCEEDED,
        format!(
            "'{principal}' already has {pending} approvals waiting for a human (hitl_approval.max_pending_per_principal is {quota}); answer or clear them first"
        ),
    );
    for call in outcome
        .calls
        .iter_mut()
        .filter(|c| c.status == CallStatus::Pending)
    {
        call.status = CallStatus::Denied;
        call.request_id = None;
        call.reasons.insert(0, reason.clone());
        call.decided_by = Some(APPROVAL_STAGE.to_string());
        call.note = Some(denial_note(&call.name, &call.reasons));
    }
    outcome.requests.clear();
    outcome.approval_id = None;
    outcome.run_state = RunState::Running;
}

/// Identifies a submission: the same caller, context and message again is a retry.
fn submission_digest(caller: Caller, context: &CallContext, message: &AiMessage) -> String {
    let text =
        serde_json::json!({"caller": caller, "context": context, "message": message}).to_string();
    hex::encode(Sha256::digest(text.as_bytes()))
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

/// The answer a paused submission got, given again to its retry.
fn replay(record: &ApprovalRecord) -> GateOutcome {
    GateOutcome {
        thread_id: record.thread_id.clone(),
        run_id: record.run_id.clone(),
        run_state: RunState::WaitingForInput,
        approval_id: Some(record.approval_id.clone()),
        requests: ApprovalView::from(record).requests,
        calls: record.calls.clone(),
        message: record.message.clone(),
        // Only interactive runs pause.
        interaction_mode: InteractionMode::Interactive,
        generation: record.generation,
        notices: Vec::new(),
    }
}
