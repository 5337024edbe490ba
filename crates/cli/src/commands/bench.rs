//! `warden bench`: the benchmarks (`warden-bench`), in this binary.

use std::process::ExitCode;

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
