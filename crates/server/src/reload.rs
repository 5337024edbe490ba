//! Hot swap of the provider set. A reload reads the config file, loads,
//! verifies (digests) and configures every provider of the new set, resolves
//! the tokens and limits, and only then swaps, atomically: calls in flight
//! finish on the set they started with, new calls see the new set. If anything
//! fails, the old set keeps serving and the error goes to the log, the metrics,
//! the swap audit log and the reload's answer. Every swap is audited: who,
//! when, the old and the new digests.

use std::time::Instant;

use serde::Serialize;

use crate::config::Config;
use crate::error::ServeError;
use crate::state::{Applied, DaemonState, Fixed, Settings, settle_data_dir};
use warden::ProviderSet;
use warden_policy::clock::now_rfc3339;

/// What started a reload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `POST /v1/admin/reload` with the named admin token.
    Admin(String),
    /// SIGHUP.
    Signal,
    /// A change of the config file.
    Watch,
}

impl Trigger {
    /// The trigger as metrics label it.
    pub fn label(&self) -> &'static str {
        match self {
            Trigger::Admin(_) => "admin",
            Trigger::Signal => "signal",
            Trigger::Watch => "watch",
        }
    }

    /// Who, as the audit log names them.
    pub fn who(&self) -> String {
        match self {
            Trigger::Admin(name) => format!("token:{name}"),
            Trigger::Signal => "signal:SIGHUP".into(),
            Trigger::Watch => "watch:config-file".into(),
        }
    }
}

/// One provider of a set, as the audit log and the reload answer name it, and
/// the reload's answer: wire types, shared with the clients.
pub use warden_types::admin::{ProviderDigest, ReloadReport};

/// A provider set, for the audit log.
#[derive(Clone, Debug, Serialize)]
pub struct SetSummary {
    pub generation: u64,
    pub providers: Vec<ProviderDigest>,
}

impl SetSummary {
    fn of(set: &ProviderSet) -> SetSummary {
        SetSummary {
            generation: set.generation(),
            providers: set
                .providers()
                .iter()
                .map(|p| ProviderDigest {
                    name: p.name().to_string(),
                    digest: p.digest().to_string(),
                })
                .collect(),
        }
    }
}

/// Why a reload failed; the old set keeps serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The file could not be applied.
    #[error("reload refused, generation {serving} keeps serving: {source}")]
    Invalid {
        /// The generation of the provider set that keeps serving.
        serving: u64,
        /// `config`, `load`, `vectors` (the reload gate), `configure`, `tokens`,
        /// `limits`, `notify`, `decision_log`.
        kind: &'static str,
        /// Why.
        #[source]
        source: Box<ServeError>,
    },
}

impl ReloadError {
    /// What failed, as the metrics label it.
    pub fn kind(&self) -> &'static str {
        match self {
            ReloadError::Invalid { kind, .. } => kind,
        }
    }

    /// The generation still serving.
    pub fn serving(&self) -> u64 {
        match self {
            ReloadError::Invalid { serving, .. } => *serving,
        }
    }
}

/// One line of the swap audit log.
#[derive(Serialize)]
struct SwapRecord<'a> {
    time: String,
    event: &'static str,
    trigger: &'static str,
    who: String,
    config: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_sha256: Option<&'a str>,
    old: SetSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    new: Option<SetSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    duration_ms: f64,
}

impl DaemonState {
    /// Reloads the config file and swaps in the new provider set. Blocks while
    /// providers are compiled and configured; reloads run one at a time.
    pub fn reload(&self, trigger: &Trigger) -> Result<ReloadReport, ReloadError> {
        let mut applied = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        self.reload_locked(trigger, &mut applied)
    }

    /// As [`DaemonState::reload`], unless the file's bytes are those applied last
    /// (editors and file systems report one save as several events).
    pub fn reload_if_changed(
        &self,
        trigger: &Trigger,
    ) -> Option<Result<ReloadReport, ReloadError>> {
        let mut applied = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let unchanged = warden::config::ConfigFile::read(&self.config_path)
            .is_ok_and(|file| file.sha256 == applied.config_sha256);
        if unchanged {
            return None;
        }
        Some(self.reload_locked(trigger, &mut applied))
    }

