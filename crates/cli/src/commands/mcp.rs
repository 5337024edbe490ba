//! `warden mcp stdio`: Warden in front of an MCP server that speaks over
//! stdio. The server runs as a child; the client speaks MCP to this process's
//! stdin and stdout. Every message goes through a [`Session`] (crates/mcp),
//! which judges each `tools/call` with the policy chosen here: in-process from
//! a configuration (`--config`), or through the daemon's evaluate route
//! (`--daemon`, one decision log for every proxy).
//!
//! Two threads read, one per direction; the client's reader also judges, so a
//! client's messages are handled in the order it sent them. When the server
//! exits, this process exits with its status, so the client sees what it would
//! have seen without Warden; when the client closes stdin, the server's stdin
//! is closed and the server given a moment to exit before it is killed.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{ArgGroup, Args, Subcommand};
use warden::Warden;
use warden_mcp::{Judge, Judgement, McpCall, Route, Session};
use warden_types::approval::McpAttestation;
use warden_types::decision::Verdict;
use warden_types::request::ToolCall;
use warden_types::{CallContext, Caller};

use crate::commands::input::load_command_config;
use crate::commands::mcp_daemon::{POLICY_POLL, state_key};
use crate::commands::{mcp_asks, mcp_http};

/// The longest line read from either side; a longer client message is
/// refused, a longer server message dropped.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long the server gets to exit after the client closed its stdin.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How long one decision may take through the daemon.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(10);

// The arguments of `warden mcp`; its description is the subcommand's, in cli.rs.
#[derive(Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    transport: Transport,
}

#[derive(Subcommand)]
enum Transport {
    /// Run an MCP server over stdio behind Warden:
    /// `warden mcp stdio --config FILE --server-name fs -- npx server-filesystem /srv`.
    Stdio(StdioArgs),
    /// Serve an MCP endpoint over Streamable HTTP in front of a Streamable
    /// HTTP server: `warden mcp http --upstream http://127.0.0.1:9000/mcp
    /// --listen 127.0.0.1:8788 --config FILE --server-name files`.
    Http(mcp_http::HttpArgs),
}

#[derive(Args)]
#[command(group(ArgGroup::new("policy").required(true).args(["daemon", "config"])))]
struct StdioArgs {
    /// Judge through the daemon at this URL (`http://127.0.0.1:8787`): one
    /// decision log for every proxy; the token's principal is the caller.
    #[arg(long, requires = "token_env")]
    daemon: Option<String>,
    /// The environment variable that holds the daemon's token (removed from
    /// the server's environment).
    #[arg(long, requires = "daemon", value_name = "VAR")]
    token_env: Option<String>,
    /// Judge in this process with this configuration (no approvals; see
    /// docs/mcp.md).
    #[arg(long)]
    config: Option<PathBuf>,
    /// With `--config`: write the decision log the configuration's
    /// `decision_log:` section describes, in its data directory. One process
    /// per log file: give each proxy its own `decision_log.path`.
    #[arg(long, requires = "config")]
    decision_log: bool,
    /// The server's name in `mcp__<server>__<tool>` (default: the command's
    /// file name). Use the name the client gives the server.
    #[arg(long)]
    server_name: Option<String>,
    /// How long a call is held, in seconds, for the client's answer to
    /// Warden's elicitation (with `--daemon`, where `mcp.client_attested`
    /// lets the client answer); then the call is denied naming its approval.
    /// Keep it under the client's own timeout for a call (60 s in most).
    #[arg(long, value_name = "SECONDS", default_value_t = warden_mcp::ELICITATION_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    elicitation_timeout: u64,
    /// The server's command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub(crate) fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.transport {
        Transport::Stdio(args) => stdio(args),
        Transport::Http(args) => {
            check_server_name(args.server_name())?;
            let (daemon, token_env, config) = args.policy();
            let judge = judge_for(daemon, token_env, config, args.decision_log())?;
            mcp_http::run(args, judge)
        }
    }
}

