//! `warden hook claude-code`: Warden as a Claude Code `PreToolUse` hook. It reads
//! the hook's payload on stdin, judges the call (in-process from a config, or
//! through the daemon) and prints Claude Code's hook answer: allow, deny (its
//! reason is shown to the model) or ask (its reason is shown to the user, who
//! answers: asks reach a human in Claude Code's own way).
//!
//! A hook that fails lets the call through in Claude Code (a non-zero exit other
//! than 2 is a non-blocking error), so this one never fails: a malformed payload,
//! an unreadable config, an unreachable daemon or any refusal is printed as a
//! deny that says what went wrong, and the exit code is 0.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use warden::Evaluation;
use warden::{Config, Warden};
use warden_types::Caller;
use warden_types::decision::{Reason, Verdict};
use warden_types::request::{CallContext, ToolCall};

/// The largest payload read from stdin.
const MAX_PAYLOAD_BYTES: u64 = warden_types::request::MAX_REQUEST_BYTES as u64;

/// The hook event this command answers.
pub const PRE_TOOL_USE: &str = "PreToolUse";

/// Claude Code's `PreToolUse` payload (unknown fields are ignored: Claude Code
/// adds fields over time, and none of them can loosen a decision).
#[derive(Debug, Deserialize)]
pub struct PreToolUse {
    pub hook_event_name: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// The answer, as Claude Code reads it from stdout.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    pub hook_specific_output: HookDecision,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookDecision {
    pub hook_event_name: String,
    /// `allow`, `deny` or `ask`.
    pub permission_decision: String,
    pub permission_decision_reason: String,
}

impl HookOutput {
    fn new(verdict: Verdict, reason: String) -> HookOutput {
        HookOutput {
            hook_specific_output: HookDecision {
                hook_event_name: PRE_TOOL_USE.into(),
                permission_decision: verdict.as_str().into(),
                permission_decision_reason: reason,
            },
        }
    }

    /// A deny for a failure of the hook itself.
    pub fn failed(why: &str) -> HookOutput {
        HookOutput::new(
            Verdict::Deny,
            format!("Warden could not judge this call, so it is denied: {why}"),
        )
    }

    /// Claude Code's answer for Warden's decision; an ask is answered as
    /// `on_ask` says.
    pub fn of(evaluation: &Evaluation, on_ask: OnAsk) -> HookOutput {
        let reasons = |reasons: &[Reason]| {
            reasons
                .iter()
                .map(|r| format!("{} ({})", r.message, r.code))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let text = match evaluation.verdict {
            Verdict::Allow => format!(
                "Warden allowed the call ({})",
                evaluation
                    .decided_by
                    .as_deref()
                    .unwrap_or("no stage objected")
            ),
            Verdict::Ask => format!(
                "Warden asks a human to approve this call: {}",
                reasons(&evaluation.reasons)
            ),
            Verdict::Deny => format!(
                "Warden denied this call: {}. Do not try to reach the same result another way; \
                 tell the user what was blocked and why.",
                reasons(&evaluation.reasons)
            ),
        };
        match (evaluation.verdict, on_ask) {
            (Verdict::Ask, OnAsk::Deny) => HookOutput::new(
                Verdict::Deny,
                format!(
                    "{text}. This harness cannot hold an ask at its hooks, so the call is denied; \
                     tell the user what needs approval and why."
                ),
            ),
            _ => HookOutput::new(evaluation.verdict, text),
        }
    }
}

/// What the hook answers when Warden asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OnAsk {
    /// An ask: the harness asks its user (Claude Code does).
    #[default]
    Ask,
    /// A deny naming the ask: for harnesses that run a call whose hook said
    /// "ask" (DeepCode does), where an ask would be an allow.
    Deny,
}

