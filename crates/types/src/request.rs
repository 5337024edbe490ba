//! A tool call as a harness sends it, parsed strictly and validated (size, depth,
//! tool name, ids) before anything judges it. What an agent's model controls (the
//! tool name, the arguments, their size and depth, the call's id) is never an
//! error: [`RequestError::refusal_code`] names the deny decision it becomes, so
//! that a harness which treats errors as fail-open cannot run an unjudged call.
//! What only the harness controls (the request's shape, its context) is an error
//! that says what is wrong and where.

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
/// The longest id (thread, run, agent, user, tool call, ...) accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// The longest path (`cwd`, `home`) accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

use crate::codes;

/// One tool call: `{"tool_name": ..., "tool_input": {...}, "context": {...}}`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool the model called: 1 to 256 bytes, no whitespace or control characters.
    pub tool_name: String,
    /// The tool's arguments, a JSON object.
    #[serde(default = "empty_object")]
    pub tool_input: Value,
    /// The model's id for this call. Taken from the call, never from the context.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// What the harness knows of the run; keys the caller may not set are dropped with a notice.
    #[serde(default)]
    pub context: CallContext,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// What the harness knows about the run that made the call.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CallContext {
    /// The agent that made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The conversation the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// The run (one agent turn) that made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Attribution: the user the agent acts for; believed only from a caller that may assert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Attribution: the user's role, which rules match on; believed only from a caller that may
    /// assert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_role: Option<String>,
    /// Attribution: who authenticated the user; believed only from a caller that may assert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_provider: Option<String>,
    /// Attribution: the user's id at that provider; believed only from a caller that may assert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_id: Option<String>,
    /// The call comes from a subagent, which never asks a human: an ask is a deny.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_subagent: bool,
    /// When the call was made (RFC 3339), as the caller says: recorded; the
    /// time a call is judged at is the host's unless the caller is internal.
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
    /// `extension`, `mcp_notification`); see `warden_policy::origin::RunOrigin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_origin: Option<String>,
    /// The MCP server a gateway (`warden mcp`) judged the call for: logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<String>,
    /// What the MCP client claims to be (its `clientInfo`, `name/version`):
    /// logged as a claim, never authority; no policy reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_client: Option<String>,
    /// The W3C trace context (`traceparent`) of the request that carried the
    /// call: logged, so the decision joins the caller's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// Why a request was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum RequestError {
    /// The body is larger than the route accepts.
    #[error("request body is {size} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Its size, in bytes.
        size: usize,
        /// The route's limit, in bytes.
        limit: usize,
    },
    /// The body is not JSON.
    #[error("request is not valid JSON: {message} (line {line}, column {column})")]
    Syntax {
        /// The parser's message.
        message: String,
        /// Where, 1-based.
        line: usize,
        /// Where in the line, 1-based.
        column: usize,
    },
    /// A field the harness controls is missing, of the wrong type, or invalid.
    #[error("request field `{field}`: {message}")]
    Field {
        /// Where (`context.thread_id`, `<body>`, ...).
        field: String,
        /// What is wrong there.
        message: String,
    },
    /// Arrays and objects nested deeper than the limit.
    #[error("the request nests JSON deeper than {limit} levels")]
    TooDeep {
        /// The deepest nesting accepted.
        limit: usize,
    },
    /// An object names a key twice: parsers disagree on which value counts.
    #[error("ambiguous request: {0}")]
    DuplicateKey(String),
    /// The tool name is empty, too long, or holds whitespace or control characters.
    #[error("tool_name: {0}")]
    ToolName(String),
    /// `tool_input` is not a JSON object.
    #[error("tool_input must be a JSON object")]
    ToolInput,
    /// An id or path of the call or its context is too long or holds control characters.
    #[error("{field}: {message}")]
    Id {
        /// Which (`tool_call_id`, `context.thread_id`, `context.cwd`, ...).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// `context.interaction_mode` names no mode.
    #[error(
        "context.interaction_mode: invalid interaction_mode '{given}'; expected one of: {expected}"
    )]
    UnknownInteractionMode {
        /// The value given.
        given: String,
        /// The modes, comma-separated.
        expected: String,
    },
}

