//! What the fuzz targets check, over Warden's own code: the wire types
//! (`warden-types`: requests, strict JSON, callers, the AI message and its
//! surfaces) and the policy core's trust and redaction (`warden-policy`) as
//! crates, and the daemon's reading of `X-Forwarded-For` from its file (the
//! daemon's crate links wasmtime, which fuzzing never builds). `checks` is
//! shared with the corpus replay test
//! (`crates/approval/tests/all/fuzz_corpus.rs`), which runs it on the real
//! crates: `wire` is what each side gives it.
#![allow(dead_code, unused_imports)]

/// The host's types, as `checks` names them.
pub mod wire {
    pub use crate::json_config::reads_alike;
    pub use crate::postgres_url::split as split_pg_url;
    pub use crate::proxies::TrustedProxies;
    pub use crate::source_map::SourceMap;
    pub use crate::traceparent::TraceParent;
    pub use warden_policy::trust::admit;
    pub use warden_types::Asserts;
    pub use warden_types::Caller;
    pub use warden_types::call_listing::list_calls;
    pub use warden_types::message::AiMessage;
    pub use warden_types::request::{CallContext, ToolCall};

    /// Configuration text as the YAML reader reads it.
    pub fn read_yaml(text: &str) -> Result<serde_json::Value, String> {
        serde_norway::from_str(text).map_err(|e| e.to_string())
    }

    /// `approval::ModelResponse` (in the host's gate module, which needs the
    /// whole host): a message and a context, nothing else.
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ModelResponse {
        message: AiMessage,
        #[serde(default)]
        #[allow(dead_code)]
        context: CallContext,
    }

    /// The message of a model response body, if it parses.
    pub fn parse_model_response(body: &[u8]) -> Option<AiMessage> {
        serde_json::from_slice::<ModelResponse>(body)
            .ok()
            .map(|r| r.message)
    }
}

#[path = "../../crates/server/src/proxies.rs"]
pub mod proxies;

/// The daemon's reading of a harness's `traceparent` (std only).
#[path = "../../crates/server/src/telemetry/traceparent.rs"]
pub mod traceparent;

/// The PostgreSQL URL reader (`crates/approval/src/postgres_url.rs`, std
/// only: the approval crate links wasmtime).
#[path = "../../crates/approval/src/postgres_url.rs"]
pub mod postgres_url;

/// Configuration text that is JSON, and the line map it feeds
/// (`crates/runtime/src/json_config.rs`, `source_map.rs`: std, saphyr and the
/// wire types only).
#[path = "../../crates/runtime/src/json_config.rs"]
pub mod json_config;
#[path = "../../crates/runtime/src/source_map.rs"]
pub mod source_map;

/// The provider manifest reader (`crates/runtime/src/manifest.rs`): the
/// runtime crate links wasmtime, its manifest module only wasmparser.
#[path = "../../crates/runtime/src/manifest.rs"]
pub mod manifest;

/// A provider bundle's statement, key and signature readers
/// (`crates/warden/src/bundle/statement.rs`).
#[path = "../../crates/warden/src/bundle/statement.rs"]
pub mod bundle_statement;

pub mod replay_reader;

/// The replay reader, as `replay` names it.
pub mod replay_wire {
    pub use crate::replay_reader::read::{Entry, read_line};
}

/// The decision log's chain and its verifier (`crates/log/src/chain.rs`,
/// `verify.rs`): the log crate links wasmtime through the runtime crate, these
/// two only hashing, JSON and Ed25519.
#[path = "../../crates/log/src/chain.rs"]
pub mod chain;
#[path = "../../crates/log/src/verify.rs"]
pub mod verify;

/// The log's types, as `trail` names them.
pub mod log_wire {
    pub use crate::chain::Chain;
    pub use crate::verify::verify;
}

pub mod checks;
pub mod forwarded;
pub mod trace_context;
pub mod mcp;
pub mod replay;
pub mod trail;
