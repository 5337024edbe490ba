//! The operator's configuration: one YAML file, parsed strictly. An unknown key,
//! a wrong type or a value out of range is refused with the file, the key's path
//! in the file (`guardrails.providers[0].limits.fuel`) and, where known, the line.
//!
//! The file has sections other crates own: the daemon's `server:` and
//! `decision_log:` ([`FACE_SECTIONS`]) and the approval store's
//! `hitl_approval.durability` ([`STORE_KEYS`]). The library's [`Config`] does
//! not hold them: its parser skips them, and each owner reads its own, from
//! the [`Sections`] the library's pass kept ([`Config::parse_own_keeping`])
//! or from the same text with [`parse_yaml`].

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use warden_policy::permissions::{PermissionEngine, PermissionsConfig};
use warden_policy::rules::RuleSources;
use warden_policy::triage::TriageConfig;
use warden_runtime::input_file::{self, InputKind};
use warden_runtime::source_map::SourceMap;
pub use warden_runtime::spec::{InstanceMode, Limits, Mode, ProviderSpec, Role};
pub use warden_types::OnError;

mod others;

pub use crate::approval_list::config::{
    DEFAULT_MAX_PENDING, Entry, HitlApproval, NonInteractive, NotifyHook, STORE_KEYS,
    parse_duration,
};
pub use crate::client_attested::{Attested, ClientAttested, McpConfig};

/// The embedded default configuration: the shipped providers on sensible settings.
pub const DEFAULT_CONFIG: &str = include_str!("../../../examples/warden.yaml");

/// The files the embedded default names in `config_files`, embedded with it so
/// that it works from any directory.
const DEFAULT_CONFIG_FILES: &[(&str, &str)] = &[(
    "passport.json",
    include_str!("../../../examples/passport.json"),
)];

/// The top-level sections of the file that the faces above the library own:
/// the daemon's `server:` and the decision log's `decision_log:` (whose
/// `redact` patterns the library applies to reasons). [`Config::parse`] skips
/// them; a face that owns one reads it from the same text.
pub const FACE_SECTIONS: &[&str] = &["server", "decision_log", "telemetry"];

/// The data directory when the configuration names none.
pub const DEFAULT_DATA_DIR: &str = ".warden";

/// The whole configuration file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The providers and what their failures mean (`guardrails:`).
    #[serde(default)]
    pub guardrails: Guardrails,
    /// Tools whose calls need a human's approval (`approval::HitlApproval`);
    /// the section's [`STORE_KEYS`] are the approval store's, skipped here.
    #[serde(default, deserialize_with = "without_store_keys")]
    pub hitl_approval: HitlApproval,
    /// How `warden mcp` may ask an MCP client (`mcp.client_attested`).
    #[serde(default)]
    pub mcp: McpConfig,
    /// The native permission engine. Absent: `full_auto` with no rules (the
    /// sensitive paths and the checks on hidden characters and opaque shell
    /// commands still apply).
    #[serde(default)]
    pub permissions: Option<PermissionsConfig>,
    /// Risk triage after the permission engine and the providers.
    #[serde(default)]
    pub triage: TriageConfig,
    /// Where Warden keeps its state (approval store, caches, logs); relative to
    /// this file. Default: `.warden` in the working directory for the daemon
    /// and the approval commands; the CLI's other commands and the hook use the
    /// user's state directory (`$XDG_STATE_HOME/warden`).
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// Sign every decision with this key (see `warden keygen`). Absent: no records.
    #[serde(default)]
    pub signing: Option<SigningConfig>,
    /// A whole candidate configuration judged beside this one, never in the
    /// answer, until a time (`shadow:`); see [`ShadowConfig`].
    #[serde(default)]
    pub shadow: Option<ShadowConfig>,
    /// Where relative paths in this file are resolved: the file's directory.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file this was read from, for messages (`<embedded>` for the default).
    #[serde(skip)]
    pub source: String,
    /// The SHA-256 (hex) of the text this was parsed from: for a file, of its
    /// bytes, as a reload reports it. Every decision log line names it.
    #[serde(skip)]
    pub sha256: Option<String>,
    /// Extra regular expressions whose matches are replaced by `[REDACTED]`
    /// in reason messages when they are made, after the built-in ones. Not a
    /// section of the library's: the file spells it `decision_log.redact`, in
    /// the decision log's section, and the reader of that section hands it
    /// over ([`Config::parse`] for an embedder, the daemon's config for
    /// `warden serve`).
    #[serde(skip)]
    pub redact: Vec<String>,
    /// The `decision_log:` section, as [`Config::parse`] reads it for an
    /// embedder: the library writes it only when asked
    /// ([`crate::Warden::log_decisions`]); the daemon reads its own.
    #[serde(skip)]
    pub decision_log: warden_log::DecisionLogConfig,
    /// Why `decision_log:` could not be read whole, where only its `redact`
    /// could (deprecated: a warning now, an error from the next minor
    /// version); [`crate::Warden::log_decisions`] refuses such a section.
    #[serde(skip)]
    pub decision_log_refused: Option<String>,
}

