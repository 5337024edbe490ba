//! `warden new provider`: a provider project from the templates.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::commands::scaffold::Sdk;

pub(crate) fn new_provider(
    name: &str,
    dir: Option<PathBuf>,
    sdk: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let sdk = match &sdk {
        Some(path) => Sdk::Local(path),
        None => Sdk::Published,
    };
    let scaffold = crate::commands::scaffold::new_provider(name, &dir, sdk)?;
    println!("created provider '{name}' in {}", scaffold.dir.display());
    for file in &scaffold.files {
        println!(
            "  {}",
            file.strip_prefix(&scaffold.dir).unwrap_or(file).display()
        );
    }
    let wasm = scaffold.component.display();
    println!(
        "\nnext:\n  cd {}\n  cargo test\n  cargo build --release --target wasm32-wasip2\n  warden test {wasm} --vectors vectors.jsonl --config config.yaml",
        scaffold.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden new`: what to create.
#[derive(Args)]
pub(crate) struct NewArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// A provider crate in Rust (manifest, source, unit tests, config,
    /// vectors) that builds and passes its vectors as generated.
    Provider {
        /// The provider's name: lower-case letters, digits, '-' and '_'.
        name: String,
        /// Where to create it (default: ./NAME); must not exist or be empty.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A local provider SDK (sdk/provider of a Warden checkout), depended
        /// on by path; default: the published warden-provider at this
        /// binary's version.
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
}

pub(crate) fn run(args: NewArgs) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Provider { name, dir, sdk } => new_provider(&name, dir, sdk),
    }
}