impl RequestError {
    /// The deny decision's reason code, when the refused part is one an agent's
    /// model controls (then the request gets a decision, never an error);
    /// `None` for what only the harness controls.
    pub fn refusal_code(&self) -> Option<&'static str> {
        match self {
            RequestError::TooLarge { .. } => Some(codes::INPUT_TOO_LARGE),
            RequestError::Syntax { .. } => Some(codes::INVALID_JSON),
            RequestError::TooDeep { .. } => Some(codes::INPUT_TOO_DEEP),
            RequestError::DuplicateKey(_) => Some(codes::DUPLICATE_KEY),
            RequestError::ToolName(_) => Some(codes::INVALID_TOOL_NAME),
            RequestError::ToolInput => Some(codes::INVALID_TOOL_INPUT),
            RequestError::Id { .. } => Some(codes::INVALID_ID),
            RequestError::Field { .. } | RequestError::UnknownInteractionMode { .. } => None,
        }
    }

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

    /// The harness's id for the call (a builder, for clients).
    pub fn tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// The run's context (a builder, for clients).
    pub fn context(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }

    /// Parses a request body and validates it, with the default depth limit.
    pub fn from_json(body: &[u8]) -> Result<ToolCall, RequestError> {
        ToolCall::from_json_within(body, MAX_INPUT_DEPTH)
    }

    /// Parses a request body nested at most `max_depth` levels (the whole body)
    /// and validates it. The text is checked first (JSON at all, depth,
    /// duplicate keys), so that what is judged is what every parser would read.
    pub fn from_json_within(body: &[u8], max_depth: usize) -> Result<ToolCall, RequestError> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err(RequestError::TooLarge {
                size: body.len(),
                limit: MAX_REQUEST_BYTES,
            });
        }
        crate::strict_json::check(body, max_depth)?;
        ToolCall::from_checked_json(body)
    }

    /// Parses and validates a body whose text [`crate::strict_json::check`]
    /// already passed (the daemon checks it as it reads it).
    pub fn from_checked_json(body: &[u8]) -> Result<ToolCall, RequestError> {
        // Tracking the path costs on every value read, and only a refusal
        // names it: the body is read again with it only then (the same text
        // fails the same way).
        let call: ToolCall = match serde_json::from_slice(body) {
            Ok(call) => call,
            Err(_) => return Err(ToolCall::refusal_of(body)),
        };
        call.validate()?;
        Ok(call)
    }

    /// Why `body` does not parse as a call, with the path of what was wrong.
    fn refusal_of(body: &[u8]) -> RequestError {
        let mut deserializer = serde_json::Deserializer::from_slice(body);
        match serde_path_to_error::deserialize::<_, ToolCall>(&mut deserializer) {
            Err(err) => json_error(err.path().to_string(), err.into_inner()),
            Ok(_) => match deserializer.end() {
                Err(err) => json_error(".".into(), err),
                Ok(()) => RequestError::Field {
                    field: "<body>".into(),
                    message: "the body could not be read as a call".into(),
                },
            },
        }
    }

    /// Checks what serde alone cannot. The model-controlled parts first, so
    /// that a call both malformed by its model and by its harness is refused as
    /// a decision.
    pub fn validate(&self) -> Result<(), RequestError> {
        check_tool_name(&self.tool_name)?;
        if !self.tool_input.is_object() {
            return Err(RequestError::ToolInput);
        }
        if depth(&self.tool_input) > MAX_INPUT_DEPTH {
            return Err(RequestError::TooDeep {
                limit: MAX_INPUT_DEPTH,
            });
        }
        if let Some(id) = &self.tool_call_id {
            check_text("tool_call_id", id, MAX_ID_BYTES)?;
        }
        self.context.check_ids()?;
        if let Some(ts) = &self.context.timestamp {
            OffsetDateTime::parse(ts, &Rfc3339).map_err(|e| {
                RequestError::field("context.timestamp", format!("'{ts}' is not RFC 3339: {e}"))
            })?;
        }
        Ok(())
    }
}

impl CallContext {
    /// Every id at most [`MAX_ID_BYTES`], every path at most [`MAX_PATH_BYTES`],
    /// none with control characters.
    pub fn check_ids(&self) -> Result<(), RequestError> {
        let ids = [
            ("context.agent_id", &self.agent_id),
            ("context.thread_id", &self.thread_id),
            ("context.run_id", &self.run_id),
            ("context.user_id", &self.user_id),
            ("context.user_role", &self.user_role),
            ("context.oauth_provider", &self.oauth_provider),
            ("context.oauth_id", &self.oauth_id),
            ("context.interaction_mode", &self.interaction_mode),
            ("context.channel_name", &self.channel_name),
            ("context.run_origin", &self.run_origin),
            ("context.mcp_server", &self.mcp_server),
            ("context.mcp_client", &self.mcp_client),
            ("context.traceparent", &self.traceparent),
        ];
        for (field, value) in ids {
            if let Some(value) = value {
                check_text(field, value, MAX_ID_BYTES)?;
            }
        }
        for (field, value) in [("context.cwd", &self.cwd), ("context.home", &self.home)] {
            if let Some(value) = value {
                check_text(field, value, MAX_PATH_BYTES)?;
            }
        }
        Ok(())
    }
}

