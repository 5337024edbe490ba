//! Which tools an agent may be offered (`POST /v1/tools/offered`): a gateway
//! that lists a server's tools to a client (`warden mcp stdio --daemon`)
//! leaves out those the native permission rules deny by name alone.

use serde::{Deserialize, Serialize};

/// The most tool names one question may carry.
pub const MAX_OFFER_TOOLS: usize = 4096;

/// `POST /v1/tools/offered`: the tools a gateway would list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OfferQuery {
    /// Tool names as Warden judges them (`mcp__<server>__<tool>`), at most
    /// 4096.
    pub tools: Vec<String>,
}

/// The answer: the tools split in the order given. Only the native rules that
/// deny a tool by its name decide (a `permissions.deny` rule on the whole
/// tool, `permissions.mode: read_only`); arguments, providers and asks are
/// not consulted, and every call is judged in full anyway.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OfferAnswer {
    /// The tools that may be listed.
    pub offered: Vec<String>,
    /// The tools the native rules deny by name: not to be listed.
    pub denied_by_name: Vec<String>,
}
