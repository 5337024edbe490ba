//! Every rule of a set against one call, for a person (`warden explain`):
//! whether the rule's tool matched the call, whether its pattern did, and for
//! an allow rule whether it covered every part of the call or only some. A
//! straightforward scan, never on a call's path: the index decides calls.

use serde::Serialize;
use warden_types::cause::RuleRef;

use super::RuleSet;
use super::rule::{Rule, Specifier, every_part};
use crate::canonical::CanonicalCall;
use crate::tools::ToolKind;

/// What one rule made of a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleCheck {
    /// `deny`, `ask` or `allow`: the list the rule is in.
    pub list: &'static str,
    /// The rule, with its place.
    #[serde(flatten)]
    pub rule: RuleRef,
    /// What it made of the call.
    pub outcome: RuleMatch,
}

/// Whether a rule matched a call, and if not, why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleMatch {
    /// The rule names another tool (or kind of tool).
    ToolDidNotMatch,
    /// The tool matched; the rule's pattern (command, path, domain) matched
    /// no part of the call.
    PatternDidNotMatch,
    /// An allow rule that matched some parts of the call but not every one:
    /// alone it does not allow the call.
    MatchedSomeParts,
    /// The rule matched: a deny or ask rule hit the call, an allow rule
    /// covered every part of it.
    Matched,
}

impl RuleMatch {
    /// In words, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            RuleMatch::ToolDidNotMatch => "the tool did not match",
            RuleMatch::PatternDidNotMatch => "the pattern did not match",
            RuleMatch::MatchedSomeParts => "matched some parts of the call, not every one",
            RuleMatch::Matched => "matched",
        }
    }
}

impl RuleSet {
    /// Every rule, deny then ask then allow, each in the order written, with
    /// what it made of `call`.
    pub fn explain(&self, call: &CanonicalCall) -> Vec<RuleCheck> {
        let mut out = Vec::new();
        for (list, rules, allow) in [
            ("deny", &self.deny.rules, false),
            ("ask", &self.ask.rules, false),
            ("allow", &self.allow.rules, true),
        ] {
            for rule in rules {
                out.push(RuleCheck {
                    list,
                    rule: rule.reference(),
                    outcome: check(rule, call, allow),
                });
            }
        }
        out
    }
}

fn check(rule: &Rule, call: &CanonicalCall, allow: bool) -> RuleMatch {
    if allow {
        if rule.covers(call) {
            return RuleMatch::Matched;
        }
        if !rule.covers_tool(call) {
            return RuleMatch::ToolDidNotMatch;
        }
        let mut some = false;
        // Visits every part (each visit answers true, so none is skipped).
        every_part(call, |part| {
            some |= rule.covers_part(call, part);
            true
        });
        return if some {
            RuleMatch::MatchedSomeParts
        } else {
            RuleMatch::PatternDidNotMatch
        };
    }
    if rule.hits(call) {
        return RuleMatch::Matched;
    }
    // A path rule also reads the paths a shell command mentions.
    let path_in_shell = matches!(rule.spec, Specifier::Path(_)) && call.kind == ToolKind::Shell;
    if rule.covers_tool(call) || path_in_shell {
        RuleMatch::PatternDidNotMatch
    } else {
        RuleMatch::ToolDidNotMatch
    }
}
