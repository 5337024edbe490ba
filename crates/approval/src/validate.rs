//! The checks a model response, a resume body or an id must pass before the
//! gate or a resume acts on it, and the ids the gate gives requests.

use serde_json::Value;
use sha2::{Digest, Sha256};
use warden_types::request::CallContext;

pub use warden_types::approval::{MAX_ID_BYTES, check_args, check_id, parse_body};

/// The id a human's decision names: derived from the approval and the call, so
/// that it can be recomputed from the stored message before a decision applies.
pub(crate) fn request_id(
    approval_id: &str,
    tool_call_id: &str,
    tool: &str,
    args: &Value,
) -> String {
    let mut hash = Sha256::new();
    for part in [approval_id, tool_call_id, tool, &args.to_string()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    format!("req_{}", &hex::encode(hash.finalize())[..24])
}

/// The context as it may be persisted: without the runtime-only keys, which
/// describe the current process only.
pub(crate) fn persistable(context: &CallContext) -> CallContext {
    CallContext {
        channel_name: None,
        disable_clarification: None,
        ..context.clone()
    }
}
