//! The operator's `hitl_approval:` block: which tools need a human's approval,
//! and what an unattended run does with them.

use serde::{Deserialize, Serialize};

use super::sqlite::Durability;

/// `hitl_approval:` in the configuration file. An opt-in gate on selected
/// tools, not a way for an unattended run to wait for a human.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HitlApproval {
    /// Tool names (case-insensitive) or globs (`*`, `?`) whose calls need a
    /// human's approval: `bash`, `mcp__github__*`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// What a listed tool does in a run that cannot pause for a human
    /// (scheduled, webhook, autonomous, IM, extension, MCP notification).
    /// Subagents and harnesses that cannot resume always deny, whatever this says.
    #[serde(default)]
    pub non_interactive: NonInteractive,
    /// How hard the approval store waits for the disk: `normal` (the default:
    /// a pause survives a crash or kill of the process) or `full` (a power cut
    /// too, at one fsync per write). Read when the store opens.
    #[serde(default)]
    pub durability: Durability,
}

/// `hitl_approval.non_interactive`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NonInteractive {
    /// The call is denied (the default).
    #[default]
    Deny,
    /// The call runs without approval.
    Allow,
}

impl HitlApproval {
    /// Checks every entry of `tools`; on error, the index of the bad entry and why.
    pub fn check(&self) -> Result<(), (usize, String)> {
        for (i, entry) in self.tools.iter().enumerate() {
            check_entry(entry).map_err(|message| (i, message))?;
        }
        Ok(())
    }
}

/// A tool name or a glob over tool names. Rules with arguments
/// (`Bash(git push *)`) are refused rather than taken literally: a rule read as
/// a name would never match, and the tool would silently run unapproved.
fn check_entry(entry: &str) -> Result<(), String> {
    if entry.trim().is_empty() {
        return Err("must name a tool".into());
    }
    if entry.contains('(') || entry.contains(')') {
        return Err(format!(
            "'{entry}': rules with arguments are not supported here yet; list tool names or globs such as 'bash' or 'mcp__github__*'"
        ));
    }
    if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{entry}' is not a tool name or glob (it contains whitespace or control characters)"
        ));
    }
    warden_analysis::glob::Glob::case_insensitive(entry)
        .map(drop)
        .map_err(|e| e.to_string())
}
