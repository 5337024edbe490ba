//! The `warden` command line. Exit codes: 0 when the command did its job (a deny
//! is a decision, so `eval` exits 0 on it), 2 on a usage, request or
//! configuration error, with the error on stderr.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use crate::approval;
use crate::config::Config;
use crate::pipeline::{Evaluation, Warden};
use crate::request::{Caller, ToolCall};

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
    Eval {
        /// The configuration file (default: the embedded defaults).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The request, `{"tool_name", "tool_input", "context"}`, or `-` for stdin (the default).
        #[arg(long, default_value = "-")]
        request: String,
        /// Treat the caller as internal: it may set the run's interaction mode.
        #[arg(long)]
        internal: bool,
    },
    /// Load, verify and configure every provider, and print what was loaded.
    Check {
        /// The configuration file (default: the embedded defaults).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Run the daemon: the HTTP/JSON API, with hot swap of providers.
    Serve {
        /// The configuration file (tokens under `server.tokens`).
        #[arg(long)]
        config: PathBuf,
        /// The address to listen on (default: `server.listen`, 127.0.0.1:8787).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// The data directory (default: the configuration's `data_dir`, ./.warden).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Do not reload when the config file changes (SIGHUP and the admin
        /// endpoint still reload).
        #[arg(long)]
        no_watch: bool,
    },
    /// Judge one model response through the approval gate (pausing for a human
    /// when needed) and print the outcome as JSON.
    Gate(approval::command::GateArgs),
    /// Pending approvals: list, resume, clear, history.
    Approvals {
        #[command(subcommand)]
        command: approval::command::ApprovalsCommand,
    },
    /// Load the shipped providers on the embedded defaults and judge example calls.
    Demo,
    /// Make an Ed25519 key pair for signing decision records: PREFIX.key
    /// (private, owner-only) and PREFIX.pub.
    Keygen {
        /// Where to write the keys, without extension.
        #[arg(long, default_value = "warden-signing")]
        out: PathBuf,
    },
    /// Check a signed decision record (a record, or `warden eval` output with
    /// one). Exit 0 valid, 1 invalid, 2 error.
    VerifyDecision {
        /// The public key (SPKI PEM; a private key file works too).
        #[arg(long)]
        key: PathBuf,
        /// The record, or `-` for stdin.
        file: String,
        /// Also fail (exit 1) when the decision has expired.
        #[arg(long)]
        check_expiry: bool,
    },
    /// Resolve a run's interaction policy from its context and print it: the
    /// mode, whether a human may be asked, and the agent's guidance.
    Interaction {
        /// The run's context as JSON (the `context` of a request), or `-` for stdin.
        #[arg(long, default_value = "-")]
        context: String,
        /// Treat the caller as internal: it may set the run's interaction mode.
        #[arg(long)]
        internal: bool,
    },
    /// Measure latency (p50, p99) and throughput on this machine; build with --release.
    Bench {
        /// Scenarios to run (default: all). `--list` shows them.
        #[arg(long = "scenario")]
        scenarios: Vec<String>,
        /// Timed calls per thread.
        #[arg(long, default_value_t = 20_000)]
        calls: usize,
        /// List the scenarios and exit.
        #[arg(long)]
        list: bool,
    },
}

