//! The decision log: the JSON-lines file and the argument policy in force
//! (swapped on reload), recording judged calls, gate outcomes and resolutions.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use warden_types::Evaluation;
use warden_types::approval::{GateOutcome, Resolution, ResolvedBy};
use warden_types::request::ToolCall;

use crate::arguments::ArgumentPolicy;
use crate::config::DecisionLogConfig;
use crate::error::DecisionLogError;
use crate::record::{DecisionLine, GateCallRecord, GateContext, Requester, new_decision_id};
use crate::writer::JsonLines;

/// The decision log: a JSON-lines file and the argument policy.
pub struct DecisionLog {
    sink: Option<JsonLines>,
    policy: ArcSwap<ArgumentPolicy>,
}

impl DecisionLog {
    /// Opens (appends to) the log named by the configuration, relative to
    /// `data_dir`; a disabled log records nothing.
    pub fn open(config: &DecisionLogConfig, data_dir: &Path) -> Result<Self, DecisionLogError> {
        let policy = ArgumentPolicy::new(config)?;
        let sink = if config.enabled {
            Some(JsonLines::open_with(
                &data_dir.join(&config.path),
                config.fsync,
                Duration::from_millis(config.fsync_interval_ms),
            )?)
        } else {
            None
        };
        Ok(DecisionLog {
            sink,
            policy: ArcSwap::from_pointee(policy),
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
        let id = match &evaluation.decision_record {
            Some(record) => record.decision_id.clone(),
            None => new_decision_id(),
        };
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let arguments = policy.arguments(call);
            sink.append(&DecisionLine::new(
                &id,
                call,
                evaluation,
                caller,
                arguments,
                policy.redactor(),
            ));
        }
        id
    }

    /// Records every call of a model response the approval gate judged.
    pub fn record_gate(&self, outcome: &GateOutcome, caller: Option<Requester<'_>>) {
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
            for call in &outcome.calls {
                sink.append(&GateCallRecord::new(&context, call, &policy));
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
            for call in &resolution.calls {
                let mut record = GateCallRecord::new(&context, call, &policy);
                if call.decision.is_some() {
                    record.reviewer = resolution
                        .reviewer
                        .as_deref()
                        .map(|name| policy.redactor().redact(name));
                    record.relayed_by = resolution.relayed_by.as_deref();
                }
                sink.append(&record);
            }
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

    /// With `fsync: always`, waits until every decision recorded so far is on
    /// the disk: an answer is sent only after its line is.
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
