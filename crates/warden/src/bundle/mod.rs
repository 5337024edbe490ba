//! Provider bundles: a directory a publisher ships, holding the component
//! (`provider.wasm`, with its manifest inside), its conformance vectors
//! (`vectors.jsonl`), a statement naming both by SHA-256 with the contract and
//! the publisher's key (`bundle.json`), and the publisher's Ed25519 signature
//! of the statement's exact bytes (`bundle.sig`, `ed25519:` + base64).
//!
//! An operator trusts publisher keys (`trust.publisher_keys`, each with an
//! optional expiry, and `trust.revoked`) instead of, or as well as, a
//! `sha256` pin. A bundle loads only when every check passes; the error names
//! the one that failed. Its vectors run against the provider, as configured,
//! before the set holding it goes live (the reload gate, see `gate`).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, SigningKey, Verifier as _};
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use warden_runtime::input_file::{self, InputKind};
use warden_runtime::manifest::Manifest;
use warden_runtime::provider::speaks_contract;
use warden_runtime::spec::Trust;

use crate::vectors::{self, Vector};

mod statement;
pub use statement::{FORMAT, KEY_PREFIX, Statement, key_string, parse_key, parse_signature};

/// The statement the publisher signs.
pub const STATEMENT: &str = "bundle.json";
/// The signature of the statement.
pub const SIGNATURE: &str = "bundle.sig";
/// The component.
pub const COMPONENT: &str = "provider.wasm";
/// The conformance vectors (JSON Lines, as `warden test` reads them).
pub const VECTORS: &str = "vectors.jsonl";

/// Why a bundle is refused; each names the check that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// A file of the bundle could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The statement or signature is not well formed.
    #[error("malformed: {0}")]
    Malformed(String),
    /// Neither a trusted key nor a pin: nothing says whose bundle it is.
    #[error(
        "not trusted: give the provider `trust.publisher_keys` (or a `sha256` pin of its component)"
    )]
    Untrusted,
    /// Signed by a key the operator does not trust.
    #[error("key: signed by {0}, which is not among the trusted publisher keys")]
    UnknownKey(String),
    /// Signed by a revoked key.
    #[error("key: signed by {0}, which is revoked")]
    RevokedKey(String),
    /// Signed by a key whose trust has expired.
    #[error("key: signed by {key}, whose trust expired at {expires}")]
    ExpiredKey {
        /// The key.
        key: String,
        /// When it expired.
        expires: String,
    },
    /// The signature does not verify with the key the statement names.
    #[error(
        "signature: does not verify with {0}: the statement was altered or signed by another key"
    )]
    Signature(String),
    /// A file's digest is not the one the statement (or the pin) gives.
    #[error("digest: {file} has SHA-256 {actual}, the {by} says {expected}")]
    Digest {
        /// The file.
        file: &'static str,
        /// Who gives the expected digest (`statement` or `sha256 pin`).
        by: &'static str,
        /// The expected digest.
        expected: String,
        /// The file's.
        actual: String,
    },
    /// A contract this host does not speak, or that the manifest disagrees with.
    #[error("contract: {0}")]
    Contract(String),
    /// The vectors file does not parse.
    #[error("vectors: {0}")]
    Vectors(String),
}

/// A bundle whose statement, signature, key, digests and contract verified.
#[derive(Debug)]
pub struct Verified {
    /// The component's path.
    pub component: PathBuf,
    /// What the publisher signed.
    pub statement: Statement,
    /// The vectors to run before the provider goes live.
    pub vectors: Vec<Vector>,
}

/// Whether `path` is a bundle directory (it holds a `bundle.json`).
pub fn is_bundle(path: &Path) -> bool {
    path.join(STATEMENT).is_file()
}

