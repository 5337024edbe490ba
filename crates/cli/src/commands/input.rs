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
