//! `warden interaction`: what a run's context makes of its interaction with humans.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use warden_types::Caller;

use crate::commands::input::{load_config, read_request};

pub(crate) fn interaction(
    source: &str,
    internal: bool,
    config: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    use warden_approval::{ApprovalList, InteractionQuery};
    let body = read_request(source)?;
    let context: warden_types::request::CallContext =
        serde_json::from_slice(&body).context("invalid context")?;
    let caller = if internal {
        Caller::Internal
    } else {
        Caller::Agent
    };
    let list = ApprovalList::new(&load_config(config)?.core.hitl_approval);
    let query = InteractionQuery {
        context,
        tools: None,
    };
    let report = warden_approval::interaction::resolve(&query, caller, &list)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden interaction`.
#[derive(Args)]
pub(crate) struct InteractionArgs {
    /// The run's context as JSON (the `context` of a request), or `-` for stdin.
    #[arg(long, default_value = "-")]
    context: String,
    /// Treat the caller as internal: it may set the run's interaction mode.
    #[arg(long)]
    internal: bool,
    /// The configuration file, for `hitl_approval` (default: the embedded defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: InteractionArgs) -> anyhow::Result<ExitCode> {
    interaction(&args.context, args.internal, args.config.as_deref())
}