    pub(crate) fn reload_locked(
        &self,
        trigger: &Trigger,
        applied: &mut Applied,
    ) -> Result<ReloadReport, ReloadError> {
        let started = Instant::now();
        let old = self.warden.snapshot();
        let fail = |kind: &'static str, source: ServeError| ReloadError::Invalid {
            serving: old.generation(),
            kind,
            source: Box::new(source),
        };
        let prepared = Config::load_with_digest(&self.config_path)
            .map_err(|e| fail("config", e.into()))
            .and_then(|(mut config, digest)| {
                settle_data_dir(&mut config, self.data_dir.as_deref());
                let wanted = Fixed::of(&config);
                // A new data directory needs a restart: keep the running one.
                config.core.set_data_dir(&self.fixed.data_dir);
                // A promotion recorded over this very file serves on.
                crate::promotion_record::apply(&mut config, &digest, &self.fixed.data_dir)
                    .map_err(|e| fail("promotion", e))?;
                let settings = Settings::resolve(&config).map_err(|e| {
                    let kind = match e {
                        ServeError::Tokens(_) | ServeError::NoTokens { .. } => "tokens",
                        ServeError::Limits(_) => "limits",
                        ServeError::Notify(_) => "notify",
                        _ => "decision_log",
                    };
                    fail(kind, e)
                })?;
                Ok((wanted, digest, settings, config))
            })
            .and_then(|(wanted, digest, settings, config)| {
                // Loaded, checked and swapped in at once, or nothing changes.
                let report = self.warden.reload(&config.core, &digest).map_err(|e| {
                    let kind = match e {
                        warden::Error::Unhealthy { .. } => "configure",
                        warden::Error::Load(warden::LoadError::Vectors { .. }) => "vectors",
                        _ => "load",
                    };
                    fail(kind, e.into())
                })?;
                Ok((wanted, settings, report))
            });
        let (wanted, settings, mut report) = match prepared {
            Ok(ready) => ready,
            Err(err) => {
                tracing::error!(trigger = trigger.label(), %err, "reload failed");
                self.metrics.reload_failed(trigger.label(), err.kind());
                self.swaps.append(&SwapRecord {
                    time: now_rfc3339(),
                    event: "reload_failed",
                    trigger: trigger.label(),
                    who: trigger.who(),
                    config: self.config_path.display().to_string(),
                    config_sha256: None,
                    old: SetSummary::of(old.providers()),
                    new: None,
                    error: Some(err.to_string()),
                    duration_ms: millis(started),
                });
                self.swaps.flush();
                return Err(err);
            }
        };

        // The provider set is live: the daemon's settings follow it.
        let new_summary = SetSummary {
            generation: report.generation,
            providers: report.providers.clone(),
        };
        let old_summary = SetSummary {
            generation: report.previous_generation,
            providers: report.previous_providers.clone(),
        };
        self.tokens.store(settings.tokens.into());
        self.limits.store(settings.limits.into());
        self.proxies.store(settings.proxies.into());
        self.decisions.set_policy(settings.arguments);
        self.notifier.set(settings.notify);
        applied.config_sha256 = report.config_sha256.clone();
        applied.rewritten = None;
        let duration_ms = millis(started);
        self.metrics
            .swapped(Some(trigger.label()), new_summary.generation);

        let warnings = restart_warnings(&self.fixed, &wanted);
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        tracing::info!(
            trigger = trigger.label(),
            who = %trigger.who(),
            old = old_summary.generation,
            new = new_summary.generation,
            duration_ms,
            "provider set swapped"
        );
        self.swaps.append(&SwapRecord {
            time: now_rfc3339(),
            event: "swap",
            trigger: trigger.label(),
            who: trigger.who(),
            config: self.config_path.display().to_string(),
            config_sha256: Some(&report.config_sha256),
            old: old_summary.clone(),
            new: Some(new_summary.clone()),
            error: None,
            duration_ms,
        });
        self.swaps.flush();
        report.duration_ms = duration_ms;
        report.warnings = warnings;
        Ok(report)
    }
}

impl DaemonState {
    /// Audits a promotion or a rollback (`event`) in the swap log.
    pub(crate) fn audit_swap(&self, event: &'static str, trigger: &Trigger, report: &ReloadReport) {
        self.swaps.append(&SwapRecord {
            time: now_rfc3339(),
            event,
            trigger: trigger.label(),
            who: trigger.who(),
            config: self.config_path.display().to_string(),
            config_sha256: Some(report.config_sha256.as_str()).filter(|d| !d.is_empty()),
            old: SetSummary {
                generation: report.previous_generation,
                providers: report.previous_providers.clone(),
            },
            new: Some(SetSummary {
                generation: report.generation,
                providers: report.providers.clone(),
            }),
            error: None,
            duration_ms: report.duration_ms,
        });
        self.swaps.flush();
    }
}

/// The settings a reload changed but cannot apply.
fn restart_warnings(running: &Fixed, wanted: &Fixed) -> Vec<String> {
    let mut out = Vec::new();
    if running.listen != wanted.listen {
        out.push(format!(
            "server.listen changed to {}; restart to listen there (still on {})",
            wanted.listen, running.listen
        ));
    }
    if running.watch != wanted.watch {
        out.push("server.watch_config changed; restart to apply it".into());
    }
    if running.durability != wanted.durability {
        out.push("hitl_approval.durability changed; restart to apply it".into());
    }
    if running.store != wanted.store {
        out.push("hitl_approval.store changed; restart to use the other store".into());
    }
    if running.decision_log != wanted.decision_log {
        out.push(
            "decision_log.enabled, path, fsync, fsync_interval_ms, chain, checkpoint_every, checkpoints or rotate changed; restart to apply it"
                .into(),
        );
    }
    if running.data_dir != wanted.data_dir {
        out.push(format!(
            "data_dir changed to {}; restart to use it (still {})",
            wanted.data_dir.display(),
            running.data_dir.display()
        ));
    }
    if running.public_url != wanted.public_url {
        out.push("server.public_url changed; restart to apply it".into());
    }
    if running.node_name != wanted.node_name {
        out.push("server.node_name changed; restart to apply it".into());
    }
    if running.telemetry != wanted.telemetry {
        out.push("telemetry changed; restart to apply it".into());
    }
    for ((key, now), (_, next)) in running.limits.iter().zip(&wanted.limits) {
        if now != next {
            out.push(format!(
                "server.limits.{key} changed to {next}; restart to apply it (still {now})"
            ));
        }
    }
    out
}

fn millis(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
}
