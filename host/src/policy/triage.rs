//! Risk triage: an optional stage after the permission engine and the
//! providers that may only make a verdict stricter (allow → ask, anything →
//! deny), never looser. Defence in depth, not a security boundary: the hard
//! boundaries are the sensitive paths, the mode and the rules.
//!
//! Two parts: a native, rule-based detector over the parsed shell command
//! (destructive commands, exfiltration, download-and-execute, privilege
//! escalation, obfuscation), and an optional classifier component
//! (`role: classifier`) that sees only the tool name and the canonical
//! arguments, answers low or high risk, and is asked once per call signature.

use serde::Deserialize;
use serde_json::Value;
use warden_analysis::shell::{Analysis, Command, Origin, RedirectOp};

use super::canonical::CanonicalCall;
use crate::config::OnError;
use crate::decision::{Decision, Reason, Verdict};
use crate::provider::{Classifier, Risk};

/// Reason codes of risk triage.
pub mod codes {
    pub const DESTRUCTIVE: &str = "triage.destructive";
    pub const EXFILTRATION: &str = "triage.exfiltration";
    pub const DOWNLOAD_EXEC: &str = "triage.download_exec";
    pub const PRIVILEGE_ESCALATION: &str = "triage.privilege_escalation";
    pub const OBFUSCATION: &str = "triage.obfuscation";
    pub const CLASSIFIER_HIGH: &str = "triage.classifier_high_risk";
    pub const CLASSIFIER_ERROR: &str = "triage.classifier_error";
}

pub const POLICY_ID: &str = "warden.triage";

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
    pub verdict: Verdict,
    pub code: &'static str,
    pub message: String,
}

/// What triage made of a call, for the pipeline's report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TriageReport {
    /// Whether the classifier was consulted, and whether from its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierReport>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ClassifierReport {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    pub cached: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The triage stage, loaded with the policy.
pub struct Triage {
    detector: bool,
    classifier: Option<Classifier>,
}

impl Triage {
    pub fn new(config: &TriageConfig, classifier: Option<Classifier>) -> Self {
        Triage {
            detector: config.detector,
            classifier,
        }
    }

    pub fn classifier(&self) -> Option<&Classifier> {
        self.classifier.as_ref()
    }

    /// Triage of a call whose verdict so far is `current` (never a deny:
    /// there is nothing left to raise). Returns the stage's opinion, if it has
    /// one; by construction it is never looser than an allow of nothing.
    pub fn assess(
        &self,
        call: &CanonicalCall,
        input: &Value,
        current: Verdict,
    ) -> (Option<Decision>, TriageReport) {
        let mut findings = if self.detector {
            detect(call)
        } else {
            Vec::new()
        };
        let mut report = TriageReport::default();
        let worst = findings.iter().map(|f| f.verdict).max();
        // The classifier cannot change a deny, so it is not asked then.
        if let Some(classifier) = &self.classifier
            && worst != Some(Verdict::Deny)
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
                                crate::provider::truncate(&assessment.reason, 500)
                            ),
                        });
                    }
                }
                Err(failure) => {
                    tracing::warn!(classifier = classifier.name(), %failure, "risk classifier failed");
                    entry.error = Some(failure.kind.code().to_string());
                    let raise = match classifier.on_error() {
                        Some(OnError::Deny) => Some(Verdict::Deny),
                        Some(OnError::Ask) => Some(Verdict::Ask),
                        Some(OnError::Allow) | None => None,
                    };
                    if let Some(verdict) = raise {
                        findings.push(Finding {
                            verdict,
                            code: codes::CLASSIFIER_ERROR,
                            message: format!(
                                "classifier '{}' failed ({}): {}",
                                classifier.name(),
                                failure.kind.code(),
                                failure.message
                            ),
                        });
                    }
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
            Some(Decision::new(verdict, reasons).with_policy(POLICY_ID)),
            report,
        )
    }
}

/// The arguments as the classifier sees them: JSON with keys sorted.
fn canonical_arguments(input: &Value) -> String {
    // serde_json's map is ordered by key (no `preserve_order`), so this is
    // already canonical.
    input.to_string()
}

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "lwp-request",
];
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "pwsh",
    "powershell",
    "source",
    ".",
];
const ELEVATORS: &[&str] = &["sudo", "doas", "su", "pkexec", "runuser"];
const RESOLVERS: &[&str] = &[
    "dig",
    "nslookup",
    "host",
    "drill",
    "ping",
    "getent",
    "resolvectl",
];
const SOCKETS: &[&str] = &["nc", "ncat", "netcat", "socat", "telnet"];
/// Directories whose recursive removal (or recursive chmod/chown) wrecks a system.
const SYSTEM_DIRS: &[&str] = &[
    "/", "/home", "/root", "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/lib64", "/boot",
    "/opt", "/sys", "/proc", "/dev", "/srv",
];