/// Reads `hitl_approval:`, skipping the approval store's keys.
fn without_store_keys<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<HitlApproval, D::Error> {
    HitlApproval::deserialize(others::SkipOthers {
        inner: deserializer,
        others: STORE_KEYS,
        keep: None,
    })
}

/// `signing:`: the host signs decision records with an Ed25519 key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningConfig {
    /// The private key, PKCS#8 PEM (relative to this file).
    pub key: PathBuf,
    /// The key id written into every record, e.g. `oap:owner:example.com:warden-1`.
    pub kid: String,
    /// Seconds a decision may be relied on after it was made.
    #[serde(default = "default_expires_in")]
    pub expires_in: u64,
}

fn default_expires_in() -> u64 {
    300
}

/// `shadow:`: a candidate configuration (its native core and its providers)
/// loaded and gated like a live set, judging a sample of the calls after
/// their answer, on the shadow queue, until `until`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowConfig {
    /// The candidate's file, relative to this one. Its library sections are
    /// read; the faces' (`server:`, `decision_log:`) and `data_dir` are the
    /// live file's.
    pub config: PathBuf,
    /// When the shadow stops judging (RFC 3339, e.g. `2026-12-24T18:00:00Z`).
    #[serde(deserialize_with = "rfc3339")]
    pub until: time::OffsetDateTime,
    /// The share of the calls judged, 0.0 to 1.0 (default 1.0: every call).
    #[serde(default = "every_call")]
    pub sample: f64,
}

fn every_call() -> f64 {
    1.0
}

/// An RFC 3339 time, refused with what was given and an example.
fn rfc3339<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<time::OffsetDateTime, D::Error> {
    let text = String::deserialize(deserializer)?;
    time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339).map_err(
        |err| {
            serde::de::Error::custom(format!(
                "'{text}' is not an RFC 3339 time such as 2026-12-24T18:00:00Z ({err})"
            ))
        },
    )
}

/// The `guardrails:` block, close to DeerFlow's.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guardrails {
    /// When false, no provider runs (the native core still does).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// What a provider failure means when the provider sets no `on_error`:
    /// true (the default) denies, false allows with the error in the reasons.
    #[serde(default = "yes")]
    pub fail_closed: bool,
    /// As in DeerFlow: the passport (agent) id that calls are attributed to.
    #[serde(default)]
    pub passport: Option<String>,
    /// The providers, run in this order.
    #[serde(default)]
    pub providers: Vec<ProviderSpec>,
}

impl Default for Guardrails {
    fn default() -> Self {
        Guardrails {
            enabled: true,
            fail_closed: true,
            passport: None,
            providers: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file was read, and a key in it is wrong.
    #[error("{file}: {key}: {message}{location}")]
    Invalid {
        /// The file (`<embedded>` for the default).
        file: String,
        /// The key's path in the file, such as `guardrails.providers[0].limits`.
        key: String,
        /// What is wrong with it.
        message: String,
        /// Where in the file, when the parser knows.
        location: Location,
    },
}

/// Where in the file, when the parser knows.
#[derive(Debug, Default)]
pub struct Location(pub Option<(usize, usize)>);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((line, column)) => write!(f, " (line {line}, column {column})"),
            None => Ok(()),
        }
    }
}

