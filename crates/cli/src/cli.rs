//! The `warden` command line. Exit codes: 0 when the command did its job (a deny
//! is a decision, so `eval` exits 0 on it), 2 on a usage, request or
//! configuration error, with the error on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::{
    approval, bench, check, demo, eval, hook, input, inspect, interaction, keygen, new, test,
    verify,
};
use warden_types::Attribution;

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
        /// Treat the caller as internal: it may set the run's interaction mode,
        /// every attribution field and the time the call is judged at.
        #[arg(long)]
        internal: bool,
        /// Believe the call's context on these attribution fields, as a token
        /// with `asserts:` (user_role, user_id, oauth_provider, oauth_id).
        #[arg(long, value_delimiter = ',', value_name = "FIELD,...")]
        asserts: Vec<Attribution>,
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
    Gate(approval::GateArgs),
    /// Pending approvals: list, resume, clear, history.
    Approvals {
        #[command(subcommand)]
        command: approval::ApprovalsCommand,
    },
    /// Load the shipped providers on the embedded defaults and judge example calls.
    Demo,
    /// Create something new: `warden new provider NAME`.
    New {
        #[command(subcommand)]
        what: New,
    },
    /// Check a provider component against conformance vectors (JSON Lines:
    /// request and expected verdict and code); exits 1 if any vector fails.
    Test {
        /// The provider component (.wasm).
        component: PathBuf,
        /// The vectors file.
        #[arg(long)]
        vectors: PathBuf,
        /// The provider's configuration (YAML or JSON): what goes under `config:`.
        #[arg(long)]
        config: Option<PathBuf>,
        /// A sandbox limit, e.g. `memory_mb=256` or `fuel=2000000000` (repeatable).
        #[arg(long = "limit", value_name = "KEY=VALUE")]
        limits: Vec<String>,
        /// Print every vector, not only the failures.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Show what a component is (contract, imports, exports, size, SHA-256) and
    /// whether this host would refuse it and why; exits 1 if it would.
    Inspect {
        /// The component (.wasm).
        component: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
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
    /// mode, whether a human may be asked, what a tool under `hitl_approval`
    /// does, the tools to withhold, and the agent's guidance.
    Interaction {
        /// The run's context as JSON (the `context` of a request), or `-` for stdin.
        #[arg(long, default_value = "-")]
        context: String,
        /// Treat the caller as internal: it may set the run's interaction mode.
        #[arg(long)]
        internal: bool,
        /// The configuration file, for `hitl_approval` (default: the embedded defaults).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Answer a harness's tool-call hook: `warden hook claude-code`.
    Hook {
        #[command(subcommand)]
        harness: Hook,
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

#[derive(Subcommand)]
enum Hook {
    /// Claude Code's `PreToolUse` hook: the payload on stdin, the decision on
    /// stdout (allow, deny or ask). Always exits 0: any failure is a deny.
    ClaudeCode {
        /// Judge in this process with this configuration (default: the
        /// embedded defaults, unless --url is given).
        #[arg(long, conflicts_with = "url")]
        config: Option<PathBuf>,
        /// Judge through the daemon at this URL (http), e.g. http://127.0.0.1:8787.
        #[arg(long)]
        url: Option<String>,
        /// The environment variable holding the daemon's agent token.
        #[arg(long, default_value = "WARDEN_TOKEN")]
        token_env: String,
        /// How long to wait for the daemon, in milliseconds.
        #[arg(long, default_value_t = 2000)]
        timeout_ms: u64,
    },
}

#[derive(Subcommand)]
enum New {
    /// A provider crate in Rust (manifest, source, unit tests, config,
    /// vectors) that builds and passes its vectors as generated.
    Provider {
        /// The provider's name: lower-case letters, digits, '-' and '_'.
        name: String,
        /// Where to create it (default: ./NAME); must not exist or be empty.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The provider SDK (sdk/provider of a Warden checkout); default: the
        /// one this binary was built from.
        #[arg(long)]
        sdk: Option<PathBuf>,
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
            asserts,
        } => eval::eval(config.as_deref(), &request, internal, asserts),
        Command::Check { config } => check::check(&input::load_config(config.as_deref())?),
        Command::Serve {
            config,
            listen,
            data_dir,
            no_watch,
        } => {
            let options = warden_server::ServeOptions {
                listen,
                data_dir,
                watch: no_watch.then_some(false),
                ..Default::default()
            };
            warden_server::run(&config, options)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Gate(args) => approval::gate(args),
        Command::Approvals { command } => approval::approvals(command),
        Command::Demo => demo::demo(),
        Command::New {
            what: New::Provider { name, dir, sdk },
        } => new::new_provider(&name, dir, sdk),
        Command::Test {
            component,
            vectors,
            config,
            limits,
            verbose,
        } => test::test(&component, &vectors, config.as_deref(), &limits, verbose),
        Command::Inspect { component, json } => inspect::inspect(&component, json),
        Command::Keygen { out } => keygen::keygen(&out),
        Command::VerifyDecision {
            key,
            file,
            check_expiry,
        } => verify::verify_decision(&key, &file, check_expiry),
        Command::Interaction {
            context,
            internal,
            config,
        } => interaction::interaction(&context, internal, config.as_deref()),
        Command::Hook {
            harness:
                Hook::ClaudeCode {
                    config,
                    url,
                    token_env,
                    timeout_ms,
                },
        } => {
            let judge = match &url {
                Some(url) => hook::Judge::Daemon {
                    url,
                    token: std::env::var(&token_env).ok(),
                    timeout: std::time::Duration::from_millis(timeout_ms),
                },
                None => hook::Judge::Config(config.as_deref()),
            };
            hook::claude_code(&judge)
        }
        Command::Bench {
            scenarios,
            calls,
            list,
        } => bench::bench(&scenarios, calls, list),
    }
}