/// A tool name: 1 to [`MAX_TOOL_NAME_BYTES`] bytes, no whitespace or control
/// characters.
pub fn check_tool_name(name: &str) -> Result<(), RequestError> {
    let problem = if name.is_empty() {
        "must not be empty".to_string()
    } else if name.len() > MAX_TOOL_NAME_BYTES {
        format!(
            "is {} bytes; the limit is {MAX_TOOL_NAME_BYTES}",
            name.len()
        )
    } else if name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        "must not contain whitespace or control characters".to_string()
    } else {
        return Ok(());
    };
    Err(RequestError::ToolName(problem))
}

fn check_text(field: &str, value: &str, limit: usize) -> Result<(), RequestError> {
    let message = if value.len() > limit {
        format!("is {} bytes; the limit is {limit}", value.len())
    } else if value.chars().any(char::is_control) {
        "must not contain control characters".to_string()
    } else {
        return Ok(());
    };
    Err(RequestError::Id {
        field: field.to_string(),
        message,
    })
}

impl From<crate::strict_json::JsonProblem> for RequestError {
    fn from(problem: crate::strict_json::JsonProblem) -> Self {
        use crate::strict_json::JsonProblem;
        match problem {
            JsonProblem::Syntax {
                message,
                line,
                column,
            } => RequestError::Syntax {
                message,
                line,
                column,
            },
            JsonProblem::TooDeep { limit } => RequestError::TooDeep { limit },
            duplicate @ JsonProblem::DuplicateKey { .. } => {
                RequestError::DuplicateKey(duplicate.to_string())
            }
        }
    }
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
    fn a_value_of_the_wrong_type_is_refused_with_its_path() {
        let err = parse(r#"{"tool_name":"bash","context":{"is_subagent":"yes"}}"#).unwrap_err();
        match err {
            RequestError::Field { field, message } => {
                assert_eq!(field, "context.is_subagent");
                assert!(message.contains("expected a boolean"), "{message}");
            }
            other => panic!("not a field error: {other:?}"),
        }
    }

    #[test]
    fn tool_input_must_be_an_object() {
        let err = parse(r#"{"tool_name":"bash","tool_input":"rm -rf /"}"#).unwrap_err();
        assert_eq!(err, RequestError::ToolInput);
        assert_eq!(err.refusal_code(), Some(codes::INVALID_TOOL_INPUT));
    }

    #[test]
    fn an_empty_tool_name_is_refused_as_a_decision() {
        let err = parse(r#"{"tool_name":""}"#).unwrap_err();
        assert_eq!(err.refusal_code(), Some(codes::INVALID_TOOL_NAME));
    }

    #[test]
    fn a_tool_name_with_a_newline_or_a_space_is_refused_as_a_decision() {
        for body in [r#"{"tool_name":"ba\nsh"}"#, r#"{"tool_name":"read file"}"#] {
            assert!(
                matches!(parse(body), Err(RequestError::ToolName(_))),
                "{body}"
            );
        }
    }

    #[test]
    fn a_duplicate_argument_key_is_refused_as_ambiguous() {
        let err =
            parse(r#"{"tool_name":"bash","tool_input":{"command":"ls","command":"rm -rf ~"}}"#)
                .unwrap_err();
        assert_eq!(err.refusal_code(), Some(codes::DUPLICATE_KEY));
        assert!(err.to_string().contains("'command'"), "{err}");
        assert!(err.to_string().contains("tool_input"), "{err}");
    }

    #[test]
    fn a_thread_id_longer_than_the_limit_is_refused_as_a_decision() {
        let body = format!(
            r#"{{"tool_name":"bash","context":{{"thread_id":"{}"}}}}"#,
            "t".repeat(MAX_ID_BYTES + 1)
        );
        let err = parse(&body).unwrap_err();
        assert_eq!(err.refusal_code(), Some(codes::INVALID_ID));
        assert!(err.to_string().contains("context.thread_id"), "{err}");
    }

    #[test]
    fn what_only_the_harness_controls_stays_an_error() {
        for body in [
            r#"{"tool_name":"bash","context":{"is_subagnet":true}}"#,
            r#"{"tool_name":"bash","context":{"timestamp":"yesterday"}}"#,
            r#"{"tool_name":7}"#,
        ] {
            assert_eq!(parse(body).unwrap_err().refusal_code(), None, "{body}");
        }
    }

    #[test]
    fn nan_in_the_arguments_is_refused_as_invalid_json() {
        let err = parse(r#"{"tool_name":"bash","tool_input":{"n":NaN}}"#).unwrap_err();
        assert_eq!(err.refusal_code(), Some(codes::INVALID_JSON));
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
