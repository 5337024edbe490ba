//! What several subcommands read: a configuration (the file, else the
//! embedded default) and a request (a file, or `-` for stdin).

use std::io::Read;
use std::path::Path;

use anyhow::Context;
use warden_server::Config;

pub(crate) fn load_config(path: Option<&Path>) -> anyhow::Result<Config> {
    Ok(match path {
        Some(path) => Config::load(path)?,
        None => Config::embedded(),
    })
}

/// The configuration a command that is not the daemon runs with: its data
/// directory in the user's state directory unless the file names one
/// ([`super::state_dir`]).
pub(crate) fn load_command_config(path: Option<&Path>, command: &str) -> anyhow::Result<Config> {
    let mut config = load_config(path)?;
    super::state_dir::place(&mut config.core, command);
    Ok(config)
}

pub(crate) fn read_request(source: &str) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    if source == "-" {
        std::io::stdin()
            .take(warden_types::request::MAX_REQUEST_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .context("reading the request from stdin")?;
    } else {
        body = std::fs::read(source).with_context(|| format!("reading the request {source}"))?;
    }
    Ok(body)
}
