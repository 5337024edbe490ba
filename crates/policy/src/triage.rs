//! Risk triage: an optional stage after the permission engine and the
//! providers that may only make a verdict stricter (allow → ask, anything →
//! deny), never looser. Defence in depth, not a security boundary: the hard
//! boundaries are the sensitive paths, the mode and the rules.
//!
//! Two parts: a native detector over the parsed shell command, which reports
//! the effects of the shared table (`warden_analysis::effects`: disk writes,
//! destroying the system, account files, socket shells, … uploads,
//! privileges), and an optional classifier component (`role: classifier`)
//! that sees only the tool name and the canonical arguments, answers low or
//! high risk, and is asked once per call signature.
//!
//! An effect is a floor (its deny applies whatever the rules say, like a
//! sensitive path) or advisory: raised only when no explicit rule decided the
//! call, as is the classifier (DeepCode #245's triage design: an operator's
//! explicit allow stays untouched).

use serde::Deserialize;
use serde_json::Value;
use warden_analysis::effects::{self, Effect, Places, Severity};

use std::sync::Arc;

use warden_types::decision::{Decision, Reason, Verdict};
use warden_types::{ClassifierReport, OnError, Risk};

use super::canonical::CanonicalCall;
use super::tools::ToolKind;

use warden_types::codes::{self, TRIAGE_POLICY};

/// A risk classifier as triage sees it: a name, what its failure means, and
/// an opinion of a call. The sandboxed `role: classifier` component is one;
/// the composition layer implements this for it, so that the policy core
/// knows nothing of WebAssembly.
pub trait Classify: Send + Sync {
    /// The classifier's name, for reasons and reports.
    fn name(&self) -> &str;
    /// What a failed classification means: `deny` denies; anything else
    /// (unset, `ask`) asks. A failure never leaves an allow standing
    /// (`on_error: allow` is refused when the configuration loads).
    fn on_error(&self) -> Option<OnError>;
    /// The opinion of a call (the tool name and its canonical arguments), and
    /// whether it came from a cache.
    fn classify(
        &self,
        tool_name: &str,
        canonical_input: &str,
    ) -> Result<(Assessment, bool), ClassifyError>;
}

/// A classifier's opinion of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assessment {
    /// Low or high.
    pub risk: Risk,
    /// Why, in the classifier's words.
    pub reason: String,
}

/// Why a classifier gave no opinion: the failure's reason code (such as
/// `warden.timeout`) and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassifyError {
    /// The reason code (`warden.timeout`, ...).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for ClassifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// The `triage:` block.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriageConfig {
    /// The native detector (default on). The classifier, when one is
    /// configured (`role: classifier`), runs regardless.
    #[serde(default = "yes")]
    pub detector: bool,
}

impl Default for TriageConfig {
    fn default() -> Self {
        TriageConfig { detector: true }
    }
}

fn yes() -> bool {
    true
}

/// One thing the detector found.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// What the finding asks for: ask or deny.
    pub verdict: Verdict,
    /// The reason code.
    pub code: &'static str,
    /// What was found, for the reason's message.
    pub message: String,
}

/// What triage made of a call, for the pipeline's report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TriageReport {
    /// Whether the classifier was consulted, and whether from its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierReport>,
}

/// The triage stage, loaded with the policy.
pub struct Triage {
    detector: bool,
    classifier: Option<Arc<dyn Classify>>,
}

impl Triage {
    /// Triage as configured (`triage.detector`), with the loaded classifier, if any.
    pub fn new(config: &TriageConfig, classifier: Option<Arc<dyn Classify>>) -> Self {
        Triage {
            detector: config.detector,
            classifier,
        }
    }

    /// The classifier, when one is loaded.
    pub fn classifier(&self) -> Option<&dyn Classify> {
        self.classifier.as_deref()
    }