impl Config {
    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_with_digest(path).map(|(config, _)| config)
    }

    /// As [`Config::load`], with the SHA-256 of the file's bytes.
    pub fn load_with_digest(path: &Path) -> Result<(Config, String), ConfigError> {
        let file = ConfigFile::read(path)?;
        let config = Config::parse(&file.text, &file.name, file.base_dir)?;
        Ok((config, file.sha256))
    }

    /// The embedded default configuration (shipped providers only).
    pub fn embedded() -> Config {
        let mut config = Config::parse(DEFAULT_CONFIG, "<embedded>", PathBuf::from("."))
            .expect("the embedded default configuration is valid");
        for provider in &mut config.guardrails.providers {
            for (key, file) in std::mem::take(&mut provider.config_files) {
                let (_, text) = DEFAULT_CONFIG_FILES
                    .iter()
                    .find(|(name, _)| Path::new(name) == file)
                    .expect("the embedded default names only embedded files");
                let value: Value = serde_json::from_str(text).expect("embedded files are JSON");
                if let Value::Object(map) = &mut provider.config {
                    map.insert(key, value);
                }
            }
        }
        config
    }

    /// Parses and validates configuration text as an embedder reads the
    /// shared file: the library's sections, and `decision_log:` (for
    /// [`Config::redact`] and [`Config::decision_log`]); `server:` is left
    /// to the daemon. `file` names the text in errors and `base_dir`
    /// anchors its relative paths.
    pub fn parse(text: &str, file: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let (mut config, sections) =
            Config::parse_own_keeping(text, file, base_dir, FACE_SECTIONS)?;
        match sections.read::<DecisionLogSection>(text, file) {
            Ok(section) => config.decision_log = section.decision_log,
            // The library used to read only `decision_log.redact`: a section
            // the daemon would refuse still loads, for one minor version,
            // with a warning; only writing the log is refused.
            Err(err) => {
                let redaction: RedactionOnly = parse_yaml(text, file)?;
                tracing::warn!(
                    "{err}: the library will refuse this from the next minor version; \
                     decision_log is not written from this file"
                );
                config.decision_log.redact = redaction.decision_log.redact;
                config.decision_log_refused = Some(err.to_string());
            }
        }
        config.redact = config.decision_log.redact.clone();
        Ok(config)
    }

    /// Parses and validates the library's own sections of configuration
    /// text, skipping the top-level sections named in `others`, which their
    /// owners read from the same text (the daemon: `server:`,
    /// `decision_log:`). Any other key is refused with its path and line.
    /// [`Config::redact`] is left empty for the owner of `decision_log:` to
    /// fill.
    pub fn parse_own(
        text: &str,
        file: &str,
        base_dir: PathBuf,
        others: &[&str],
    ) -> Result<Config, ConfigError> {
        Config::parse_sections(text, file, base_dir, others, None)
    }

    /// As [`Config::parse_own`], keeping the sections in `others` as the same
    /// pass over the text read them, for their owners to read with
    /// [`Sections::read`] instead of parsing the whole text again.
    pub fn parse_own_keeping(
        text: &str,
        file: &str,
        base_dir: PathBuf,
        others: &[&str],
    ) -> Result<(Config, Sections), ConfigError> {
        let mut kept = serde_norway::Mapping::new();
        let config = Config::parse_sections(text, file, base_dir, others, Some(&mut kept))?;
        Ok((config, Sections(serde_norway::Value::Mapping(kept))))
    }

    fn parse_sections(
        text: &str,
        file: &str,
        base_dir: PathBuf,
        others: &[&str],
        keep: Option<&mut serde_norway::Mapping>,
    ) -> Result<Config, ConfigError> {
        let mut config: Config = parse_yaml_with(text, file, ReadSkipping { others, keep })?;
        config.base_dir = base_dir;
        config.source = file.to_string();
        config.place_rules(text);
        config.sha256 = Some(text_sha256(text));
        config.validate()?;
        Ok(config)
    }

    /// Gives the permission rules and the providers' configurations their
    /// places in the file (line by JSON pointer; see
    /// [`warden_runtime::source_map`]), for the rule a decision names.
    fn place_rules(&mut self, text: &str) {
        let has_rules = self
            .permissions
            .as_ref()
            .is_some_and(|p| !(p.allow.is_empty() && p.ask.is_empty() && p.deny.is_empty()));
        if !has_rules && self.guardrails.providers.is_empty() {
            return;
        }
        let map = SourceMap::of_yaml(text, &self.source);
        if let Some(permissions) = &mut self.permissions {
            let list = |name: &str, len: usize| {
                (0..len)
                    .map(|i| map.get(&format!("/permissions/{name}/{i}")))
                    .collect()
            };
            permissions.sources = RuleSources {
                deny: list("deny", permissions.deny.len()),
                ask: list("ask", permissions.ask.len()),
                allow: list("allow", permissions.allow.len()),
            };
        }
        for (i, provider) in self.guardrails.providers.iter_mut().enumerate() {
            provider.config_sources = map.subtree(&format!("/guardrails/providers/{i}/config"));
        }
    }

    /// Puts the data directory at `dir` (the command line's `--data-dir`,
    /// relative to the working directory), whatever the file says: the
    /// approval store, the logs and the compiled cache all follow it.
    pub fn set_data_dir(&mut self, dir: &Path) {
        self.data_dir = Some(std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
    }

    /// The data directory, resolved.
    pub fn data_dir(&self) -> PathBuf {
        match &self.data_dir {
            Some(dir) => self.base_dir.join(dir),
            None => PathBuf::from(DEFAULT_DATA_DIR),
        }
    }

    /// An error about `key` of this configuration's file.
    pub fn invalid(&self, key: String, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            file: self.source.clone(),
            key,
            message: message.into(),
            location: Location(None),
        }
    }

    /// Checks what the types alone cannot: names, pins, ranges and rules.
    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(signing) = &self.signing {
            if signing.kid.trim().is_empty() {
                return Err(self.invalid("signing.kid".into(), "must not be empty"));
            }
            if !(1..=30 * 86_400).contains(&signing.expires_in) {
                return Err(self.invalid(
                    "signing.expires_in".into(),
                    format!(
                        "{} is out of range 1..=2592000 (seconds)",
                        signing.expires_in
                    ),
                ));
            }
        }
        if let Some(permissions) = &self.permissions {
            PermissionEngine::new(permissions)
                .map_err(|(at, message)| self.invalid(format!("permissions.{at}"), message))?;
        }
        let mut names = std::collections::HashSet::new();
        if let Some((i, _)) = self
            .guardrails
            .providers
            .iter()
            .enumerate()
            .filter(|(_, p)| p.role == Role::Classifier)
            .nth(1)
        {
            return Err(self.invalid(
                format!("guardrails.providers[{i}].role"),
                "only one provider may have role: classifier",
            ));
        }
        for (i, p) in self.guardrails.providers.iter().enumerate() {
            let at = |field: &str| format!("guardrails.providers[{i}].{field}");
            let name_ok = !p.name.is_empty()
                && p.name.len() <= 64
                && p.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
            if !name_ok {
                return Err(self.invalid(
                    at("name"),
                    format!(
                        "'{}' is not a valid provider name (1-64 characters: letters, digits, '-', '_', '.')",
                        p.name
                    ),
                ));
            }
            if !names.insert(p.name.as_str()) {
                return Err(self.invalid(
                    at("name"),
                    format!("provider name '{}' is used twice", p.name),
                ));
            }
            if p.wasm.trim().is_empty() {
                return Err(self.invalid(at("wasm"), "must name a component"));
            }
            if let Some(pin) = &p.sha256 {
                let hex = pin.strip_prefix("sha256:").unwrap_or(pin);
                if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(self.invalid(
                        at("sha256"),
                        format!("'{pin}' is not a SHA-256 digest (64 hex digits)"),
                    ));
                }
            }
            if !p.config.is_object() {
                return Err(self.invalid(at("config"), "must be a mapping"));
            }
            for key in p.config_files.keys() {
                if key.is_empty() {
                    return Err(self.invalid(at("config_files"), "a key must not be empty"));
                }
                if p.config.get(key).is_some() {
                    return Err(self.invalid(
                        at(&format!("config_files.{key}")),
                        format!(
                            "`config` already has '{key}': give it inline or as a file, not both"
                        ),
                    ));
                }
            }
            if p.role == Role::Classifier && p.on_error == Some(OnError::Allow) {
                // Triage fails closed (DeepCode #245): a classifier that cannot
                // answer never leaves an allow standing.
                return Err(self.invalid(
                    at("on_error"),
                    "a classifier's failure never allows: use `ask` (the default; a deny where \
                     nobody can be asked) or `deny`",
                ));
            }
            if p.vectors.is_some() && p.role == Role::Classifier {
                // A classifier gives a risk, not a verdict: nothing to check.
                return Err(self.invalid(
                    at("vectors"),
                    "applies to guardrail providers only (a classifier gives no verdict)",
                ));
            }
            if p.mode == Mode::Shadow && p.role == Role::Classifier {
                // Triage consults the one classifier; a second opinion on risk
                // has no verdict of its own to compare.
                return Err(self.invalid(
                    at("mode"),
                    "shadow applies to guardrail providers only, not to a classifier",
                ));
            }
            p.limits.check().map_err(|(field, message)| {
                self.invalid(at(&format!("limits.{field}")), message)
            })?;
        }
        self.hitl_approval
            .check()
            .map_err(|(key, message)| self.invalid(format!("hitl_approval.{key}"), message))?;
        self.mcp
            .check()
            .map_err(|(key, message)| self.invalid(format!("mcp.{key}"), message))?;
        if let Some(shadow) = &self.shadow {
            if !(0.0..=1.0).contains(&shadow.sample) {
                return Err(self.invalid(
                    "shadow.sample".into(),
                    format!("{} is outside 0.0-1.0", shadow.sample),
                ));
            }
            if let Some(i) = self
                .guardrails
                .providers
                .iter()
                .position(|p| p.mode == Mode::Shadow)
            {
                // The log line and the counters record one shadow judgment a call.
                return Err(self.invalid(
                    format!("guardrails.providers[{i}].mode"),
                    "a set with a shadow configuration (`shadow:`) cannot also have shadow \
                     providers: put the provider in the candidate instead",
                ));
            }
        }
        Ok(())
    }
}

