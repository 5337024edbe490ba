//! Warden in front of an MCP server: the protocol core of `warden mcp`, with
//! no IO. A transport shell (the CLI's `warden mcp stdio`) hands every message
//! it reads to a [`Session`] and sends what the session routes.
//!
//! - Messages are read as `serde_json::Value`; what Warden does not rewrite is
//!   forwarded as the line it read, byte for byte (numbers past 64 bits, key
//!   order, fields Warden does not know). Warden reads of a `tools/call` only
//!   what it judges (the tool's name and arguments) and builds its answers
//!   itself: rmcp's model would bring serde's `rc` feature, which rebuilds
//!   every crate above serde (wasmtime included), for two small shapes.
//! - Every `tools/call` is judged by the injected [`Judge`] as
//!   `mcp__<server>__<tool>`. What is forwarded is the very line that was
//!   judged (one that names a key twice is refused); a denial is an in-band `CallToolResult` with `isError: true`, and
//!   a call Warden cannot judge is denied the same way.
//! - Requests the server sends the client get ids of Warden's own, so that the
//!   server's ids and Warden's can never collide toward the client.
//! - A `tools/list` answer loses the tools the judge would deny by name alone.
//! - An ask the client's own answer may settle is put to a client that
//!   declared form elicitation: the call is held (never past a timeout), the
//!   client's answer recorded as client-attested by the judge, and the call
//!   then forwarded or denied.

mod answer;
mod call;
mod elicit;
mod judge;
mod sealed;
mod session;

pub use answer::{
    ASK_UNAVAILABLE, CLIENT_ANSWER_REFUSED, JUDGE_UNAVAILABLE, REQUEST_STATE_REFUSED,
    TOOL_NAME_PREFIX, oversized, tool_name, transport_error,
};
pub use judge::{Judge, Judgement, MAX_CLAIM_BYTES, McpCall};
pub use session::{ELICITATION_TIMEOUT, Route, Session};
