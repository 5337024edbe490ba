//! The decision log written by the library itself, when the embedder asks
//! ([`crate::Warden::log_decisions`]): the configuration's `decision_log:`
//! section, the same writer as the daemon's (hash chain, checkpoints signed
//! with `signing.key`, rotation), the same lines.

use warden_log::{CallerTrust, CheckpointKey, DecisionLog, LineFacts};
use warden_types::{Caller, Evaluation, ToolCall};

use crate::config::Config;
use crate::error::Error;
use crate::shadow::ShadowOutcome;
use crate::signing::read_signing_key;

/// The key that signs a chained log's checkpoints: the decision-signing key
/// (`signing.key`), where the configuration names one.
pub fn checkpoint_key(config: &Config) -> Result<Option<CheckpointKey>, Error> {
    match &config.signing {
        Some(s) => Ok(Some(CheckpointKey {
            key: read_signing_key(&config.base_dir.join(&s.key))?,
            kid: s.kid.clone(),
        })),
        None => Ok(None),
    }
}

/// Opens the log `config`'s `decision_log:` section names, in its data
/// directory (created if missing).
pub(crate) fn open(config: &Config) -> Result<DecisionLog, Error> {
    if let Some(err) = &config.decision_log_refused {
        return Err(Error::Policy {
            message: err.clone(),
        });
    }
    let data_dir = config.create_data_dir()?;
    DecisionLog::open_signed(&config.decision_log, &data_dir, checkpoint_key(config)?).map_err(
        |err| Error::Policy {
            message: format!("{}: decision_log: {err}", config.source),
        },
    )
}

/// Writes the line of one call, with its shadow judgment's outcome where it
/// had one; with `fsync: always`, returns once it is on the disk.
/// `passport` is `guardrails.passport` of the set that judged the call.
pub(crate) fn record(
    log: &DecisionLog,
    passport: Option<&str>,
    generation: Option<&warden_log::Generation>,
    call: &ToolCall,
    evaluation: &Evaluation,
    caller: Caller,
    shadow: Option<&ShadowOutcome>,
) {
    let id = DecisionLog::decision_id(evaluation);
    let trust = CallerTrust { caller, passport };
    let facts = LineFacts {
        caller: Some(caller),
        trust: Some(trust),
        generation,
        shadow: shadow.map(ShadowOutcome::logged),
        ..LineFacts::default()
    };
    log.record_with(&id, call, evaluation, facts);
    log.sync_now();
}
