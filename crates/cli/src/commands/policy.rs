//! `warden policy test`: judges a suite of calls against a whole
//! configuration (the native core and every provider, as the daemon would)
//! and compares each answer with the verdict, reason code and deciding rule
//! the suite expects (`warden_policy::suite`). For an operator's CI: exit 0
//! when every case passes, 1 on any mismatch (each printed with what was
//! expected and what came), 2 on a malformed suite or configuration. Not
//! `warden test`, which checks one provider against its vectors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use warden::Warden;
use warden_policy::suite::{Case, Suite};
use warden_runtime::input_file::{self, InputKind};
use warden_runtime::source_map::SourceMap;
use warden_types::{Caller, Evaluation};

use crate::commands::input::load_command_config;

// The arguments of `warden policy`.
#[derive(Args)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Judge a suite of calls against a whole configuration and compare each
    /// answer with what the suite expects. Exit 0 all pass, 1 a mismatch, 2 error.
    Test {
        /// The configuration file (default: the embedded defaults).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The suite (YAML): `cases:`, each a `request`, an optional `name`
        /// and `caller` (agent, internal), and `expect: {verdict, code, rule}`.
        suite: PathBuf,
    },
}

pub(crate) fn run(args: PolicyArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        PolicyCommand::Test { config, suite } => test(config.as_deref(), &suite),
    }
}

fn test(config: Option<&Path>, suite_file: &Path) -> anyhow::Result<ExitCode> {
    let name = suite_file.display().to_string();
    let text = input_file::read_to_string(suite_file, InputKind::Config)
        .with_context(|| format!("cannot read the suite {name}"))?;
    let suite = Suite::parse(&text, &name)?;
    let config = load_command_config(config, "policy-test")?;
    let warden = Warden::new(&config.core)?;
    let lines = SourceMap::of_yaml(&text, &name);
    let mut failed = 0;
    for case in &suite.cases {
        let caller = if case.internal {
            Caller::Internal
        } else {
            Caller::Agent
        };
        let came = warden
            .evaluate(&case.request, caller)
            .with_context(|| format!("{}: cannot judge the call", case.name))?;
        let wrong = mismatches(case, &came);
        if !wrong.is_empty() {
            failed += 1;
            let at = lines
                .get(&format!("/cases/{}", case.index))
                .map(|p| format!(" ({p})"))
                .unwrap_or_default();
            println!("FAIL {}{at}", case.name);
            for line in wrong {
                println!("  {line}");
            }
        }
    }
    let total = suite.cases.len();
    println!(
        "policy test {name}: {} of {total} cases pass, {failed} fail",
        total - failed
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What differs between what `case` expects and what came, each as a line
/// saying both.
fn mismatches(case: &Case, came: &Evaluation) -> Vec<String> {
    let expect = &case.expect;
    let mut out = Vec::new();
    if came.verdict != expect.verdict {
        out.push(format!(
            "verdict: expected {}, came {} (decided by {})",
            expect.verdict,
            came.verdict,
            came.decided_by.as_deref().unwrap_or("no stage")
        ));
    }
    let first = came.reasons.first().map(|r| r.code.as_str());
    if let Some(code) = &expect.code
        && first != Some(code.as_str())
    {
        out.push(format!(
            "code: expected {code}, came {}",
            first.unwrap_or("no reason")
        ));
    }
    if let Some(rule) = &expect.rule {
        let rules = came.cause.as_ref().map(|c| &c.rules[..]).unwrap_or(&[]);
        if !rules.iter().any(|r| &r.text == rule) {
            let named: Vec<String> = rules
                .iter()
                .map(|r| match r.place() {
                    Some(at) => format!("{} ({at})", r.text),
                    None => r.text.clone(),
                })
                .collect();
            out.push(format!(
                "rule: expected {rule}, came {}",
                if named.is_empty() {
                    "no rule".to_string()
                } else {
                    named.join(", ")
                }
            ));
        }
    }
    out
}
