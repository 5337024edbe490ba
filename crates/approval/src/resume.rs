//! Answering a pending approval: a resume (a decision per request, or one
//! all-reject), an operator's clear, and the restore of a consumed approval whose
//! run could not be handed over. The request ids are recomputed from the stored
//! message before any decision applies, and consumption is the store's
//! compare-and-swap, so of two resumes exactly one wins.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use warden_policy::clock::now_rfc3339;
use warden_types::decision::Reason;
use warden_types::request::CallContext;

use crate::gate::{ApprovalGate, judge};
use crate::grant::{Grant, GrantExt, check_grant};
use crate::journal::{
    Recomputed, denied, journalled, outcome, recompute, removed_call, resolved_error,
};
use crate::reviewer::Reviewer;
use crate::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, EventKind, Expected, JournalledCall, ListFilter,
    ResumeKey, now_ms, requests_digest,
};
use crate::validate::check_id;
use warden::APPROVAL_STAGE;
use warden_types::approval::{
    CallOutcome, CallStatus, DecisionKind, Resolution, ResolvedBy, RunState,
};
use warden_types::codes;
use warden_types::error::{ApprovalError, Mismatch};
use warden_types::message::{AiMessage, ModelToolCall};

pub use warden_types::approval::{
    MAX_MESSAGE_BYTES, MAX_RESUME_BYTES, RejectAll, RequestDecision, ResumeRequest,
};

/// Everything a resume body must satisfy before it is matched against a
/// pause: [`ResumeRequest::check`], and the syntax of each grant's rule (which
/// needs the permission engine, so the wire type cannot check it itself).
pub fn check_resume(request: &ResumeRequest) -> Result<(), ApprovalError> {
    request.check()?;
    for (i, d) in request.decisions.iter().flatten().enumerate() {
        if let Some(grant) = &d.grant {
            check_grant(grant, &format!("decisions[{i}].grant"))?;
        }
    }
    Ok(())
}

/// What identifies this resume among others with the same key: what it
/// decides, for which run, and who answered.
fn digest(request: &ResumeRequest, reviewer: &Reviewer, run_id: &str) -> String {
    use sha2::{Digest, Sha256};
    let text = serde_json::json!({
        "decisions": request.decisions,
        "reject_all": request.reject_all,
        "run_id": run_id,
        "reviewer": reviewer.name,
        "relayed_by": reviewer.relayed_by,
    })
    .to_string();
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// What a settlement of a pending approval is made of: the approval, how each
/// of its calls is answered, and by whom.
pub(crate) struct Settlement<'a> {
    /// The pending approval, as read.
    pub(crate) record: &'a ApprovalRecord,
    /// Its request ids mapped to the calls of its message, recomputed.
    pub(crate) check: &'a Recomputed,
    pub(crate) answers: &'a Answers<'a>,
    /// A resume, a clear or an expiry.
    pub(crate) resolved_by: ResolvedBy,
    /// Who answered; none for an expiry.
    pub(crate) reviewer: Option<&'a Reviewer>,
    /// A resume's idempotency key, to replay its answer when sent twice.
    pub(crate) key: Option<&'a ResumeKey>,
    /// The grants asked for, by the request id of the call each approves.
    pub(crate) grants: Vec<(String, Grant)>,
}

/// How each pending call is answered.
pub(crate) enum Answers<'a> {
    /// A decision per request, by request id.
    Each(HashMap<&'a str, &'a RequestDecision>),
    /// Everything rejected, with this reason.
    RejectAll(Reason),
}