/// A configuration file read whole, for a reader that remembers what it
/// applied: a reload compares the digest to tell a change from a second event
/// for one save.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// The file's text.
    pub text: String,
    /// The path, as errors name the file.
    pub name: String,
    /// The file's directory, where its relative paths start.
    pub base_dir: PathBuf,
    /// The SHA-256 of the file's bytes, in hex.
    pub sha256: String,
}

impl ConfigFile {
    /// Reads `path`, a regular file of at most 4 MiB
    /// ([`warden_runtime::input_file`]); an error (unreadable, not a regular
    /// file, too large, not UTF-8) names it.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = input_file::read_to_string(path, InputKind::Config).map_err(|source| {
            ConfigError::Read {
                path: path.display().to_string(),
                source,
            }
        })?;
        let sha256 = text_sha256(&text);
        Ok(ConfigFile {
            text,
            name: path.display().to_string(),
            base_dir: path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            sha256,
        })
    }
}

/// The SHA-256 of configuration text, in hex: a file's digest.
fn text_sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Reads configuration text as `T`: the sections a layer above the library
/// owns (the daemon's `server:`) are read from the same text this way, with
/// errors that name the file, the key's path and the line.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<T, ConfigError> {
    parse_yaml_with(text, file, ReadWhole)
}

/// The top-level sections of a configuration that its library parse kept
/// for their owners (see [`Config::parse_own_keeping`]).
#[derive(Clone, Debug)]
pub struct Sections(serde_norway::Value);

