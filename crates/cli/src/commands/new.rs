//! `warden new provider`: a provider project from the templates.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::commands::scaffold::{Lang, Sdk};

pub(crate) fn new_provider(
    name: &str,
    dir: Option<PathBuf>,
    lang: Lang,
    sdk: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let sdk = match &sdk {
        Some(path) => Sdk::Local(path),
        None => Sdk::Published,
    };
    let scaffold = crate::commands::scaffold::new_provider(name, &dir, lang, sdk)?;
    println!("created provider '{name}' in {}", scaffold.dir.display());
    for file in &scaffold.files {
        println!(
            "  {}",
            file.strip_prefix(&scaffold.dir).unwrap_or(file).display()
        );
    }
    let wasm = scaffold.component.display();
    let build = match lang {
        Lang::Rust => "cargo test\n  cargo build --release --target wasm32-wasip2",
        Lang::Python => {
            "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.txt\n  .venv/bin/componentize-py -d wit -w guardrail-provider componentize --stub-wasi -p . provider -o "
        }
        Lang::Js => "npm ci\n  npm run build",
    };
    let output = if lang == Lang::Python {
        format!("{wasm}")
    } else {
        String::new()
    };
    println!(
        "\nnext (README.md has more):\n  cd {}\n  {build}{output}\n  warden test {wasm} --vectors vectors.jsonl --config config.yaml",
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
    /// A provider project (source, config, vectors, a README with the build
    /// and a CI snippet) that builds and passes its vectors as generated: a
    /// Rust crate, or a Python or JavaScript module with the contract
    /// vendored and its toolchain pinned.
    Provider {
        /// The provider's name: lower-case letters, digits, '-' and '_'.
        name: String,
        /// The language: rust, python (componentize-py) or js (componentize-js).
        #[arg(long, value_enum, default_value = "rust")]
        lang: Lang,
        /// Where to create it (default: ./NAME); must not exist or be empty.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A local provider SDK: sdk/provider of a Warden checkout (depended
        /// on by path), or a release archive's sdk/rust folder (patched in
        /// by .cargo/config.toml); default: the published warden-provider at
        /// this binary's version. Rust only.
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
}

pub(crate) fn run(args: NewArgs) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Provider {
            name,
            dir,
            lang,
            sdk,
        } => new_provider(&name, dir, lang, sdk),
    }
}
