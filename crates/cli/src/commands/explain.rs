//! `warden explain`: judges one call with a configuration, as `warden eval`
//! does, and says why, for a person: the verdict and what decided it (the
//! rule with its file and line, the provider), each stage in order, every
//! permission rule with whether it matched and why not, what the shell parser
//! saw, and the effects the detector found. `--json` for machines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use warden::Warden;
use warden_policy::rules::RuleCheck;
use warden_policy::triage;
use warden_types::request::ToolCall;
use warden_types::{Attribution, Caller, Evaluation};

use crate::commands::input::{load_command_config, read_request};

// The arguments of `warden explain`; its description is the subcommand's, in cli.rs.
#[derive(Args)]
pub(crate) struct ExplainArgs {
    /// The configuration file (default: the embedded defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The request, `{"tool_name", "tool_input", "context"}` as `warden eval`
    /// takes it, or `-` for stdin (the default).
    #[arg(long, default_value = "-")]
    request: String,
    /// Treat the caller as internal, as `warden eval --internal` does.
    #[arg(long)]
    internal: bool,
    /// Believe the call's context on these attribution fields, as `warden eval --asserts`.
    #[arg(long, value_delimiter = ',', value_name = "FIELD,...")]
    asserts: Vec<Attribution>,
    /// Print the explanation as JSON.
    #[arg(long)]
    json: bool,
}

/// The explanation, as `--json` prints it.
#[derive(Serialize)]
struct Explanation {
    /// The decision, exactly as `warden eval` prints it (with its cause).
    evaluation: Evaluation,
    /// Every permission rule, deny then ask then allow, with what it made of the call.
    rules: Vec<RuleCheck>,
    /// What the shell parser saw.
    shell: ShellView,
    /// The effects the native detector finds in the call (whether or not
    /// triage is on, and whatever the rules say).
    effects: Vec<EffectView>,
}

#[derive(Serialize)]
struct ShellView {
    /// The simple commands the call runs, flattened and normalised, as rules match them.
    commands: Vec<String>,
    /// What the parser could not see through.
    opaque: Vec<String>,
    /// The paths the call names, canonical.
    paths: Vec<String>,
    /// The domains it fetches.
    domains: Vec<String>,
}

#[derive(Serialize)]
struct EffectView {
    verdict: &'static str,
    code: &'static str,
    message: String,
}

pub(crate) fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let explanation = explain(
        args.config.as_deref(),
        &args.request,
        Caller::of_credential(args.internal, args.asserts.into_iter().collect()),
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&explanation)?);
    } else {
        print!("{}", for_a_person(&explanation));
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(config: Option<&Path>, request: &str, caller: Caller) -> anyhow::Result<Explanation> {
    let config = load_command_config(config, "explain")?;
    let body = read_request(request)?;
    let call = ToolCall::from_json(&body).context("invalid request")?;
    let warden = Warden::new(&config.core)?;
    let evaluation = warden.evaluate(&call, caller).context("invalid request")?;
    let snapshot = warden.snapshot();
    let permissions = snapshot.permissions();
    let canonical = permissions.canonical(&call);
    let effects = triage::detect(&canonical, false)
        .into_iter()
        .map(|f| EffectView {
            verdict: f.verdict.as_str(),
            code: f.code,
            message: f.message,
        })
        .collect();
    Ok(Explanation {
        rules: permissions.explain_rules(&canonical),
        shell: ShellView {
            commands: canonical.commands.clone(),
            opaque: canonical.opaque.clone(),
            paths: canonical
                .target_paths
                .iter()
                .chain(&canonical.paths)
                .cloned()
                .collect(),
            domains: canonical.domains.clone(),
        },
        effects,
        evaluation,
    })
}

/// The explanation as text, for a person.
fn for_a_person(x: &Explanation) -> String {
    let e = &x.evaluation;
    let mut out = String::new();
    let by = e
        .decided_by
        .as_deref()
        .unwrap_or("no stage (nothing objected)");
    let _ = writeln!(out, "verdict: {} (decided by {by})", e.verdict);
    if let Some(cause) = &e.cause {
        for rule in &cause.rules {
            let at = rule.place().unwrap_or_else(|| "place unknown".into());
            let _ = writeln!(out, "  rule {}  at {at}", rule.text);
        }
        if let Some(p) = &cause.provider {
            let _ = writeln!(
                out,
                "  provider {} version {} sha256 {}",
                p.name, p.version, p.digest
            );
        }
        if let Some(passport) = &cause.passport_id {
            let _ = writeln!(out, "  passport {passport}");
        }
    }
    let _ = writeln!(out, "reasons:");
    for r in &e.reasons {
        let _ = writeln!(out, "  {}: {}", r.code, r.message);
    }
    let _ = writeln!(out, "stages, in order:");
    for (i, s) in e.stages.iter().enumerate() {
        let codes = if s.codes.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.codes.join(", "))
        };
        let _ = writeln!(out, "  {}. {}: {}{codes}", i + 1, s.stage, s.verdict);
    }
    let _ = writeln!(out, "permission rules:");
    if x.rules.is_empty() {
        let _ = writeln!(out, "  (none configured)");
    }
    for check in &x.rules {
        let at = check.rule.place().unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "  {:<5} {}  at {at}: {}",
            check.list,
            check.rule.text,
            check.outcome.describe()
        );
    }
    let _ = writeln!(out, "the shell parser saw:");
    let listed = |out: &mut String, what: &str, items: &[String]| {
        if !items.is_empty() {
            let _ = writeln!(out, "  {what}: {}", quoted(items));
        }
    };
    if x.shell.commands.is_empty() && x.shell.opaque.is_empty() {
        let _ = writeln!(out, "  (no shell command)");
    }
    listed(&mut out, "commands", &x.shell.commands);
    listed(&mut out, "not analysable", &x.shell.opaque);
    listed(&mut out, "paths", &x.shell.paths);
    listed(&mut out, "domains", &x.shell.domains);
    let _ = writeln!(out, "effects the detector found:");
    if x.effects.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for f in &x.effects {
        let _ = writeln!(out, "  {} {}: {}", f.verdict, f.code, f.message);
    }
    out
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|i| Value::from(i.as_str()).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
