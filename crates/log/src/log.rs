//! The decision log: the JSON-lines file and the argument policy in force
//! (swapped on reload), recording judged calls, gate outcomes and resolutions.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::{ArcSwap, ArcSwapOption};
use warden_types::approval::{GateOutcome, Resolution, ResolvedBy};
use warden_types::cause::Cause;
use warden_types::request::ToolCall;
use warden_types::{Caller, Evaluation};

use crate::arguments::ArgumentPolicy;
use crate::attribution::{CallerTrust, LoggedAttribution};
use crate::chain::CheckpointKey;
use crate::config::DecisionLogConfig;
use crate::error::DecisionLogError;
use crate::record::{
    DecisionLine, GateCallRecord, GateContext, LoggedShadow, Requester, new_decision_id,
};
use crate::stamp::{Generation, default_node_name};
use crate::writer::{ChainOptions, JsonLines, Options, Rotation, Tap};

/// The decision log: a JSON-lines file and the argument policy.
pub struct DecisionLog {
    sink: Option<JsonLines>,
    /// `fsync: always`.
    always: bool,
    policy: ArcSwap<ArgumentPolicy>,
    /// The node every line names (`server.node_name`, default the host name).
    node_name: ArcSwapOption<String>,
}

/// What a decision's line records beyond the call and its evaluation.
#[derive(Debug, Default)]
pub struct LineFacts<'a> {
    /// Who asked, when the call came through the daemon.
    pub requester: Option<Requester<'a>>,
    /// How the call's claims were honoured: the line's `attribution`.
    pub trust: Option<CallerTrust<'a>>,
    /// What the generation that judged the call was loaded from: the line's
    /// `config_sha256`.
    pub generation: Option<&'a Generation>,
    /// The shadow judgment, when the live set has shadow providers.
    pub shadow: Option<LoggedShadow>,
    /// Who sent the call, as the pipeline believed it: where the tool's
    /// arguments are logged, the line then keeps what `warden replay` needs
    /// ([`crate::ReplayFacts`]).
    pub caller: Option<Caller>,
}

impl DecisionLog {
    /// Opens (appends to) the log named by the configuration, relative to
    /// `data_dir`; a disabled log records nothing.
    pub fn open(config: &DecisionLogConfig, data_dir: &Path) -> Result<Self, DecisionLogError> {
        Self::open_signed(config, data_dir, None)
    }

    /// As [`DecisionLog::open`], the checkpoints of a chained log signed with
    /// `key` (the decision-signing key).
    pub fn open_signed(
        config: &DecisionLogConfig,
        data_dir: &Path,
        key: Option<CheckpointKey>,
    ) -> Result<Self, DecisionLogError> {
        let policy = ArgumentPolicy::new(config)?;
        let sink = if config.enabled {
            let chain = config.chain.then(|| ChainOptions {
                every: config.checkpoint_every,
                checkpoints: data_dir.join(config.checkpoints_path()),
                key,
            });
            let rotation = Rotation {
                max_bytes: config.rotate.max_bytes,
                max_age: config.rotate.max_age_s.map(Duration::from_secs),
            };
            Some(JsonLines::open_with_options(
                &data_dir.join(&config.path),
                Options {
                    fsync: config.fsync,
                    interval: Duration::from_millis(config.fsync_interval_ms),
                    chain,
                    rotation,
                },
            )?)
        } else {
            None
        };
        Ok(DecisionLog {
            sink,
            always: config.fsync == crate::config::Fsync::Always,
            policy: ArcSwap::from_pointee(policy),
            node_name: ArcSwapOption::from_pointee(default_node_name()),
        })
    }

    /// Records one decision and returns its id: the signed record's, when the
    /// decision was signed, so that both name it the same.
    pub fn record(
        &self,
        call: &ToolCall,
        evaluation: &Evaluation,
        caller: Option<Requester<'_>>,
    ) -> String {
        let id = Self::decision_id(evaluation);
        self.record_as(&id, call, evaluation, caller, None);
        id
    }

    /// The id a decision's line will have: the signed record's, when the
    /// decision was signed, else a new one. For a line written later
    /// ([`DecisionLog::record_as`]) whose id the answer names now.
    pub fn decision_id(evaluation: &Evaluation) -> String {
        match &evaluation.decision_record {
            Some(record) => record.decision_id.clone(),
            None => new_decision_id(),
        }
    }

    /// Records one decision under `id`, with its shadow judgment if any.
    pub fn record_as(
        &self,
        id: &str,
        call: &ToolCall,
        evaluation: &Evaluation,
        caller: Option<Requester<'_>>,
        shadow: Option<LoggedShadow>,
    ) {
        let facts = LineFacts {
            requester: caller,
            shadow,
            ..LineFacts::default()
        };
        self.record_with(id, call, evaluation, facts);
    }

