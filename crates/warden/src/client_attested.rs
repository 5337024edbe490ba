//! `mcp.client_attested`: whether an MCP client's own answer to Warden's
//! elicitation (its "accept") may approve a call that asks. The client's word
//! is not a human's: some clients let a hook or an auto-accept answer. The
//! operator chooses per tool:
//!
//! ```yaml
//! mcp:
//!   client_attested: allow            # every tool; or `deny`; or per tool:
//!   client_attested: {"mcp__notes__*": allow, "mcp__fs__write_file": deny}
//! ```
//!
//! A tool several entries match is allowed only if all of them allow (a deny
//! wins). A tool no entry matches: `deny` when `hitl_approval.tools` names the
//! call (the operator listed it for a human), `allow` otherwise (an ask of a
//! `permissions.ask` rule or a provider).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use warden_analysis::glob::Glob;

/// The `mcp:` section: how `warden mcp` may ask a client.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Whether a client-attested answer may approve (module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_attested: Option<ClientAttested>,
}

/// One answer of `mcp.client_attested`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Attested {
    /// A client's accept approves the call.
    Allow,
    /// A client's accept does not: a human answers in the console or the API.
    Deny,
}

/// `mcp.client_attested` as written: one answer for every tool, or one per
/// tool name or glob.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "`allow`, `deny`, or a mapping of tool names or globs to `allow` or `deny`"
)]
pub enum ClientAttested {
    /// The same for every tool.
    Every(Attested),
    /// By tool name or glob (`mcp__notes__*`), case-insensitive.
    PerTool(BTreeMap<String, Attested>),
}

impl McpConfig {
    /// Refuses a pattern that does not compile: `(key, message)`.
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        if let Some(ClientAttested::PerTool(tools)) = &self.client_attested {
            for pattern in tools.keys() {
                Glob::name(pattern)
                    .map_err(|err| (format!("client_attested.{pattern}"), err.to_string()))?;
            }
        }
        Ok(())
    }
}

/// `mcp.client_attested`, compiled.
#[derive(Clone, Debug, Default)]
pub struct ClientAttestedList {
    every: Option<Attested>,
    /// Each entry compiled; an entry that does not compile (a `Config` built in
    /// code, unchecked) denies every tool: a typo never lets a client approve.
    tools: Vec<(Option<Glob>, Attested)>,
}

impl ClientAttestedList {
    /// Compiles the section.
    pub fn new(config: &McpConfig) -> ClientAttestedList {
        match &config.client_attested {
            None => ClientAttestedList::default(),
            Some(ClientAttested::Every(answer)) => ClientAttestedList {
                every: Some(*answer),
                tools: Vec::new(),
            },
            Some(ClientAttested::PerTool(tools)) => ClientAttestedList {
                every: None,
                tools: tools
                    .iter()
                    .map(|(pattern, answer)| match Glob::name(pattern) {
                        Ok(glob) => (Some(glob), *answer),
                        Err(_) => (None, Attested::Deny),
                    })
                    .collect(),
            },
        }
    }

    /// Whether a client's accept may approve a call of `tool_name`; `listed`:
    /// whether `hitl_approval.tools` names the call.
    pub fn allows(&self, tool_name: &str, listed: bool) -> bool {
        if let Some(every) = self.every {
            return every == Attested::Allow;
        }
        let mut matched = self
            .tools
            .iter()
            .filter(|(glob, _)| glob.as_ref().is_none_or(|g| g.matches(tool_name)))
            .map(|(_, answer)| *answer)
            .peekable();
        if matched.peek().is_none() {
            return !listed;
        }
        matched.all(|answer| answer == Attested::Allow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(yaml: &str) -> ClientAttestedList {
        let config: McpConfig = serde_norway::from_str(yaml).unwrap();
        config.check().unwrap();
        ClientAttestedList::new(&config)
    }

    #[test]
    fn unset_it_denies_tools_the_approval_list_names_and_allows_other_asks() {
        let unset = list("{}");
        assert!(!unset.allows("mcp__py__note", true));
        assert!(unset.allows("mcp__py__note", false));
    }

    #[test]
    fn one_answer_holds_for_every_tool_listed_or_not() {
        assert!(list("client_attested: allow").allows("mcp__py__note", true));
        assert!(!list("client_attested: deny").allows("mcp__py__note", false));
    }

    #[test]
    fn per_tool_a_matching_entry_decides_and_a_deny_among_several_wins() {
        let tools = list(
            "client_attested: {\"mcp__py__*\": allow, \"mcp__py__note\": deny, \"mcp__fs__read*\": allow}",
        );
        assert!(tools.allows("mcp__py__add", true));
        assert!(!tools.allows("mcp__py__note", false));
        assert!(
            tools.allows("MCP__FS__READ_FILE", true),
            "names ignore case"
        );
        // No entry matches: the default rule.
        assert!(!tools.allows("mcp__gh__push", true));
        assert!(tools.allows("mcp__gh__push", false));
    }

    #[test]
    fn a_word_other_than_allow_or_deny_is_refused_saying_what_is_expected() {
        let err = serde_norway::from_str::<McpConfig>("client_attested: yes-please")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`allow`, `deny`, or a mapping"), "{err}");
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_refused_by_its_key() {
        let config: McpConfig = serde_norway::from_str("client_attested: {\"!x\": allow}").unwrap();
        let (key, message) = config.check().unwrap_err();
        assert_eq!(key, "client_attested.!x");
        assert!(message.contains("negation"), "{message}");
    }
}