/// Claude Code's tool names, as Warden's tool registry and providers know them
/// (one configuration serves DeerFlow and Claude Code), its own housekeeping
/// tools in the same spelling so that a rule can name them. Other names (MCP
/// tools, ...) are judged as they are.
pub const TOOL_NAMES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Read", "read"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("LS", "ls"),
    // Judged as a write of `notebook_path`, as Claude Code's `Edit` rules cover it.
    ("NotebookEdit", "notebook_edit"),
    ("TodoWrite", "todo_write"),
    ("Task", "task"),
    ("ExitPlanMode", "exit_plan_mode"),
    ("BashOutput", "bash_output"),
    ("KillShell", "kill_shell"),
    ("KillBash", "kill_shell"),
];

impl PreToolUse {
    /// Parses a payload, saying what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<PreToolUse, String> {
        let payload: PreToolUse = serde_json::from_slice(bytes)
            .map_err(|err| format!("the hook payload is not a PreToolUse payload: {err}"))?;
        if payload.hook_event_name != PRE_TOOL_USE {
            return Err(format!(
                "this hook answers {PRE_TOOL_USE}, not '{}': check the hooks in settings.json",
                payload.hook_event_name
            ));
        }
        Ok(payload)
    }

    /// The call Warden judges: the session is the thread, the tool use its id.
    pub fn to_call(&self) -> ToolCall {
        let tool_name = TOOL_NAMES
            .iter()
            .find(|(claude, _)| *claude == self.tool_name)
            .map_or(self.tool_name.as_str(), |(_, warden)| warden);
        ToolCall {
            tool_name: tool_name.to_string(),
            tool_input: Value::Object(self.tool_input.clone()),
            tool_call_id: self.tool_use_id.clone(),
            context: CallContext {
                thread_id: self.session_id.clone(),
                cwd: self.cwd.clone(),
                home: std::env::var("HOME").ok(),
                ..CallContext::default()
            },
        }
    }
}

/// Where the decision comes from.
pub enum Judge<'a> {
    /// In this process, from a configuration.
    Config(Option<&'a Path>),
    /// The daemon at `url` (http), with this bearer token.
    Daemon {
        url: &'a str,
        token: Option<String>,
        timeout: Duration,
    },
}

/// Answers one payload; never fails (see the module's comment).
pub fn answer(payload: &[u8], judge: &Judge, on_ask: OnAsk) -> HookOutput {
    let payload = match PreToolUse::parse(payload) {
        Ok(payload) => payload,
        Err(why) => return HookOutput::failed(&why),
    };
    let call = payload.to_call();
    let evaluation = match judge {
        Judge::Config(path) => in_process(*path, &call),
        Judge::Daemon {
            url,
            token,
            timeout,
        } => through_daemon(url, token.as_deref(), *timeout, &call),
    };
    match evaluation {
        Ok(evaluation) => HookOutput::of(&evaluation, on_ask),
        Err(why) => HookOutput::failed(&why),
    }
}

fn in_process(path: Option<&Path>, call: &ToolCall) -> Result<Evaluation, String> {
    let mut config = match path {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::embedded(),
    };
    super::state_dir::place(&mut config, "hook");
    let warden = Warden::new(&config).map_err(|e| e.to_string())?;
    // What the model wrote is judged (a deny at worst); only the context the
    // hook built could be refused.
    warden
        .evaluate(call, Caller::Agent)
        .map_err(|e| e.to_string())
}

