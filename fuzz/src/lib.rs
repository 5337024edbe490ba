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
    pub use warden_types::call_listing::list_calls;
    pub use warden_types::message::AiMessage;
    pub use warden_policy::trust::admit;
    pub use warden_types::request::{CallContext, ToolCall};
pub use warden_types::Caller;
    pub use warden_types::Asserts;
    pub use crate::proxies::TrustedProxies;

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

pub mod checks;
pub mod forwarded;
