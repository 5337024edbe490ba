//! The provider's configuration, checked and compiled once in `configure`:
//! the passport (with its digest and the metadata every decision carries),
//! the tool mapping, and the limits compiled for fast evaluation.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::command::CommandPolicy;
use crate::files::FilePolicy;
use crate::mapping::{Mapping, RuleSpec};
use crate::passport::{self, Passport};
use crate::tools::{McpPolicy, MessagingPolicy};
use crate::web::WebPolicy;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderConfig {
    #[serde(default)]
    passport: Option<Value>,
    #[serde(default)]
    tool_mapping: Vec<RuleSpec>,
    #[serde(default)]
    replace_default_mapping: bool,
}

/// Everything `evaluate` needs, built once.
pub struct Configured {
    pub passport: Passport,
    /// The decision metadata (a JSON object, as text).
    pub metadata: String,
    pub mapping: Mapping,
    pub command: CommandPolicy,
    pub read: FilePolicy,
    pub write: FilePolicy,
    pub web: WebPolicy,
    pub mcp: McpPolicy,
    pub messaging: MessagingPolicy,
}

impl Configured {
    pub fn parse(text: &str) -> Result<Configured, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let config: ProviderConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            format!("oap-passport config: {path}: {}", e.into_inner())
        })?;
        let Some(value) = config.passport else {
            return Err(
                "oap-passport config: `passport` is missing: give the passport inline or \
                        as a file with the provider's `config_files: {passport: FILE}`"
                    .into(),
            );
        };
        let digest = passport::digest(&value)?;
        let passport = Passport::parse(&value)?;
        let metadata = json!({
            "passport_id": passport.passport_id,
            "owner_id": passport.owner_id,
            "assurance_level": passport.assurance_level.as_str(),
            "passport_digest": digest,
        })
        .to_string();
        let mapping = Mapping::new(config.tool_mapping, config.replace_default_mapping)?;
        let limits = |capability: &str| passport.limits.get(capability);
        let command = CommandPolicy::compile(limits("system.command.execute"))?;
        let read = FilePolicy::compile("data.file.read", limits("data.file.read"))?;
        let write = FilePolicy::compile("data.file.write", limits("data.file.write"))?;
        let web = WebPolicy::compile(limits("web.fetch"));
        let mcp = McpPolicy::compile(limits("mcp.tool.execute"));
        let messaging = MessagingPolicy::compile(limits("messaging.send"));
        Ok(Configured {
            passport,
            metadata,
            mapping,
            command,
            read,
            write,
            web,
            mcp,
            messaging,
        })
    }
}
