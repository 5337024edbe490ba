//! The `warden` command line: the top-level parser and the dispatch to each
//! command's module (`commands::*`), which owns its arguments and its run.
//! Exit codes: 0 when the command did its job (a deny is a decision, so `eval`
//! exits 0 on it), 2 on a usage, request or configuration error, with the
//! error on stderr.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::promote;
use crate::commands::{
    approval, bench, bundle, check, demo, eval, explain, hook, inspect, interaction, keygen, log,
    mcp, new, policy, replay, rules, serve, test, verify, wit,
};

#[derive(Parser)]
#[command(
    name = "warden",
    version,
    about = "Judges AI agents' tool calls with sandboxed guardrail providers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Judge one tool call and print the decision as JSON.
    Eval(eval::EvalArgs),
    /// Load, verify and configure every provider, and print what was loaded.
    Check(check::CheckArgs),
    /// Run the daemon: the HTTP/JSON API, with hot swap of providers.
    Serve(serve::ServeArgs),
    /// Judge one model response through the approval gate (pausing for a human
    /// when needed) and print the outcome as JSON.
    Gate(approval::GateArgs),
    /// Pending approvals: list, resume, clear, history.
    Approvals(approval::ApprovalsArgs),
    /// Load the shipped providers on the embedded defaults and judge example calls.
    Demo,
    /// Create something new: `warden new provider NAME`.
    New(new::NewArgs),
    /// Check a provider component against conformance vectors (JSON Lines:
    /// request and expected verdict and code); exits 1 if any vector fails.
    Test(test::TestArgs),
    /// Show what a component is (contract, imports, exports, size, SHA-256) and
    /// whether this host would refuse it and why; exits 1 if it would.
    Inspect(inspect::InspectArgs),
    /// Print the WIT contract this binary speaks (`wit/guardrail.wit`), for
    /// building providers in any language: `warden wit > wit/guardrail.wit`.
    Wit(wit::WitArgs),
    /// Make or check a signed provider bundle (component, manifest, vectors,
    /// Ed25519 signature): `warden bundle create|verify`.
    Bundle(bundle::BundleArgs),
    /// Make an Ed25519 key pair for signing decision records: PREFIX.key
    /// (private, owner-only) and PREFIX.pub.
    Keygen(keygen::KeygenArgs),
    /// Check a signed decision record (a record, or `warden eval` output with
    /// one). Exit 0 valid, 1 invalid, 2 error.
    VerifyDecision(verify::VerifyDecisionArgs),
    /// The decision log: `warden log verify FILE [--checkpoints F] [--key PUB]`
    /// checks its hash chain, checkpoints and signatures. Exit 0 intact, 1
    /// broken, 2 error.
    Log(log::LogArgs),
    /// Resolve a run's interaction policy from its context and print it: the
    /// mode, whether a human may be asked, what a tool under `hitl_approval`
    /// does, the tools to withhold, and the agent's guidance.
    Interaction(interaction::InteractionArgs),
    /// Answer a harness's tool-call hook: `warden hook claude-code`.
    Hook(hook::HookArgs),
    /// Bring another engine's permission rules into Warden's:
    /// `warden rules import --from deepcode FILE`.
    Rules(rules::RulesArgs),
    /// Measure latency (p50, p99) and throughput on this machine; build with --release.
    Bench(bench::BenchArgs),
    /// Guard an MCP server: every `tools/call` a client sends it is judged first.
    Mcp(mcp::McpArgs),
    /// Judge one tool call and say why, for a person: the deciding rule with
    /// its file and line, each stage, every permission rule (matched, or why
    /// not), what the shell parser saw, the effects found. `--json` for machines.
    Explain(explain::ExplainArgs),
    /// Policy tests for an operator's CI: `warden policy test --config F
    /// SUITE.yaml` judges a suite of calls against the whole configuration and
    /// compares verdicts, reason codes and deciding rules. Exit 0 all pass, 1 a
    /// mismatch, 2 error.
    Policy(policy::PolicyArgs),
    /// Make the daemon's shadow configuration (`shadow:`) live, keeping the
    /// replaced set for `warden rollback` (admin token, `--write` to rewrite
    /// the config file).
    Promote(promote::PromoteArgs),
    /// Make the set the daemon's last promotion replaced live again.
    Rollback(promote::RollbackArgs),
    /// Judge a decision log's calls again against a candidate configuration:
    /// coverage, transitions, the changed calls. With --fail-on, exit 1 when a
    /// listed transition occurs.
    Replay(replay::ReplayArgs),
}

/// Runs the command line; the process exits with the returned code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The daemon reports reloads and swaps as they happen; commands stay quiet.
    init_tracing(if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "error"
    });
    match run(cli.command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("warden: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Eval(args) => eval::run(args),
        Command::Check(args) => check::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Gate(args) => approval::gate(args),
        Command::Approvals(args) => approval::approvals(args),
        Command::Demo => demo::demo(),
        Command::New(args) => new::run(args),
        Command::Test(args) => test::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Wit(args) => wit::run(args),
        Command::Bundle(args) => bundle::run(args),
        Command::Keygen(args) => keygen::run(args),
        Command::Log(args) => log::run(args),
        Command::VerifyDecision(args) => verify::run(args),
        Command::Interaction(args) => interaction::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Rules(args) => rules::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Promote(args) => promote::promote(args),
        Command::Rollback(args) => promote::rollback(args),
        Command::Replay(args) => replay::run(args),
    }
}
