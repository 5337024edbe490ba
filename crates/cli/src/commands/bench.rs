//! `warden bench`: the benchmarks (`warden-bench`), in this binary.

use std::process::ExitCode;

use clap::Args;

pub(crate) fn bench(wanted: &[String], calls: usize, list: bool) -> anyhow::Result<ExitCode> {
    warden_bench::run(
        wanted,
        calls,
        list,
        "warden",
        "cargo run --release -p warden-cli -- bench",
    )?;
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Scenarios to run (default: all). `--list` shows them.
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// Timed calls per thread.
    #[arg(long, default_value_t = 20_000)]
    calls: usize,
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
}

pub(crate) fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    bench(&args.scenarios, args.calls, args.list)
}