impl ApprovalGate {
    /// Rejects an overdue approval as a whole, journalled as expired; false
    /// when something else resolved it first.
    pub(crate) fn expire(&self, record: &ApprovalRecord) -> Result<bool, ApprovalError> {
        let after = self
            .warden()
            .snapshot()
            .hitl_approval()
            .expire_after
            .clone()
            .unwrap_or_else(|| "its expiry".to_string());
        let reason = Reason::new(
            codes::APPROVAL_EXPIRED,
            format!("nobody answered within {after}: rejected"),
        );
        let check = recompute(record);
        let answers = Answers::RejectAll(reason);
        let by = ResolvedBy::Expiry { after };
        match self.settle(Settlement {
            record,
            check: &check,
            answers: &answers,
            resolved_by: by,
            reviewer: None,
            key: None,
            grants: Vec::new(),
        }) {
            Ok(_) => Ok(true),
            Err(ApprovalError::AlreadyResolved { .. }) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Answers an approval (`POST /v1/threads/{thread_id}/approvals/{approval_id}/resume`)
    /// as `reviewer`. Without `approval_id`, the thread's pending approval (a
    /// reviewer who may answer several principals' threads must name it when
    /// more than one of them waits on this thread id).
    ///
    /// The decisions must name exactly the pending request ids (422 otherwise);
    /// a pause that cannot take per-call decisions takes only an all-reject
    /// (422 `broken_pause`). The same resume again (same idempotency key, same
    /// body, same reviewer) gets the stored resolution with `replayed: true`
    /// and consumes nothing; any other resume of a resolved approval gets 409.
    ///
    /// Where the embedder opened the library's decision log
    /// ([`warden::Warden::log_decisions`]), the resolution's calls are written
    /// to it, as the daemon writes them to its own.
    pub fn resume(
        &self,
        reviewer: &Reviewer,
        thread_id: &str,
        approval_id: Option<&str>,
        request: &ResumeRequest,
    ) -> Result<Resolution, ApprovalError> {
        let resolution = self.resume_unlogged(reviewer, thread_id, approval_id, request)?;
        if let Some(log) = self.warden().decision_log() {
            log.record_resolution(&resolution, None);
            log.sync_now();
        }
        Ok(resolution)
    }

    fn resume_unlogged(
        &self,
        reviewer: &Reviewer,
        thread_id: &str,
        approval_id: Option<&str>,
        request: &ResumeRequest,
    ) -> Result<Resolution, ApprovalError> {
        check_id("thread_id", thread_id)?;
        check_resume(request)?;
        let record = self.find(reviewer.scope(), thread_id, approval_id)?;
        let resume_run = request
            .run_id
            .clone()
            .unwrap_or_else(|| record.run_id.clone());
        let key = ResumeKey {
            key: request
                .idempotency_key
                .clone()
                .unwrap_or_else(|| resume_run.clone()),
            digest: digest(request, reviewer, &resume_run),
        };
        if record.status != ApprovalStatus::Pending {
            return replay(&record, &key);
        }
        let check = recompute(&record);
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
                Answers::RejectAll(rejection(&reviewer.describe(), message))
            }
        };
        let grants = self.grants_asked(&record, &check, request, reviewer)?;
        self.settle(Settlement {
            record: &record,
            check: &check,
            answers: &answers,
            resolved_by: ResolvedBy::Resume { run_id: resume_run },
            reviewer: Some(reviewer),
            key: Some(&key),
            grants,
        })
    }

    /// The grants the approvals of this resume ask for, each bound to the call
    /// it approves, by request id; refused (422) when one would allow more
    /// than that call.
    fn grants_asked(
        &self,
        record: &ApprovalRecord,
        check: &Recomputed,
        request: &ResumeRequest,
        reviewer: &Reviewer,
    ) -> Result<Vec<(String, Grant)>, ApprovalError> {
        let snapshot = self.warden().snapshot();
        let now = now_ms();
        let mut grants = Vec::new();
        for (n, d) in request.decisions.iter().flatten().enumerate() {
            let Some(asked) = &d.grant else { continue };
            let Some((_, i)) = check.mapping.iter().find(|(rid, _)| *rid == d.request_id) else {
                continue;
            };
            let call = &record.message.tool_calls[*i];
            let tool_call = call.tool_call(&record.context);
            let grant = Grant::for_approved(
                &snapshot,
                asked,
                &format!("decisions[{n}].grant"),
                &tool_call,
                (&record.principal, &record.approval_id),
                &reviewer.describe(),
                now,
            )?;
            grants.push((d.request_id.clone(), grant));
        }
        Ok(grants)
    }