    /// Records one decision under `id`, with what else is known of it.
    pub fn record_with(
        &self,
        id: &str,
        call: &ToolCall,
        evaluation: &Evaluation,
        facts: LineFacts<'_>,
    ) {
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let node_name = self.node_name.load();
            let arguments = policy.arguments(call);
            let redactor = policy.redactor();
            let mut line =
                DecisionLine::new(id, call, evaluation, facts.requester, arguments, redactor);
            if let Some(caller) = facts.caller {
                line = line.for_replay(call, caller, &policy);
            }
            line.shadow = facts.shadow;
            line.attribution = facts
                .trust
                .map(|trust| LoggedAttribution::of(call, evaluation, trust, redactor));
            line.node_name = node_name.as_deref().map(String::as_str);
            line.config_sha256 = facts.generation.and_then(|g| g.config_sha256.as_deref());
            sink.append(&line);
        }
    }

    /// As [`DecisionLog::record_as`], for a call `caller` sent: where the
    /// tool's arguments are logged, the line also keeps what `warden replay`
    /// needs to judge the call again ([`crate::ReplayFacts`]).
    pub fn record_judged(
        &self,
        id: &str,
        call: &ToolCall,
        caller: Caller,
        evaluation: &Evaluation,
        requester: Option<Requester<'_>>,
        shadow: Option<LoggedShadow>,
    ) {
        let facts = LineFacts {
            requester,
            caller: Some(caller),
            shadow,
            ..LineFacts::default()
        };
        self.record_with(id, call, evaluation, facts);
    }

    /// Names this node on every line from now on (`server.node_name`; the
    /// host name until then).
    pub fn set_node_name(&self, name: String) {
        self.node_name.store(Some(Arc::new(name)));
    }

    /// The node name every line carries.
    pub fn node_name(&self) -> Option<String> {
        self.node_name.load().as_deref().cloned()
    }

    /// Records every call of a model response the approval gate judged.
    pub fn record_gate(&self, outcome: &GateOutcome, caller: Option<Requester<'_>>) {
        self.record_gate_under(outcome, caller, None);
    }

    /// As [`DecisionLog::record_gate`], naming what the generation that
    /// judged the calls was loaded from.
    pub fn record_gate_under(
        &self,
        outcome: &GateOutcome,
        caller: Option<Requester<'_>>,
        generation: Option<&Generation>,
    ) {
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let context = GateContext {
                source: "tool-calls",
                thread_id: &outcome.thread_id,
                run_id: &outcome.run_id,
                approval_id: outcome.approval_id.as_deref(),
                generation: Some(outcome.generation),
                caller,
            };
            let node_name = self.node_name.load();
            for call in &outcome.calls {
                let mut record = GateCallRecord::new(&context, call, &policy);
                record.node_name = node_name.as_deref().map(String::as_str);
                record.config_sha256 = generation.and_then(|g| g.config_sha256.as_deref());
                sink.append(&record);
            }
        }
    }

    /// Records every call a resume answered.
    pub fn record_resolution(&self, resolution: &Resolution, caller: Option<Requester<'_>>) {
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let run_id = match &resolution.resolved_by {
                ResolvedBy::Resume { run_id } => run_id.as_str(),
                _ => resolution.run_id.as_str(),
            };
            let context = GateContext {
                source: "resume",
                thread_id: &resolution.thread_id,
                run_id,
                approval_id: Some(&resolution.approval_id),
                generation: None,
                caller,
            };
            let node_name = self.node_name.load();
            for call in &resolution.calls {
                let mut record = GateCallRecord::new(&context, call, &policy);
                record.node_name = node_name.as_deref().map(String::as_str);
                if call.decision.is_some() {
                    record.reviewer = resolution
                        .reviewer
                        .as_deref()
                        .map(|name| policy.redactor().redact(name));
                    record.relayed_by = resolution.relayed_by.as_deref();
                    // The human decided this call: the cause names them.
                    record.cause = Some(Cause {
                        stage: call.decided_by.clone().unwrap_or_else(|| "approval".into()),
                        approver: record.reviewer.as_deref().map(str::to_string),
                        ..Cause::default()
                    });
                }
                sink.append(&record);
            }
        }
    }

    /// Gives every line recorded from now on to `tap` too (a disabled log
    /// records none); a second tap is refused (returned).
    pub fn set_tap(&self, tap: Tap) -> Result<(), Tap> {
        match &self.sink {
            Some(sink) => sink.set_tap(tap),
            None => Ok(()),
        }
    }

    /// Applies a reloaded argument policy.
    pub fn set_policy(&self, policy: ArgumentPolicy) {
        self.policy.store(Arc::new(policy));
    }

    /// Lines that could not be written, since start.
    pub fn write_errors(&self) -> u64 {
        self.sink.as_ref().map_or(0, JsonLines::write_errors)
    }

    /// Writes out and syncs every queued line.
    pub fn flush(&self) {
        if let Some(sink) = &self.sink {
            sink.flush();
        }
    }

    /// With `fsync: always`, writes out and syncs every line recorded so far
    /// on this thread: for a caller with no async runtime (the library).
    pub fn sync_now(&self) {
        if self.always {
            self.flush();
        }
    }

    /// With `fsync: always`, waits until every decision recorded so far is on
    /// the disk: an answer is sent only after its line is.
    #[cfg(feature = "async")]
    pub async fn synced(&self) {
        if let Some(sink) = &self.sink {
            sink.synced().await;
        }
    }

    /// The log file; none when the log is disabled.
    pub fn path(&self) -> Option<&Path> {
        self.sink.as_ref().map(JsonLines::path)
    }
}
