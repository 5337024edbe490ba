//! A provider's manifest: the `warden:manifest` custom section a component
//! carries (the Rust SDK's `export!` writes it), JSON naming the provider, its
//! version, the contract it was built against and the JSON Schema of its
//! config. The bytes come from outside, so reading them is bounded: one
//! section, at most [`MAX_MANIFEST_BYTES`], fields of bounded size, and an
//! error that says what is wrong. A component without the section has no
//! manifest and loads as it always did.
//!
//! This file uses no other module of the crate: the fuzz crate compiles it
//! from its source (`fuzz/src/lib.rs`), without wasmtime.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The custom section's name.
pub const SECTION: &str = "warden:manifest";

/// The largest manifest section read; a schema larger than this is not a
/// config schema.
pub const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// The longest name, version or contract a manifest may give.
const MAX_FIELD_BYTES: usize = 128;

/// What a provider says about itself, read from its component.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The provider's name (as its `info` gives it).
    pub name: String,
    /// The provider's version, semver.
    pub version: String,
    /// The contract it was built against: `warden:guardrail@0.1.0`.
    pub contract: String,
    /// The JSON Schema its `config:` must match; absent: any config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<Value>,
}

/// Why a component's manifest could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("the `{SECTION}` section: {0}")]
pub struct ManifestError(pub String);

impl Manifest {
    /// The contract's version (`0.1.0` of `warden:guardrail@0.1.0`), if the
    /// contract is `warden:guardrail`.
    pub fn contract_version(&self) -> Option<&str> {
        self.contract.strip_prefix("warden:guardrail@")
    }

    /// Parses a manifest section's bytes and checks its fields' shape.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(ManifestError(format!(
                "{} bytes; the limit is {MAX_MANIFEST_BYTES}",
                bytes.len()
            )));
        }
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|err| ManifestError(format!("not a manifest: {err}")))?;
        for (field, value) in [
            ("name", &manifest.name),
            ("version", &manifest.version),
            ("contract", &manifest.contract),
        ] {
            if value.is_empty() || value.len() > MAX_FIELD_BYTES {
                return Err(ManifestError(format!(
                    "`{field}` is empty or longer than {MAX_FIELD_BYTES} bytes"
                )));
            }
            if value.chars().any(char::is_control) {
                return Err(ManifestError(format!(
                    "`{field}` holds a control character"
                )));
            }
        }
        if manifest.contract_version().is_none() {
            return Err(ManifestError(format!(
                "`contract` is `{}`, not `warden:guardrail@<version>`",
                manifest.contract
            )));
        }
        match &manifest.config_schema {
            None | Some(Value::Object(_) | Value::Bool(_)) => Ok(manifest),
            Some(_) => Err(ManifestError(
                "`config_schema` is neither a JSON Schema object nor a boolean".into(),
            )),
        }
    }

    /// The manifest a component carries: `None` without a `warden:manifest`
    /// section, an error for a malformed component around it, for two such
    /// sections, or for one that is not a manifest. The section is looked for
    /// in the component and in the core modules it embeds (a Rust guest's
    /// custom sections stay in its core module).
    pub fn read(component: &[u8]) -> Result<Option<Manifest>, ManifestError> {
        let mut found: Option<&[u8]> = None;
        for payload in wasmparser::Parser::new(0).parse_all(component) {
            let payload = payload
                .map_err(|err| ManifestError(format!("cannot read the component: {err}")))?;
            if let wasmparser::Payload::CustomSection(section) = payload
                && section.name() == SECTION
            {
                if found.is_some() {
                    return Err(ManifestError("the component has two".into()));
                }
                found = Some(section.data());
            }
        }
        found.map(Manifest::parse).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text.as_bytes())
    }

    #[test]
    fn a_manifest_names_the_provider_its_version_contract_and_schema() {
        let manifest = parse(
            r#"{"name":"allowlist","version":"0.1.0","contract":"warden:guardrail@0.1.0",
                "config_schema":{"type":"object"}}"#,
        )
        .unwrap();
        assert_eq!(manifest.name, "allowlist");
        assert_eq!(manifest.contract_version(), Some("0.1.0"));
        assert_eq!(
            manifest.config_schema,
            Some(serde_json::json!({"type": "object"}))
        );
    }

    #[test]
    fn a_manifest_with_an_unknown_field_or_a_foreign_contract_is_refused() {
        let base = r#""name":"a","version":"1","contract":"warden:guardrail@0.1.0""#;
        let err = parse(&format!("{{{base},\"extra\":1}}")).unwrap_err();
        assert!(err.to_string().contains("extra"), "{err}");
        let err = parse(r#"{"name":"a","version":"1","contract":"other@1"}"#).unwrap_err();
        assert!(err.to_string().contains("`contract`"), "{err}");
        let err = parse(&format!("{{{base},\"config_schema\":3}}")).unwrap_err();
        assert!(err.to_string().contains("config_schema"), "{err}");
        let err =
            parse(r#"{"name":"","version":"1","contract":"warden:guardrail@0.1.0"}"#).unwrap_err();
        assert!(err.to_string().contains("`name`"), "{err}");
    }

    #[test]
    fn an_oversized_manifest_is_refused_before_it_is_parsed() {
        let big = vec![b' '; MAX_MANIFEST_BYTES + 1];
        let err = Manifest::parse(&big).unwrap_err();
        assert!(err.to_string().contains("the limit is"), "{err}");
    }

    #[test]
    fn bytes_that_are_not_a_component_are_an_error_not_a_panic() {
        assert!(Manifest::read(b"not wasm").is_err());
        assert!(Manifest::read(b"").is_err() || Manifest::read(b"").unwrap().is_none());
    }
}
