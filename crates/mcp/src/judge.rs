//! What the core asks of Warden: a decision on one call, and whether a tool
//! may be offered at all.

use serde_json::Value;
use warden_types::decision::{Reason, Verdict};

/// The longest client claim carried to the log, in bytes (the daemon's
/// limit on a context id).
pub const MAX_CLAIM_BYTES: usize = 256;

/// One `tools/call`, as Warden judges it.
#[derive(Debug)]
pub struct McpCall<'a> {
    /// The name Warden judges: `mcp__<server>__<tool>`.
    pub tool_name: String,
    /// The tool's arguments (an object; `{}` when the call has none).
    pub arguments: Value,
    /// The client's `clientInfo` from its `initialize`, if it sent one: what it
    /// claims to be, for the log; never authority.
    pub client_info: Option<&'a Value>,
    /// The server's name (the middle of `mcp__<server>__<tool>`), for the log.
    pub server: &'a str,
    /// The W3C trace context from the request's `_meta.traceparent`, when it
    /// is well-formed, for the log.
    pub traceparent: Option<String>,
}

impl McpCall<'_> {
    /// What the client claims to be, as one line for the log: `name/version`
    /// from its `clientInfo` (`None` when it sent no name), without control
    /// characters and cut to [`MAX_CLAIM_BYTES`]: the daemon refuses a longer
    /// context id, and a client's name must not get its calls denied.
    pub fn client_claim(&self) -> Option<String> {
        let info = self.client_info?;
        let name = info.get("name")?.as_str()?;
        let claim = match info.get("version").and_then(Value::as_str) {
            Some(version) => format!("{name}/{version}"),
            None => name.to_string(),
        };
        let mut cut = String::new();
        for c in claim.chars().filter(|c| !c.is_control()) {
            if cut.len() + c.len_utf8() > MAX_CLAIM_BYTES {
                break;
            }
            cut.push(c);
        }
        Some(cut)
    }
}

/// Warden's decision on one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Allow forwards the call; ask and deny answer it in-band.
    pub verdict: Verdict,
    /// Why, in the pipeline's order.
    pub reasons: Vec<Reason>,
    /// The decision's id in the decision log, when it was logged.
    pub decision_id: Option<String>,
    /// The approval a denial waits on: a human's answer to it lets the
    /// client's identical retry through once (see docs/mcp.md, "Asks").
    pub approval_id: Option<String>,
    /// Whether the client's own answer may settle that approval (the
    /// operator's `mcp.client_attested` allows it for this call): then a
    /// client that can be asked mid-call is asked by elicitation.
    pub attestable: bool,
    /// The console's page for that approval, where a signed-in approver
    /// answers it: a client that can open a URL is sent there.
    pub console_url: Option<String>,
}

/// The policy behind a session. Implemented by the CLI over the library (in
/// process) or the daemon's evaluate route.
pub trait Judge {
    /// Judges one call. An error means Warden could not judge it (the daemon
    /// unreachable, a refused request): the call is denied in-band with the
    /// error's text.
    fn judge(&self, call: &McpCall<'_>) -> Result<Judgement, String>;

    /// Whether a tool may be listed: false when the native rules deny it by its
    /// name alone. Providers are not consulted; every call is judged anyway.
    fn offered(&self, tool_name: &str) -> bool;

    /// The generation of the policy judging now, where it can change while
    /// the session runs (a daemon's reload); `None` where it cannot, or
    /// cannot be read now. A move tells the client to list the tools again.
    fn generation(&self) -> Option<u64> {
        None
    }

    /// Records the client's own answer to the elicitation on the pending
    /// approval `approval_id` of `call` (client-attested): `approve` true for
    /// an accept that approves, false for a decline. The judgement is the
    /// call's: allow runs it now, once. An error means the answer was not
    /// recorded (the call is denied, the approval left to a human).
    fn attest(
        &self,
        call: &McpCall<'_>,
        approval_id: &str,
        approve: bool,
    ) -> Result<Judgement, String> {
        let _ = (call, approval_id, approve);
        Err("this proxy records no client's answer".into())
    }

    /// Writes out what the judge still holds (its decision log's last
    /// lines), before the process ends.
    fn flush(&self) {}

    /// [`Judge::offered`] for every tool of a listing at once, in order (one
    /// round trip where the judge is remote).
    fn offered_all(&self, tool_names: &[String]) -> Vec<bool> {
        tool_names.iter().map(|name| self.offered(name)).collect()
    }
}
