//! The operator's `hitl_approval:` block: which tools need a human's approval,
//! and what an unattended run does with them.

use serde::{Deserialize, Serialize};

use warden_analysis::glob::Glob;

use super::sqlite::Durability;
use crate::policy::rules::Rule;

/// `hitl_approval:` in the configuration file. An opt-in gate on selected
/// tools, not a way for an unattended run to wait for a human.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HitlApproval {
    /// Tool names (case-insensitive), globs (`*`, `?`) or permission rules
    /// whose calls need a human's approval: `bash`, `mcp__github__*`,
    /// `Bash(git push *)`, `Edit(src/**)`.
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
            Entry::parse(entry).map_err(|message| (i, message))?;
        }
        Ok(())
    }
}

/// One entry of `hitl_approval.tools`, compiled.
#[derive(Clone, Debug)]
pub enum Entry {
    /// A tool name or a glob over tool names, case-insensitive.
    Name(Glob),
    /// A permission rule: `Bash(git push *)`, `Edit`, `WebFetch(domain:x)`.
    Rule(Rule),
}

impl Entry {
    /// A rule when it has a specifier or names a kind of tool (`Bash`, `Edit`);
    /// otherwise a name or glob.
    pub fn parse(entry: &str) -> Result<Entry, String> {
        if entry.trim().is_empty() {
            return Err("must name a tool".into());
        }
        if entry.contains('(') || entry.contains(')') || Rule::is_kind_alias(entry) {
            return Rule::parse(entry)
                .map(Entry::Rule)
                .map_err(|e| e.to_string());
        }
        if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "'{entry}' is not a tool name, glob or rule (it contains whitespace or control characters)"
            ));
        }
        Glob::case_insensitive(entry)
            .map(Entry::Name)
            .map_err(|e| e.to_string())
    }
}
