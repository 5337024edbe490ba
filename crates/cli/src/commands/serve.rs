//! `warden serve`: the daemon.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

// The arguments of `warden serve`.
#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The configuration file (tokens under `server.tokens`).
    #[arg(long)]
    config: PathBuf,
    /// The address to listen on (default: `server.listen`, 127.0.0.1:8787).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// The data directory (default: the configuration's `data_dir`, ./.warden).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// This node's name, instead of `server.node_name` (default the host
    /// name): for the nodes of a fleet that share one configuration file.
    #[arg(long)]
    node_name: Option<String>,
    /// Do not reload when the config file changes (SIGHUP and the admin
    /// endpoint still reload).
    #[arg(long)]
    no_watch: bool,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let options = warden_server::ServeOptions {
        listen: args.listen,
        data_dir: args.data_dir,
        node_name: args.node_name,
        watch: args.no_watch.then_some(false),
        ..Default::default()
    };
    warden_server::run(&args.config, options)?;
    Ok(ExitCode::SUCCESS)
}
