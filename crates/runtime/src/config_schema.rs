//! Checks a provider's `config:` against the JSON Schema its manifest gives,
//! at load, so that a config the provider cannot take is refused before the
//! provider goes live, naming the field (a JSON pointer). Validation is boon's
//! (drafts 4 to 2020-12); a schema may refer only to itself: no file or
//! network `$ref` is ever loaded on a provider's say-so.

use serde_json::Value;

/// Why a config does not fit a provider's schema, or the schema is unusable.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The manifest's schema does not compile.
    #[error("the manifest's config schema is not a usable JSON Schema: {0}")]
    Schema(String),
    /// The config breaks the schema at `pointer`.
    #[error("config{}: {message}", if pointer.is_empty() { String::new() } else { format!(" at {pointer}") })]
    Config {
        /// A JSON pointer to the offending field ("" for the config itself).
        pointer: String,
        /// What the schema wanted there.
        message: String,
    },
}

/// Refuses every `$ref` outside the schema itself.
struct NoLoader;

impl boon::UrlLoader for NoLoader {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("{url}: a provider's config schema may refer only to itself").into())
    }
}

/// The schema's place, for messages and `$ref`s inside it.
const SCHEMA_URL: &str = "urn:warden:provider-config-schema";

/// Validates `config` against `schema`.
pub fn validate(schema: &Value, config: &Value) -> Result<(), SchemaError> {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.use_loader(Box::new(NoLoader));
    compiler
        .add_resource(SCHEMA_URL, schema.clone())
        .map_err(|err| SchemaError::Schema(err.to_string()))?;
    let index = compiler
        .compile(SCHEMA_URL, &mut schemas)
        .map_err(|err| SchemaError::Schema(format!("{err:#}")))?;
    let Err(error) = schemas.validate(config, index) else {
        return Ok(());
    };
    // The deepest first cause names the field; its parents only say "some
    // subschema failed".
    let mut leaf = &error;
    while let Some(cause) = leaf.causes.first() {
        leaf = cause;
    }
    Err(SchemaError::Config {
        pointer: leaf.instance_location.to_string(),
        message: leaf.kind.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "hosts": {"type": "array", "items": {"type": "string"}},
                "strict": {"type": "boolean"},
            },
        })
    }

    #[test]
    fn a_config_that_fits_passes() {
        assert_eq!(
            validate(&schema(), &json!({"hosts": ["a"], "strict": true})),
            Ok(())
        );
    }

    #[test]
    fn a_config_that_breaks_the_schema_names_the_field_by_pointer() {
        let err = validate(&schema(), &json!({"hosts": ["a", 3]})).unwrap_err();
        let SchemaError::Config { pointer, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(pointer, "/hosts/1");
        assert!(err.to_string().contains("/hosts/1"), "{err}");
    }

    #[test]
    fn an_unknown_key_is_named() {
        let err = validate(&schema(), &json!({"host": []})).unwrap_err();
        assert!(err.to_string().contains("host"), "{err}");
    }

    #[test]
    fn a_schema_cannot_make_the_host_read_a_file() {
        let schema = json!({"$ref": "file:///etc/passwd"});
        let err = validate(&schema, &json!({})).unwrap_err();
        assert!(matches!(err, SchemaError::Schema(_)), "{err}");
    }

    #[test]
    fn a_schema_that_is_not_one_is_refused() {
        let err = validate(&json!({"type": 7}), &json!({})).unwrap_err();
        assert!(matches!(err, SchemaError::Schema(_)), "{err}");
    }
}
