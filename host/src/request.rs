//! A tool call as a harness sends it, parsed strictly and validated (size, depth,
//! tool name) before anything judges it. A malformed request is refused with an
//! error that says what is wrong and where; it is never judged.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The largest request body accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// The deepest nesting of `tool_input` accepted.
pub const MAX_INPUT_DEPTH: usize = 64;
/// The longest tool name accepted, in bytes.
pub const MAX_TOOL_NAME_BYTES: usize = 256;

/// One tool call: `{"tool_name": ..., "tool_input": {...}, "context": {...}}`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub tool_name: String,
    /// The tool's arguments, a JSON object.
    #[serde(default = "empty_object")]
    pub tool_input: Value,
    /// The model's id for this call. Taken from the call, never from the context.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub context: CallContext,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// What the harness knows about the run that made the call.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CallContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_subagent: bool,
    /// When the call was made (RFC 3339); the host's clock when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The run's working directory, against which relative paths are judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The user's home directory, for `~` and `$HOME` in arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// Internal callers only: the run's interaction mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction_mode: Option<String>,
    /// Internal callers only: legacy hint for a scheduled run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_interactive: Option<bool>,
    /// Internal callers only: legacy hint for an autonomous run. Runtime-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_clarification: Option<bool>,
    /// Internal callers only: the channel that started the run (`github` means a
    /// webhook run). Runtime-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_name: Option<String>,
    /// Whether the harness can pause this run for a human and resume it later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub can_resume: Option<bool>,
    /// Internal callers only: where the run was started (`web`, `sdk`, `im`,
    /// `extension`, `mcp_notification`); see `approval::RunOrigin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_origin: Option<String>,
}

/// Who is calling, as established by the caller's authentication (a token's
/// role, or the process embedding the library), never by the request body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    /// An agent harness: may not choose the run's interaction mode.
    #[default]
    Agent,
    /// A trusted internal component (the harness's own scheduler or gateway).
    Internal,
}

/// Why a request was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum RequestError {
    #[error("request body is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("request is not valid JSON: {message} (line {line}, column {column})")]
    Syntax {
        message: String,
        line: usize,
        column: usize,
    },
    #[error("request field `{field}`: {message}")]
    Field { field: String, message: String },
    #[error("tool_input nests deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error(
        "context.interaction_mode: invalid interaction_mode '{given}'; expected one of: {expected}"
    )]
    UnknownInteractionMode { given: String, expected: String },
}

impl RequestError {
    fn field(field: &str, message: impl Into<String>) -> Self {
        RequestError::Field {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl ToolCall {
    /// A call with no context, for the library API and tests.
    pub fn new(tool_name: impl Into<String>, tool_input: Value) -> Self {
        ToolCall {
            tool_name: tool_name.into(),
            tool_input,
            tool_call_id: None,
            context: CallContext::default(),
        }
    }

    /// Parses a request body and validates it.
    pub fn from_json(body: &[u8]) -> Result<ToolCall, RequestError> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err(RequestError::TooLarge {
                size: body.len(),
                limit: MAX_REQUEST_BYTES,
            });
        }
        let mut deserializer = serde_json::Deserializer::from_slice(body);
        let call: ToolCall = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|err| json_error(err.path().to_string(), err.into_inner()))?;
        deserializer
            .end()
            .map_err(|err| json_error(".".into(), err))?;
        call.validate()?;
        Ok(call)
    }