    /// Resumes, then hands the resolution over (to a worker, to stdout); if the
    /// hand-off fails, restores exactly this consumption so that the resume can
    /// be retried, and reports both.
    pub fn resume_and_hand_off<E: std::fmt::Display>(
        &self,
        reviewer: &Reviewer,
        thread_id: &str,
        approval_id: Option<&str>,
        request: &ResumeRequest,
        hand_off: impl FnOnce(&Resolution) -> Result<(), E>,
    ) -> Result<Resolution, ApprovalError> {
        let resolution = self.resume(reviewer, thread_id, approval_id, request)?;
        if resolution.replayed {
            // Handed over before; a failed hand-off now restores nothing.
            return hand_off(&resolution)
                .map(|()| resolution.clone())
                .map_err(|err| ApprovalError::HandOff {
                    approval_id: resolution.approval_id.clone(),
                    message: err.to_string(),
                    restored: false,
                });
        }
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
        let Some(record) = self.store().get(&resolution.approval_id)? else {
            return Ok(false);
        };
        let event = ApprovalEvent {
            seq: 0,
            at: now_rfc3339(),
            kind: EventKind::Restored,
            principal: record.principal,
            thread_id: resolution.thread_id.clone(),
            approval_id: resolution.approval_id.clone(),
            run_id: run_id.clone(),
            reviewer: None,
            relayed_by: None,
            note: Some(format!("hand-off failed: {why}")),
            calls: Vec::new(),
        };
        Ok(self
            .store()
            .restore(&resolution.approval_id, &resolution.consumption_id, &event)?)
    }

    /// Rejects a pending approval as a whole, as an operator (`warden
    /// approvals clear`, the clear route), with a journal entry naming the
    /// reviewer. Works on any pause, including one that cannot take per-call
    /// decisions. Without `approval_id`, the thread's pending approval, and
    /// `Ok(None)` when nothing was pending; with it, 409 when it is resolved.
    pub fn clear(
        &self,
        reviewer: &Reviewer,
        thread_id: &str,
        approval_id: Option<&str>,
        reason: Option<&str>,
    ) -> Result<Option<Resolution>, ApprovalError> {
        check_id("thread_id", thread_id)?;
        let record = match approval_id {
            Some(_) => self.find(reviewer.scope(), thread_id, approval_id)?,
            None => match self.pending_in_scope(reviewer.scope(), thread_id)? {
                Some(record) => record,
                None => return Ok(None),
            },
        };
        if record.status != ApprovalStatus::Pending {
            return Err(resolved_error(&record));
        }
        let check = recompute(&record);
        let answers = Answers::RejectAll(rejection(
            &format!("operator {}", reviewer.describe()),
            reason,
        ));
        let by = ResolvedBy::Clear {
            actor: reviewer.name.clone(),
            reason: reason.map(str::to_string),
        };
        self.settle(Settlement {
            record: &record,
            check: &check,
            answers: &answers,
            resolved_by: by,
            reviewer: Some(reviewer),
            key: None,
            grants: Vec::new(),
        })
        .map(Some)
    }

    /// The approval an answer names, in any state: by id on this thread, or
    /// the thread's pending one (else its latest), within `scope`. An approval
    /// outside the scope is not found, so that a relay learns nothing of other
    /// principals' threads.
    pub fn find(
        &self,
        scope: Option<&str>,
        thread_id: &str,
        approval_id: Option<&str>,
    ) -> Result<ApprovalRecord, ApprovalError> {
        let not_found = || ApprovalError::NotFound {
            thread_id: thread_id.to_string(),
            approval_id: approval_id.map(str::to_string),
        };
        match approval_id {
            Some(id) => {
                let record = self
                    .store()
                    .get(id)?
                    .filter(|r| r.thread_id == thread_id)
                    .filter(|r| scope.is_none_or(|p| p == r.principal))
                    .ok_or_else(not_found)?;
                if !record.is_overdue(now_ms()) {
                    return Ok(record);
                }
                // Past its expiry: expired now, and answered as such.
                self.expire(&record)?;
                self.store().get(id)?.ok_or_else(not_found)
            }
            None => match self.pending_in_scope(scope, thread_id)? {
                Some(record) => Ok(record),
                None => self
                    .store()
                    .list(&ListFilter {
                        principal: scope.map(str::to_string),
                        thread_id: Some(thread_id.to_string()),
                        include_resolved: true,
                    })?
                    .pop()
                    .ok_or_else(not_found),
            },
        }
    }

