//! `warden eval`: judge one tool call with a configuration, as the daemon would.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use warden::Warden;
use warden_types::Attribution;
use warden_types::Caller;
use warden_types::request::ToolCall;

use crate::commands::input::{load_command_config, read_request};

pub(crate) fn eval(
    config: Option<&Path>,
    request: &str,
    internal: bool,
    asserts: Vec<Attribution>,
) -> anyhow::Result<ExitCode> {
    let config = load_command_config(config, "eval")?;
    let body = read_request(request)?;
    let warden = Warden::new(&config.core)?;
    let caller = Caller::of_credential(internal, asserts.into_iter().collect());
    let evaluation = match ToolCall::from_json(&body) {
        Ok(call) => warden.evaluate(&call, caller).context("invalid request")?,
        // What a model wrote gets a decision, as on the daemon.
        Err(err) => match err.refusal_code() {
            Some(code) => warden.refusal(code, &err.to_string()),
            None => return Err(anyhow::Error::new(err).context("invalid request")),
        },
    };
    println!("{}", serde_json::to_string_pretty(&evaluation)?);
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden eval`; its description is the subcommand's, in cli.rs.
#[derive(Args)]
pub(crate) struct EvalArgs {
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
}

pub(crate) fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    eval(
        args.config.as_deref(),
        &args.request,
        args.internal,
        args.asserts,
    )
}