/// The native detector: findings for a shell call (nothing for other tools).
pub fn detect(call: &CanonicalCall) -> Vec<Finding> {
    let Some(analysis) = &call.shell else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    let mut find = |verdict: Verdict, code: &'static str, message: String| {
        findings.push(Finding {
            verdict,
            code,
            message,
        });
    };
    if let Some(path) = analysis.network_paths.first() {
        find(
            Verdict::Deny,
            codes::EXFILTRATION,
            format!("opens a network connection through {path}"),
        );
    }
    if let Some(bomb) = fork_bomb(analysis) {
        find(
            Verdict::Deny,
            codes::DESTRUCTIVE,
            format!("defines a fork bomb ({bomb})"),
        );
    }
    let in_substitution = |c: &Command| {
        matches!(
            c.origin,
            Origin::CommandSubstitution | Origin::ProcessSubstitution
        )
    };
    let substituted_download = analysis
        .commands
        .iter()
        .any(|c| in_substitution(c) && is_any(c, DOWNLOADERS));
    let substituted_decode = analysis
        .commands
        .iter()
        .any(|c| in_substitution(c) && is_decoder(c));
    let runs_computed_code = !analysis.opaque.is_empty()
        || analysis.commands.iter().any(|c| {
            (is_any(c, INTERPRETERS) || c.is("eval")) && c.args.iter().any(|a| !a.literal)
        });

    for (i, c) in analysis.commands.iter().enumerate() {
        let program = c.program.as_deref().unwrap_or("");
        let upstream: Vec<&Command> = analysis
            .upstream(i)
            .into_iter()
            .map(|j| &analysis.commands[j])
            .collect();

        // Destructive.
        if c.is("rm") && c.flags().contains("--recursive") {
            if c.flags().contains("--no-preserve-root") {
                find(
                    Verdict::Deny,
                    codes::DESTRUCTIVE,
                    "rm --no-preserve-root".into(),
                );
            }
            if let Some(target) = catastrophic_operand(call, c) {
                find(
                    Verdict::Deny,
                    codes::DESTRUCTIVE,
                    format!("recursively removes {target}"),
                );
            }
        }
        if (c.is("chmod") || c.is("chown") || c.is("chgrp"))
            && c.flags().contains("--recursive")
            && let Some(target) = catastrophic_operand(call, c)
        {
            find(
                Verdict::Deny,
                codes::DESTRUCTIVE,
                format!("{program} -R on {target}"),
            );
        }
        if c.is("find") {
            let deletes = c.args.iter().any(|a| a.value == "-delete")
                || analysis.commands.iter().any(|d| {
                    d.origin == Origin::FindExec
                        && d.parent == Some(i)
                        && (d.is("rm") || d.is("shred") || d.is("unlink"))
                });
            let root = c
                .operands()
                .take_while(|a| !a.value.starts_with(['-', '(', '!']))
                .find_map(|a| {
                    let path = call.canonical_path(&a.value);
                    is_system_path(call, &path).then_some(a.value.clone())
                });
            if deletes && let Some(root) = root {
                find(
                    Verdict::Deny,
                    codes::DESTRUCTIVE,
                    format!("find deletes everything under {root}"),
                );
            }
        }
        if program.starts_with("mkfs") || program == "wipefs" || program == "blkdiscard" {
            find(
                Verdict::Deny,
                codes::DESTRUCTIVE,
                format!("{program} destroys a file system"),
            );
        }
        if c.is("dd")
            && c.args
                .iter()
                .any(|a| a.value.starts_with("of=/dev/") && !a.value.starts_with("of=/dev/null"))
        {
            find(
                Verdict::Deny,
                codes::DESTRUCTIVE,
                "dd writes to a device".into(),
            );
        }
        if c.is("shred") && c.operands().any(|a| a.value.starts_with("/dev/")) {
            find(
                Verdict::Deny,
                codes::DESTRUCTIVE,
                "shred on a device".into(),
            );
        }
        for r in &c.redirects {
            let target = &r.target.value;
            if r.op.writes() && is_block_device(target) {
                find(
                    Verdict::Deny,
                    codes::DESTRUCTIVE,
                    format!("writes to the device {target}"),
                );
            }
            if r.op.writes() && is_account_file(target) {
                find(
                    Verdict::Deny,
                    codes::PRIVILEGE_ESCALATION,
                    format!("writes to {target}"),
                );
            }
        }

        // Download and execute; decode and execute.
        if is_any(c, INTERPRETERS) || c.is("eval") {
            if let Some(source) = upstream.iter().find(|u| is_any(u, DOWNLOADERS)) {
                find(
                    Verdict::Deny,
                    codes::DOWNLOAD_EXEC,
                    format!(
                        "pipes a download ({}) into {program}",
                        source.program.as_deref().unwrap_or("?")
                    ),
                );
            }
            if upstream.iter().any(|u| is_decoder(u)) {
                find(
                    Verdict::Deny,
                    codes::OBFUSCATION,
                    format!("pipes decoded text into {program}"),
                );
            }
            if upstream.iter().any(|u| has_escapes(u)) {
                find(
                    Verdict::Deny,
                    codes::OBFUSCATION,
                    format!("pipes escaped text into {program}"),
                );
            }
        }
        if c.written.starts_with("$'")
            && (c.written.contains("\\x") || c.written.contains("\\0") || c.written.contains("\\u"))
        {
            find(
                Verdict::Deny,
                codes::OBFUSCATION,
                format!("hides the program name in escapes: {}", c.written),
            );
        }

        // Exfiltration.
        if (c.is("curl") || c.is("wget"))
            && let Some(flag) = uploads(c)
        {
            find(
                Verdict::Ask,
                codes::EXFILTRATION,
                format!("{program} uploads local data ({flag})"),
            );
        }
        if is_any(c, RESOLVERS) && c.args.iter().any(|a| !a.literal && a.value.contains("$(")) {
            find(
                Verdict::Deny,
                codes::EXFILTRATION,
                format!("{program} looks up a name built from command output"),
            );
        }
        if is_any(c, SOCKETS)
            && (!upstream.is_empty() || c.redirects.iter().any(|r| r.op == RedirectOp::Input))
        {
            find(
                Verdict::Deny,
                codes::EXFILTRATION,
                format!("sends data over a raw socket ({program})"),
            );
        }

        // Privilege escalation.
        if let Some(elevator) = c
            .wrappers
            .iter()
            .find(|w| ELEVATORS.contains(&w.as_str()))
            .map(String::as_str)
            .or(ELEVATORS.contains(&program).then_some(program))
        {
            find(
                Verdict::Ask,
                codes::PRIVILEGE_ESCALATION,
                format!("runs with elevated privileges ({elevator})"),
            );
        }
        if c.is("chmod") && c.args.iter().any(|a| sets_id_bit(&a.value)) {
            find(
                Verdict::Ask,
                codes::PRIVILEGE_ESCALATION,
                "sets a setuid or setgid bit".into(),
            );
        }
        if (c.is("chown") || c.is("chgrp"))
            && c.operands().next().is_some_and(|o| {
                let owner = o.value.split([':', '.']).next().unwrap_or("");
                owner == "root"
                    || owner == "0"
                    || o.value.ends_with(":root")
                    || o.value.ends_with(":0")
            })
        {
            find(
                Verdict::Ask,
                codes::PRIVILEGE_ESCALATION,
                "gives files to root".into(),
            );
        }
        if matches!(
            program,
            "setcap" | "visudo" | "usermod" | "gpasswd" | "passwd" | "chpasswd"
        ) {
            find(
                Verdict::Ask,
                codes::PRIVILEGE_ESCALATION,
                format!("{program} changes privileges"),
            );
        }
        if c.is("tee") && c.operands().any(|o| is_account_file(&o.value)) {
            find(
                Verdict::Deny,
                codes::PRIVILEGE_ESCALATION,
                "tee writes to an account or sudoers file".into(),
            );
        }
    }

    if runs_computed_code && substituted_download {
        find(
            Verdict::Deny,
            codes::DOWNLOAD_EXEC,
            "runs code produced by a download".into(),
        );
    }
    if runs_computed_code && substituted_decode {
        find(
            Verdict::Deny,
            codes::OBFUSCATION,
            "runs code produced by decoding".into(),
        );
    }
    findings
}

