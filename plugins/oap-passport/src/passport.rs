//! The passport: its fields as the OAP 1.0 schema defines them, parsed
//! strictly (an unknown field or a wrong value fails `configure`, naming the
//! field), and its digest: `sha256:` + hex SHA-256 of its RFC 8785 (JCS)
//! canonical JSON.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The only version of the standard this provider implements.
pub const SPEC_VERSION: &str = "oap/1.0";

// Every field of the schema is parsed and checked; some are not needed to
// judge a call.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Passport {
    pub passport_id: String,
    pub kind: Kind,
    /// Checked per call (`oap.passport_version_mismatch`), not here.
    pub spec_version: String,
    pub owner_id: String,
    pub owner_type: OwnerType,
    pub assurance_level: AssuranceLevel,
    pub status: Status,
    pub capabilities: Vec<Capability>,
    pub limits: BTreeMap<String, Limits>,
    pub regions: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    pub version: String,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub never_expires: bool,
    #[serde(default)]
    pub template_id: Option<String>,
    #[serde(default)]
    pub parent_agent_id: Option<String>,
    #[serde(default)]
    pub did: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Template,
    Instance,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OwnerType {
    Org,
    User,
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
pub enum AssuranceLevel {
    L0,
    L1,
    L2,
    L3,
    L4KYC,
    L4FIN,
}

impl AssuranceLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            AssuranceLevel::L0 => "L0",
            AssuranceLevel::L1 => "L1",
            AssuranceLevel::L2 => "L2",
            AssuranceLevel::L3 => "L3",
            AssuranceLevel::L4KYC => "L4KYC",
            AssuranceLevel::L4FIN => "L4FIN",
        }
    }
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Draft,
    Active,
    Suspended,
    Revoked,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Draft => "draft",
            Status::Active => "active",
            Status::Suspended => "suspended",
            Status::Revoked => "revoked",
        }
    }
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    pub id: String,
    #[serde(default)]
    pub params: Option<Value>,
}

/// The limits of one capability. Every key this provider knows is listed; an
/// unknown key (a typo would silently loosen the passport) is refused.
/// Limits over time (rates, daily caps), file sizes and working directories
/// need state or files the sandbox does not have: they are accepted and not
/// enforced.
#[allow(dead_code)]
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    // system.command.execute
    pub allowed_commands: Option<Vec<String>>,
    pub blocked_patterns: Option<Vec<String>>,
    pub max_execution_time: Option<f64>,
    pub blocked_env_vars: Option<Vec<String>>,
    pub allowed_working_directories: Option<Vec<String>>,
    // data.file.read / data.file.write
    pub allowed_paths: Option<Vec<String>>,
    pub blocked_paths: Option<Vec<String>>,
    pub allowed_extensions: Option<Vec<String>>,
    pub max_file_size_mb: Option<f64>,
    // web.fetch
    pub allowed_domains: Option<Vec<String>>,
    pub blocked_domains: Option<Vec<String>>,
    pub allowed_methods: Option<Vec<String>>,
    pub max_requests_per_min: Option<f64>,
    // mcp.tool.execute
    pub allowed_servers: Option<Vec<String>>,
    pub allowed_tools: Option<Vec<String>>,
    pub allowed_tool_prefixes: Option<Vec<String>>,
    pub max_timeout: Option<f64>,
    pub max_calls_per_minute: Option<f64>,
    // messaging.send
    pub allowed_recipients: Option<Vec<String>>,
    pub approval_required: Option<bool>,
    pub msgs_per_min: Option<f64>,
    pub msgs_per_day: Option<f64>,
    // data.export
    pub max_rows: Option<f64>,
    // finance.payment.refund / finance.payment.charge: currency code to limits
    pub currency_limits: Option<BTreeMap<String, CurrencyLimit>>,
    // code.repository.merge
    pub max_pr_size_kb: Option<f64>,
}

/// One currency's limits of a payment capability.
#[allow(dead_code)]
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrencyLimit {
    /// The most one payment may move (`oap.limit_exceeded`).
    pub max_per_tx: Option<f64>,
    /// A limit over a day: accepted, not enforced (see `quantities`).
    pub daily_cap: Option<f64>,
}

impl Passport {
    /// Parses a passport, naming the field of the first error.
    pub fn parse(value: &Value) -> Result<Passport, String> {
        let passport: Passport = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            if path == "." {
                format!("passport: {inner}")
            } else {
                format!("passport.{path}: {inner}")
            }
        })?;
        passport.validate()?;
        Ok(passport)
    }

    /// What the types alone cannot check.
    fn validate(&self) -> Result<(), String> {
        let field = |name: &str, message: String| format!("passport.{name}: {message}");
        for (name, value) in [
            ("passport_id", &self.passport_id),
            ("owner_id", &self.owner_id),
            ("spec_version", &self.spec_version),
        ] {
            if value.trim().is_empty() {
                return Err(field(name, "must not be empty".into()));
            }
        }
        for (i, capability) in self.capabilities.iter().enumerate() {
            if !is_capability_id(&capability.id) {
                return Err(field(
                    &format!("capabilities[{i}].id"),
                    format!(
                        "'{}' is not a capability id (lower-case words and digits separated by dots)",
                        capability.id
                    ),
                ));
            }
        }
        for key in self.limits.keys() {
            if !is_capability_id(key) {
                return Err(field(
                    &format!("limits.{key}"),
                    "limits are keyed by capability id".into(),
                ));
            }
        }
        for (i, region) in self.regions.iter().enumerate() {
            let b = region.as_bytes();
            let ok = matches!(b.len(), 2 | 5)
                && b[..2].iter().all(u8::is_ascii_uppercase)
                && (b.len() == 2 || (b[2] == b'-' && b[3..].iter().all(u8::is_ascii_uppercase)));
            if !ok {
                return Err(field(
                    &format!("regions[{i}]"),
                    format!("'{region}' is not a region code like US or US-CA"),
                ));
            }
        }
        let parts: Vec<&str> = self.version.split('.').collect();
        if parts.len() != 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(field(
                "version",
                format!("'{}' is not a version x.y.z", self.version),
            ));
        }
        for (name, value) in [
            ("created_at", Some(&self.created_at)),
            ("updated_at", Some(&self.updated_at)),
            ("expires_at", self.expires_at.as_ref()),
        ] {
            if let Some(value) = value {
                parse_time(value).map_err(|e| field(name, e))?;
            }
        }
        Ok(())
    }

    /// Whether the passport grants a capability (exact id, no wildcard).
    pub fn grants(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c.id == capability)
    }

    /// The expiry instant, unless the passport never expires.
    pub fn expiry(&self) -> Option<OffsetDateTime> {
        if self.never_expires {
            return None;
        }
        self.expires_at.as_deref().and_then(|t| parse_time(t).ok())
    }
}

fn is_capability_id(id: &str) -> bool {
    !id.is_empty()
        && id.split('.').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// An RFC 3339 timestamp.
pub fn parse_time(text: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(text, &Rfc3339)
        .map_err(|e| format!("'{text}' is not an RFC 3339 timestamp: {e}"))
}

/// `sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of the passport.
pub fn digest(passport: &Value) -> Result<String, String> {
    let canonical = serde_json_canonicalizer::to_vec(passport)
        .map_err(|e| format!("passport: cannot canonicalise: {e}"))?;
    Ok(format!(
        "sha256:{}",
        hex::encode(Sha256::digest(&canonical))
    ))
}
