//! The `requestState` Warden hands a `2026-07-28` client with an
//! `InputRequiredResult`. The client sends it back, byte for byte, with its
//! answer; it is the client's to alter, so Warden seals it: HMAC-SHA256 under
//! a key only this proxy process holds, over the pending approval, the tool's
//! name, the digest of the call's arguments and an expiry. A state that does
//! not verify is refused, never read; one that verifies still names only the
//! approval, which the store answers once.
//!
//! Form: `wrs1.<payload>.<tag>`, both base64url without padding; the payload
//! is JSON `{"a": approval id, "t": tool name, "d": arguments digest, "e":
//! expiry in seconds since the epoch}` (readable: it holds no secret).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// What every state Warden seals starts with: a state without it is not
/// Warden's (an upstream server's own), and is not read here.
pub(crate) const PREFIX: &str = "wrs1.";

/// The longest state read, in bytes: Warden's are far shorter.
const MAX_STATE_BYTES: usize = 4096;

/// A key only this process holds.
pub(crate) struct Sealer {
    key: [u8; 32],
}

/// Why a state Warden sealed is not taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not in Warden's form, or its tag does not verify: altered, or sealed
    /// by another process.
    Forged,
    /// Sealed for another call (tool or arguments).
    OtherCall,
    /// Past its expiry.
    Expired,
}

impl Refused {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Refused::Forged => "the requestState does not verify (altered, or not this proxy's)",
            Refused::OtherCall => "the requestState was sealed for another call",
            Refused::Expired => "the requestState has expired",
        }
    }
}

impl Sealer {
    pub(crate) fn new(key: [u8; 32]) -> Sealer {
        Sealer { key }
    }

    fn tag(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(PREFIX.as_bytes());
        mac.update(payload.as_bytes());
        mac
    }

    /// Seals the ask on approval `approval_id` of the call of `tool` with
    /// `arguments`, valid until `expires` (seconds since the epoch).
    pub(crate) fn seal(
        &self,
        approval_id: &str,
        tool: &str,
        arguments: &Value,
        expires: u64,
    ) -> String {
        let payload = json!({"a": approval_id, "t": tool, "d": digest(arguments), "e": expires});
        let payload = URL_SAFE_NO_PAD.encode(payload.to_string());
        let tag = URL_SAFE_NO_PAD.encode(self.tag(&payload).finalize().into_bytes());
        format!("{PREFIX}{payload}.{tag}")
    }

    /// The approval a state names, once its tag verifies and it is bound to
    /// this call (`tool`, `arguments`) and not expired at `now`.
    pub(crate) fn open(
        &self,
        state: &str,
        tool: &str,
        arguments: &Value,
        now: u64,
    ) -> Result<String, Refused> {
        if state.len() > MAX_STATE_BYTES {
            return Err(Refused::Forged);
        }
        let rest = state.strip_prefix(PREFIX).ok_or(Refused::Forged)?;
        let (payload, tag) = rest.split_once('.').ok_or(Refused::Forged)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Refused::Forged)?;
        // Constant time: the tag is checked before anything is read.
        self.tag(payload)
            .verify_slice(&tag)
            .map_err(|_| Refused::Forged)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| Refused::Forged)?;
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| Refused::Forged)?;
        let field = |key: &str| payload.get(key).and_then(Value::as_str);
        let (Some(approval), Some(sealed_tool), Some(sealed_digest), Some(expires)) = (
            field("a"),
            field("t"),
            field("d"),
            payload.get("e").and_then(Value::as_u64),
        ) else {
            return Err(Refused::Forged);
        };
        if sealed_tool != tool || sealed_digest != digest(arguments) {
            return Err(Refused::OtherCall);
        }
        if now > expires {
            return Err(Refused::Expired);
        }
        Ok(approval.to_string())
    }
}

/// The digest of a call's arguments: SHA-256 of their JSON with every
/// object's keys sorted (numbers as parsed), so that a client's key order or
/// spacing does not count.
fn digest(arguments: &Value) -> String {
    hex(&Sha256::digest(sorted(arguments).to_string().as_bytes()))
}

/// The value with every object's keys in order (the messages keep the
/// client's order, which must not count here).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn sealer() -> Sealer {
        Sealer::new([7; 32])
    }

    fn args() -> Value {
        json!({"text": "ship it", "n": 1})
    }

    #[test]
    fn a_sealed_state_opens_for_its_call_and_names_its_approval() {
        let state = sealer().seal("apr_1", "mcp__py__note", &args(), NOW + 60);
        assert!(state.starts_with(PREFIX));
        // Another key order is the same call.
        let reordered: Value = serde_json::from_str(r#"{"n": 1, "text": "ship it"}"#).unwrap();
        assert_eq!(
            sealer().open(&state, "mcp__py__note", &reordered, NOW),
            Ok("apr_1".to_string())
        );
    }

    #[test]
    fn a_state_for_another_call_or_past_its_expiry_is_refused() {
        let state = sealer().seal("apr_1", "mcp__py__note", &args(), NOW + 60);
        let other = json!({"text": "rm -rf /", "n": 1});
        assert_eq!(
            sealer().open(&state, "mcp__py__note", &other, NOW),
            Err(Refused::OtherCall)
        );
        assert_eq!(
            sealer().open(&state, "mcp__py__shout", &args(), NOW),
            Err(Refused::OtherCall)
        );
        assert_eq!(
            sealer().open(&state, "mcp__py__note", &args(), NOW + 61),
            Err(Refused::Expired)
        );
    }

    #[test]
    fn an_altered_state_or_another_keys_does_not_verify() {
        let state = sealer().seal("apr_1", "mcp__py__note", &args(), NOW + 60);
        let (payload, tag) = state[PREFIX.len()..].split_once('.').unwrap();
        // The payload rewritten to name another approval, the tag kept.
        let forged_payload = URL_SAFE_NO_PAD.encode(
            json!({"a": "apr_2", "t": "mcp__py__note", "d": digest(&args()), "e": NOW + 60})
                .to_string(),
        );
        for forged in [
            format!("{PREFIX}{forged_payload}.{tag}"),
            format!("{PREFIX}{payload}.{}", URL_SAFE_NO_PAD.encode([0u8; 32])),
            format!("{PREFIX}{payload}"),
            format!("{PREFIX}{payload}.!!"),
            "wrs1.".to_string(),
            "not ours".to_string(),
            format!("{PREFIX}{}", "a".repeat(MAX_STATE_BYTES)),
        ] {
            assert_eq!(
                sealer().open(&forged, "mcp__py__note", &args(), NOW),
                Err(Refused::Forged),
                "{forged}"
            );
        }
        assert_eq!(
            Sealer::new([8; 32]).open(&state, "mcp__py__note", &args(), NOW),
            Err(Refused::Forged)
        );
    }
}
