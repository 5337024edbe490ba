//! Permission rules in the syntax people know from coding agents:
//! `Bash(git push *)`, `Read(~/.ssh/**)`, `Edit(src/**)`,
//! `WebFetch(domain:example.com)`, `mcp__server__tool`, or a bare tool name.
//! Rules are order-independent: any matching deny wins, then any ask, then
//! allow, and a compound shell command is allowed only when every simple
//! command in it is.

mod explain;
mod index;
mod rule;

use super::canonical::CanonicalCall;
use super::tools::ToolKind;
pub use explain::{RuleCheck, RuleMatch};
use rule::*;
pub use rule::{Action, Rule, RuleError};
use warden_types::cause::SourcePosition;

/// A set of rules by action, each list indexed (see the `index` module).
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    deny: Rules,
    ask: Rules,
    allow: Rules,
}

/// One list of rules, in the order written, and its index.
#[derive(Clone, Debug, Default)]
struct Rules {
    rules: Vec<Rule>,
    index: index::ListIndex,
}

/// Where each rule of the three lists is written, in the order written:
/// what the configuration's loader knows of `permissions.deny`, `ask` and
/// `allow`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuleSources {
    /// `permissions.deny[i]`'s place.
    pub deny: Vec<Option<SourcePosition>>,
    /// `permissions.ask[i]`'s place.
    pub ask: Vec<Option<SourcePosition>>,
    /// `permissions.allow[i]`'s place.
    pub allow: Vec<Option<SourcePosition>>,
}

/// What the rules say about a call.
#[derive(Debug)]
pub enum RuleOutcome<'r> {
    /// A deny rule matched (the first one).
    Deny(&'r Rule),
    /// No deny rule matched; an ask rule did (the first one).
    Ask(&'r Rule),
    /// Every part of the call is allowed; the rules that allowed it.
    Allow(Vec<&'r Rule>),
    /// No rule decides the call.
    NoMatch,
}

impl RuleSet {
    /// Parses the three lists; an error names the list and the index.
    pub fn parse(
        deny: &[String],
        ask: &[String],
        allow: &[String],
    ) -> Result<RuleSet, (String, RuleError)> {
        let parse_all = |list: &str, texts: &[String]| {
            let rules = texts
                .iter()
                .enumerate()
                .map(|(i, r)| Rule::parse(r).map_err(|e| (format!("{list}[{i}]"), e)))
                .collect::<Result<Vec<_>, _>>()?;
            let index = index::ListIndex::new(&rules).map_err(|message| {
                let rule = format!("{} rules", rules.len());
                (list.to_string(), RuleError { rule, message })
            })?;
            Ok(Rules { rules, index })
        };
        Ok(RuleSet {
            deny: parse_all("deny", deny)?,
            ask: parse_all("ask", ask)?,
            allow: parse_all("allow", allow)?,
        })
    }

    /// Gives the rules their places in the configuration: `sources` has,
    /// for each list, the position of each rule in the order written (a
    /// list shorter than its rules leaves the rest unplaced).
    pub fn place(&mut self, sources: &RuleSources) {
        for (rules, places) in [
            (&mut self.deny.rules, &sources.deny),
            (&mut self.ask.rules, &sources.ask),
            (&mut self.allow.rules, &sources.allow),
        ] {
            for (rule, place) in rules.iter_mut().zip(places) {
                rule.source = place.clone();
            }
        }
    }

    /// The first deny rule on the call's whole tool (no specifier): the rule
    /// that denies the tool by its name alone, whatever its arguments.
    pub fn denying_tool(&self, call: &CanonicalCall) -> Option<&Rule> {
        self.deny
            .rules
            .iter()
            .find(|r| r.spec == Specifier::Any && r.covers_tool(call))
    }

    /// What the rules say of `call`: any deny, else any ask, else allow when allow rules cover
    /// every part of it. The first deny (or ask) rule in the order written is the one reported.
    pub fn evaluate(&self, call: &CanonicalCall) -> RuleOutcome<'_> {
        if let Some(rule) = self.deny.first_hit(call) {
            return RuleOutcome::Deny(rule);
        }
        if let Some(rule) = self.ask.first_hit(call) {
            return RuleOutcome::Ask(rule);
        }
        match self.allow.allowing(call) {
            Some(rules) => RuleOutcome::Allow(rules),
            None => RuleOutcome::NoMatch,
        }
    }

    /// The straightforward evaluation, every rule in turn: what the indexed
    /// one is held to.
    #[cfg(test)]
    fn evaluate_linear(&self, call: &CanonicalCall) -> RuleOutcome<'_> {
        if let Some(rule) = self.deny.rules.iter().find(|r| r.hits(call)) {
            return RuleOutcome::Deny(rule);
        }
        if let Some(rule) = self.ask.rules.iter().find(|r| r.hits(call)) {
            return RuleOutcome::Ask(rule);
        }
        let mine: Vec<&Rule> = self
            .allow
            .rules
            .iter()
            .filter(|r| r.covers_tool(call))
            .collect();
        if let Some(whole) = mine.iter().find(|r| r.spec == Specifier::Any) {
            return RuleOutcome::Allow(vec![whole]);
        }
        let mut used: Vec<&Rule> = Vec::new();
        let covered = every_part(call, |part| {
            match mine.iter().find(|r| r.covers_part(call, part)) {
                Some(rule) => {
                    if !used.iter().any(|u| std::ptr::eq(*u, *rule)) {
                        used.push(rule);
                    }
                    true
                }
                None => false,
            }
        });
        if covered {
            RuleOutcome::Allow(used)
        } else {
            RuleOutcome::NoMatch
        }
    }
}

