//! What both MCP proxies (`warden mcp stdio` and `warden mcp http`) share
//! when they judge through the daemon: how often they read its policy
//! generation, and the key that seals their asks' state.

use std::time::Duration;

/// How often the proxy reads the daemon's policy generation, to tell the
/// client when the tool list may have changed.
pub(crate) const POLICY_POLL: Duration = Duration::from_secs(1);

/// A key for sealing `2026-07-28` asks' `requestState`, drawn at random:
/// secret to this process, so a state outlives neither it nor a restart.
pub(crate) fn state_key() -> anyhow::Result<[u8; 32]> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|e| anyhow::anyhow!("reading the system's randomness: {e}"))?;
    Ok(key)
}
