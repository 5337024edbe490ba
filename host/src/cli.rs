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
use crate::engine::CompiledFrom;
use crate::pipeline::{Evaluation, Warden};
use crate::request::{Caller, ToolCall};
use crate::trust::Attribution;

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
    Gate(approval::command::GateArgs),
    /// Pending approvals: list, resume, clear, history.
    Approvals {
        #[command(subcommand)]
        command: approval::command::ApprovalsCommand,
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
        } => {
            let config = load_config(config.as_deref())?;
            let body = read_request(&request)?;
            let warden = Warden::new(&config)?;
            let caller = Caller::of_credential(internal, asserts.into_iter().collect());
            let evaluation = match ToolCall::from_json(&body) {
                Ok(call) => warden
                    .evaluate_alone(&call, caller)
                    .context("invalid request")?,
                // What a model wrote gets a decision, as on the daemon.
                Err(err) => match err.refusal_code() {
                    Some(code) => {
                        crate::pipeline::refusal(&warden.snapshot(), code, &err.to_string())
                    }
                    None => return Err(anyhow::Error::new(err).context("invalid request")),
                },
            };
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
        Command::New {
            what: New::Provider { name, dir, sdk },
        } => new_provider(&name, dir, sdk),
        Command::Test {
            component,
            vectors,
            config,
            limits,
            verbose,
        } => test(&component, &vectors, config.as_deref(), &limits, verbose),
        Command::Inspect { component, json } => inspect(&component, json),
        Command::Keygen { out } => keygen(&out),
        Command::VerifyDecision {
            key,
            file,
            check_expiry,
        } => verify_decision(&key, &file, check_expiry),
        Command::Interaction {
            context,
            internal,
            config,
        } => interaction(&context, internal, config.as_deref()),
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
                Some(url) => crate::hook::Judge::Daemon {
                    url,
                    token: std::env::var(&token_env).ok(),
                    timeout: std::time::Duration::from_millis(timeout_ms),
                },
                None => crate::hook::Judge::Config(config.as_deref()),
            };
            crate::hook::claude_code(&judge)
        }
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
            "  {} {} ({})\n    sha256:{}\n    compiled: {}\n    limits: timeout_ms={} fuel={} memory_mb={} max_input_bytes={} max_output_bytes={} pool_size={}; on_error={:?}",
            p.name(),
            p.info().version,
            p.source(),
            p.digest(),
            match p.compiled_from() {
                CompiledFrom::Compilation => "now (and written to the artifact cache)",
                CompiledFrom::Disk => "loaded from the artifact cache",
                CompiledFrom::Memory => "already in memory",
            },
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

fn interaction(source: &str, internal: bool, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    use crate::approval::{ApprovalList, InteractionQuery, InteractionReport};
    let body = read_request(source)?;
    let context: crate::request::CallContext =
        serde_json::from_slice(&body).context("invalid context")?;
    let caller = if internal {
        Caller::Internal
    } else {
        Caller::Agent
    };
    let list = ApprovalList::new(&load_config(config)?.hitl_approval);
    let query = InteractionQuery {
        context,
        tools: None,
    };
    let report = InteractionReport::resolve(&query, caller, &list)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(ExitCode::SUCCESS)
}

const DEMO_CALLS: &str = include_str!("../../examples/demo-calls.jsonl");

fn demo() -> anyhow::Result<ExitCode> {
    let config = Config::embedded();
    let warden = std::sync::Arc::new(Warden::new(&config)?);
    let snapshot = warden.snapshot();
    println!(
        "Warden demo: the embedded defaults (examples/warden.yaml), with the shipped providers"
    );
    println!(
        "  native core: permission engine ({} mode, sensitive paths, rules), risk triage",
        snapshot.permissions.mode().as_str()
    );
    for p in snapshot.providers.providers() {
        println!(
            "  loaded {} {} ({}, sha256:{}…)",
            p.name(),
            p.info().version,
            p.source(),
            &p.digest()[..12]
        );
    }
    println!("\nOne call at a time (as `warden eval --internal` would judge it):\n");
    for line in DEMO_CALLS.lines().filter(|l| !l.trim().is_empty()) {
        let call = ToolCall::from_json(line.as_bytes())?;
        // The demo speaks for the harness, so it may set the run's mode.
        let evaluation = warden.evaluate(&call, Caller::Internal)?;
        print_line(&call, &evaluation);
    }
    demo_approval(warden)?;
    Ok(ExitCode::SUCCESS)
}

