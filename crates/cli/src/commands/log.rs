//! `warden log verify`: checks a chained decision log, its checkpoints, the
//! checkpoint file kept outside it and, given the public key, the signatures.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

// The arguments of `warden log`.
#[derive(Args)]
pub(crate) struct LogArgs {
    #[command(subcommand)]
    command: LogCommand,
}

#[derive(Subcommand)]
enum LogCommand {
    /// Check the hash chain of a decision log, its checkpoints and their
    /// signatures, and say where it breaks. Exit 0 intact, 1 broken, 2 error.
    Verify {
        /// The log file (`decisions.jsonl`, or a rotated one); several (the
        /// rotated files oldest first, then the current one) are checked as
        /// one chain.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The checkpoint file kept outside the log (default
        /// `decision_log.checkpoints`: the log's path and `.checkpoints`), the only
        /// way to see a cut at the end or a file forged and re-chained whole
        /// when no key signs.
        #[arg(long)]
        checkpoints: Option<PathBuf>,
        /// The public key of `signing.key` (SPKI PEM): every checkpoint must
        /// then be signed by it.
        #[arg(long)]
        key: Option<PathBuf>,
    },
}

pub(crate) fn run(args: LogArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        LogCommand::Verify {
            files,
            checkpoints,
            key,
        } => verify(&files, checkpoints.as_deref(), key.as_deref()),
    }
}

fn verify(
    files: &[PathBuf],
    checkpoints: Option<&Path>,
    key: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let mut log = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let bytes =
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        if log.last().is_some_and(|&b| b != b'\n') {
            anyhow::bail!(
                "{} does not end with a line break: give it last, or alone",
                files[i - 1].display()
            );
        }
        log.extend(bytes);
    }
    let name = files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let external = checkpoints
        .map(|path| std::fs::read(path).with_context(|| format!("cannot read {}", path.display())))
        .transpose()?;
    let key = key.map(warden::signing::read_verifying_key).transpose()?;
    let report = warden_log::verify(&log, external.as_deref(), key.as_ref());
    let seqs = match report.seqs {
        Some((first, last)) => format!("seq {first} to {last}"),
        None => "no chained line".into(),
    };
    println!(
        "{name}: {} lines ({} from before the chain), {seqs}{}; {} checkpoints in the log",
        report.lines,
        report.unchained,
        if report.continues_earlier_file {
            ", continuing an earlier file"
        } else {
            ""
        },
        report.checkpoints,
    );
    match external {
        Some(_) => println!(
            "checkpoint file: {} matched, {} for earlier files, {} for later files",
            report.external_matched, report.external_earlier, report.external_later
        ),
        None => println!(
            "no checkpoint file given: a cut at the end, or a file re-chained whole, is not seen without it{}",
            if key.is_some() { " or the key" } else { "" }
        ),
    }
    match key {
        Some(_) => println!("signatures verified: {}", report.signatures_verified),
        None => println!("signatures not checked (no --key)"),
    }
    if report.unvouched_tail > 0 {
        println!(
            "{} chained lines after the last checkpoint: no checkpoint vouches for them yet",
            report.unvouched_tail
        );
    }
    if report.ok() {
        println!("intact");
        return Ok(ExitCode::SUCCESS);
    }
    for problem in &report.problems {
        println!("broken: {problem}");
    }
    Ok(ExitCode::from(1))
}
