//! `warden replay`: a decision log's calls judged again against a candidate
//! configuration by the library (`Warden::evaluate`), to see what it would
//! decide differently before it serves. The reading, the rebuilding and the
//! counting are `warden_log::replay`'s.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use warden::Warden;
use warden_log::replay::{self, Transition};

// The arguments of `warden replay`.
#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The decision log (`decisions.jsonl`, or a rotated one).
    #[arg(long)]
    log: PathBuf,
    /// The candidate configuration its calls are judged against.
    #[arg(long)]
    config: PathBuf,
    /// Exit 1 when any of these transitions occurs (comma-separated:
    /// `allow->deny,deny->allow`): a CI gate.
    #[arg(long, value_delimiter = ',')]
    fail_on: Vec<Transition>,
    /// Print the whole report as JSON.
    #[arg(long)]
    json: bool,
    /// The changed calls to print (all of them with --json).
    #[arg(long, default_value_t = 50)]
    show: usize,
    /// Threads judging (default: every core).
    #[arg(long)]
    threads: Option<NonZeroUsize>,
}

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let config = crate::commands::input::load_command_config(Some(&args.config), "replay")?;
    let warden = Warden::new_healthy(&config.core)
        .with_context(|| format!("loading the candidate {}", args.config.display()))?;
    let log =
        std::fs::read(&args.log).with_context(|| format!("cannot read {}", args.log.display()))?;
    let threads = args
        .threads
        .or_else(|| std::thread::available_parallelism().ok())
        .unwrap_or(NonZeroUsize::MIN);
    let report = replay::replay(&log, threads, &|call, caller| warden.evaluate(call, caller));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render(args.show));
    }
    let occurred = report.occurred(&args.fail_on);
    if occurred.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let listed: Vec<String> = occurred.iter().map(|(t, n)| format!("{t} ({n})")).collect();
    eprintln!(
        "warden replay: --fail-on transitions occurred: {}",
        listed.join(", ")
    );
    Ok(ExitCode::from(1))
}
