//! `warden rules import --from deepcode FILE`: another engine's permission
//! rules as Warden's `permissions` block, never looser; what Warden judges
//! stricter goes to the report, what it cannot express is refused.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use warden_policy::deepcode_import;

// The arguments of `warden rules`.
#[derive(Args)]
pub(crate) struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Turn another engine's permission config into Warden's `permissions:`
    /// block (YAML, to stdout or --out); the report (JSON: where Warden is
    /// stricter, and why) goes to stderr or --report.
    Import(ImportArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum Source {
    /// DeepCode's `deepcode_config.json` (its `security` block).
    Deepcode,
}

#[derive(Args)]
struct ImportArgs {
    /// Whose config FILE is.
    #[arg(long = "from", value_enum)]
    from: Source,
    /// The config file.
    file: PathBuf,
    /// Write the `permissions:` block here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the report (JSON) here instead of stderr.
    #[arg(long)]
    report: Option<PathBuf>,
}

pub(crate) fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RulesCommand::Import(args) => import(args),
    }
}

fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let imported = match args.from {
        Source::Deepcode => deepcode_import::import(&text)
            .with_context(|| format!("{} (DeepCode config)", args.file.display()))?,
    };
    let block = serde_json::json!({ "permissions": imported.permissions });
    let yaml = format!(
        "# Imported from DeepCode's {} by `warden rules import --from deepcode`.\n\
         # Use it as the config's `permissions:` block (it replaces one already there).\n{}",
        args.file.display(),
        serde_norway::to_string(&block)?
    );
    let report = serde_json::to_string_pretty(&imported.report)? + "\n";
    match &args.out {
        Some(path) => std::fs::write(path, yaml)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{yaml}"),
    }
    match &args.report {
        Some(path) => std::fs::write(path, report)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => eprint!("{report}"),
    }
    Ok(ExitCode::SUCCESS)
}
