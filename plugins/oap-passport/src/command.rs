//! `system.command.execute`: the command is parsed with the shared shell
//! analysis and every simple command it would run is judged, in this order:
//! the timeout limit, always-dangerous operations, injection (substitutions,
//! `eval` or `-c` of computed text), `allowed_commands`, `blocked_env_vars`,
//! `blocked_patterns`.

use serde_json::{Map, Value};
use warden_analysis::effects::{self, Places, Severity};
use warden_analysis::path::canonicalize;
use warden_analysis::shell::{Analysis, Command, OpaqueKind, analyze};

use crate::blocked::{Blocked, BlockedList};
use crate::passport::Limits;
use crate::{Check, deny};

/// Wrappers that change who runs the command: they must be allowed themselves.
const PRIVILEGED: &[&str] = &["sudo", "doas", "pkexec", "chroot"];
/// The command limits of a passport, compiled.
#[derive(Debug, Default)]
pub struct CommandPolicy {
    /// `None`: no allowlist (absent, empty, or containing `*`).
    allowed: Option<Vec<Vec<String>>>,
    blocked: BlockedList,
    blocked_env: std::collections::HashSet<String>,
    max_execution_time: Option<f64>,
}

impl CommandPolicy {
    pub fn compile(limits: Option<&Limits>) -> Result<CommandPolicy, String> {
        let Some(limits) = limits else {
            return Ok(CommandPolicy::default());
        };
        let at = "passport.limits.system.command.execute";
        let allowed = match &limits.allowed_commands {
            Some(list) if !list.is_empty() && !list.iter().any(|e| e.trim() == "*") => {
                let mut entries = Vec::new();
                for (i, entry) in list.iter().enumerate() {
                    let words: Vec<String> = entry.split_whitespace().map(str::to_string).collect();
                    if words.is_empty() {
                        return Err(format!("{at}.allowed_commands[{i}]: must not be empty"));
                    }
                    entries.push(words);
                }
                Some(entries)
            }
            _ => None,
        };
        let mut blocked = Vec::new();
        for (i, pattern) in limits.blocked_patterns.iter().flatten().enumerate() {
            blocked.push(
                Blocked::compile(pattern)
                    .map_err(|e| format!("{at}.blocked_patterns[{i}]: {e}"))?,
            );
        }
        if let Some(max) = limits.max_execution_time
            && !(max.is_finite() && max > 0.0)
        {
            return Err(format!(
                "{at}.max_execution_time: must be a positive number of seconds"
            ));
        }
        Ok(CommandPolicy {
            allowed,
            blocked: BlockedList::new(blocked),
            blocked_env: limits.blocked_env_vars.iter().flatten().cloned().collect(),
            max_execution_time: limits.max_execution_time,
        })
    }
}