/// Runs the command line; the process exits with the returned code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The daemon reports reloads and swaps as they happen; commands stay quiet.
    init_tracing(if matches!(cli.command, Command::Serve { .. }) {
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
        Command::Eval {
            config,
            request,
            internal,
        } => {
            let config = load_config(config.as_deref())?;
            let body = read_request(&request)?;
            let call = ToolCall::from_json(&body).context("invalid request")?;
            let warden = Warden::new(&config)?;
            let caller = if internal {
                Caller::Internal
            } else {
                Caller::Agent
            };
            let evaluation = warden.evaluate(&call, caller).context("invalid request")?;
            println!("{}", serde_json::to_string_pretty(&evaluation)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { config } => check(&load_config(config.as_deref())?),
        Command::Serve {
            config,
            listen,
            data_dir,
            no_watch,
        } => {
            let options = crate::server::ServeOptions {
                listen,
                data_dir,
                watch: no_watch.then_some(false),
                ..Default::default()
            };
            crate::server::run(&config, options)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Gate(args) => approval::command::gate(args),
        Command::Approvals { command } => approval::command::approvals(command),
        Command::Demo => demo(),
        Command::Keygen { out } => keygen(&out),
        Command::VerifyDecision {
            key,
            file,
            check_expiry,
        } => verify_decision(&key, &file, check_expiry),
        Command::Interaction { context, internal } => interaction(&context, internal),
        Command::Bench {
            scenarios,
            calls,
            list,
        } => bench(&scenarios, calls, list),
    }
}

fn load_config(path: Option<&Path>) -> anyhow::Result<Config> {
    Ok(match path {
        Some(path) => Config::load(path)?,
        None => Config::embedded(),
    })
}

fn read_request(source: &str) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    if source == "-" {
        std::io::stdin()
            .take(crate::request::MAX_REQUEST_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .context("reading the request from stdin")?;
    } else {
        body = std::fs::read(source).with_context(|| format!("reading the request {source}"))?;
    }
    Ok(body)
}

fn check(config: &Config) -> anyhow::Result<ExitCode> {
    let warden = Warden::new(config)?;
    let snapshot = warden.snapshot();
    let providers = snapshot.providers.providers();
    if let Some((name, failure)) = snapshot.unhealthy().first() {
        bail!("provider '{name}': {failure}");
    }
    println!("{}: {} provider(s) loaded", config.source, providers.len());
    for p in providers {
        let l = p.limits();
        println!(
            "  {} {} ({})\n    sha256:{}\n    limits: timeout_ms={} fuel={} memory_mb={} max_input_bytes={} max_output_bytes={} pool_size={}; on_error={:?}",
            p.name(),
            p.info().version,
            p.source(),
            p.digest(),
            l.timeout_ms,
            l.fuel,
            l.memory_mb,
            l.max_input_bytes,
            l.max_output_bytes,
            l.pool_size,
            p.on_error(),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn keygen(prefix: &Path) -> anyhow::Result<ExitCode> {
    let key = crate::signing::generate()?;
    let (private, public) = crate::signing::write_key_pair(&key, prefix)?;
    println!(
        "wrote {} (private: keep it secret) and {} (public: give it to verifiers)",
        private.display(),
        public.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn verify_decision(key: &Path, file: &str, check_expiry: bool) -> anyhow::Result<ExitCode> {
    use crate::signing::{DecisionRecord, read_verifying_key, verify};
    let key = read_verifying_key(key)?;
    let body = read_request(file)?;
    let mut value: serde_json::Value =
        serde_json::from_slice(&body).with_context(|| format!("{file} is not JSON"))?;
    // `warden eval` output carries the record under `decision_record`.
    if let Some(record) = value.get_mut("decision_record") {
        value = record.take();
    }
    if !verify(&value, &key)? {
        println!(
            "invalid: the signature does not match the record (changed, or signed by another key)"
        );
        return Ok(ExitCode::from(1));
    }
    let record: DecisionRecord = serde_json::from_value(value)
        .context("the signature matches, but the record is not a decision record")?;
    let created = time::OffsetDateTime::parse(
        &record.created_at,
        &time::format_description::well_known::Rfc3339,
    )
    .with_context(|| format!("created_at '{}' is not RFC 3339", record.created_at))?;
    let expires = created + time::Duration::seconds(record.expires_in as i64);
    let expired = time::OffsetDateTime::now_utc() >= expires;
    println!(
        "valid: decision {} ({}) signed by {}{}",
        record.decision_id,
        record.verdict,
        record.kid,
        if expired { "; expired" } else { "" }
    );
    if expired && check_expiry {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn interaction(source: &str, internal: bool) -> anyhow::Result<ExitCode> {
    use crate::policy::interaction::{CLARIFICATION_TOOL, RunInteractionPolicy};
    let body = read_request(source)?;
    let context: crate::request::CallContext =
        serde_json::from_slice(&body).context("invalid context")?;
    let caller = if internal {
        Caller::Internal
    } else {
        Caller::Agent
    };
    let policy = RunInteractionPolicy::resolve(&context, caller)?;
    let out = serde_json::json!({
        "mode": policy.mode,
        "can_ask_human": policy.can_ask_human(),
        "why_no_human": policy.why_no_human(),
        "offer_ask_clarification": policy.offers_tool(CLARIFICATION_TOOL),
        "network_requests": policy.network_request(),
        "dropped_keys": policy.dropped_keys,
        "guidance": policy.guidance(),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

const DEMO_CALLS: &str = include_str!("../../examples/demo-calls.jsonl");

fn demo() -> anyhow::Result<ExitCode> {
    let config = Config::embedded();
    let warden = Warden::new(&config)?;
    let snapshot = warden.snapshot();
    println!("Warden demo: the embedded defaults, with the shipped providers");
    for p in snapshot.providers.providers() {
        println!(
            "  loaded {} {} ({}, sha256:{}…)",
            p.name(),
            p.info().version,
            p.source(),
            &p.digest()[..12]
        );
    }
    println!();
    for line in DEMO_CALLS.lines().filter(|l| !l.trim().is_empty()) {
        let call = ToolCall::from_json(line.as_bytes())?;
        let evaluation = warden.evaluate(&call, Caller::Agent)?;
        print_line(&call, &evaluation);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_line(call: &ToolCall, e: &Evaluation) {
    let mut args = call.tool_input.to_string();
    if args.len() > 48 {
        let mut end = 45;
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        args.truncate(end);
        args.push('…');
    }
    let reasons: Vec<String> = e
        .reasons
        .iter()
        .map(|r| {
            if r.message.is_empty() {
                r.code.clone()
            } else {
                format!("{}: {}", r.code, r.message)
            }
        })
        .collect();
    println!(
        "{:<5} {} {}\n      {}  [{} µs]",
        e.verdict.as_str().to_uppercase(),
        call.tool_name,
        args,
        reasons.join("; "),
        e.duration_us
    );
}

fn bench(wanted: &[String], calls: usize, list: bool) -> anyhow::Result<ExitCode> {
    use crate::bench::{MARKDOWN_HEADER, SCENARIOS, markdown_row};
    if list {
        for s in SCENARIOS {
            println!("{:<16} {}", s.name, s.about);
        }
        return Ok(ExitCode::SUCCESS);
    }
    for name in wanted {
        if !SCENARIOS.iter().any(|s| s.name == name) {
            let known: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
            bail!("unknown scenario '{name}' (known: {})", known.join(", "));
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warden: this is a debug build; measure with `cargo run --release -p warden-host -- bench`"
        );
    }
    println!("{MARKDOWN_HEADER}");
    for scenario in SCENARIOS
        .iter()
        .filter(|s| wanted.is_empty() || wanted.iter().any(|w| w == s.name))
    {
        for m in (scenario.run)(calls)? {
            println!("{}", markdown_row(&m));
        }
    }
    Ok(ExitCode::SUCCESS)
}