/// A model response through the approval gate, paused and approved, with the
/// store in a scratch directory that is removed afterwards.
fn demo_approval(warden: std::sync::Arc<Warden>) -> anyhow::Result<()> {
    use crate::approval::{
        ApprovalGate, CallStatus, ModelResponse, RequestDecision, ResumeRequest, RunRef,
    };
    println!("\nA model response through the approval gate (hitl_approval.tools: [deploy]):\n");
    let dir = std::env::temp_dir().join(format!("warden-demo-{}", std::process::id()));
    let gate = ApprovalGate::open(warden, &dir, Default::default())?;
    let response = ModelResponse::from_json(
        br#"{"message": {"tool_calls": [
            {"id": "call_1", "name": "bash", "args": {"command": "git status"}},
            {"id": "call_2", "name": "deploy", "args": {"service": "api"}}]},
            "context": {"user_role": "admin"}}"#,
    )?;
    let outcome = gate.submit(
        &RunRef::new("demo-thread", "run-1"),
        &response,
        Caller::Internal,
    )?;
    for call in &outcome.calls {
        let status = match call.status {
            CallStatus::Run => "RUN",
            CallStatus::Pending => "PENDING",
            _ => "DENIED",
        };
        println!(
            "{status:<7} {} ({})",
            call.name,
            call.id.as_deref().unwrap_or("?")
        );
    }
    println!("        run state: {}", outcome.run_state.as_str());
    if let Some(approval_id) = &outcome.approval_id {
        let decisions = outcome
            .requests
            .iter()
            .map(|r| RequestDecision {
                request_id: r.request_id.clone(),
                decision: crate::approval::DecisionKind::Approve,
                args: None,
                message: None,
                grant: None,
            })
            .collect();
        let resolution = gate.resume(
            &crate::approval::Reviewer::human("demo-reviewer"),
            "demo-thread",
            Some(approval_id),
            &ResumeRequest::decide(decisions),
        )?;
        let answered = resolution.calls.iter().filter(|c| c.decision.is_some());
        for call in answered.filter(|c| c.status == CallStatus::Run) {
            println!(
                "RUN     {} ({}), approved by demo-reviewer",
                call.name,
                call.id.as_deref().unwrap_or("?")
            );
        }
    }
    drop(gate);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
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
    // Each code once: on an allow, several stages often say the same thing.
    let mut reasons: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for r in &e.reasons {
        if seen.contains(&r.code.as_str()) {
            continue;
        }
        seen.push(&r.code);
        reasons.push(if r.message.is_empty() {
            r.code.clone()
        } else {
            format!("{}: {}", r.code, r.message)
        });
    }
    let context = if call.context == Default::default() {
        String::new()
    } else {
        format!(
            " {}",
            serde_json::to_string(&call.context).unwrap_or_default()
        )
    };
    println!(
        "{:<5} {} {}{}\n      {}  [{}, {} µs]",
        e.verdict.as_str().to_uppercase(),
        call.tool_name,
        args,
        context,
        reasons.join("; "),
        e.decided_by.as_deref().unwrap_or("no stage"),
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

fn new_provider(
    name: &str,
    dir: Option<PathBuf>,
    sdk: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let sdk = sdk.unwrap_or_else(|| PathBuf::from(crate::scaffold::BUILT_WITH_SDK));
    let scaffold = crate::scaffold::new_provider(name, &dir, &sdk)?;
    println!("created provider '{name}' in {}", scaffold.dir.display());
    for file in &scaffold.files {
        println!(
            "  {}",
            file.strip_prefix(&scaffold.dir).unwrap_or(file).display()
        );
    }
    let wasm = scaffold.component.display();
    println!(
        "\nnext:\n  cd {}\n  cargo test\n  cargo build --release --target wasm32-wasip2\n  warden test {wasm} --vectors vectors.jsonl --config config.yaml",
        scaffold.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `warden test`: loads the component as the only provider, under the same
/// config validation as a warden.yaml, and checks every vector.
fn test(
    component: &Path,
    vectors: &Path,
    config: Option<&Path>,
    limits: &[String],
    verbose: bool,
) -> anyhow::Result<ExitCode> {
    use crate::artifact_cache::ArtifactCache;
    use crate::provider::Provider;
    use serde_json::{Map, Value, json};

    let text = std::fs::read_to_string(vectors)
        .with_context(|| format!("reading the vectors {}", vectors.display()))?;
    let vectors = crate::vectors::parse(&text, &vectors.display().to_string())?;
    let provider_config: Value = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the provider config {}", path.display()))?;
            serde_norway::from_str(&text)
                .with_context(|| format!("{}: not YAML or JSON", path.display()))?
        }
        None => json!({}),
    };
    let mut limit_map = Map::new();
    for limit in limits {
        let (key, value) = limit
            .split_once('=')
            .with_context(|| format!("--limit {limit}: expected KEY=VALUE"))?;
        let value: u64 = value
            .trim()
            .parse()
            .with_context(|| format!("--limit {limit}: the value is not a whole number"))?;
        limit_map.insert(key.trim().to_string(), value.into());
    }
    let name: String = component
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "provider".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    // The same parser and checks as a warden.yaml with this one provider.
    let spec = json!({"guardrails": {"providers": [{
        "name": name,
        "wasm": component.display().to_string(),
        "config": provider_config,
        "limits": limit_map,
    }]}});
    let config = Config::parse(&spec.to_string(), "<warden test>", PathBuf::from("."))
        .context("the provider config or limits")?;
    let spec = &config.guardrails.providers[0];
    let artifacts = ArtifactCache::in_data_dir(&config.data_dir());
    let provider = Provider::load(spec, &config.base_dir, true, Some(&artifacts))?;
    if let Err(failure) = provider.health() {
        eprintln!(
            "warden: provider '{}' cannot be configured: {failure}",
            provider.name()
        );
        return Ok(ExitCode::from(1));
    }
    println!(
        "testing {} {} ({}) against {} vectors",
        provider.info().name,
        provider.info().version,
        component.display(),
        vectors.len()
    );
    let mut failed = 0;
    for vector in &vectors {
        let outcome = crate::vectors::check(&provider, vector);
        match outcome.mismatch {
            None if verbose => println!("ok    {}", vector.name),
            None => {}
            Some(mismatch) => {
                failed += 1;
                println!(
                    "FAIL  {} (line {})\n      expected: {}\n      actual:   {}",
                    vector.name, vector.line, mismatch.expected, mismatch.actual
                );
            }
        }
    }
    println!("{} passed, {} failed", vectors.len() - failed, failed);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `warden inspect`: the facts about a component and the host's verdict on it.
fn inspect(component: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use crate::provider::{ComponentBytes, inspect};
    let bytes =
        std::fs::read(component).with_context(|| format!("reading {}", component.display()))?;
    let inspection = inspect(
        &ComponentBytes::new(bytes.into(), component.display().to_string()),
        None,
    );
    if json {
        println!("{}", serde_json::to_string_pretty(&inspection)?);
    } else {
        let host = crate::provider::host_contract();
        println!("component  {}", inspection.origin);
        println!(
            "size       {} bytes ({:.1} MB)",
            inspection.size_bytes,
            inspection.size_bytes as f64 / 1e6
        );
        println!("sha256     {}", inspection.sha256);
        match &inspection.contract {
            Some(version) => println!("contract   warden:guardrail@{version} (this host: {host})"),
            None => println!(
                "contract   none (exports no warden:guardrail/provider; this host: {host})"
            ),
        }
        println!("imports    {}", inspection.imports.len());
        for import in &inspection.imports {
            let flag = if import.forbidden {
                "  <- not granted to providers"
            } else {
                ""
            };
            println!("  {}{flag}", import.name);
        }
        println!("exports    {}", inspection.exports.len());
        for export in &inspection.exports {
            println!("  {export}");
        }
        match &inspection.refusal {
            None => println!("verdict    loadable: this host would load it"),
            Some(why) => println!("verdict    REFUSED: {why}"),
        }
    }
    Ok(if inspection.loadable() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