fn is_any(c: &Command, programs: &[&str]) -> bool {
    c.program.as_deref().is_some_and(|p| programs.contains(&p))
}

/// `base64 -d`, `base32 --decode`, `xxd -r`, `openssl … -d`, `uudecode`.
fn is_decoder(c: &Command) -> bool {
    let decode_flag = || {
        c.args.iter().any(|a| {
            matches!(
                a.value.as_str(),
                "-d" | "-D" | "--decode" | "-r" | "-revert"
            ) || a.value.starts_with("-d")
        })
    };
    match c.program.as_deref() {
        Some("base64" | "base32" | "basenc" | "openssl" | "xxd") => decode_flag(),
        Some("uudecode") => true,
        _ => false,
    }
}

/// `printf '\x72\x6d'` and friends: text that spells something else.
fn has_escapes(c: &Command) -> bool {
    (c.is("printf") || c.is("echo"))
        && c.args.iter().any(|a| {
            let v = &a.value;
            v.contains("\\x") || v.contains("\\0") || v.contains("\\u")
        })
}

/// The upload flag of a curl or wget command, if it sends local data.
fn uploads(c: &Command) -> Option<String> {
    let args: Vec<&str> = c.args.iter().map(|a| a.value.as_str()).collect();
    for (k, arg) in args.iter().enumerate() {
        let next = args.get(k + 1).copied().unwrap_or("");
        let (flag, value) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, v),
            _ => (*arg, next),
        };
        let data_flag = matches!(
            flag,
            "-d" | "--data" | "--data-binary" | "--data-urlencode" | "--data-raw" | "--json"
        );
        let form_flag = matches!(flag, "-F" | "--form");
        if (data_flag || form_flag)
            && (value.starts_with('@') || value.contains("=@") || value.contains("=<"))
        {
            return Some(format!("{flag} {value}"));
        }
        if matches!(flag, "-T" | "--upload-file" | "--post-file" | "--body-file") {
            return Some(format!("{flag} {value}"));
        }
        if data_flag && c.args.get(k + 1).is_some_and(|a| !a.literal) {
            return Some(format!("{flag} with computed data"));
        }
    }
    None
}