/// Judges a command call.
pub fn check(policy: &CommandPolicy, args: &Map<String, Value>) -> Check {
    let command = command_text(args)?;
    if let Some(max) = policy.max_execution_time {
        let timeout = args.get("timeout").or_else(|| args.get("timeout_seconds"));
        let Some(timeout) = timeout else {
            return Err(deny(
                "oap.missing_required_context",
                format!(
                    "the passport limits execution to {max} s: the call must give `timeout` or `timeout_seconds`"
                ),
            ));
        };
        let seconds = match timeout {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        }
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| {
            deny(
                "oap.invalid_tool_arguments",
                "`timeout` must be a number of seconds",
            )
        })?;
        if seconds > max {
            return Err(deny(
                "oap.timeout_exceeded",
                format!("timeout {seconds} s exceeds the passport's max_execution_time of {max} s"),
            ));
        }
    }
    let analysis = analyze(command);
    if let Some(error) = &analysis.error {
        return Err(deny(
            "oap.invalid_tool_arguments",
            format!("the command is not valid shell syntax: {error}"),
        ));
    }
    if let Some(why) = dangerous(&analysis) {
        return Err(deny("oap.dangerous_operation", why));
    }
    if let Some(why) = injection(&analysis) {
        return Err(deny("oap.command_injection_detected", why));
    }
    if let Some(allowed) = &policy.allowed {
        for c in &analysis.commands {
            if !permitted(allowed, c) {
                return Err(deny(
                    "oap.command_not_allowed",
                    format!("'{}' is not in allowed_commands", describe(c)),
                ));
            }
        }
    }
    if !policy.blocked_env.is_empty() {
        for c in &analysis.commands {
            if let Some(name) = env_names(c).find(|n| policy.blocked_env.contains(*n)) {
                return Err(deny(
                    "oap.blocked_pattern",
                    format!("the command sets the blocked environment variable {name}"),
                ));
            }
        }
    }
    if !policy.blocked.is_empty() {
        for c in &analysis.commands {
            if let Some(pattern) = policy.blocked.first(c) {
                return Err(deny(
                    "oap.blocked_pattern",
                    format!(
                        "'{}' matches the blocked pattern '{}'",
                        describe(c),
                        pattern.text
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The command: `command`, else `cmd`, else `args[0]`; a non-empty string.
fn command_text(args: &Map<String, Value>) -> Result<&str, crate::Denial> {
    let value = args.get("command").or_else(|| args.get("cmd")).or_else(|| {
        args.get("args")
            .and_then(|a| a.as_array())
            .and_then(|a| a.first())
    });
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(deny("oap.invalid_tool_arguments", "the command is empty")),
        Some(_) => Err(deny(
            "oap.invalid_tool_arguments",
            "the command must be a string",
        )),
        None => Err(deny(
            "oap.invalid_tool_arguments",
            "the call has no command (`command`, `cmd` or `args[0]`)",
        )),
    }
}

fn describe(c: &Command) -> String {
    let mut words: Vec<&str> = c.wrappers.iter().map(String::as_str).collect();
    words.push(c.path.as_deref().unwrap_or(&c.written));
    words.extend(c.args.iter().map(|a| a.value.as_str()));
    let text = words.join(" ");
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Whether an `allowed_commands` entry's words are a prefix of the command's.
fn permitted(allowed: &[Vec<String>], c: &Command) -> bool {
    if c.program.is_none() && !c.computed {
        // Only assignments or redirections: nothing runs.
        return true;
    }
    let Some(program) = c.program.as_deref() else {
        return false;
    };
    let path = c.path.as_deref().unwrap_or(program);
    let privileged: usize = c
        .wrappers
        .iter()
        .filter(|w| PRIVILEGED.contains(&w.as_str()))
        .count();
    // Word k: the privileged wrappers, the program, then the arguments; each
    // as (name, path, literal).
    let word = |k: usize| -> (&str, &str, bool) {
        if k < privileged {
            let w = c
                .wrappers
                .iter()
                .filter(|w| PRIVILEGED.contains(&w.as_str()))
                .nth(k)
                .map_or("", String::as_str);
            (w, w, true)
        } else if k == privileged {
            (program, path, true)
        } else {
            let a = &c.args[k - privileged - 1];
            (a.value.as_str(), a.value.as_str(), a.literal)
        }
    };
    let count = privileged + 1 + c.args.len();
    allowed.iter().any(|entry| {
        entry.len() <= count
            && entry.iter().enumerate().all(|(k, e)| {
                let (name, path, literal) = word(k);
                literal
                    && if e.contains('/') {
                        e == path
                    } else {
                        e == name
                    }
            })
    })
}

/// The environment variables a command sets.
fn env_names(c: &Command) -> impl Iterator<Item = &str> {
    let exported = ["export", "declare", "typeset", "readonly", "local"]
        .iter()
        .any(|p| c.is(p));
    c.assignments.iter().map(|(n, _)| n.as_str()).chain(
        c.args
            .iter()
            .filter(move |_| exported)
            .filter_map(|a| a.value.split_once('=').map(|(n, _)| n)),
    )
}

/// The always-dangerous operations, whatever the passport says: the OAP
/// reference evaluator's built-in list (`dd` reading a device, `mkfs`), and
/// the floors of Warden's effect table (`warden_analysis::effects`: writing a
/// disk raw, destroying the system, account files, socket shells, signalling
/// every process, fork bombs, download-and-execute, hidden code, raw
/// exfiltration: the floors that deny), in every spelling the analysis sees.
fn dangerous(a: &Analysis) -> Option<String> {
    for c in &a.commands {
        let Some(program) = c.program.as_deref() else {
            continue;
        };
        if program == "dd"
            && let Some(input) = c.args.iter().find_map(|a| a.value.strip_prefix("if="))
            && canonicalize(input, None, None).starts_with("/dev/")
        {
            return Some(format!("dd reading the device '{input}'"));
        }
        if program.starts_with("mkfs") {
            return Some(format!("'{program}' creates a file system"));
        }
    }
    effects::detect(a, &Places::default())
        .into_iter()
        // The denying floors only: the asks that are floors (persistence,
        // host state, …) are for a human, which this evaluator has not.
        .find(|f| f.effect.floor() && f.effect.severity() == Severity::Deny)
        .map(|f| f.message)
}

/// Substitutions and command lines that cannot be seen through.
fn injection(a: &Analysis) -> Option<String> {
    if a.substitution {
        return Some("the command uses command or process substitution".into());
    }
    a.opaque.iter().find_map(|o| {
        let what = match o.kind {
            OpaqueKind::ComputedEval => "eval of computed text",
            OpaqueKind::ComputedShellString => "a shell running a computed command string",
            OpaqueKind::Unparseable => "a nested command line that does not parse",
            OpaqueKind::TooDeep => "command lines nested too deeply to inspect",
            _ => return None,
        };
        Some(format!("{what}: {}", o.text))
    })
}
