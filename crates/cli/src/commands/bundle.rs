//! `warden bundle`: make, sign and check a provider bundle (a directory
//! holding the component, its vectors, the statement and the publisher's
//! Ed25519 signature; see `warden::bundle`), with only the binary: the key is
//! one `warden keygen` wrote.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use warden::bundle;
use warden_runtime::input_file::{self, InputKind};
use warden_runtime::spec::{PublisherKey, Trust};

// The arguments of `warden bundle`.
#[derive(Args)]
pub(crate) struct BundleArgs {
    #[command(subcommand)]
    command: BundleCommand,
}

#[derive(Subcommand)]
enum BundleCommand {
    /// Make a signed bundle: DIR (new) with the component, its vectors, the
    /// statement and the signature; prints the key for the operator's `trust:`.
    Create {
        /// The bundle directory to make; it must not exist.
        dir: PathBuf,
        /// The component (.wasm), built with the SDK (it carries a manifest).
        #[arg(long)]
        component: PathBuf,
        /// Its conformance vectors (JSON Lines, as `warden test` reads them).
        #[arg(long)]
        vectors: PathBuf,
        /// The publisher's private key (PKCS#8 PEM, from `warden keygen`).
        #[arg(long)]
        key: PathBuf,
    },
    /// Check a bundle's statement, signature, digests and contract against a
    /// publisher's public key; exits 1 if it does not verify. (The vectors run
    /// when Warden loads it, against the operator's config.)
    Verify {
        /// The bundle directory.
        dir: PathBuf,
        /// The publisher's public key (SPKI PEM; a private key gives its half).
        #[arg(long)]
        key: PathBuf,
    },
}

pub(crate) fn run(args: BundleArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        BundleCommand::Create {
            dir,
            component,
            vectors,
            key,
        } => {
            let key = warden::signing::read_signing_key(&key)?;
            let component = input_file::read(&component, InputKind::Component)
                .with_context(|| format!("reading {}", component.display()))?;
            let vectors = input_file::read_to_string(&vectors, InputKind::ConfigFile)
                .with_context(|| format!("reading {}", vectors.display()))?;
            let statement = bundle::create(&dir, &component, &vectors, &key)?;
            println!(
                "wrote {} ({} {}, {}), signed by {}",
                dir.display(),
                statement.name,
                statement.version,
                statement.contract,
                statement.publisher_key
            );
            println!(
                "operators trust it with:\n  trust: {{publisher_keys: [{{key: \"{}\"}}]}}",
                statement.publisher_key
            );
            Ok(ExitCode::SUCCESS)
        }
        BundleCommand::Verify { dir, key } => {
            let key = warden::signing::read_verifying_key(&key)?;
            let trust = Trust {
                publisher_keys: vec![PublisherKey {
                    key: bundle::key_string(&key),
                    expires: None,
                }],
                revoked: Vec::new(),
            };
            match bundle::verify(&dir, Some(&trust), None, time::OffsetDateTime::now_utc()) {
                Ok(verified) => {
                    let s = &verified.statement;
                    println!(
                        "verified   {} {} ({}), component sha256 {}, {} vectors",
                        s.name,
                        s.version,
                        s.contract,
                        s.component_sha256,
                        verified.vectors.len()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(err) => {
                    println!("REFUSED    {}: {err}", dir.display());
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}
