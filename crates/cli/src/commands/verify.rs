//! `warden verify-decision`: check a signed decision record against a public key.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::commands::input::read_request;

pub(crate) fn verify_decision(
    key: &Path,
    file: &str,
    check_expiry: bool,
) -> anyhow::Result<ExitCode> {
    use warden::signing::{read_verifying_key, verify};
    use warden_types::DecisionRecord;
    let key = read_verifying_key(key)?;
    let body = read_request(file)?;
    let mut value: serde_json::Value =
        serde_json::from_slice(&body).with_context(|| format!("{file} is not JSON"))?;
    // `warden eval` output carries the record under `decision_record`.
    if let Some(record) = value.get_mut("decision_record") {
        value = record.take();
    }
    if !verify(&value, &key)? {
        println!(
            "invalid: the signature does not match the record (changed, or signed by another key)"
        );
        return Ok(ExitCode::from(1));
    }
    let record: DecisionRecord = serde_json::from_value(value)
        .context("the signature matches, but the record is not a decision record")?;
    let created = time::OffsetDateTime::parse(
        &record.created_at,
        &time::format_description::well_known::Rfc3339,
    )
    .with_context(|| format!("created_at '{}' is not RFC 3339", record.created_at))?;
    let expires = created + time::Duration::seconds(record.expires_in as i64);
    let expired = time::OffsetDateTime::now_utc() >= expires;
    println!(
        "valid: decision {} ({}) signed by {}{}",
        record.decision_id,
        record.verdict,
        record.kid,
        if expired { "; expired" } else { "" }
    );
    if expired && check_expiry {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

// The arguments of `warden verify-decision`.
#[derive(Args)]
pub(crate) struct VerifyDecisionArgs {
    /// The public key (SPKI PEM; a private key file works too).
    #[arg(long)]
    key: PathBuf,
    /// The record, or `-` for stdin.
    file: String,
    /// Also fail (exit 1) when the decision has expired.
    #[arg(long)]
    check_expiry: bool,
}

pub(crate) fn run(args: VerifyDecisionArgs) -> anyhow::Result<ExitCode> {
    verify_decision(&args.key, &args.file, args.check_expiry)
}
