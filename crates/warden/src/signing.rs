//! Signed decision records, as the Open Agent Passport standard describes
//! them: the host (never a provider: the private key never enters a sandbox)
//! signs each decision with an Ed25519 key named in its configuration. The
//! signature (`ed25519:` + base64) covers the RFC 8785 (JCS) canonical JSON of
//! the record without its `signature` field, so changing any field, including
//! one a verifier does not know, breaks it.
//!
//! Keys are PKCS#8 / SPKI PEM files, as `warden keygen` writes them and as
//! `openssl genpkey -algorithm ed25519` does.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use warden_runtime::input_file::{self, InputKind};
use warden_types::DecisionRecord;

use warden_types::decision::{Reason, Verdict};

/// The prefix of a record's signature.
pub const SIGNATURE_PREFIX: &str = "ed25519:";

/// Why a key could not be used or a record not be checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SigningError {
    /// The key file could not be read.
    #[error("cannot read the key {path}: {source}")]
    Read {
        /// The key file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a key of the expected kind.
    #[error("{path} is not an Ed25519 {what} key in PEM (PKCS#8 / SPKI): {message}")]
    Key {
        /// The key file.
        path: String,
        /// `private` or `public`.
        what: &'static str,
        /// Why it could not be read as one.
        message: String,
    },
    /// A key file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The JSON is not a decision record.
    #[error("not a decision record: {0}")]
    Malformed(String),
    /// The system gave no randomness for a new key.
    #[error("cannot generate a key: {0}")]
    Random(String),
}

/// What a record states, before it is signed.
pub struct RecordFacts<'a> {
    /// The policy that decided, if one is named.
    pub policy_id: Option<String>,
    /// The agent the call is attributed to.
    pub agent_id: Option<String>,
    /// The OAP provider's decision metadata, if one judged the call.
    pub passport: Option<&'a Map<String, Value>>,
    /// The verdict.
    pub verdict: Verdict,
    /// The reasons, as the answer gives them.
    pub reasons: Vec<Reason>,
    /// The tool called.
    pub tool_name: &'a str,
    /// Its arguments (the record holds their digest only).
    pub tool_input: &'a Value,
    /// The model's id for the call.
    pub tool_call_id: Option<String>,
}

/// The host's signing key and the record settings.
pub struct Signer {
    key: SigningKey,
    kid: String,
    expires_in: u64,
}

impl Signer {
    /// Reads the private key file.
    pub fn load(key: &Path, kid: &str, expires_in: u64) -> Result<Signer, SigningError> {
        Ok(Signer::new(read_signing_key(key)?, kid, expires_in))
    }

    /// A signer with `key`, writing `kid` into records valid for `expires_in` seconds.
    pub fn new(key: SigningKey, kid: &str, expires_in: u64) -> Signer {
        Signer {
            key,
            kid: kid.to_string(),
            expires_in,
        }
    }

    /// The key id written into every record.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public half of the key.
    pub fn verifying_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    /// A signed record of a decision.
    pub fn sign(&self, facts: RecordFacts<'_>) -> DecisionRecord {
        let text = |key: &str| {
            facts
                .passport
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let request =
            serde_json::json!({"tool_name": facts.tool_name, "tool_input": facts.tool_input});
        let mut record = DecisionRecord {
            decision_id: uuid::Uuid::new_v4().to_string(),
            policy_id: facts.policy_id,
            agent_id: facts.agent_id,
            owner_id: text("owner_id"),
            assurance_level: text("assurance_level"),
            allow: facts.verdict == Verdict::Allow,
            verdict: facts.verdict,
            reasons: facts.reasons,
            tool_name: facts.tool_name.to_string(),
            tool_call_id: facts.tool_call_id,
            request_digest: format!(
                "sha256:{}",
                hex::encode(Sha256::digest(canonical(&request)))
            ),
            created_at: warden_policy::clock::now_rfc3339(),
            expires_in: self.expires_in,
            passport_digest: text("passport_digest"),
            kid: self.kid.clone(),
            signature: String::new(),
        };
        let mut value = serde_json::to_value(&record).expect("a record is JSON");
        if let Value::Object(map) = &mut value {
            map.remove("signature");
        }
        let signature = self.key.sign(&canonical(&value));
        record.signature = format!("{SIGNATURE_PREFIX}{}", BASE64.encode(signature.to_bytes()));
        record
    }
}

fn canonical(value: &Value) -> Vec<u8> {
    serde_json_canonicalizer::to_vec(value).expect("JSON values canonicalise")
}

/// Whether a record (as JSON) carries a valid signature by `key`. `Err` means
/// it is not a record at all; `Ok(false)` that the signature does not match
/// (the record was changed, or signed by another key).
pub fn verify(record: &Value, key: &VerifyingKey) -> Result<bool, SigningError> {
    let Value::Object(map) = record else {
        return Err(SigningError::Malformed("expected a JSON object".into()));
    };
    let signature = map
        .get("signature")
        .and_then(Value::as_str)
        .ok_or_else(|| SigningError::Malformed("it has no `signature`".into()))?;
    let Some(encoded) = signature.strip_prefix(SIGNATURE_PREFIX) else {
        return Ok(false);
    };
    let Ok(bytes) = BASE64.decode(encoded) else {
        return Ok(false);
    };
    let Ok(signature) = Signature::from_slice(&bytes) else {
        return Ok(false);
    };
    let mut unsigned = map.clone();
    unsigned.remove("signature");
    Ok(key
        .verify(&canonical(&Value::Object(unsigned)), &signature)
        .is_ok())
}

/// A new random signing key.
pub fn generate() -> Result<SigningKey, SigningError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| SigningError::Random(e.to_string()))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Writes a key pair: `<prefix>.key` (private, PKCS#8 PEM, readable by the
/// owner only) and `<prefix>.pub` (SPKI PEM). Returns both paths.
pub fn write_key_pair(key: &SigningKey, prefix: &Path) -> Result<(PathBuf, PathBuf), SigningError> {
    let private = prefix.with_extension("key");
    let public = prefix.with_extension("pub");
    let pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| SigningError::Malformed(e.to_string()))?;
    write_private(&private, pem.as_bytes())?;
    let public_pem = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| SigningError::Malformed(e.to_string()))?;
    std::fs::write(&public, public_pem).map_err(|source| SigningError::Write {
        path: public.display().to_string(),
        source,
    })?;
    Ok((private, public))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SigningError> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let write = |source| SigningError::Write {
        path: path.display().to_string(),
        source,
    };
    options
        .open(path)
        .map_err(write)?
        .write_all(bytes)
        .map_err(write)
}

/// Reads a private key (PKCS#8 PEM).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, SigningError> {
    let text = read(path)?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| SigningError::Key {
        path: path.display().to_string(),
        what: "private",
        message: e.to_string(),
    })
}

/// Reads a public key (SPKI PEM); a private key file gives its public half.
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey, SigningError> {
    let text = read(path)?;
    if text.contains("PRIVATE KEY") {
        return read_signing_key(path).map(|k| k.verifying_key());
    }
    VerifyingKey::from_public_key_pem(&text).map_err(|e| SigningError::Key {
        path: path.display().to_string(),
        what: "public",
        message: e.to_string(),
    })
}

fn read(path: &Path) -> Result<String, SigningError> {
    input_file::read_to_string(path, InputKind::Key).map_err(|source| SigningError::Read {
        path: path.display().to_string(),
        source,
    })
}
