//! What a bundle's publisher signs, and reading it, its key and its
//! signature from the bundle's bytes: outside input, so bounded and with an
//! error that says what is wrong. No other module of the crate is used: the
//! fuzz crate compiles this file from its source, without wasmtime.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The statement's format.
pub const FORMAT: &str = "warden-bundle/1";
/// The prefix of keys and signatures.
pub const KEY_PREFIX: &str = "ed25519:";
/// The largest statement read.
pub const MAX_STATEMENT_BYTES: usize = 16 * 1024;

/// What the publisher signs: what the bundle holds, by digest.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    /// `warden-bundle/1`.
    pub format: String,
    /// The provider's name, from its manifest.
    pub name: String,
    /// The provider's version, from its manifest.
    pub version: String,
    /// The contract it was built against (`warden:guardrail@0.1.0`).
    pub contract: String,
    /// SHA-256 of `provider.wasm`, hex.
    pub component_sha256: String,
    /// SHA-256 of `vectors.jsonl`, hex.
    pub vectors_sha256: String,
    /// The key that signs the statement (`ed25519:<base64>`).
    pub publisher_key: String,
}

impl Statement {
    /// Reads a statement: bounded, strict JSON of the one format this host reads.
    pub fn parse(bytes: &[u8]) -> Result<Statement, String> {
        if bytes.len() > MAX_STATEMENT_BYTES {
            return Err(format!(
                "{} bytes; the limit is {MAX_STATEMENT_BYTES}",
                bytes.len()
            ));
        }
        let statement: Statement = serde_json::from_slice(bytes).map_err(|err| err.to_string())?;
        if statement.format != FORMAT {
            return Err(format!(
                "format `{}`, this host reads `{FORMAT}`",
                statement.format
            ));
        }
        for (field, digest) in [
            ("component_sha256", &statement.component_sha256),
            ("vectors_sha256", &statement.vectors_sha256),
        ] {
            if digest.len() != 64
                || !digest
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                return Err(format!("`{field}` is not a lower-case hex SHA-256"));
            }
        }
        Ok(statement)
    }
}

/// A public key as bundles and `trust:` write it.
pub fn key_string(key: &VerifyingKey) -> String {
    format!("{KEY_PREFIX}{}", BASE64.encode(key.as_bytes()))
}

/// Reads an `ed25519:<base64>` public key.
pub fn parse_key(text: &str) -> Result<VerifyingKey, String> {
    let malformed = || format!("`{text}` is not an ed25519:<base64> key");
    let bytes = BASE64
        .decode(text.strip_prefix(KEY_PREFIX).ok_or_else(malformed)?)
        .map_err(|_| malformed())?;
    let bytes: [u8; 32] = bytes.try_into().map_err(|_| malformed())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| malformed())
}

/// Reads a signature file: `ed25519:<base64>` and a line end at most.
pub fn parse_signature(bytes: &[u8]) -> Result<Signature, String> {
    std::str::from_utf8(bytes)
        .ok()
        .map(str::trim)
        .and_then(|text| text.strip_prefix(KEY_PREFIX))
        .and_then(|b| BASE64.decode(b).ok())
        .and_then(|b| Signature::from_slice(&b).ok())
        .ok_or_else(|| "not an ed25519:<base64> signature".into())
}
