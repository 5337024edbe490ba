//! Permission rules in the syntax people know from coding agents:
//! `Bash(git push *)`, `Read(~/.ssh/**)`, `Edit(src/**)`,
//! `WebFetch(domain:example.com)`, `mcp__server__tool`, or a bare tool name.
//! Rules are order-independent: any matching deny wins, then any ask, then
//! allow, and a compound shell command is allowed only when every simple
//! command in it is.

use super::canonical::{CanonicalCall, normalise_spaces};
use super::tools::ToolKind;
use warden_analysis::glob::{Glob, wildcard};
use warden_analysis::path as paths;

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The call runs without asking, if every part of it is allowed.
    Allow,
    /// A human must approve the call.
    Ask,
    /// The call is denied.
    Deny,
}

/// One parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    text: String,
    tool: ToolPattern,
    spec: Specifier,
}

#[derive(Clone, Debug, PartialEq)]
enum ToolPattern {
    /// `Bash`, `Read`, `Edit`/`Write`, `WebFetch`, `WebSearch`: every tool of the kind.
    Kind(ToolKind),
    /// A tool by its exact name (lower case, as harnesses name them).
    Name(String),
    /// `mcp__server`, `mcp__server__tool`, `mcp__server__*`.
    Mcp {
        server: String,
        tool: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum Specifier {
    Any,
    /// A command pattern: `*` stands for any text; a trailing ` *` or `:*`
    /// also matches the bare command.
    Command(String),
    /// A path glob: `~/…`, absolute, or relative to the call's working directory.
    Path(PathPattern),
    /// `domain:example.com` or `domain:*.example.com`.
    Domain(String),
}

/// Why a rule could not be parsed; the caller adds where it is.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("'{rule}': {message}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub message: String,
}

const KINDS: &[(&str, ToolKind)] = &[
    ("Bash", ToolKind::Shell),
    ("Read", ToolKind::Read),
    ("Edit", ToolKind::Write),
    ("Write", ToolKind::Write),
    ("WebFetch", ToolKind::Fetch),
    ("WebSearch", ToolKind::Search),
];

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`: a command pattern for a shell, a path glob for a file
    /// tool, `domain:` for a fetch.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let err = |message: String| RuleError {
            rule: text.to_string(),
            message,
        };
        let trimmed = text.trim();
        let (name, spec) = match trimmed.find('(') {
            Some(open) => {
                if !trimmed.ends_with(')') {
                    return Err(err("a specifier must end with ')'".into()));
                }
                let inner = &trimmed[open + 1..trimmed.len() - 1];
                if inner.trim().is_empty() {
                    return Err(err("the specifier in parentheses is empty".into()));
                }
                (&trimmed[..open], Some(inner))
            }
            None => (trimmed, None),
        };
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == ')') {
            return Err(err(
                "expected a tool name, e.g. Bash(git status) or read_file".into(),
            ));
        }
        let tool = if let Some(rest) = name.strip_prefix("mcp__") {
            let mut parts = rest.splitn(2, "__");
            let server = parts.next().unwrap_or_default().to_string();
            if server.is_empty() {
                return Err(err(
                    "an MCP rule names a server: mcp__<server>[__<tool>]".into()
                ));
            }
            let tool = parts.next().filter(|t| !t.is_empty()).map(str::to_string);
            ToolPattern::Mcp { server, tool }
        } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            let kind = KINDS
                .iter()
                .find(|(alias, _)| *alias == name)
                .map(|(_, kind)| *kind)
                .ok_or_else(|| {
                    err(format!(
                        "unknown tool '{name}' (known: {}, a tool's own name, or mcp__<server>__<tool>)",
                        KINDS.iter().map(|(a, _)| *a).collect::<Vec<_>>().join(", ")
                    ))
                })?;
            ToolPattern::Kind(kind)
        } else {
            ToolPattern::Name(name.to_string())
        };
        let spec = match (spec, &tool) {
            (None, _) => Specifier::Any,
            (Some(_), ToolPattern::Mcp { .. }) => {
                return Err(err(
                    "MCP rules take no specifier; name the tool: mcp__server__tool".into(),
                ));
            }
            (Some(s), ToolPattern::Kind(ToolKind::Shell)) => Specifier::Command(command_pattern(s)),
            (Some(s), ToolPattern::Kind(ToolKind::Read | ToolKind::Write)) => {
                let pattern = s.trim();
                Glob::new(pattern).map_err(|e| err(e.to_string()))?;
                Specifier::Path(PathPattern::parse(pattern).map_err(err)?)
            }
            (Some(s), ToolPattern::Kind(ToolKind::Fetch)) => match s.trim().strip_prefix("domain:")
            {
                Some(d) if !d.trim().is_empty() => Specifier::Domain(d.trim().to_ascii_lowercase()),
                _ => {
                    return Err(err(
                        "WebFetch takes domain:<host>, e.g. WebFetch(domain:example.com)".into(),
                    ));
                }
            },
            (Some(_), _) => {
                return Err(err(format!("'{name}' takes no specifier")));
            }
        };
        Ok(Rule {
            text: trimmed.to_string(),
            tool,
            spec,
        })
    }

    /// The rule as written, trimmed, for reasons and reports.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `name` is one of the kind aliases (`Bash`, `Read`, `Edit`, …).
    pub fn is_kind_alias(name: &str) -> bool {
        KINDS.iter().any(|(alias, _)| *alias == name.trim())
    }

    fn covers_tool(&self, call: &CanonicalCall) -> bool {
        match &self.tool {
            ToolPattern::Kind(kind) => call.kind == *kind,
            ToolPattern::Name(name) => call.tool == *name,
            ToolPattern::Mcp { server, tool } => match &call.mcp {
                Some((s, t)) => s == server && tool.as_ref().is_none_or(|p| wildcard(p, t)),
                None => false,
            },
        }
    }

    /// For allow rules and standing grants: does this rule alone cover every
    /// part of the call, as [`RuleSet`] requires of its allow rules together?
    /// Every simple command of a shell call (`Bash(git status*)` does not
    /// cover `git status; rm -rf ./src`), every target path of a file call,
    /// every domain of a fetch; a call with no such part is covered only by a
    /// rule on the whole tool (`Bash`, `read_file`). What the analysis could
    /// not see through (`CanonicalCall::opaque`) is not a part: the caller
    /// decides what that means (the permission engine asks).
    pub fn covers(&self, call: &CanonicalCall) -> bool {
        self.covers_tool(call)
            && (self.spec == Specifier::Any
                || every_part(call, |part| self.covers_part(call, part)))
    }

    /// Whether this rule's specifier matches one part of the call.
    fn covers_part(&self, call: &CanonicalCall, part: Part<'_>) -> bool {
        match (&self.spec, part) {
            (Specifier::Command(pattern), Part::Command(command)) => {
                command_matches(pattern, command)
            }
            (Specifier::Path(pattern), Part::Path(path)) => pattern.matches(call, path),
            (Specifier::Domain(pattern), Part::Domain(domain)) => domain_matches(pattern, domain),
            _ => false,
        }
    }

    /// For deny and ask rules (and the approval list): does anything in the
    /// call match? Path rules also look at the paths a shell command mentions
    /// (`cat ~/.ssh/id_rsa` is a read).
    pub fn hits(&self, call: &CanonicalCall) -> bool {
        match &self.spec {
            Specifier::Any => self.covers_tool(call),
            Specifier::Command(pattern) => {
                self.covers_tool(call) && call.commands.iter().any(|c| command_matches(pattern, c))
            }
            Specifier::Path(pattern) => {
                let paths = if self.covers_tool(call) {
                    &call.target_paths
                } else if call.kind == ToolKind::Shell {
                    &call.paths
                } else {
                    return false;
                };
                paths.iter().any(|p| pattern.matches(call, p))
            }
            Specifier::Domain(domain) => {
                self.covers_tool(call) && call.domains.iter().any(|d| domain_matches(domain, d))
            }
        }
    }
}

/// A set of rules by action.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    deny: Vec<Rule>,
    ask: Vec<Rule>,
    allow: Vec<Rule>,
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
        let parse_all = |list: &str, rules: &[String]| {
            rules
                .iter()
                .enumerate()
                .map(|(i, r)| Rule::parse(r).map_err(|e| (format!("{list}[{i}]"), e)))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(RuleSet {
            deny: parse_all("deny", deny)?,
            ask: parse_all("ask", ask)?,
            allow: parse_all("allow", allow)?,
        })
    }

    /// What the rules say of `call`: any deny, else any ask, else allow when allow rules cover
    /// every part of it.
    pub fn evaluate(&self, call: &CanonicalCall) -> RuleOutcome<'_> {
        if let Some(rule) = self.deny.iter().find(|r| r.hits(call)) {
            return RuleOutcome::Deny(rule);
        }
        if let Some(rule) = self.ask.iter().find(|r| r.hits(call)) {
            return RuleOutcome::Ask(rule);
        }
        match self.allowing(call) {
            Some(rules) => RuleOutcome::Allow(rules),
            None => RuleOutcome::NoMatch,
        }
    }

    /// The allow rules that together cover every part of the call, if they do:
    /// every simple command of a shell call, every target path of a file call,
    /// every domain of a fetch (each part by one rule, as [`Rule::covers`]).
    fn allowing(&self, call: &CanonicalCall) -> Option<Vec<&Rule>> {
        let mine: Vec<&Rule> = self.allow.iter().filter(|r| r.covers_tool(call)).collect();
        if let Some(whole) = mine.iter().find(|r| r.spec == Specifier::Any) {
            return Some(vec![whole]);
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
        covered.then_some(used)
    }
}

/// One part of a call that an allow rule must cover.
#[derive(Clone, Copy)]
enum Part<'c> {
    Command(&'c str),
    Path(&'c str),
    Domain(&'c str),
}

/// Whether `covered` holds for every part of the call: its simple commands (a
/// shell call), its target paths (a file call) or its domains (a fetch). A
/// call with none, or of another kind, has nothing a specifier could cover.
fn every_part<'c>(call: &'c CanonicalCall, covered: impl FnMut(Part<'c>) -> bool) -> bool {
    let (parts, part): (&[String], fn(&'c str) -> Part<'c>) = match call.kind {
        ToolKind::Shell => (&call.commands, Part::Command),
        ToolKind::Read | ToolKind::Write => (&call.target_paths, Part::Path),
        ToolKind::Fetch => (&call.domains, Part::Domain),
        _ => return false,
    };
    !parts.is_empty() && parts.iter().map(|p| part(p)).all(covered)
}

/// A path rule's pattern, anchored when the rule is parsed: absolute, under
/// the call's home (`~/…`), or under its working directory (relative), in
/// comparison form and with `.` and `..` collapsed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PathPattern {
    Root(Glob),
    Home(Glob),
    Cwd(Glob),
}

impl PathPattern {
    fn parse(pattern: &str) -> Result<PathPattern, String> {
        let (anchor, rest): (fn(Glob) -> PathPattern, &str) =
            if let Some(rest) = pattern.strip_prefix("~/") {
                (PathPattern::Home, rest)
            } else if pattern.starts_with('/') {
                (PathPattern::Root, pattern)
            } else if pattern.starts_with('~') {
                return Err("write the home directory as ~/… (e.g. ~/.config/**)".into());
            } else {
                (PathPattern::Cwd, pattern)
            };
        let collapsed = paths::canonicalize(rest, None, None);
        if collapsed == "." || collapsed.starts_with("..") {
            return Err(
                "a relative pattern must stay inside the working directory (e.g. src/**); anchor it at / or ~/ otherwise"
                    .into(),
            );
        }
        let glob = Glob::new(&paths::comparison_form(&collapsed)).map_err(|e| e.to_string())?;
        Ok(anchor(glob))
    }

    /// Whether a canonical path (comparison form) of `call` matches.
    fn matches(&self, call: &CanonicalCall, path: &str) -> bool {
        match self {
            PathPattern::Root(glob) => glob.matches(path),
            PathPattern::Home(glob) => {
                under(path, call.home_key()).is_some_and(|rest| glob.matches(rest))
            }
            PathPattern::Cwd(glob) => {
                under(path, call.cwd_key()).is_some_and(|rest| glob.matches(rest))
            }
        }
    }
}

/// What follows `dir` in `path`, when `path` is `dir` or inside it.
fn under<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    if dir == "/" {
        return path.strip_prefix('/');
    }
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// A command pattern against a normalised command. `*` stands for any text; a
/// pattern ending in ` *` also matches the command without arguments.
fn command_matches(pattern: &str, command: &str) -> bool {
    pattern
        .strip_suffix(" *")
        .is_some_and(|bare| wildcard(bare, command))
        || wildcard(pattern, command)
}

/// A command pattern as written, normalised: runs of spaces collapse, and the
/// legacy `prefix:*` means `prefix *`.
fn command_pattern(text: &str) -> String {
    let pattern = normalise_spaces(text);
    match pattern.strip_suffix(":*") {
        Some(prefix) => format!("{prefix} *"),
        None => pattern,
    }
}

/// `example.com` matches itself; `*.example.com` matches its subdomains.
fn domain_matches(pattern: &str, domain: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(parent) => domain
            .strip_suffix(parent)
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        None => pattern == domain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
