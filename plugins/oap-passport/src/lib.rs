//! The Open Agent Passport provider: judges tool calls against an OAP
//! (`oap/1.0`) passport given in the provider's configuration. Evaluation
//! follows the standard's order (the first failure decides): the call's shape,
//! the passport's status, version and expiry, the tool's capability, then that
//! capability's limits. Every decision carries the capability's policy id and
//! the passport's id, owner, assurance level and digest.
//!
//! Config: `passport` (the passport, inline or injected by the host from a
//! file), `tool_mapping` (rules that map tool names to capabilities, tried
//! before the shipped ones) and `replace_default_mapping`.

mod blocked;
mod command;
mod config;
mod domains;
mod evaluate;
mod files;
mod mapping;
mod passport;
mod quantities;
mod tools;
mod web;

use std::cell::RefCell;

wit_bindgen::generate!({ path: "../../wit", world: "guardrail-provider" });

use exports::warden::guardrail::provider::Guest;
use warden::guardrail::types::{Decision, ProviderInfo, Reason, ToolCall, Verdict};

use config::Configured;

// Every call parses a command line into many small allocations; talc serves
// them faster than the C library's allocator. An instance is single-threaded
// WebAssembly, which is what `new_global` requires.
// Natively (the unit tests) the system allocator serves.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

thread_local! {
    /// The configured passport; `None` until `configure` succeeds.
    static STATE: RefCell<Option<Configured>> = const { RefCell::new(None) };
}

/// The outcome of one check: `Err` is the first failure, which decides.
pub(crate) type Check = Result<(), Denial>;

/// A failed check: its verdict (deny, or ask where the passport says a human
/// must approve), code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denial {
    pub verdict: Outcome,
    pub code: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ask,
    Deny,
}

pub(crate) fn deny(code: &'static str, message: impl Into<String>) -> Denial {
    Denial {
        verdict: Outcome::Deny,
        code,
        message: message.into(),
    }
}

struct OapPassport;

impl Guest for OapPassport {
    fn info() -> ProviderInfo {
        ProviderInfo {
            name: "oap-passport".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn configure(config: String) -> Result<(), String> {
        let configured = Configured::parse(&config)?;
        STATE.with(|s| *s.borrow_mut() = Some(configured));
        Ok(())
    }

    fn evaluate(call: ToolCall) -> Decision {
        STATE.with(|s| match &*s.borrow() {
            Some(configured) => {
                let (result, policy_id) = evaluate::evaluate(configured, &call);
                let (verdict, code, message) = match result {
                    Ok(()) => (Verdict::Allow, "oap.allowed", String::new()),
                    Err(d) => (
                        match d.verdict {
                            Outcome::Ask => Verdict::Ask,
                            Outcome::Deny => Verdict::Deny,
                        },
                        d.code,
                        d.message,
                    ),
                };
                Decision {
                    verdict,
                    reasons: vec![Reason {
                        code: code.into(),
                        message,
                    }],
                    policy_id: Some(policy_id),
                    metadata: configured.metadata.clone(),
                }
            }
            // The host never calls evaluate on an instance whose configure
            // failed; if it did, nothing is known, so deny.
            None => Decision {
                verdict: Verdict::Deny,
                reasons: vec![Reason {
                    code: "oap.passport_not_found".into(),
                    message: "the provider has no passport".into(),
                }],
                policy_id: None,
                metadata: "{}".into(),
            },
        })
    }
}

export!(OapPassport);

/// The provider's manifest, the `warden:manifest` custom section the host
/// reads at load (the SDK's `export!` writes it for SDK providers): its name,
/// version, contract and the JSON Schema of its config.
#[cfg(target_arch = "wasm32")]
const MANIFEST_JSON: &str = concat!(
    "{\"name\":\"oap-passport\",\"version\":\"",
    env!("CARGO_PKG_VERSION"),
    "\",\"contract\":\"warden:guardrail@0.1.0\",\"config_schema\":",
    include_str!("../config.schema.json"),
    "}"
);

#[cfg(target_arch = "wasm32")]
#[unsafe(link_section = "warden:manifest")]
#[used]
static MANIFEST: [u8; MANIFEST_JSON.len()] = {
    let bytes = MANIFEST_JSON.as_bytes();
    let mut out = [0u8; MANIFEST_JSON.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
};
