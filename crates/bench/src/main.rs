//! `warden-bench`: the benchmarks of `warden bench`, with the same output, in a
//! binary of their own that also has the scenarios the `warden` binary leaves
//! out (with the default `cedar` feature: `cedar` and `cedar-stages`, Warden
//! beside native Cedar).
//!
//! ```sh
//! cargo run --release -p warden-bench -- --scenario cedar [--calls 20000] [--list]
//! ```
//!
//! Its global allocator is mimalloc, as the `warden` binary's is: the figures
//! are those of the allocator Warden ships with (the system allocator's
//! `malloc`/`free` were a third of the native stage's time).

use std::process::ExitCode;

use anyhow::{Context, bail};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: warden-bench [--scenario NAME]... [--calls N] [--list]";

fn main() -> anyhow::Result<ExitCode> {
    let mut wanted = Vec::new();
    let mut calls = 20_000;
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--scenario" => wanted.push(args.next().context(USAGE)?),
            "--calls" => {
                calls = args
                    .next()
                    .context(USAGE)?
                    .parse()
                    .context("--calls takes a number")?
            }
            "--list" => list = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => bail!("unknown argument '{other}'\n{USAGE}"),
        }
    }
    warden_bench::run(
        &wanted,
        calls,
        list,
        "warden-bench",
        "cargo run --release -p warden-bench",
    )?;
    Ok(ExitCode::SUCCESS)
}