impl Sections {
    /// Reads `T` from the kept sections as from the whole text (`T`'s fields
    /// name the sections it reads, and it ignores the rest). Where they do
    /// not read as `T`, the text is read again, so that the error names the
    /// file, the key's path and the line as [`parse_yaml`]'s do.
    pub fn read<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        file: &str,
    ) -> Result<T, ConfigError> {
        T::deserialize(&self.0).or_else(|_| parse_yaml(text, file))
    }
}

/// The decision log's section, read whole: the library redacts reasons with
/// its patterns, and writes the log itself where the embedder asks.
#[derive(Default, Deserialize)]
struct DecisionLogSection {
    #[serde(default)]
    decision_log: warden_log::DecisionLogConfig,
}

/// What the library read of the section before it read it whole: the
/// patterns (deprecated fallback, see [`Config::parse`]).
#[derive(Default, Deserialize)]
struct RedactionOnly {
    #[serde(default)]
    decision_log: RedactKey,
}

#[derive(Default, Deserialize)]
struct RedactKey {
    #[serde(default)]
    redact: Vec<String>,
}

/// How a configuration type is read, from either parser
/// ([`parse_yaml_with`]).
trait Read<T> {
    /// Reads `T` from `deserializer`; called again, for the YAML parser,
    /// where the JSON one failed.
    fn read<'de, D: serde::Deserializer<'de>>(&mut self, deserializer: D) -> Result<T, D::Error>;
}