impl Rules {
    /// The first rule in the order written that [`Rule::hits`] the call,
    /// among those the index finds for any part of it.
    fn first_hit(&self, call: &CanonicalCall) -> Option<&Rule> {
        // Most configurations leave most lists empty: no index to walk.
        if self.rules.is_empty() {
            return None;
        }
        let index = &self.index;
        let mut candidates = index.whole(call);
        for command in &call.commands {
            candidates.extend(index.command(command));
        }
        for domain in &call.domains {
            candidates.extend(index.domain(domain));
        }
        // Path rules look at a file call's targets, and at every path a shell
        // command mentions.
        let none: &[String] = &[];
        let (targets, mentioned) = match call.kind {
            ToolKind::Read | ToolKind::Write => (&call.target_paths[..], none),
            ToolKind::Shell => (&call.target_paths[..], &call.paths[..]),
            _ => (none, none),
        };
        for path in targets.iter().chain(mentioned) {
            candidates.extend(index.path(call, path));
        }
        candidates.sort_unstable();
        candidates
            .into_iter()
            .map(|position| &self.rules[position as usize])
            .find(|rule| rule.hits(call))
    }

    /// The allow rules that together cover every part of the call, if they do:
    /// every simple command of a shell call, every target path of a file call,
    /// every domain of a fetch (each part by the first rule, in the order
    /// written, that covers it alone, as [`Rule::covers`]). A rule on the whole
    /// tool covers all of it.
    fn allowing(&self, call: &CanonicalCall) -> Option<Vec<&Rule>> {
        if self.rules.is_empty() {
            return None;
        }
        let rule = |position: u32| &self.rules[position as usize];
        if let Some(whole) = self
            .index
            .whole(call)
            .into_iter()
            .map(rule)
            .find(|r| r.covers_tool(call))
        {
            return Some(vec![whole]);
        }
        let mut used: Vec<&Rule> = Vec::new();
        let covered = every_part(call, |part| {
            let candidates = match part {
                Part::Command(command) => self.index.command(command),
                Part::Path(path) => self.index.path(call, path),
                Part::Domain(domain) => self.index.domain(domain),
            };
            let first = candidates
                .into_iter()
                .map(rule)
                .find(|r| r.covers_tool(call) && r.covers_part(call, part));
            match first {
                Some(rule) => {
                    if !used.iter().any(|u| std::ptr::eq(*u, rule)) {
                        used.push(rule);
                    }
                    true
                }
                None => false,
            }
        });
        covered.then_some(used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_analysis::glob::wildcard;

    #[test]
    fn wildcards_match_any_text() {
        assert!(wildcard("git status*", "git status -s"));
        assert!(wildcard("git * main", "git push origin main"));
        assert!(!wildcard("git status*", "git push"));
        assert!(wildcard("*", ""));
    }

    #[test]
    fn a_trailing_space_star_also_matches_the_bare_command() {
        assert!(command_matches("git push *", "git push"));
        assert!(command_matches("git push *", "git push origin main"));
        assert!(!command_matches("git push *", "git pushx"));
        assert!(command_matches(
            &command_pattern("npm run test:*"),
            "npm run test"
        ));
        assert!(command_matches(
            &command_pattern("npm run  test:*"),
            "npm run test --watch"
        ));
    }

    #[test]
    fn domains_match_exactly_or_as_subdomains() {
        assert!(domain_matches("example.com", "example.com"));
        assert!(!domain_matches("example.com", "api.example.com"));
        assert!(domain_matches("*.example.com", "api.example.com"));
        assert!(!domain_matches("*.example.com", "example.com"));
        assert!(!domain_matches("*.example.com", "badexample.com"));
    }

    #[test]
    fn rules_parse_in_the_usual_syntax() {
        for ok in [
            "Bash(git push *)",
            "Read(~/.ssh/**)",
            "Edit(src/**)",
            "WebFetch(domain:example.com)",
            "mcp__github__create_issue",
            "mcp__github",
            "read_file",
            "Bash",
        ] {
            Rule::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn a_misspelled_rule_is_refused_naming_it() {
        for bad in [
            "Bsh(ls)",
            "Bash(ls",
            "Bash()",
            "WebFetch(example.com)",
            "WebSearch(x)",
            "mcp__(x)",
        ] {
            let err = Rule::parse(bad).unwrap_err();
            assert_eq!(err.rule, bad);
        }
    }

    fn canonical(tool: &str, input: serde_json::Value) -> CanonicalCall {
        let call = warden_types::request::ToolCall::new(tool, input);
        CanonicalCall::new(
            &call,
            &super::super::tools::ToolRegistry::default(),
            None,
            None,
        )
    }

    fn shell(command: &str) -> CanonicalCall {
        canonical("bash", serde_json::json!({ "command": command }))
    }

    #[test]
    fn a_rule_covers_a_call_only_when_it_matches_every_part() {
        let rule = Rule::parse("Bash(git status*)").unwrap();
        assert!(rule.covers(&shell("git status")));
        assert!(rule.covers(&shell("git status -s && git status")));
        for more in [
            "git status && git push --force origin main",
            "git status; rm -rf ./src",
            "git status $(rm -rf ./src)",
            "git status | sh",
        ] {
            assert!(rule.hits(&shell(more)), "{more}");
            assert!(!rule.covers(&shell(more)), "{more}");
        }
        let fetch = Rule::parse("WebFetch(domain:example.com)").unwrap();
        let both = canonical(
            "web_fetch",
            serde_json::json!({"urls": ["https://example.com/a", "https://evil.test/"]}),
        );
        assert!(fetch.hits(&both) && !fetch.covers(&both));
    }

    #[test]
    fn a_rule_on_the_whole_tool_covers_every_call_of_it() {
        assert!(
            Rule::parse("Bash")
                .unwrap()
                .covers(&shell("git status; rm -rf ./src"))
        );
        assert!(!Rule::parse("Read").unwrap().covers(&shell("ls")));
    }

    #[test]
    fn a_specifier_covers_nothing_in_a_call_without_parts() {
        let rule = Rule::parse("Bash(*)").unwrap();
        assert!(!rule.covers(&canonical("bash", serde_json::json!({}))));
    }

    #[test]
    fn a_rule_error_says_which_list_and_index() {
        let (at, _) = RuleSet::parse(&[], &[], &["Bash(ls)".into(), "Baash".into()]).unwrap_err();
        assert_eq!(at, "allow[1]");
    }

    /// An outcome by what decided and which rules (by identity, not text).
    fn outcome(o: RuleOutcome<'_>) -> (&'static str, Vec<*const Rule>) {
        match o {
            RuleOutcome::Deny(r) => ("deny", vec![r as *const Rule]),
            RuleOutcome::Ask(r) => ("ask", vec![r as *const Rule]),
            RuleOutcome::Allow(rs) => ("allow", rs.into_iter().map(|r| r as *const Rule).collect()),
            RuleOutcome::NoMatch => ("none", Vec::new()),
        }
    }

    fn call_of(tool: &str, input: serde_json::Value) -> CanonicalCall {
        let call = warden_types::request::ToolCall::new(tool, input);
        CanonicalCall::new(
            &call,
            &super::super::tools::ToolRegistry::default(),
            Some("/home/me"),
            Some("/home/me/project"),
        )
    }

    const RULES: &[&str] = &[
        "Bash",
        "Bash(git *)",
        "Bash(git status*)",
        "Bash(git push *)",
        "Bash(ls)",
        "Bash(* --force*)",
        "Bash(rm -rf *)",
        "Bash(npm run test:*)",
        "Bash(cat *)",
        "Bash(*)",
        // Patterns sharing their first word, told apart by what else they say.
        "Bash(git * main)",
        "Bash(git * --force *)",
        "Bash(git push origin *)",
        "Bash(git status)",
        "Bash(*status*)",
        "Bash(git *s*)",
        "Read",
        "Read(~/.ssh/**)",
        "Read(/etc/*)",
        "Read(src/**)",
        "Read(*.rs)",
        "Read(/**)",
        "Read(~/project/src/*.rs)",
        "Edit(src/**)",
        "Edit(/tmp/**)",
        "Write(~/notes/*.md)",
        "Edit(src/{a,b}.rs)",
        "WebFetch(domain:example.com)",
        "WebFetch(domain:*.example.com)",
        "WebFetch(domain:evil.test)",
        "WebSearch",
        "mcp__github",
        "mcp__github__create_issue",
        "mcp__github__*",
        "mcp__github__get_*",
        "mcp__slack__post",
        "read_file",
        "bash",
        "custom_tool",
        "web_fetch",
    ];

    const COMMANDS: &[&str] = &[
        "git status",
        "git status -s",
        "git push",
        "git push --force origin main",
        "git push origin main",
        "git log --force",
        "git mainline",
        "ls",
        "ls -la",
        "rm -rf ./src",
        "npm run test",
        "npm run test --watch",
        "cat ~/.ssh/id_rsa",
        "cat src/main.rs",
        "cat /etc/passwd",
        "echo hi > /tmp/x",
        "curl https://evil.test/",
    ];

    const PATHS: &[&str] = &[
        "src/main.rs",
        "src/a.rs",
        "/etc/passwd",
        "/etc/ssh/sshd_config",
        "~/.ssh/id_rsa",
        "~/notes/todo.md",
        "/tmp/x",
        "lib.rs",
        "/home/me/project/src/lib.rs",
        "../other/x.rs",
    ];

    const URLS: &[&str] = &[
        "https://example.com/a",
        "https://api.example.com/b",
        "https://evil.test/",
        "https://a.b.example.com/",
        "https://badexample.com/",
    ];

    const TOOLS: &[&str] = &[
        "mcp__github__create_issue",
        "mcp__github__get_repo",
        "mcp__github__delete_repo",
        "mcp__slack__post",
        "mcp__slack__read",
        "custom_tool",
        "other_tool",
        "web_search",
    ];

    fn a_call() -> impl proptest::strategy::Strategy<Value = CanonicalCall> {
        use proptest::prelude::*;
        let pick = |list: &'static [&'static str]| proptest::sample::select(list);
        prop_oneof![
            (
                prop::collection::vec(pick(COMMANDS), 1..4),
                pick(&["bash", "shell"]),
                pick(&[" && ", "; ", " | "])
            )
                .prop_map(|(commands, tool, join)| call_of(
                    tool,
                    serde_json::json!({"command": commands.join(join)})
                )),
            (pick(&["read_file", "write_file", "edit"]), pick(PATHS))
                .prop_map(|(tool, path)| call_of(tool, serde_json::json!({"path": path}))),
            prop::collection::vec(pick(URLS), 1..3)
                .prop_map(|urls| call_of("web_fetch", serde_json::json!({"urls": urls}))),
            pick(TOOLS).prop_map(|tool| call_of(tool, serde_json::json!({}))),
        ]
    }

    proptest::proptest! {
        #[test]
        fn the_indexed_rules_decide_like_the_straightforward_scan(
            deny in proptest::collection::vec(proptest::sample::select(RULES), 0..6),
            ask in proptest::collection::vec(proptest::sample::select(RULES), 0..6),
            allow in proptest::collection::vec(proptest::sample::select(RULES), 0..12),
            calls in proptest::collection::vec(a_call(), 1..8),
        ) {
            let owned = |list: Vec<&str>| list.into_iter().map(String::from).collect::<Vec<_>>();
            let set = RuleSet::parse(&owned(deny), &owned(ask), &owned(allow)).unwrap();
            for call in &calls {
                proptest::prop_assert_eq!(
                    outcome(set.evaluate(call)),
                    outcome(set.evaluate_linear(call)),
                    "{:?}", call
                );
            }
        }
    }

    /// A policy of `n` rules of every kind: command patterns, paths under
    /// each anchor, domains and subdomains, tool names and MCP tools, spread
    /// over the three lists; none matches the calls of the table but the
    /// last rule of each list.
    pub(crate) fn large_policy(n: usize) -> (Vec<String>, Vec<String>, Vec<String>) {
        let rule = |i: usize| match i % 8 {
            0 => format!("Bash(tool{i} sub{i} *)"),
            1 => format!("Bash(run{i} * --flag{i})"),
            2 => format!("Read(/srv/data{i}/**)"),
            3 => format!("Edit(~/work{i}/*.txt)"),
            4 => format!("Read(build{i}/**)"),
            5 => format!("WebFetch(domain:host{i}.example.org)"),
            6 => format!("WebFetch(domain:*.zone{i}.example.net)"),
            _ => format!("mcp__server{i}__tool{i}"),
        };
        let (mut deny, mut ask, mut allow) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..n {
            match i % 3 {
                0 => deny.push(rule(i)),
                1 => ask.push(rule(i)),
                _ => allow.push(rule(i)),
            }
        }
        deny.push("Bash(rm -rf *)".into());
        ask.push("Read(~/.aws/**)".into());
        allow.push("Bash(git status*)".into());
        (deny, ask, allow)
    }

    #[test]
    fn ten_thousand_rules_of_every_kind_decide_like_the_straightforward_scan() {
        let (deny, ask, allow) = large_policy(10_000);
        let set = RuleSet::parse(&deny, &ask, &allow).unwrap();
        let table = [
            (
                call_of("bash", serde_json::json!({"command": "git status"})),
                "allow",
            ),
            (
                call_of("bash", serde_json::json!({"command": "rm -rf /"})),
                "deny",
            ),
            (
                call_of("bash", serde_json::json!({"command": "tool0 sub0 x"})),
                "deny",
            ),
            (
                call_of("bash", serde_json::json!({"command": "tool9992 sub9992"})),
                "allow",
            ),
            (
                call_of("mcp__server9999__tool9999", serde_json::json!({})),
                "deny",
            ),
            (
                call_of("bash", serde_json::json!({"command": "run1 a b --flag1"})),
                "ask",
            ),
            (
                call_of("bash", serde_json::json!({"command": "git status && make"})),
                "none",
            ),
            (
                call_of(
                    "read_file",
                    serde_json::json!({"path": "~/.aws/credentials"}),
                ),
                "ask",
            ),
            (
                call_of("read_file", serde_json::json!({"path": "/srv/data2/x"})),
                "allow",
            ),
            (
                call_of("bash", serde_json::json!({"command": "cat /srv/data10/x"})),
                "ask",
            ),
            (
                call_of("edit", serde_json::json!({"path": "~/work3/a.txt"})),
                "deny",
            ),
            (
                call_of("read_file", serde_json::json!({"path": "build4/out"})),
                "ask",
            ),
            (
                call_of(
                    "web_fetch",
                    serde_json::json!({"url": "https://host5.example.org/"}),
                ),
                "allow",
            ),
            (
                call_of(
                    "web_fetch",
                    serde_json::json!({"url": "https://a.zone6.example.net/"}),
                ),
                "deny",
            ),
            (call_of("mcp__server7__tool7", serde_json::json!({})), "ask"),
            (
                call_of("mcp__server7__tool8", serde_json::json!({})),
                "none",
            ),
            (call_of("other_tool", serde_json::json!({})), "none"),
        ];
        for (call, expected) in &table {
            let indexed = outcome(set.evaluate(call));
            assert_eq!(indexed, outcome(set.evaluate_linear(call)), "{call:?}");
            assert_eq!(indexed.0, *expected, "{call:?}");
        }
    }
}