/// An operand that is `/`, a system directory, the home directory, or a glob
/// directly under one of those (`/*`, `~/*`).
fn catastrophic_operand(call: &CanonicalCall, c: &Command) -> Option<String> {
    c.operands().find_map(|a| {
        let raw = a.value.trim_end_matches('*').trim_end_matches('/');
        let raw = if raw.is_empty() { "/" } else { raw };
        let path = call.canonical_path(raw);
        is_system_path(call, &path).then(|| a.value.clone())
    })
}

fn is_system_path(call: &CanonicalCall, path: &str) -> bool {
    SYSTEM_DIRS.contains(&path) || path == call.home_key()
}

fn is_block_device(target: &str) -> bool {
    [
        "/dev/sd",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/nvme",
        "/dev/mmcblk",
        "/dev/disk",
        "/dev/mapper/",
    ]
    .iter()
    .any(|p| target.starts_with(p))
}

fn is_account_file(target: &str) -> bool {
    target.starts_with("/etc/sudoers")
        || matches!(target, "/etc/passwd" | "/etc/shadow" | "/etc/group")
}

/// `u+s`, `g+s`, `+s`, or a four-digit mode with the setuid or setgid bit.
fn sets_id_bit(mode: &str) -> bool {
    if mode.len() == 4 && mode.chars().all(|c| c.is_ascii_digit()) {
        return matches!(mode.as_bytes()[0], b'2' | b'4' | b'6');
    }
    mode.contains("+s") || mode.contains("=s")
}

/// A function that runs itself in the background or in a pipeline: `:(){ :|:& };:`.
fn fork_bomb(analysis: &Analysis) -> Option<String> {
    analysis.functions.iter().find_map(|f| {
        let body = &analysis.commands[f.commands.clone()];
        let recursive: Vec<&Command> = body
            .iter()
            .filter(|c| c.program.as_deref() == Some(f.name.as_str()))
            .collect();
        let multiplies = recursive.len() >= 2
            || recursive
                .iter()
                .any(|c| c.background || !c.stdin_from.is_empty());
        multiplies.then(|| f.name.clone())
    })
}
