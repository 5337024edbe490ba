//! Arguments leave the store once nobody needs them. A paused call's full
//! arguments are kept while its approval is pending (the resume and its
//! re-judging need them) and for a bounded replay window after it is resolved
//! (a harness whose answer was lost gets the same resolution again, edited
//! arguments included); then every copy of them in the stored record (the
//! message, its raw payload and content blocks, the verdicts, the resolution)
//! is replaced by its digest, the same SHA-256 the journal keeps.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use warden_types::approval::{CallOutcome, Resolution};
use warden_types::message::AiMessage;

/// How long a resolved approval keeps its arguments for a replayed resume.
pub const REPLAY_WINDOW_MS: i64 = 60 * 60 * 1000;

/// The key of the object that stands for purged arguments.
pub const PURGED_KEY: &str = "purged_sha256";

/// What stands for arguments once purged: their digest, as the journal has it.
pub fn digest_of(args: &Value) -> Value {
    if args.get(PURGED_KEY).is_some() {
        return args.clone();
    }
    json!({ PURGED_KEY: hex::encode(Sha256::digest(args.to_string().as_bytes())) })
}

/// The message without arguments: each call's replaced by its digest, the raw
/// payload and the content blocks (which repeat them) dropped.
pub fn message(message: &mut AiMessage) {
    for call in &mut message.tool_calls {
        call.args = digest_of(&call.args);
    }
    message.raw_tool_calls = None;
    message.content = None;
}

/// The verdicts without arguments.
pub fn calls(calls: &mut [CallOutcome]) {
    for call in calls {
        call.args = digest_of(&call.args);
    }
}

/// The resolution without arguments.
pub fn resolution(resolution: &mut Resolution) {
    calls(&mut resolution.calls);
    message(&mut resolution.message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purging_twice_keeps_the_first_digest() {
        let args = json!({"command": "curl -H 'Authorization: Bearer abc'"});
        let once = digest_of(&args);
        assert_eq!(digest_of(&once), once);
        assert!(!once.to_string().contains("Bearer"));
    }
}
