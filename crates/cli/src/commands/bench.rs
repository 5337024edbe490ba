//! `warden bench`: the benchmarks (`warden-bench`), in this binary.

use std::process::ExitCode;

use anyhow::bail;

pub(crate) fn bench(wanted: &[String], calls: usize, list: bool) -> anyhow::Result<ExitCode> {
    use warden_bench::{MARKDOWN_HEADER, SCENARIOS, markdown_row};
    if list {
        for s in SCENARIOS {
            println!("{:<16} {}", s.name, s.about);
        }
        return Ok(ExitCode::SUCCESS);
    }
    for name in wanted {
        if !SCENARIOS.iter().any(|s| s.name == name) {
            let known: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
            bail!("unknown scenario '{name}' (known: {})", known.join(", "));
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warden: this is a debug build; measure with `cargo run --release -p warden-cli -- bench`"
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
