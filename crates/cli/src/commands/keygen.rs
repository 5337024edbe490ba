//! `warden keygen`: a new Ed25519 key pair for signing decisions.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

pub(crate) fn keygen(prefix: &Path) -> anyhow::Result<ExitCode> {
    let key = warden::signing::generate()?;
    let (private, public) = warden::signing::write_key_pair(&key, prefix)?;
    println!(
        "wrote {} (private: keep it secret) and {} (public: give it to verifiers)",
        private.display(),
        public.display()
    );
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden keygen`.
#[derive(Args)]
pub(crate) struct KeygenArgs {
    /// Where to write the keys, without extension.
    #[arg(long, default_value = "warden-signing")]
    out: PathBuf,
}

pub(crate) fn run(args: KeygenArgs) -> anyhow::Result<ExitCode> {
    keygen(&args.out)
}