fn read(dir: &Path, file: &str, kind: InputKind) -> Result<Vec<u8>, BundleError> {
    let path = dir.join(file);
    input_file::read(&path, kind).map_err(|err| BundleError::Read {
        path: path.display().to_string(),
        message: err.to_string(),
    })
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Verifies a bundle: statement, key (trusted, not revoked, not expired at
/// `now`), signature, contract, the component's and the vectors' digests (and
/// the operator's `pin`, if any), then parses the vectors.
pub fn verify(
    dir: &Path,
    trust: Option<&Trust>,
    pin: Option<&str>,
    now: OffsetDateTime,
) -> Result<Verified, BundleError> {
    let statement_bytes = read(dir, STATEMENT, InputKind::Key)?;
    let statement = Statement::parse(&statement_bytes)
        .map_err(|err| BundleError::Malformed(format!("{STATEMENT}: {err}")))?;
    match trust {
        Some(trust) => check_signature(dir, &statement, &statement_bytes, trust, now)?,
        None if pin.is_none() => return Err(BundleError::Untrusted),
        None => {}
    }
    let version = statement
        .contract
        .strip_prefix("warden:guardrail@")
        .filter(|v| speaks_contract(v))
        .ok_or_else(|| {
            BundleError::Contract(format!(
                "the bundle was built against `{}`; this host speaks {}",
                statement.contract,
                warden_runtime::provider::host_contract()
            ))
        })?;
    let component = read(dir, COMPONENT, InputKind::Component)?;
    let actual = sha256(&component);
    digest_is(COMPONENT, "statement", &statement.component_sha256, &actual)?;
    if let Some(pin) = pin {
        let pin = pin.strip_prefix("sha256:").unwrap_or(pin);
        digest_is(COMPONENT, "sha256 pin", &pin.to_ascii_lowercase(), &actual)?;
    }
    match Manifest::read(&component) {
        Ok(Some(manifest)) if manifest.contract_version() == Some(version) => {}
        Ok(Some(manifest)) => {
            return Err(BundleError::Contract(format!(
                "the statement says {}, the component's manifest {}",
                statement.contract, manifest.contract
            )));
        }
        Ok(None) => {
            return Err(BundleError::Contract(format!(
                "{COMPONENT} carries no manifest"
            )));
        }
        Err(err) => return Err(BundleError::Contract(err.to_string())),
    }
    let vectors_bytes = read(dir, VECTORS, InputKind::ConfigFile)?;
    digest_is(
        VECTORS,
        "statement",
        &statement.vectors_sha256,
        &sha256(&vectors_bytes),
    )?;
    let text = String::from_utf8(vectors_bytes)
        .map_err(|_| BundleError::Vectors(format!("{VECTORS} is not UTF-8")))?;
    let vectors =
        vectors::parse(&text, VECTORS).map_err(|e| BundleError::Vectors(e.to_string()))?;
    Ok(Verified {
        component: dir.join(COMPONENT),
        statement,
        vectors,
    })
}

/// `file`'s digest is the one `by` gives.
fn digest_is(
    file: &'static str,
    by: &'static str,
    expected: &str,
    actual: &str,
) -> Result<(), BundleError> {
    if expected == actual {
        return Ok(());
    }
    Err(BundleError::Digest {
        file,
        by,
        expected: expected.into(),
        actual: actual.into(),
    })
}

fn check_signature(
    dir: &Path,
    statement: &Statement,
    statement_bytes: &[u8],
    trust: &Trust,
    now: OffsetDateTime,
) -> Result<(), BundleError> {
    let key = &statement.publisher_key;
    if trust.revoked.iter().any(|k| k == key) {
        return Err(BundleError::RevokedKey(key.clone()));
    }
    let trusted = trust
        .publisher_keys
        .iter()
        .find(|k| &k.key == key)
        .ok_or_else(|| BundleError::UnknownKey(key.clone()))?;
    if let Some(expires) = &trusted.expires {
        let at = OffsetDateTime::parse(expires, &Rfc3339).map_err(|err| {
            BundleError::Malformed(format!(
                "trust: `expires: {expires}` is not RFC 3339: {err}"
            ))
        })?;
        if at <= now {
            return Err(BundleError::ExpiredKey {
                key: key.clone(),
                expires: expires.clone(),
            });
        }
    }
    let verifying = parse_key(key).map_err(BundleError::Malformed)?;
    let signature = parse_signature(&read(dir, SIGNATURE, InputKind::Key)?)
        .map_err(|err| BundleError::Malformed(format!("{SIGNATURE}: {err}")))?;
    verifying
        .verify(statement_bytes, &signature)
        .map_err(|_| BundleError::Signature(key.clone()))
}

/// Makes a bundle in `dir` (created; it must not exist): copies the component
/// and the vectors in, writes the statement from the component's manifest and
/// signs it with `key`.
pub fn create(
    dir: &Path,
    component: &[u8],
    vectors_text: &str,
    key: &SigningKey,
) -> Result<Statement, BundleError> {
    let manifest = Manifest::read(component)
        .map_err(|err| BundleError::Contract(err.to_string()))?
        .ok_or_else(|| {
            BundleError::Contract(
                "the component carries no manifest (build it with the SDK's export!)".into(),
            )
        })?;
    vectors::parse(vectors_text, VECTORS).map_err(|e| BundleError::Vectors(e.to_string()))?;
    let statement = Statement {
        format: FORMAT.into(),
        name: manifest.name,
        version: manifest.version,
        contract: manifest.contract,
        component_sha256: sha256(component),
        vectors_sha256: sha256(vectors_text.as_bytes()),
        publisher_key: key_string(&key.verifying_key()),
    };
    let write = |file: &str, bytes: &[u8]| {
        std::fs::write(dir.join(file), bytes).map_err(|err| BundleError::Read {
            path: dir.join(file).display().to_string(),
            message: err.to_string(),
        })
    };
    std::fs::create_dir(dir).map_err(|err| BundleError::Read {
        path: dir.display().to_string(),
        message: err.to_string(),
    })?;
    write(COMPONENT, component)?;
    write(VECTORS, vectors_text.as_bytes())?;
    let mut text = serde_json::to_string_pretty(&statement).expect("a statement serialises");
    text.push('\n');
    write(STATEMENT, text.as_bytes())?;
    sign(dir, key)?;
    Ok(statement)
}

/// Signs the bundle's statement as it is on disk, writing `bundle.sig`.
pub fn sign(dir: &Path, key: &SigningKey) -> Result<(), BundleError> {
    let statement = read(dir, STATEMENT, InputKind::Key)?;
    let signature = key.sign(&statement);
    let text = format!("{KEY_PREFIX}{}\n", BASE64.encode(signature.to_bytes()));
    std::fs::write(dir.join(SIGNATURE), text).map_err(|err| BundleError::Read {
        path: dir.join(SIGNATURE).display().to_string(),
        message: err.to_string(),
    })
}