    /// Triage of a call whose verdict so far is `current` (never a deny:
    /// there is nothing left to raise). `ruled`: an explicit allow or ask
    /// rule decided the call, so only the floors apply (advisory findings and
    /// the classifier never override an operator's rule). Returns the stage's
    /// opinion, if it has one; by construction it is never looser than an
    /// allow of nothing.
    pub fn assess(
        &self,
        call: &CanonicalCall,
        input: &Value,
        current: Verdict,
        ruled: bool,
    ) -> (Option<Decision>, TriageReport) {
        let mut findings = if self.detector {
            detect(call, ruled)
        } else {
            Vec::new()
        };
        let mut report = TriageReport::default();
        let worst = findings.iter().map(|f| f.verdict).max();
        // The classifier cannot change a deny, so it is not asked then; nor is
        // it when an explicit rule decided.
        if let Some(classifier) = &self.classifier
            && worst != Some(Verdict::Deny)
            && !ruled
        {
            let canonical_input = canonical_arguments(input);
            let mut entry = ClassifierReport {
                name: classifier.name().to_string(),
                risk: None,
                cached: false,
                error: None,
            };
            match classifier.classify(&call.tool, &canonical_input) {
                Ok((assessment, cached)) => {
                    entry.risk = Some(assessment.risk);
                    entry.cached = cached;
                    if assessment.risk == Risk::High {
                        findings.push(Finding {
                            verdict: Verdict::Ask,
                            code: codes::CLASSIFIER_HIGH,
                            message: format!(
                                "classifier '{}' rates the call high risk: {}",
                                classifier.name(),
                                warden_types::text::truncate(&assessment.reason, 500)
                            ),
                        });
                    }
                }
                Err(failure) => {
                    tracing::warn!(classifier = classifier.name(), %failure, "risk classifier failed");
                    entry.error = Some(failure.code.to_string());
                    findings.push(Finding {
                        verdict: failure_verdict(classifier.on_error()),
                        code: codes::CLASSIFIER_ERROR,
                        message: format!(
                            "classifier '{}' failed ({}): {}",
                            classifier.name(),
                            failure.code,
                            failure.message
                        ),
                    });
                }
            }
            report.classifier = Some(entry);
        }
        // Only findings stricter than the verdict so far matter.
        findings.retain(|f| f.verdict > current);
        let Some(verdict) = findings.iter().map(|f| f.verdict).max() else {
            return (None, report);
        };
        let reasons = findings
            .iter()
            .filter(|f| f.verdict == verdict)
            .map(|f| Reason::new(f.code, f.message.clone()))
            .collect();
        (
            Some(Decision::new(verdict, reasons).with_policy(TRIAGE_POLICY)),
            report,
        )
    }
}

/// What a classifier's failure (a trap, a timeout, a garbage answer) makes
/// of the call: fail-closed (DeepCode #245), a deny under `on_error: deny`
/// and an ask otherwise (a deny where nobody can be asked). `allow` is refused
/// when the configuration loads; were it to reach here, it still asks.
pub fn failure_verdict(on_error: Option<OnError>) -> Verdict {
    match on_error {
        Some(OnError::Deny) => Verdict::Deny,
        Some(OnError::Ask | OnError::Allow) | None => Verdict::Ask,
    }
}

/// The arguments as the classifier sees them: JSON with keys sorted.
fn canonical_arguments(input: &Value) -> String {
    // serde_json's map is ordered by key (no `preserve_order`), so this is
    // already canonical.
    input.to_string()
}

/// The reason code of an effect of the table.
pub fn effect_code(effect: Effect) -> &'static str {
    match effect {
        Effect::DiskWrite | Effect::DestroySystem | Effect::SignalAll | Effect::ForkBomb => {
            codes::DESTRUCTIVE
        }
        Effect::AccountFile | Effect::Privilege => codes::PRIVILEGE_ESCALATION,
        Effect::SocketShell => codes::SOCKET_SHELL,
        Effect::CredentialRead => codes::CREDENTIAL_ACCESS,
        Effect::DownloadExec => codes::DOWNLOAD_EXEC,
        Effect::HiddenCode => codes::OBFUSCATION,
        Effect::RawExfiltration | Effect::Upload => codes::EXFILTRATION,
        _ => codes::DESTRUCTIVE,
    }
}

/// The native detector: the effects of a shell call, or the file effects of
/// a file tool's write or an MCP tool's path arguments (nothing for other tools), as findings. Floors always count; advisory effects only when
/// `ruled` is false (no explicit rule decided the call).
pub fn detect(call: &CanonicalCall, ruled: bool) -> Vec<Finding> {
    let places = Places {
        home: Some(&call.home),
        cwd: Some(&call.cwd),
    };
    let found = match &call.shell {
        Some(analysis) => effects::detect(analysis, &places),
        // A file tool's write has the file effects a shell write has.
        None if call.kind == ToolKind::Write => call
            .target_paths
            .iter()
            .flat_map(|p| effects::file_effects(p, p, &call.tool, &places))
            .collect(),
        // So has an MCP tool's path argument, unless the operator registered
        // the tool read-only.
        None if call.kind == ToolKind::Mcp => call
            .mcp_written
            .iter()
            .flat_map(|p| effects::file_effects(p, p, &call.tool, &places))
            .collect(),
        None => Vec::new(),
    };
    found
        .into_iter()
        .filter(|f| f.effect.floor() || !ruled)
        .map(|f| Finding {
            verdict: match f.effect.severity() {
                Severity::Deny => Verdict::Deny,
                Severity::Ask => Verdict::Ask,
            },
            code: effect_code(f.effect),
            message: format!("{}: {}", f.effect.name(), f.message),
        })
        .collect()
}