/// Reads the library's configuration skipping `others` (keeping them where
/// `keep` is given), from either parser.
struct ReadSkipping<'o> {
    others: &'o [&'o str],
    keep: Option<&'o mut serde_norway::Mapping>,
}

impl Read<Config> for ReadSkipping<'_> {
    fn read<'de, D: serde::Deserializer<'de>>(&mut self, inner: D) -> Result<Config, D::Error> {
        // A second read (YAML's, after JSON's failed) starts from nothing.
        let mut keep = self.keep.as_deref_mut();
        if let Some(kept) = keep.as_deref_mut() {
            kept.clear();
        }
        Config::deserialize(others::SkipOthers {
            inner,
            others: self.others,
            keep,
        })
    }
}

/// Reads the whole of `T`.
struct ReadWhole;

impl<T: serde::de::DeserializeOwned> Read<T> for ReadWhole {
    fn read<'de, D: serde::Deserializer<'de>>(&mut self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize(deserializer)
    }
}

/// Reads configuration text as `T` with `reader`. Text that is JSON the two
/// parsers read alike ([`warden_runtime::json_config`], what a generated
/// policy is written as) is read by the JSON parser, about five times
/// faster. Anything else, and JSON whose reading fails (for its error, and
/// for the conversions YAML allows that JSON does not, such as a number into
/// a string), is read as YAML, tracking the path, so that an error names the
/// file, the key's path and the line.
fn parse_yaml_with<T>(text: &str, file: &str, mut reader: impl Read<T>) -> Result<T, ConfigError> {
    if warden_runtime::json_config::reads_alike(text) {
        let mut json = serde_json::Deserializer::from_str(text);
        if let Ok(value) = reader
            .read(&mut json)
            .and_then(|value| json.end().map(|()| value))
        {
            return Ok(value);
        }
    }
    let mut track = serde_path_to_error::Track::new();
    let deserializer = serde_path_to_error::Deserializer::new(
        serde_norway::Deserializer::from_str(text),
        &mut track,
    );
    reader
        .read(deserializer)
        .map_err(|err| serde_path_to_error::Error::new(track.path(), err))
        .map_err(|err| {
            let key = display_path(err.path());
            let inner = err.into_inner();
            let location = Location(inner.location().map(|l| (l.line(), l.column())));
            ConfigError::Invalid {
                file: file.to_string(),
                key,
                message: strip_location(&inner.to_string()),
                location,
            }
        })
}

/// `guardrails.providers[0].limits`, from serde_path_to_error's path.
fn display_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push('?');
            }
        }
    }
    if out.is_empty() {
        "<top level>".into()
    } else {
        out
    }
}

