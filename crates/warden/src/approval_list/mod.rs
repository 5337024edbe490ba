//! The approval list (`hitl_approval`): which calls need a human's approval
//! before they run, as configured ([`config`]) and compiled. One
//! function, [`ApprovalList::requires_approval`], answers it. An entry is a tool
//! name or glob (`bash`, `mcp__github__*`; a name is not a path, so `*`
//! matches any run of characters, `/` included), or a permission rule
//! (`Bash(git push *)`, `Edit(src/**)`, `WebFetch(domain:example.com)`), which
//! matches when any part of the call does: the command `git status && git push`
//! needs approval under `Bash(git push *)`.
//!
//! What the list makes of a call every stage allowed ([`Listed`]): a listed
//! tool is never simply allowed. It waits for a human where one can be asked,
//! follows `hitl_approval.non_interactive` in an unattended run, and is denied
//! for a subagent or a harness that cannot resume.

pub(crate) mod config;

use config::{Entry, HitlApproval, NonInteractive};
use warden_policy::origin::Reach;
use warden_policy::permissions::PermissionEngine;
use warden_types::Reason;
use warden_types::codes;
use warden_types::request::ToolCall;

/// `hitl_approval`, compiled once per configuration.
#[derive(Clone, Debug, Default)]
pub struct ApprovalList {
    /// Each entry as written, compiled; `None` for an entry that does not
    /// compile.
    entries: Vec<(String, Option<Entry>)>,
    /// Whether any entry is a rule (and so needs the canonical call).
    has_rules: bool,
    non_interactive: NonInteractive,
}

impl ApprovalList {
    /// Compiles the list. Loading a configuration refuses invalid entries; one
    /// that got here anyway (a `Config` built in code) matches every tool, so
    /// that a typo never lets a call run unapproved.
    pub fn new(config: &HitlApproval) -> Self {
        let entries: Vec<(String, Option<Entry>)> = config
            .tools
            .iter()
            .map(|entry| (entry.clone(), Entry::parse(entry).ok()))
            .collect();
        ApprovalList {
            has_rules: entries
                .iter()
                .any(|(_, e)| matches!(e, Some(Entry::Rule(_)))),
            entries,
            non_interactive: config.non_interactive,
        }
    }

    /// The entry that puts this call under the approval gate, if any. Names
    /// match case-insensitively: an operator who lists `Bash` means the tool
    /// `bash` too, and a missed match would let the call run unapproved. Rules
    /// see the call as the permission engine does (its tool registry, home and
    /// working directory).
    pub fn requires_approval(
        &self,
        call: &ToolCall,
        permissions: &PermissionEngine,
    ) -> Option<&str> {
        let canonical = self.has_rules.then(|| permissions.canonical(call));
        self.entries
            .iter()
            .find(|(_, entry)| match entry {
                None => true,
                Some(Entry::Name(glob)) => glob.matches(&call.tool_name),
                Some(Entry::Rule(rule)) => canonical.as_ref().is_some_and(|c| rule.hits(c)),
            })
            .map(|(entry, _)| entry.as_str())
    }

    /// What a listed tool does in a run that cannot pause.
    pub fn non_interactive(&self) -> NonInteractive {
        self.non_interactive
    }

    /// Whether no tool needs a human's approval.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What happens to an allowed call that the approval list names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// A human must approve it (`warden.approval_required`).
    Pause(Reason),
    /// Nobody can be asked and `non_interactive: allow`: it runs, with this
    /// notice (`warden.approval_waived`).
    Waived(Reason),
    /// Nobody can be asked: denied (`warden.approval_unavailable`).
    Unavailable(Reason),
}

impl ApprovalList {
    /// The list's answer for a call every stage allowed, wherever the call is
    /// judged (see [`crate::Snapshot::listed`]), or `None` when the call is
    /// not listed; `permissions` makes the canonical call that rules match.
    pub fn listed(
        &self,
        call: &ToolCall,
        permissions: &PermissionEngine,
        reach: &Reach,
    ) -> Option<Listed> {
        let entry = self.requires_approval(call, permissions)?;
        let listed_because = format!(
            "tool '{}' is listed under hitl_approval ('{entry}')",
            call.tool_name
        );
        Some(match reach {
            Reach::Pause => Listed::Pause(Reason::new(
                codes::APPROVAL_REQUIRED,
                format!("{listed_because}: a human must approve the call"),
            )),
            Reach::Unattended(why) if self.non_interactive() == NonInteractive::Allow => {
                Listed::Waived(Reason::new(
                    codes::APPROVAL_WAIVED,
                    format!("{listed_because}, but {why}; hitl_approval.non_interactive is allow"),
                ))
            }
            Reach::Unattended(why) | Reach::Never(why) => Listed::Unavailable(Reason::new(
                codes::APPROVAL_UNAVAILABLE,
                format!("{listed_because} and needs a human's approval, but {why}: denied"),
            )),
        })
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
        needs_with(list, tool, json!({}))
    }

    fn needs_with(list: &ApprovalList, tool: &str, input: serde_json::Value) -> Option<String> {
        list.requires_approval(&ToolCall::new(tool, input), &PermissionEngine::default())
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
    fn a_star_matches_any_run_of_characters_slashes_included() {
        let every = list(&["*"]);
        for name in ["foo", "foo/bar", "mcp__x__a/b", "/"] {
            assert_eq!(needs(&every, name).as_deref(), Some("*"), "{name}");
        }
        let family = list(&["mcp__x__*"]);
        assert!(needs(&family, "MCP__X__a/b").is_some());
        assert!(needs(&family, "mcp__y__a/b").is_none());
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
        assert_eq!(index, "tools[0]");
        assert!(message.contains("mcp__["), "{message}");
    }

    #[test]
    fn a_rule_matches_when_any_part_of_the_call_does() {
        let l = list(&["Bash(git push *)"]);
        assert!(
            needs_with(
                &l,
                "bash",
                json!({"command": "git status && git push origin"})
            )
            .is_some()
        );
        assert!(needs_with(&l, "bash", json!({"command": "git status"})).is_none());
        assert!(needs_with(&l, "read_file", json!({"path": "x"})).is_none());
    }

    #[test]
    fn a_kind_alias_covers_every_tool_of_the_kind() {
        let l = list(&["Edit"]);
        assert!(needs(&l, "write_file").is_some());
        assert!(needs(&l, "str_replace").is_some());
        assert!(needs(&l, "read_file").is_none());
    }

    #[test]
    fn a_misspelled_rule_is_refused_naming_it() {
        let config = HitlApproval {
            tools: vec!["read_file".into(), "Bsh(git push *)".into()],
            ..HitlApproval::default()
        };
        let (index, message) = config.check().unwrap_err();
        assert_eq!(index, "tools[1]");
        assert!(message.contains("Bsh"), "{message}");
    }
}
