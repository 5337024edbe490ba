//! `warden check`: load a configuration and say what it loaded, or the first error.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use warden::Warden;
use warden_runtime::engine::CompiledFrom;
use warden_server::Config;

pub(crate) fn check(config: &Config) -> anyhow::Result<ExitCode> {
    let warden = Warden::new(&config.core)?;
    let snapshot = warden.snapshot();
    let providers = snapshot.providers().providers();
    if let Some((name, failure)) = snapshot.unhealthy().first() {
        bail!("provider '{name}': {failure}");
    }
    println!(
        "{}: {} provider(s) loaded",
        config.core.source,
        providers.len()
    );
    for p in providers {
        let l = p.limits();
        println!(
            "  {} {} ({})\n    sha256:{}\n    compiled: {}\n    limits: timeout_ms={} fuel={} configure_timeout_ms={} configure_fuel={} memory_mb={} max_input_bytes={} max_output_bytes={} pool_size={}; on_error={:?}",
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
            l.configure_timeout_ms,
            l.configure_fuel,
            l.memory_mb,
            l.max_input_bytes,
            l.max_output_bytes,
            l.pool_size,
            p.on_error(),
        );
    }
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden check`.
#[derive(Args)]
pub(crate) struct CheckArgs {
    /// The configuration file (default: the embedded defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    check(&crate::commands::input::load_command_config(
        args.config.as_deref(),
        "check",
    )?)
}
