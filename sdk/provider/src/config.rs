//! The operator's configuration: parsed from the JSON the host passes to
//! `configure` into the provider's own type, with errors that name the field.

use std::fmt;

use crate::Provider;

/// Why a configuration was refused: the field (a path such as
/// `rules[3].when[0].value`, when the problem has one) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    field: Option<String>,
    message: String,
}

impl ConfigError {
    /// A problem with the configuration as a whole.
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError {
            field: None,
            message: message.into(),
        }
    }

    /// A problem with one field, named by its path in the configuration.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// The field's path, if the problem is with one field.
    pub fn field_path(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong with the configuration.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, for a field inside `parent`: `rules[2]` + `when` gives
    /// `rules[2].when`.
    pub fn within(self, parent: &str) -> Self {
        let field = match self.field {
            Some(field) if field.starts_with('[') => format!("{parent}{field}"),
            Some(field) => format!("{parent}.{field}"),
            None => parent.to_string(),
        };
        ConfigError {
            field: Some(field),
            message: self.message,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Parses configuration JSON into `P::Config` and configures `P`, exactly as
/// the exported component does; for unit tests on the native target.
pub fn configure_json<P: Provider>(json: &str) -> Result<P, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let config: P::Config = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        let message = without_position(&err.into_inner().to_string());
        if path == "." {
            ConfigError::new(message)
        } else {
            ConfigError::field(path, message)
        }
    })?;
    deserializer
        .end()
        .map_err(|err| ConfigError::new(without_position(&err.to_string())))?;
    P::configure(config)
}

/// serde_json's " at line 1 column 17": the config is one line of JSON made by
/// the host, so the field path says more.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Call, Decision};

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Config {
        tools: Vec<String>,
        #[serde(default)]
        limit: Option<u32>,
    }

    struct Tools;

    impl Provider for Tools {
        const NAME: &'static str = "tools";
        type Config = Config;
        fn configure(config: Config) -> Result<Self, ConfigError> {
            if config.tools.iter().any(String::is_empty) {
                return Err(ConfigError::field("tools", "a tool name is empty"));
            }
            let _ = config.limit;
            Ok(Tools)
        }
        fn evaluate(&self, _call: &Call) -> Decision {
            Decision::allow()
        }
    }

    fn error(json: &str) -> ConfigError {
        configure_json::<Tools>(json).err().expect("an error")
    }

    #[test]
    fn a_wrong_type_names_the_field_and_index() {
        let err = error(r#"{"tools": ["bash", 7]}"#);
        assert_eq!(err.field_path(), Some("tools[1]"));
        assert!(
            err.to_string().starts_with("tools[1]: invalid type"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_key_is_named() {
        let err = error(r#"{"tools": [], "limt": 3}"#);
        assert!(err.to_string().contains("unknown field `limt`"), "{err}");
    }

    #[test]
    fn a_missing_field_is_named() {
        let err = error("{}");
        assert!(err.to_string().contains("missing field `tools`"), "{err}");
    }

    #[test]
    fn the_message_carries_no_json_position() {
        let err = error(r#"{"tools": "bash"}"#);
        assert!(!err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn the_providers_own_check_is_reported() {
        assert_eq!(
            error(r#"{"tools": [""]}"#).to_string(),
            "tools: a tool name is empty"
        );
    }

    #[test]
    fn trailing_text_after_the_config_is_refused() {
        assert!(configure_json::<Tools>(r#"{"tools": []} x"#).is_err());
    }

    #[test]
    fn an_error_can_be_placed_inside_a_parent_field() {
        let err = ConfigError::field("when[0].value", "bad").within("rules[2]");
        assert_eq!(err.to_string(), "rules[2].when[0].value: bad");
        let err = ConfigError::field("[0]", "bad").within("rules");
        assert_eq!(err.field_path(), Some("rules[0]"));
    }
}
