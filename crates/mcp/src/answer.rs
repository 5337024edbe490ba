//! What Warden itself says on the wire: in-band denials and JSON-RPC errors.

use serde_json::{Value, json};
use warden_types::codes;
use warden_types::decision::Reason;

/// Warden could not judge the call (the daemon unreachable, its answer
/// unreadable): the call is denied.
pub const JUDGE_UNAVAILABLE: &str = "warden.judge_unavailable";

/// An ask this proxy cannot put to anyone yet: denied (the human's channel for
/// MCP asks is not built).
pub const ASK_UNAVAILABLE: &str = codes::ASK_UNAVAILABLE;

/// The client answered Warden's elicitation, but its answer could not be
/// recorded (the daemon refused or could not be reached): the call is denied,
/// its approval left to a human.
pub const CLIENT_ANSWER_REFUSED: &str = "warden.client_answer_refused";

/// Every MCP tool is judged under `mcp__<server>__<tool>`, the name coding
/// agents give it (and the form of Warden's `mcp__server__tool` rules).
pub const TOOL_NAME_PREFIX: &str = "mcp__";

/// The key in a result's `_meta` that carries Warden's decision when
/// `structuredContent` cannot (the tool declares an `outputSchema`).
pub(crate) const META_DECISION: &str = "dev.warden/decision";

/// The `_meta` key by which a `2026-07-28` client names its revision on each request.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key by which a `2026-07-28` client declares, on each request,
/// what it can be asked.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// A `2026-07-28` retry's `requestState` that Warden sealed does not verify,
/// or is not this call's: the call is denied, the state never read.
pub const REQUEST_STATE_REFUSED: &str = "warden.request_state_refused";

/// The `_meta` key by which a `2026-07-28` client says what it is on each request.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The name Warden judges a server's tool under.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{TOOL_NAME_PREFIX}{server}__{tool}")
}

/// A denial, as the tool's own error result.
pub(crate) struct Denial<'a> {
    pub(crate) reasons: &'a [Reason],
    pub(crate) decision_id: Option<&'a str>,
    /// The pending approval the call waits on, if one was filed.
    pub(crate) approval_id: Option<&'a str>,
    /// Whether the decision may go in `structuredContent`: not for a tool with
    /// an `outputSchema`, which some clients check even an error result against.
    pub(crate) structured: bool,
    /// Whether the client speaks `2026-07-28` (which reads `resultType`).
    pub(crate) modern: bool,
}

impl Denial<'_> {
    /// The JSON-RPC response to request `id`.
    pub(crate) fn response(&self, id: &Value) -> String {
        let (code, message) = self
            .reasons
            .first()
            .map(|r| (r.code.as_str(), r.message.as_str()))
            .unwrap_or((codes::DENIED, "denied by policy"));
        let mut text = format!("Warden denied this call: {code}: {message}");
        if let Some(id) = self.decision_id {
            text.push_str(&format!(" (decision {id})"));
        }
        let mut details = json!({
            "code": code,
            "message": message,
            "reasons": self.reasons,
            "decision_id": self.decision_id,
        });
        if let Some(approval_id) = self.approval_id {
            details["approval_id"] = approval_id.into();
        }
        // A CallToolResult (both revisions): the tool's own error, which the
        // model reads; `resultType` only for a client that speaks 2026-07-28.
        let mut result = json!({
            "content": [{"type": "text", "text": text}],
            "isError": true,
        });
        let slot = result.as_object_mut().expect("an object");
        if self.modern {
            slot.insert("resultType".into(), "complete".into());
        }
        if self.structured {
            slot.insert("structuredContent".into(), details);
        } else {
            slot.insert("_meta".into(), json!({ META_DECISION: details }));
        }
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
    }
}

/// The JSON-RPC error codes Warden answers with.
#[derive(Clone, Copy)]
pub(crate) enum ErrorCode {
    /// The message is not JSON.
    Parse = -32700,
    /// The message is not a valid request.
    InvalidRequest = -32600,
    /// The request's params are not what its method takes.
    InvalidParams = -32602,
}

/// A JSON-RPC error response (`id` is `null` when the request's could not be read).
pub(crate) fn error(id: &Value, code: ErrorCode, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code as i32, "message": message}})
        .to_string()
}

/// The answer to a client message longer than the proxy reads (`limit`
/// bytes): an invalid request, since its id could not be read.
pub fn oversized(limit: usize) -> String {
    error(
        &Value::Null,
        ErrorCode::InvalidRequest,
        &format!("the message is longer than {limit} bytes"),
    )
}

/// A JSON-RPC error that a transport shell answers with itself, under the
/// code its transport names (`-32020` for a header that contradicts the body,
/// `-32603` for an upstream that could not answer).
pub fn transport_error(id: &Value, code: i32, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}