fn stdio(args: StdioArgs) -> anyhow::Result<ExitCode> {
    let server = match args.server_name {
        Some(name) => name,
        None => default_server_name(&args.command[0])?,
    };
    check_server_name(&server)?;
    let judge = judge_for(
        args.daemon.as_deref(),
        args.token_env.as_deref(),
        args.config.as_deref(),
        args.decision_log,
    )?;
    let mut command = Command::new(&args.command[0]);
    command
        .args(&args.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(var) = &args.token_env {
        // The server must never see Warden's token.
        command.env_remove(var);
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting the MCP server '{}'", args.command[0]))?;
    let mut session = Session::new(server)
        .with_elicitation_timeout(Duration::from_secs(args.elicitation_timeout));
    // The daemon's policy can be swapped under a running session.
    let watch = args.daemon.is_some();
    if watch {
        // Only a daemon's asks can be answered: a 2026-07-28 client is then
        // asked with state sealed under a key of this process's own.
        session = session
            .announcing_list_changes()
            .with_state_key(state_key()?);
    }
    proxy(&mut child, Arc::new(session), judge, watch)
}

/// The policy a proxy judges with: the daemon's (`--daemon URL --token-env
/// VAR`), or a configuration's, in this process (`--config FILE`), writing
/// the library's decision log where `decision_log` asks for it.
fn judge_for(
    daemon: Option<&str>,
    token_env: Option<&str>,
    config: Option<&std::path::Path>,
    decision_log: bool,
) -> anyhow::Result<Arc<dyn Judge + Send + Sync>> {
    Ok(match (daemon, config) {
        (Some(url), _) => {
            let var = token_env.expect("clap requires --token-env");
            let token = std::env::var(var)
                .with_context(|| format!("--token-env {var}: the variable is not set"))?;
            Arc::new(ThroughDaemon::new(url, token)?)
        }
        (None, Some(path)) => {
            let config = load_command_config(Some(path), "mcp")?;
            let warden = Warden::new_healthy(&config.core)?;
            if decision_log {
                warden.log_decisions(&config.core)?;
            }
            Arc::new(InProcess { warden })
        }
        (None, None) => unreachable!("clap requires --daemon or --config"),
    })
}

/// The server's name, by default: the command's file name.
fn default_server_name(command: &str) -> anyhow::Result<String> {
    let name = std::path::Path::new(command)
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    if check_server_name(&name).is_err() {
        bail!("the command's name '{name}' cannot name the server: pass --server-name");
    }
    Ok(name)
}

/// A server name fits `mcp__<server>__<tool>` unambiguously: ASCII letters,
/// digits, `-` and `_`, and no `__`.
fn check_server_name(name: &str) -> anyhow::Result<()> {
    let fits = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !name.contains("__");
    if !fits {
        bail!("--server-name '{name}': use ASCII letters, digits, '-' and '_', without '__'");
    }
    Ok(())
}

/// What ended the session first.
enum Closed {
    Client,
    Server,
}

fn proxy(
    child: &mut Child,
    session: Arc<Session>,
    judge: Arc<dyn Judge + Send + Sync>,
    watch: bool,
) -> anyhow::Result<ExitCode> {
    let to_server = child.stdin.take().expect("the server's stdin is piped");
    let from_server = child.stdout.take().expect("the server's stdout is piped");
    let to_client = Arc::new(Mutex::new(std::io::stdout()));
    let (closed, first_closed) = mpsc::channel();

    let server_reader = {
        let (session, judge, to_client, closed) = (
            session.clone(),
            judge.clone(),
            to_client.clone(),
            closed.clone(),
        );
        std::thread::spawn(move || {
            from_server_loop(from_server, &session, judge.as_ref(), &to_client);
            let _ = closed.send(Closed::Server);
        })
    };
    if watch {
        let (session, judge, to_client) = (session.clone(), judge.clone(), to_client.clone());
        // Ends with the process.
        std::thread::spawn(move || watch_policy(&session, judge.as_ref(), &to_client));
    }
    let flushed = judge.clone();
    std::thread::spawn(move || {
        from_client_loop(to_server, &session, judge.as_ref(), &to_client);
        let _ = closed.send(Closed::Client);
    });

    let status = match first_closed.recv() {
        Ok(Closed::Server) | Err(_) => child.wait()?,
        Ok(Closed::Client) => {
            // The server's stdin is closed (its writer is gone): MCP's shutdown.
            let status = wait_or_kill(child)?;
            let _ = server_reader.join();
            status
        }
    };
    let _ = std::io::stdout().flush();
    flushed.flush();
    Ok(match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}

fn wait_or_kill(child: &mut Child) -> std::io::Result<std::process::ExitStatus> {
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    tracing::warn!("the MCP server did not exit when its input closed: killed");
    child.kill()?;
    child.wait()
}

fn from_client_loop(
    mut to_server: ChildStdin,
    session: &Session,
    judge: &dyn Judge,
    to_client: &Mutex<std::io::Stdout>,
) {
    let mut input = std::io::stdin().lock();
    let mut buffer = Vec::new();
    loop {
        let route = match read_line(&mut input, &mut buffer) {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong) => Route::Client(warden_mcp::oversized(MAX_LINE_BYTES)),
            Ok(Line::Read(line)) => session.from_client(&line, judge),
        };
        match route {
            Route::Server(line) => {
                if write_line(&mut to_server, &line).is_err() {
                    return; // the server is gone; its reader ends the session
                }
            }
            Route::Client(line) => send_to_client(to_client, &line),
            Route::Drop(why) => tracing::warn!("a client message was dropped: {why}"),
        }
    }
}

fn from_server_loop(
    from_server: impl Read,
    session: &Session,
    judge: &dyn Judge,
    to_client: &Mutex<std::io::Stdout>,
) {
    let mut input = BufReader::new(from_server);
    let mut buffer = Vec::new();
    loop {
        match read_line(&mut input, &mut buffer) {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong) => {
                tracing::warn!("a server message over {MAX_LINE_BYTES} bytes was dropped");
            }
            Ok(Line::Read(line)) => match session.from_server(&line, judge) {
                Route::Client(line) => send_to_client(to_client, &line),
                Route::Server(_) => unreachable!("the session never answers the server itself"),
                Route::Drop(why) => tracing::warn!("a server message was dropped: {why}"),
            },
        }
    }
}

/// Tells the client to list the tools again each time the judge's policy
/// generation moves (a hot swap), when the session told it the list may
/// change. A generation that cannot be read is skipped, not a change. Also
/// denies the calls held past their time for the client's answer to an
/// elicitation (only a daemon's asks are put to the client).
fn watch_policy(session: &Session, judge: &dyn Judge, to_client: &Mutex<std::io::Stdout>) {
    let mut seen = judge.generation();
    loop {
        std::thread::sleep(POLICY_POLL);
        // A call held for the client's answer past its time is denied.
        for line in session.expired(Instant::now()) {
            send_to_client(to_client, &line);
        }
        let Some(now) = judge.generation() else {
            continue;
        };
        if seen.is_some_and(|seen| seen != now) {
            let lines = session.list_changes();
            if !lines.is_empty() {
                tracing::info!(
                    generation = now,
                    "the policy changed: the client lists the tools again"
                );
            }
            for line in lines {
                send_to_client(to_client, &line);
            }
        }
        seen = Some(now);
    }
}

fn send_to_client(to_client: &Mutex<std::io::Stdout>, line: &str) {
    let mut out = to_client.lock().unwrap_or_else(|e| e.into_inner());
    // A client that stopped reading ends the session through its stdin.
    let _ = write_line(&mut *out, line);
}

/// One message and its newline in one write: the server's stdin is not
/// buffered, and a reader woken by a message without its end only waits again.
fn write_line(out: &mut impl Write, line: &str) -> std::io::Result<()> {
    let mut message = Vec::with_capacity(line.len() + 1);
    message.extend_from_slice(line.as_bytes());
    message.push(b'\n');
    out.write_all(&message)?;
    out.flush()
}

enum Line {
    Read(String),
    TooLong,
    Eof,
}

/// One newline-delimited message, at most [`MAX_LINE_BYTES`] long. Bytes that
/// are not UTF-8 become U+FFFD: such a message is no valid JSON-RPC either way,
/// and what is forwarded is what the session read.
fn read_line(input: &mut impl BufRead, buffer: &mut Vec<u8>) -> std::io::Result<Line> {
    loop {
        buffer.clear();
        let read = input
            .by_ref()
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', buffer)?;
        if read == 0 {
            return Ok(Line::Eof);
        }
        if buffer.last() != Some(&b'\n') && buffer.len() > MAX_LINE_BYTES {
            skip_line(input, buffer)?;
            return Ok(Line::TooLong);
        }
        let line = String::from_utf8_lossy(buffer);
        let line = line.trim_end_matches(['\n', '\r']);
        // Blank lines between messages carry nothing.
        if !line.trim().is_empty() {
            return Ok(Line::Read(line.to_string()));
        }
    }
}

/// Reads past the rest of an overlong message, a bounded chunk at a time.
fn skip_line(input: &mut impl BufRead, buffer: &mut Vec<u8>) -> std::io::Result<()> {
    loop {
        buffer.clear();
        let read = input
            .by_ref()
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', buffer)?;
        if read == 0 || buffer.last() == Some(&b'\n') {
            return Ok(());
        }
    }
}

/// The call Warden judges: the tool's name and arguments, and for the log
/// the server's name, the client's claim and the trace context.
fn judged_call(call: &McpCall<'_>) -> ToolCall {
    ToolCall::new(call.tool_name.clone(), call.arguments.clone()).context(CallContext {
        mcp_server: Some(call.server.to_string()),
        mcp_client: call.client_claim(),
        traceparent: call.traceparent.clone(),
        ..CallContext::default()
    })
}

/// Judges in this process with the library.
struct InProcess {
    warden: Warden,
}

impl Judge for InProcess {
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String> {
        let tool_call = judged_call(call);
        let evaluation = self
            .warden
            .evaluate(&tool_call, Caller::Agent)
            .map_err(|e| e.to_string())?;
        tracing::info!(
            tool = %call.tool_name,
            verdict = evaluation.verdict.as_str(),
            client_info = ?call.client_info,
            "judged an MCP call"
        );
        Ok(Judgement {
            verdict: evaluation.verdict,
            reasons: evaluation.reasons,
            decision_id: None,
            approval_id: None,
            attestable: false,
            console_url: None,
        })
    }

    fn offered(&self, tool_name: &str) -> bool {
        !self
            .warden
            .snapshot()
            .permissions()
            .denies_by_name(tool_name)
    }

    fn flush(&self) {
        if let Some(log) = self.warden.decision_log() {
            log.flush();
        }
    }
}

/// Judges through the daemon's `POST /v1/evaluate`, as the token's principal;
/// an ask is filed in the daemon's approval store (crate::commands::mcp_asks).
struct ThroughDaemon {
    client: warden_client::Client,
    runtime: tokio::runtime::Runtime,
}

impl ThroughDaemon {
    fn new(url: &str, token: String) -> anyhow::Result<ThroughDaemon> {
        let client = warden_client::Client::builder(url)
            .token(token)
            .timeout(DAEMON_TIMEOUT)
            // A call is judged once: a retry could log two decisions.
            .retries(0)
            .build()
            .with_context(|| format!("--daemon '{url}'"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(ThroughDaemon { client, runtime })
    }
}

impl Judge for ThroughDaemon {
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String> {
        let tool_call = judged_call(call);
        let decision = self
            .runtime
            .block_on(self.client.evaluate(&tool_call))
            .map_err(|e| e.to_string())?;
        tracing::info!(
            tool = %call.tool_name,
            verdict = decision.evaluation.verdict.as_str(),
            decision_id = ?decision.decision_id,
            client_info = ?call.client_info,
            "judged an MCP call"
        );
        let evaluation = decision.evaluation;
        if evaluation.verdict != Verdict::Ask {
            return Ok(Judgement {
                verdict: evaluation.verdict,
                reasons: evaluation.reasons,
                decision_id: decision.decision_id,
                approval_id: None,
                attestable: false,
                console_url: None,
            });
        }
        let asked = self
            .runtime
            .block_on(self.client.mcp_ask(&tool_call))
            .map_err(|e| format!("asking for approval: {e}"))?;
        let answer = mcp_asks::read(asked, &tool_call.tool_input, evaluation.reasons);
        tracing::info!(
            tool = %call.tool_name,
            verdict = answer.verdict.as_str(),
            approval_id = ?answer.approval_id,
            "an MCP ask"
        );
        Ok(Judgement {
            verdict: answer.verdict,
            reasons: answer.reasons,
            decision_id: decision.decision_id,
            approval_id: answer.approval_id,
            attestable: answer.attestable,
            console_url: answer.console_url,
        })
    }

    /// `POST /v1/mcp/asks/attest`: the client's answer, client-attested.
    fn attest(
        &self,
        call: &McpCall<'_>,
        approval_id: &str,
        approve: bool,
    ) -> Result<Judgement, String> {
        let tool_call = judged_call(call);
        let attestation = McpAttestation {
            approval_id: approval_id.to_string(),
            call: tool_call,
            approve,
        };
        let answer = self
            .runtime
            .block_on(self.client.mcp_attest(&attestation))
            .map_err(|e| e.to_string())?;
        let answer = mcp_asks::read(answer, &attestation.call.tool_input, Vec::new());
        tracing::info!(
            tool = %call.tool_name,
            approval_id,
            approve,
            verdict = answer.verdict.as_str(),
            "the MCP client answered an ask (client-attested)"
        );
        Ok(Judgement {
            verdict: answer.verdict,
            reasons: answer.reasons,
            decision_id: None,
            approval_id: answer.approval_id,
            attestable: false,
            console_url: None,
        })
    }

    /// `GET /healthz`'s generation.
    fn generation(&self) -> Option<u64> {
        self.runtime
            .block_on(self.client.health())
            .ok()
            .map(|health| health.generation)
    }

    fn offered(&self, tool_name: &str) -> bool {
        self.offered_all(&[tool_name.to_string()])
            .first()
            .copied()
            .unwrap_or(true)
    }

    /// One round trip to `POST /v1/tools/offered`. When the daemon cannot
    /// answer, every tool is listed: a listing allows nothing, every call is
    /// judged (and denied while the daemon is away).
    fn offered_all(&self, tool_names: &[String]) -> Vec<bool> {
        match self.runtime.block_on(self.client.offered(tool_names)) {
            Ok(answer) => tool_names
                .iter()
                .map(|name| !answer.denied_by_name.contains(name))
                .collect(),
            Err(err) => {
                tracing::warn!(%err, "the daemon could not say which tools to offer: all are listed");
                vec![true; tool_names.len()]
            }
        }
    }
}