    /// Checks what serde alone cannot.
    pub fn validate(&self) -> Result<(), RequestError> {
        let name = &self.tool_name;
        if name.is_empty() {
            return Err(RequestError::field("tool_name", "must not be empty"));
        }
        if name.len() > MAX_TOOL_NAME_BYTES {
            return Err(RequestError::field(
                "tool_name",
                format!(
                    "is {} bytes; the limit is {MAX_TOOL_NAME_BYTES}",
                    name.len()
                ),
            ));
        }
        if name.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(RequestError::field(
                "tool_name",
                "must not contain whitespace or control characters",
            ));
        }
        if !self.tool_input.is_object() {
            return Err(RequestError::field("tool_input", "must be a JSON object"));
        }
        if depth(&self.tool_input) > MAX_INPUT_DEPTH {
            return Err(RequestError::TooDeep {
                limit: MAX_INPUT_DEPTH,
            });
        }
        if let Some(ts) = &self.context.timestamp {
            OffsetDateTime::parse(ts, &Rfc3339).map_err(|e| {
                RequestError::field("context.timestamp", format!("'{ts}' is not RFC 3339: {e}"))
            })?;
        }
        Ok(())
    }

    /// The call's timestamp, or now.
    pub fn timestamp(&self) -> String {
        self.context.timestamp.clone().unwrap_or_else(now_rfc3339)
    }
}

/// The current time, RFC 3339, UTC.
pub fn now_rfc3339() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

fn json_error(path: String, err: serde_json::Error) -> RequestError {
    if err.is_syntax() || err.is_eof() {
        RequestError::Syntax {
            message: strip_position(&err.to_string()),
            line: err.line(),
            column: err.column(),
        }
    } else {
        let field = if path == "." { "<body>".into() } else { path };
        RequestError::Field {
            field,
            message: strip_position(&err.to_string()),
        }
    }
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Nesting depth of a JSON value; a scalar is depth 0.
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<ToolCall, RequestError> {
        ToolCall::from_json(body.as_bytes())
    }

    #[test]
    fn a_well_formed_call_parses() {
        let call = parse(
            r#"{"tool_name":"bash","tool_input":{"command":"ls"},"context":{"thread_id":"t1"}}"#,
        )
        .unwrap();
        assert_eq!(call.tool_name, "bash");
        assert_eq!(call.context.thread_id.as_deref(), Some("t1"));
    }

    #[test]
    fn an_unknown_context_key_is_refused_by_name() {
        let err = parse(r#"{"tool_name":"bash","context":{"is_subagnet":true}}"#).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("context") && text.contains("is_subagnet"),
            "{text}"
        );
    }

    #[test]
    fn tool_input_must_be_an_object() {
        let err = parse(r#"{"tool_name":"bash","tool_input":"rm -rf /"}"#).unwrap_err();
        assert_eq!(
            err,
            RequestError::field("tool_input", "must be a JSON object")
        );
    }

    #[test]
    fn an_empty_tool_name_is_refused() {
        assert!(matches!(
            parse(r#"{"tool_name":""}"#),
            Err(RequestError::Field { .. })
        ));
    }

    #[test]
    fn a_tool_name_with_a_newline_is_refused() {
        assert!(matches!(
            parse(r#"{"tool_name":"ba\nsh"}"#),
            Err(RequestError::Field { .. })
        ));
    }

    #[test]
    fn broken_json_reports_line_and_column() {
        let err = parse("{\"tool_name\": \"bash\",\n  oops}").unwrap_err();
        assert!(
            matches!(err, RequestError::Syntax { line: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn trailing_garbage_is_refused() {
        assert!(parse(r#"{"tool_name":"bash"} {"#).is_err());
    }

    #[test]
    fn deeply_nested_input_is_refused() {
        let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
        let body = format!(r#"{{"tool_name":"bash","tool_input":{{"a":{deep}}}}}"#);
        assert_eq!(
            parse(&body).unwrap_err(),
            RequestError::TooDeep {
                limit: MAX_INPUT_DEPTH
            }
        );
    }

    #[test]
    fn an_oversized_body_is_refused_before_parsing() {
        let body = vec![b' '; MAX_REQUEST_BYTES + 1];
        assert!(matches!(
            ToolCall::from_json(&body),
            Err(RequestError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_malformed_timestamp_is_refused() {
        let err = parse(r#"{"tool_name":"bash","context":{"timestamp":"yesterday"}}"#).unwrap_err();
        assert!(err.to_string().contains("context.timestamp"), "{err}");
    }
}