/// `POST /v1/evaluate` on the daemon; any answer but a decision is an error.
fn through_daemon(
    url: &str,
    token: Option<&str>,
    timeout: Duration,
    call: &ToolCall,
) -> Result<Evaluation, String> {
    let token = token.ok_or("no token: set the variable named by --token-env")?;
    let target = url::Url::parse(url).map_err(|e| format!("--url '{url}': {e}"))?;
    if target.scheme() != "http" {
        return Err(format!(
            "--url '{url}': only http is supported (keep the daemon on loopback)"
        ));
    }
    let host = target.host_str().ok_or("--url has no host")?.to_string();
    let port = target.port_or_known_default().unwrap_or(80);
    let path = format!("{}/v1/evaluate", target.path().trim_end_matches('/'));
    let body = serde_json::to_vec(call).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let exchange = async {
        use http_body_util::{BodyExt, Full};
        let stream = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| format!("cannot reach warden at {url}: {e}"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let request = hyper::Request::post(path)
            .header(hyper::header::HOST, format!("{host}:{port}"))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Full::new(hyper::body::Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("warden at {url} did not answer: {e}"))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("warden at {url} did not answer: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!(
                "warden at {url} refused the request ({status}): {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        parse_evaluation(&bytes)
    };
    runtime.block_on(async {
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(format!("warden at {url} did not answer in {timeout:?}")))
    })
}

/// The daemon's decision, as much of it as the hook needs.
fn parse_evaluation(bytes: &[u8]) -> Result<Evaluation, String> {
    #[derive(Deserialize)]
    struct Answer {
        verdict: Verdict,
        reasons: Vec<Reason>,
        decided_by: Option<String>,
        generation: u64,
        #[serde(default)]
        judged_at: String,
    }
    let answer: Answer = serde_json::from_slice(bytes)
        .map_err(|e| format!("warden answered something that is not a decision: {e}"))?;
    Ok(Evaluation {
        verdict: answer.verdict,
        allow: answer.verdict == Verdict::Allow,
        reasons: answer.reasons,
        policy_id: None,
        metadata: Map::new(),
        decided_by: answer.decided_by,
        cause: None,
        interaction_mode: warden_policy::interaction::InteractionMode::Interactive,
        reach: None,
        stages: Vec::new(),
        decision_record: None,
        generation: answer.generation,
        duration_us: 0,
        judged_at: answer.judged_at,
    })
}

/// `warden hook claude-code`: stdin to stdout, exit 0 whatever happens.
pub fn claude_code(judge: &Judge, on_ask: OnAsk) -> anyhow::Result<std::process::ExitCode> {
    let mut payload = Vec::new();
    let output = match std::io::stdin()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut payload)
    {
        Ok(_) if payload.len() as u64 > MAX_PAYLOAD_BYTES => HookOutput::failed(&format!(
            "the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes"
        )),
        Ok(_) => answer(&payload, judge, on_ask),
        Err(err) => HookOutput::failed(&format!("cannot read the hook payload: {err}")),
    };
    println!("{}", serde_json::to_string(&output)?);
    Ok(std::process::ExitCode::SUCCESS)
}

// The arguments of `warden hook`: which harness's hook to answer.
#[derive(Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    harness: Harness,
}

#[derive(Subcommand)]
enum Harness {
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
        /// What to answer when Warden asks: `ask` (the harness asks its
        /// user) or `deny` (for a harness that runs a call its hook asked
        /// about, as DeepCode's command hooks do).
        #[arg(long, value_enum, default_value_t = OnAsk::Ask)]
        on_ask: OnAsk,
    },
}

pub(crate) fn run(args: HookArgs) -> anyhow::Result<std::process::ExitCode> {
    match args.harness {
        Harness::ClaudeCode {
            config,
            url,
            token_env,
            timeout_ms,
            on_ask,
        } => {
            let judge = match &url {
                Some(url) => Judge::Daemon {
                    url,
                    token: std::env::var(&token_env).ok(),
                    timeout: std::time::Duration::from_millis(timeout_ms),
                },
                None => Judge::Config(config.as_deref()),
            };
            claude_code(&judge, on_ask)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_tool_names_become_the_registrys() {
        let payload = PreToolUse::parse(
            br#"{"hook_event_name": "PreToolUse", "tool_name": "Bash",
                 "tool_input": {"command": "ls"}, "session_id": "s-1", "tool_use_id": "toolu_1"}"#,
        )
        .unwrap();
        let call = payload.to_call();
        assert_eq!(call.tool_name, "bash");
        assert_eq!(call.context.thread_id.as_deref(), Some("s-1"));
        assert_eq!(call.tool_call_id.as_deref(), Some("toolu_1"));
    }

    #[test]
    fn another_event_is_refused_naming_it() {
        let err = PreToolUse::parse(
            br#"{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}"#,
        )
        .unwrap_err();
        assert!(err.contains("PostToolUse"), "{err}");
    }
}
