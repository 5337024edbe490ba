//! `warden eval`: judge one tool call with a configuration, as the daemon would.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use warden::Warden;
use warden_types::Attribution;
use warden_types::Caller;
use warden_types::request::ToolCall;

use crate::commands::input::{load_config, read_request};

pub(crate) fn eval(
    config: Option<&Path>,
    request: &str,
    internal: bool,
    asserts: Vec<Attribution>,
) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let body = read_request(request)?;
    let warden = Warden::new(&config)?;
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