    /// The one pending approval on this thread id within `scope`; refused when
    /// several principals each have one there.
    fn pending_in_scope(
        &self,
        scope: Option<&str>,
        thread_id: &str,
    ) -> Result<Option<ApprovalRecord>, ApprovalError> {
        if let Some(principal) = scope {
            return self.pending_on_thread(principal, thread_id);
        }
        let now = now_ms();
        let mut pending = Vec::new();
        for record in self.store().list(&ListFilter {
            principal: None,
            thread_id: Some(thread_id.to_string()),
            include_resolved: false,
        })? {
            if record.is_overdue(now) {
                self.expire(&record)?;
            } else {
                pending.push(record);
            }
        }
        if pending.len() > 1 {
            return Err(ApprovalError::AmbiguousThread {
                thread_id: thread_id.to_string(),
                principals: pending.iter().map(|r| r.principal.clone()).collect(),
            });
        }
        Ok(pending.pop())
    }

    /// Applies the answers to the stored message and consumes the approval.
    /// A resume is journalled under the resuming run; a clear under the paused
    /// run, naming the operator.
    pub(crate) fn settle(&self, settlement: Settlement<'_>) -> Result<Resolution, ApprovalError> {
        let Settlement {
            record,
            check,
            answers,
            resolved_by,
            reviewer,
            key,
            grants,
        } = settlement;
        let (kind, attributed_to, note) = match &resolved_by {
            ResolvedBy::Resume { run_id } => (
                EventKind::Resumed,
                run_id.clone(),
                (*run_id != record.run_id).then(|| format!("resumes run '{}'", record.run_id)),
            ),
            ResolvedBy::Clear { reason, .. } => {
                (EventKind::Cleared, record.run_id.clone(), reason.clone())
            }
            ResolvedBy::Expiry { after } => (
                EventKind::Expired,
                record.run_id.clone(),
                Some(format!("unanswered for {after}")),
            ),
        };
        let said = reviewer.map_or_else(|| "nobody".to_string(), Reviewer::describe);
        let (calls, message, journal) = self.answer(record, check, answers, &attributed_to, &said);
        let resolution = Resolution {
            approval_id: record.approval_id.clone(),
            thread_id: record.thread_id.clone(),
            run_id: record.run_id.clone(),
            resolved_by,
            reviewer: reviewer.map(|r| r.name.clone()),
            relayed_by: reviewer.and_then(|r| r.relayed_by.clone()),
            answered_by: reviewer.map(|r| r.answered_by).unwrap_or_default(),
            replayed: false,
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
            principal: record.principal.clone(),
            thread_id: record.thread_id.clone(),
            approval_id: record.approval_id.clone(),
            run_id: attributed_to,
            reviewer: resolution.reviewer.clone(),
            relayed_by: resolution.relayed_by.clone(),
            note,
            calls: journal,
        };
        let digest = requests_digest(&record.requests);
        let expected = Expected {
            approval_id: &record.approval_id,
            version: record.version,
            requests_digest: &digest,
        };
        // A grant holds only for a call that runs now: one that the re-judging
        // denied gets none.
        let grants: Vec<Grant> = grants
            .into_iter()
            .filter(|(rid, _)| {
                resolution.calls.iter().any(|c| {
                    c.request_id.as_deref() == Some(rid.as_str()) && c.status == CallStatus::Run
                })
            })
            .map(|(_, grant)| grant)
            .collect();
        let granted = grants.iter().map(|g| granted_event(&event, g));
        let events: Vec<ApprovalEvent> = std::iter::once(event.clone()).chain(granted).collect();
        if self
            .store()
            .resolve(&expected, &resolution, key, &grants, &events)?
        {
            return Ok(resolution);
        }
        // Lost the compare-and-swap: to the same resume sent twice at once
        // (replay its answer), or to another (say who won).
        match (self.store().get(&record.approval_id)?, key) {
            (Some(now), Some(key)) => replay(&now, key),
            (Some(now), None) => Err(resolved_error(&now)),
            (None, _) => Err(ApprovalError::NotFound {
                thread_id: record.thread_id.clone(),
                approval_id: Some(record.approval_id.clone()),
            }),
        }
    }

