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
use warden_bench::{MARKDOWN_HEADER, SCENARIOS, markdown_row};

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
    if list {
        for s in SCENARIOS {
            println!("{:<16} {}", s.name, s.about);
        }
        return Ok(ExitCode::SUCCESS);
    }
    for name in &wanted {
        if !SCENARIOS.iter().any(|s| s.name == name) {
            let known: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
            bail!("unknown scenario '{name}' (known: {})", known.join(", "));
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warden-bench: this is a debug build; measure with `cargo run --release -p warden-bench`"
        );
    }
    println!("{MARKDOWN_HEADER}");
    for scenario in SCENARIOS
        .iter()
        .filter(|s| wanted.is_empty() || wanted.iter().any(|w| w == s.name))
    {
        for m in (scenario.run)(calls)? {
            println!("{}", markdown_row(&m));
        }
    }
    Ok(ExitCode::SUCCESS)
}