/// The YAML error's own "at line X column Y" suffix; we print the location once.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, "test.yaml", PathBuf::from("."))
    }

    #[test]
    fn the_embedded_default_is_valid() {
        assert!(!Config::embedded().guardrails.providers.is_empty());
    }

    #[test]
    fn the_decision_log_section_is_read_whole_with_the_texts_digest() {
        let text = "decision_log:\n  checkpoint_every: 7\n  redact: [\"acme-[0-9]+\"]\n";
        let config = parse(text).unwrap();
        assert_eq!(config.decision_log.checkpoint_every, 7);
        assert_eq!(config.redact, ["acme-[0-9]+"]);
        assert!(config.decision_log_refused.is_none());
        let digest = config.sha256.unwrap();
        assert_eq!(digest, text_sha256(text));
        assert_eq!(digest.len(), 64);
    }

    #[test]
    fn the_sections_kept_for_their_owners_are_read_without_parsing_the_text_again() {
        let text = "server:\n  listen: 127.0.0.1:1\ndecision_log:\n  checkpoint_every: 7\n";
        let (_, sections) =
            Config::parse_own_keeping(text, "test.yaml", PathBuf::from("."), FACE_SECTIONS)
                .unwrap();
        // Given other text, only what the first pass kept can say 7.
        let section: DecisionLogSection = sections.read("{}", "test.yaml").unwrap();
        assert_eq!(section.decision_log.checkpoint_every, 7);
    }

    #[test]
    fn a_decision_log_section_the_daemon_refuses_still_loads_its_redact_patterns() {
        let config =
            parse("decision_log:\n  redact: [\"acme-[0-9]+\"]\n  no_such_key: 1\n").unwrap();
        assert_eq!(config.redact, ["acme-[0-9]+"]);
        let refused = config.decision_log_refused.unwrap();
        assert!(refused.contains("no_such_key"), "{refused}");
    }

    #[test]
    fn an_empty_file_is_the_defaults() {
        let config = parse("{}").unwrap();
        assert!(config.guardrails.enabled && config.guardrails.fail_closed);
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_path() {
        let err = parse(
            "guardrails:\n  providers:\n    - name: a\n      wasm: a.wasm\n      limits:\n        fuell: 5\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("guardrails.providers[0].limits"), "{err}");
        assert!(err.contains("fuell"), "{err}");
        assert!(err.contains("line 6"), "{err}");
    }

    #[test]
    fn an_unknown_top_level_key_is_refused_with_its_name_and_line() {
        let err = parse("triage: {}\ngaurdrails: {}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "test.yaml: gaurdrails: unknown field `gaurdrails`, expected one of `guardrails`, \
             `hitl_approval`, `mcp`, `permissions`, `triage`, `data_dir`, `signing`, `shadow`, \
             `server`, `decision_log`, `telemetry` (line 2, column 1)"
        );
    }

    #[test]
    fn a_top_level_key_given_twice_or_a_file_not_a_mapping_is_refused_as_serde_says() {
        let twice = parse("triage: {}\ntriage: {}\n").unwrap_err().to_string();
        assert_eq!(
            twice,
            "test.yaml: <top level>: duplicate field `triage` (line 1, column 1)"
        );
        let scalar = parse("5").unwrap_err().to_string();
        assert_eq!(
            scalar,
            "test.yaml: <top level>: invalid type: integer `5`, expected struct Config (line 1, column 1)"
        );
    }

    #[test]
    fn the_faces_sections_are_skipped_unread_and_redact_is_taken() {
        let config = parse(
            "server:\n  listen: nowhere\n  anything: [1, 2]\ndecision_log:\n  fsync: always\n  redact: ['acct-[0-9]+']\ntriage: {detector: true}\n",
        )
        .unwrap();
        assert!(config.triage.detector);
        assert_eq!(config.redact, ["acct-[0-9]+"]);
    }

    #[test]
    fn a_section_the_library_is_not_told_of_is_refused() {
        let err = Config::parse_own("server: {}\n", "test.yaml", PathBuf::from("."), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `server`"), "{err}");
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn the_owner_of_decision_log_fills_redact() {
        let config = Config::parse_own(
            "decision_log: {redact: [x]}\n",
            "test.yaml",
            PathBuf::from("."),
            &["decision_log"],
        )
        .unwrap();
        assert!(config.redact.is_empty());
    }

    #[test]
    fn an_error_after_a_skipped_section_names_its_path_and_line() {
        let err = parse("server:\n  listen: x\nguardrails:\n  enabeld: false\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.yaml: guardrails.enabeld: guardrails: unknown field `enabeld`"),
            "{err}"
        );
        assert!(err.contains("line 4"), "{err}");
    }

    #[test]
    fn the_stores_key_in_hitl_approval_is_skipped_and_a_typo_beside_it_refused() {
        let config = parse("hitl_approval:\n  durability: full\n  tools: [bash]\n").unwrap();
        assert_eq!(config.hitl_approval.tools, ["bash"]);
        let err = parse("hitl_approval:\n  durability: full\n  tols: [bash]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.yaml: hitl_approval.tols: hitl_approval: unknown field `tols`"),
            "{err}"
        );
        assert!(err.contains("`durability`"), "{err}");
        assert!(err.ends_with("(line 3, column 3)"), "{err}");
    }

    #[test]
    fn a_limit_out_of_range_is_refused_naming_the_limit() {
        let err = parse(
            "guardrails:\n  providers:\n    - name: a\n      wasm: a.wasm\n      limits: {timeout_ms: 0}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("guardrails.providers[0].limits.timeout_ms"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_pin_is_refused() {
        let err = parse("guardrails:\n  providers:\n    - {name: a, wasm: a.wasm, sha256: abc}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("providers[0].sha256"), "{err}");
    }

    #[test]
    fn a_duplicate_provider_name_is_refused() {
        let err = parse(
            "guardrails:\n  providers:\n    - {name: a, wasm: a.wasm}\n    - {name: a, wasm: b.wasm}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("providers[1].name") && err.contains("twice"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_on_error_value_is_refused() {
        let err =
            parse("guardrails:\n  providers:\n    - {name: a, wasm: a.wasm, on_error: maybe}\n")
                .unwrap_err()
                .to_string();
        assert!(err.contains("providers[0].on_error"), "{err}");
    }

    #[test]
    fn vectors_on_a_classifier_are_refused() {
        let err = parse(
            "guardrails:\n  providers:\n    - {name: c, wasm: c.wasm, role: classifier, vectors: v.jsonl}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("providers[0].vectors"), "{err}");
    }

    #[test]
    fn a_shadow_classifier_is_refused() {
        let err = parse(
            "guardrails:\n  providers:\n    - {name: c, wasm: c.wasm, role: classifier, mode: shadow}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("providers[0].mode"), "{err}");
    }

    #[test]
    fn an_unknown_mode_is_refused_naming_it() {
        let err = parse("guardrails:\n  providers:\n    - {name: a, wasm: a.wasm, mode: dry}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("providers[0].mode"), "{err}");
    }

    /// Properties over generated files (proptest): whatever the order of the
    /// sections, the library reads a file as if the sections it skips were
    /// not there, and refuses it exactly when a key nobody owns is in it,
    /// naming that key and its line.
    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Top-level entries: the library's, the faces', and one nobody owns.
        const ENTRIES: &[(&str, &str)] = &[
            ("triage", "{detector: true}"),
            ("data_dir", "state"),
            (
                "hitl_approval",
                "{tools: [bash], durability: full, max_pending_per_principal: 7}",
            ),
            ("server", "{listen: 127.0.0.1:1, tokens: [{anything: 1}]}"),
            ("decision_log", "{fsync: always, redact: ['x+']}"),
            ("nobody", "{a: 1}"),
        ];

        fn text(entries: &[(&str, &str)]) -> String {
            entries.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 256,
                failure_persistence: None,
                ..ProptestConfig::default()
            })]

            #[test]
            fn a_skipped_section_reads_as_if_absent_and_only_an_unowned_key_is_refused(
                order in Just((0..ENTRIES.len()).collect::<Vec<_>>()).prop_shuffle(),
                take in prop::collection::vec(any::<bool>(), ENTRIES.len()),
            ) {
                let chosen: Vec<_> = order.into_iter().filter(|&i| take[i]).map(|i| ENTRIES[i]).collect();
                let own: Vec<_> = chosen.iter().copied().filter(|(k, _)| !FACE_SECTIONS.contains(k)).collect();
                let skipping = Config::parse_own(&text(&chosen), "p.yaml", ".".into(), FACE_SECTIONS);
                let without = Config::parse_own(&text(&own), "p.yaml", ".".into(), &[]);
                match chosen.iter().position(|(k, _)| *k == "nobody") {
                    Some(at) => {
                        let err = skipping.unwrap_err().to_string();
                        let named = "p.yaml: nobody: unknown field `nobody`";
                        prop_assert!(err.starts_with(named), "{}", err);
                        let line = format!("(line {}, column 1)", at + 1);
                        prop_assert!(err.ends_with(&line), "{}", err);
                        prop_assert!(without.is_err());
                    }
                    None => {
                        let (skipping, without) = (skipping.unwrap(), without.unwrap());
                        prop_assert_eq!(skipping.triage.detector, without.triage.detector);
                        prop_assert_eq!(skipping.data_dir, without.data_dir);
                        prop_assert_eq!(skipping.hitl_approval, without.hitl_approval);
                    }
                }
            }
        }
    }
}