    /// Every call of the paused message, answered; the rewritten message; and
    /// the calls the journal adopts for the resolving run.
    fn answer(
        &self,
        record: &ApprovalRecord,
        check: &Recomputed,
        answers: &Answers<'_>,
        attributed_to: &str,
        reviewer: &str,
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
        let context = rejudging_context(record, attributed_to);
        // A store that cannot be read gives no grant: the call is then denied
        // as not asked, never allowed.
        let grants = self
            .store()
            .live_grants(&record.principal, context.thread_id.as_deref(), now_ms())
            .unwrap_or_default();
        let judge = Rejudge {
            snapshot: self.warden().snapshot(),
            context,
            caller: record.caller,
            reviewer: reviewer.to_string(),
            grants,
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
            } else if let Some(base) = base.filter(|b| b.status == CallStatus::Run) {
                // Not asked about, and allowed at the pause: it runs only if
                // the policy live now still lets it run without a human.
                let mut o = judge.not_asked(index, call);
                o.decision = base.decision;
                o
            } else if let Some(base) = base.filter(|b| b.status == CallStatus::Denied) {
                // Denied at the pause: it stays denied.
                calls.push((*base).clone());
                continue;
            } else {
                // Pending without a request the mapping reaches (a broken
                // pause), or without any stored verdict: it never runs.
                match answers {
                    Answers::RejectAll(reason) => {
                        let mut o = denied(index, call, vec![reason.clone()], Some(APPROVAL_STAGE));
                        o.decision = Some(DecisionKind::Reject);
                        o
                    }
                    Answers::Each(_) => {
                        let reason = Reason::new(
                            codes::APPROVAL_UNAVAILABLE,
                            "the pause holds no verdict for this call",
                        );
                        denied(index, call, vec![reason], Some(APPROVAL_STAGE))
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

/// The journal entry of a grant given with a resume.
fn granted_event(resumed: &ApprovalEvent, grant: &Grant) -> ApprovalEvent {
    let what = match &grant.target {
        super::grant::GrantTarget::Call { tool, .. } => format!("the same call to '{tool}'"),
        super::grant::GrantTarget::Rule { rule } => format!("calls matching '{rule}'"),
    };
    let scope = match &grant.thread_id {
        Some(thread) => format!("in thread '{thread}'"),
        None => format!("for every thread of '{}'", grant.principal),
    };
    ApprovalEvent {
        kind: EventKind::Granted,
        note: Some(format!(
            "grant {}: {what} {scope} until {}",
            grant.grant_id, grant.expires_at
        )),
        calls: Vec::new(),
        ..resumed.clone()
    }
}

/// The context a call of a paused message is judged again with: the paused
/// run's, attributed to the run that carries it on.
fn rejudging_context(record: &ApprovalRecord, run_id: &str) -> CallContext {
    CallContext {
        run_id: Some(run_id.to_string()),
        // The call runs now: judged at the host's time, not the pause's.
        timestamp: None,
        ..record.context.clone()
    }
}

impl ApprovalGate {
    /// How a resume would judge the pending call `call` of `record` edited
    /// into `args`, if it ran now; stores nothing. The console's trial of an
    /// edit, so that one the policy denies is corrected before it is sent.
    pub fn judge_edit(
        &self,
        record: &ApprovalRecord,
        call: &ModelToolCall,
        args: Value,
    ) -> CallOutcome {
        let judge = Rejudge {
            snapshot: self.warden().snapshot(),
            context: rejudging_context(record, &record.run_id),
            caller: record.caller,
            reviewer: String::new(),
            grants: Vec::new(),
        };
        let edited = ModelToolCall {
            args,
            ..call.clone()
        };
        judge.judge(0, &edited)
    }
}

/// What every call a resume would run is judged again with: the policy live
/// now, the paused run's context attributed to the resuming run, the caller
/// that paused, and the principal's live grants.
struct Rejudge {
    snapshot: std::sync::Arc<warden::Snapshot>,
    context: CallContext,
    caller: warden_types::Caller,
    /// Who answered, for the reasons: `alice`, or `"bob", relayed by gateway`.
    reviewer: String,
    grants: Vec<Grant>,
}

impl Rejudge {
    /// The call through the whole pipeline and the approval list, now. The
    /// run paused, so a human can be reached.
    fn judge(&self, index: usize, call: &ModelToolCall) -> CallOutcome {
        judge(
            &self.snapshot,
            index,
            call,
            &self.context,
            self.caller,
            &warden_policy::origin::Reach::Pause,
        )
    }

    /// A call the human answered (approved, or edited into `call`): a deny now
    /// stands; an ask is the question the human just answered.
    fn answered(&self, index: usize, call: &ModelToolCall, answer: Reason) -> CallOutcome {
        let judged = self.judge(index, call);
        if judged.status == CallStatus::Denied {
            return judged;
        }
        let mut reasons = vec![answer];
        reasons.extend(judged.reasons);
        outcome(index, call, CallStatus::Run, reasons, Some(APPROVAL_STAGE))
    }

    /// A call nobody was asked about: it runs if it still may without a
    /// human, or under a live grant; if it would now ask, it is denied, since
    /// nobody approved it.
    fn not_asked(&self, index: usize, call: &ModelToolCall) -> CallOutcome {
        let mut judged = self.judge(index, call);
        if judged.status != CallStatus::Pending {
            return judged;
        }
        let tool_call = call.tool_call(&self.context);
        let now = now_ms();
        if let Some(grant) = self
            .grants
            .iter()
            .find(|g| g.allows(&self.snapshot, &tool_call, now))
        {
            judged.status = CallStatus::Run;
            judged.reasons.insert(0, grant.reason());
            return judged;
        }
        let mut reasons = vec![Reason::new(
            codes::APPROVAL_NOT_ASKED,
            "nobody was asked about this call at the pause, and judged again at resume it needs a human's approval: denied",
        )];
        reasons.extend(judged.reasons);
        denied(index, call, reasons, Some(APPROVAL_STAGE))
    }
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
        Answers::RejectAll(reason) => {
            denied(index, call, vec![reason.clone()], Some(APPROVAL_STAGE))
        }
        Answers::Each(decisions) => {
            let d = decisions[rid];
            match d.decision {
                DecisionKind::Approve => {
                    let granted = Reason::new(
                        codes::APPROVAL_GRANTED,
                        format!("approved by {}", judge.reviewer),
                    );
                    judge.answered(index, call, granted)
                }
                DecisionKind::Reject => {
                    let reason = rejection(&judge.reviewer, d.message.as_deref());
                    denied(index, call, vec![reason], Some(APPROVAL_STAGE))
                }
                DecisionKind::Edit => {
                    let edited = ModelToolCall {
                        args: d.args.clone().unwrap_or(Value::Null),
                        ..call.clone()
                    };
                    let answer = Reason::new(
                        codes::APPROVAL_EDITED,
                        format!("edited and approved by {}", judge.reviewer),
                    );
                    let mut o = judge.answered(index, &edited, answer);
                    if o.status == CallStatus::Denied {
                        // The model's own call stays in the message; the note
                        // answers it.
                        o.args = call.args.clone();
                    }
                    o
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

/// The stored answer to a resume already made with this key and body, or 409
/// for any other resume of a resolved approval.
fn replay(record: &ApprovalRecord, key: &ResumeKey) -> Result<Resolution, ApprovalError> {
    match (&record.resume_key, &record.resolution) {
        (Some(consumed), Some(resolution))
            if consumed == key && record.status == ApprovalStatus::Resumed =>
        {
            Ok(Resolution {
                replayed: true,
                ..resolution.clone()
            })
        }
        _ => Err(resolved_error(record)),
    }
}
