//! What the fuzz targets check, over the host's own sources: the wire modules
//! of `warden-host` (request, strict JSON, trust, decision, redaction, the AI
//! message and its surfaces) are compiled here from their files, as the modules
//! of the same names, so that fuzzing never builds wasmtime. `checks` is shared with the
//! corpus replay test (`host/tests/fuzz_corpus.rs`), which runs it on the real
//! crate: `wire` is what each side gives it.
#![allow(dead_code, unused_imports)]

#[path = "../../host/src/decision.rs"]
pub mod decision;
#[path = "../../host/src/redact.rs"]
pub mod redact;
#[path = "../../host/src/request.rs"]
pub mod request;
#[path = "../../host/src/strict_json.rs"]
pub mod strict_json;
#[path = "../../host/src/trust.rs"]
pub mod trust;

#[path = "../../host/src/approval"]
pub mod approval {
    pub mod message;
    pub mod surfaces;
}

/// The host's types, as `checks` names them.
pub mod wire {
    pub use crate::approval::message::AiMessage;
    pub use crate::request::{CallContext, Caller, ToolCall};
    pub use crate::trust::{Asserts, admit};

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

pub mod checks;
