//! The approval list: which calls need a human's approval before they run. One
//! function, [`ApprovalList::requires_approval`], answers it, so that a richer
//! rule matcher (`Bash(git push *)`) can replace name matching in one place.

use warden_analysis::glob::Glob;

use super::config::{HitlApproval, NonInteractive};
use crate::request::ToolCall;

/// `hitl_approval`, compiled once per configuration.
#[derive(Clone, Debug, Default)]
pub struct ApprovalList {
    /// Each entry, and its glob; `None` for an entry that is not a valid glob.
    entries: Vec<(String, Option<Glob>)>,
    non_interactive: NonInteractive,
}

impl ApprovalList {
    /// Compiles the list. Loading a configuration refuses invalid entries; one
    /// that got here anyway (a `Config` built in code) matches every tool, so
    /// that a typo never lets a call run unapproved.
    pub fn new(config: &HitlApproval) -> Self {
        ApprovalList {
            entries: config
                .tools
                .iter()
                .map(|entry| (entry.clone(), Glob::case_insensitive(entry).ok()))
                .collect(),
            non_interactive: config.non_interactive,
        }
    }

    /// The entry that puts this call under the approval gate, if any. Names
    /// match case-insensitively: an operator who lists `Bash` means the tool
    /// `bash` too, and a missed match would let the call run unapproved.
    pub fn requires_approval(&self, call: &ToolCall) -> Option<&str> {
        self.entries
            .iter()
            .find(|(_, glob)| glob.as_ref().is_none_or(|g| g.matches(&call.tool_name)))
            .map(|(entry, _)| entry.as_str())
    }

    /// What a listed tool does in a run that cannot pause.
    pub fn non_interactive(&self) -> NonInteractive {
        self.non_interactive
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(tools: &[&str]) -> ApprovalList {
        ApprovalList::new(&HitlApproval {
            tools: tools.iter().map(|t| t.to_string()).collect(),
            ..HitlApproval::default()
        })
    }

    fn needs(list: &ApprovalList, tool: &str) -> Option<String> {
        list.requires_approval(&ToolCall::new(tool, json!({})))
            .map(str::to_string)
    }

    #[test]
    fn an_exact_name_matches_only_that_tool() {
        let l = list(&["bash"]);
        assert_eq!(needs(&l, "bash").as_deref(), Some("bash"));
        assert_eq!(needs(&l, "bash_unsafe"), None);
    }

    #[test]
    fn names_match_case_insensitively() {
        assert!(needs(&list(&["Bash"]), "bash").is_some());
    }

    #[test]
    fn a_glob_matches_a_family_of_tools() {
        let l = list(&["mcp__github__*", "write_?ile"]);
        assert_eq!(
            needs(&l, "mcp__github__create_issue").as_deref(),
            Some("mcp__github__*")
        );
        assert!(needs(&l, "write_file").is_some());
        assert!(needs(&l, "mcp__slack__post").is_none());
    }

    #[test]
    fn an_empty_list_needs_no_approval() {
        assert!(needs(&list(&[]), "bash").is_none());
    }

    #[test]
    fn an_invalid_entry_that_bypassed_validation_matches_every_tool() {
        assert!(needs(&list(&["bash["]), "read_file").is_some());
    }

    #[test]
    fn an_invalid_glob_is_refused_naming_it() {
        let config = HitlApproval {
            tools: vec!["mcp__[".into()],
            ..HitlApproval::default()
        };
        let (index, message) = config.check().unwrap_err();
        assert_eq!(index, 0);
        assert!(message.contains("mcp__["), "{message}");
    }

    #[test]
    fn a_rule_with_arguments_is_refused_not_taken_literally() {
        let config = HitlApproval {
            tools: vec!["read_file".into(), "Bash(git push *)".into()],
            ..HitlApproval::default()
        };
        let (index, message) = config.check().unwrap_err();
        assert_eq!(index, 1);
        assert!(message.contains("not supported"), "{message}");
    }
}
