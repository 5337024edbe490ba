//! What the daemon does with every outcome of the approval gate, once the
//! store holds it: counts its calls, logs them (and waits for the log to be
//! synced), and tells the console and the webhooks of the pause made or
//! answered.

use crate::auth::Principal;
use crate::events::{PauseEvent, PauseKind};
use crate::notify::Notice;
use crate::state::DaemonState;
use warden::{Evaluation, ToolCall};
use warden_approval::{CallOutcome, GateOutcome, Resolution};
use warden_log::{CallerTrust, DecisionLog, LineFacts, LoggedShadow, Requester, status_verdict};

/// The caller as the decision log names it.
pub(crate) fn requester(who: &Principal) -> Requester<'_> {
    Requester {
        token: &who.name,
        role: who.role.as_str(),
    }
}

impl DaemonState {
    /// Logs one judged call under `id`: who asked, how its claims were
    /// honoured (the caller's credential, the configured passport), and its
    /// shadow judgment if any.
    pub(crate) fn log_decision(
        &self,
        id: &str,
        call: &ToolCall,
        evaluation: &Evaluation,
        who: &Principal,
        shadow: Option<LoggedShadow>,
    ) {
        let generation = self.warden.generation(evaluation.generation);
        let trust = CallerTrust {
            caller: crate::routes::caller_of(who),
            passport: generation.as_ref().and_then(|g| g.passport.as_deref()),
        };
        let facts = LineFacts {
            requester: Some(requester(who)),
            caller: Some(trust.caller),
            trust: Some(trust),
            generation: generation.as_ref(),
            shadow,
        };
        self.decisions.record_with(id, call, evaluation, facts);
    }

    /// Logs one judged call as [`DaemonState::log_decision`] does, and
    /// returns its id.
    pub(crate) fn log_new_decision(
        &self,
        call: &ToolCall,
        evaluation: &Evaluation,
        who: &Principal,
    ) -> String {
        let id = DecisionLog::decision_id(evaluation);
        self.log_decision(&id, call, evaluation, who, None);
        id
    }

    /// Counts each call's verdict in the metrics.
    fn count(&self, calls: &[CallOutcome]) {
        for call in calls {
            self.metrics.decision(
                status_verdict(call.status),
                call.decided_by.as_deref(),
                &call.reasons,
            );
        }
    }

    /// Counts and logs every call of a model response the gate judged, and
    /// announces the pause it made, if any.
    pub(crate) async fn record_gate(&self, outcome: &GateOutcome, who: &Principal) {
        self.count(&outcome.calls);
        let generation = self.warden.generation(outcome.generation);
        self.decisions
            .record_gate_under(outcome, Some(requester(who)), generation.as_ref());
        self.decisions.synced().await;
        self.paused(&who.name, outcome);
    }

    /// Counts and logs every call an answer (a resume or a clear) settled, and
    /// tells the console.
    pub(crate) async fn record_resolution(&self, resolution: &Resolution, who: &Principal) {
        self.count(&resolution.calls);
        self.decisions
            .record_resolution(resolution, Some(requester(who)));
        self.decisions.synced().await;
        self.resolved(resolution);
    }

    /// A pause was made (and logged): the console hears of it, and every
    /// webhook is sent a notice, in the background.
    fn paused(&self, principal: &str, outcome: &GateOutcome) {
        let Some(approval_id) = &outcome.approval_id else {
            return;
        };
        let at = warden_policy::clock::now_rfc3339();
        let tools: Vec<String> = outcome
            .requests
            .iter()
            .map(|r| r.tool_name.clone())
            .collect();
        let fresh = self.events.publish(PauseEvent {
            kind: PauseKind::Paused,
            approval_id: approval_id.clone(),
            thread_id: outcome.thread_id.clone(),
            principal: Some(principal.to_string()),
            run_id: outcome.run_id.clone(),
            tools: tools.clone(),
            at: at.clone(),
        });
        // A retried submission gets the stored pause back: no second notice.
        if fresh {
            self.notifier.send(&Notice {
                url: format!("{}/console/approvals/{approval_id}", self.public_url()),
                approval_id: approval_id.clone(),
                thread_id: outcome.thread_id.clone(),
                principal: principal.to_string(),
                run_id: outcome.run_id.clone(),
                tools,
                created_at: at,
            });
        }
    }

    /// A resume or a clear answered a pause.
    fn resolved(&self, resolution: &Resolution) {
        self.events.publish(PauseEvent {
            kind: PauseKind::Resolved,
            approval_id: resolution.approval_id.clone(),
            thread_id: resolution.thread_id.clone(),
            principal: None,
            run_id: resolution.run_id.clone(),
            tools: Vec::new(),
            at: resolution.resolved_at.clone(),
        });
    }
}
