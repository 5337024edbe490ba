//! One permission rule: its grammar (`Tool(specifier)`) and what it covers.
//! The rule sets above (`rules`) and their index (`rules::index`) both read it.

use crate::canonical::{CanonicalCall, normalise_spaces};
use crate::tools::ToolKind;
use warden_analysis::glob::{Glob, wildcard};
use warden_analysis::path as paths;
use warden_types::cause::{RuleRef, SourcePosition};

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
    pub(crate) text: String,
    pub(crate) tool: ToolPattern,
    pub(crate) spec: Specifier,
    /// Where the rule is written, when the configuration's loader knows.
    pub(crate) source: Option<SourcePosition>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ToolPattern {
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
pub(crate) enum Specifier {
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

pub(crate) const KINDS: &[(&str, ToolKind)] = &[
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
            source: None,
        })
    }

    /// The rule as written, trimmed, for reasons and reports.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the rule is written (file and line), when known.
    pub fn source(&self) -> Option<&SourcePosition> {
        self.source.as_ref()
    }

    /// The rule as a cause names it: its text and its place.
    pub fn reference(&self) -> RuleRef {
        RuleRef::new(&self.text, self.source.as_ref())
    }

    /// Whether `name` is one of the kind aliases (`Bash`, `Read`, `Edit`, …).
    pub fn is_kind_alias(name: &str) -> bool {
        KINDS.iter().any(|(alias, _)| *alias == name.trim())
    }

    pub(crate) fn covers_tool(&self, call: &CanonicalCall) -> bool {
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
    /// part of the call, as [`super::RuleSet`] requires of its allow rules together?
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
    pub(crate) fn covers_part(&self, call: &CanonicalCall, part: Part<'_>) -> bool {
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

/// One part of a call that an allow rule must cover.
#[derive(Clone, Copy)]
pub(crate) enum Part<'c> {
    Command(&'c str),
    Path(&'c str),
    Domain(&'c str),
}

/// Whether `covered` holds for every part of the call: its simple commands (a
/// shell call), its target paths (a file call) or its domains (a fetch). A
/// call with none, or of another kind, has nothing a specifier could cover.
pub(crate) fn every_part<'c>(
    call: &'c CanonicalCall,
    covered: impl FnMut(Part<'c>) -> bool,
) -> bool {
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
    pub(crate) fn parse(pattern: &str) -> Result<PathPattern, String> {
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
    pub(crate) fn matches(&self, call: &CanonicalCall, path: &str) -> bool {
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
pub(crate) fn under<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
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
pub(crate) fn command_matches(pattern: &str, command: &str) -> bool {
    pattern
        .strip_suffix(" *")
        .is_some_and(|bare| wildcard(bare, command))
        || wildcard(pattern, command)
}

/// A command pattern as written, normalised: runs of spaces collapse, and the
/// legacy `prefix:*` means `prefix *`.
pub(crate) fn command_pattern(text: &str) -> String {
    let pattern = normalise_spaces(text);
    match pattern.strip_suffix(":*") {
        Some(prefix) => format!("{prefix} *"),
        None => pattern,
    }
}

/// `example.com` matches itself; `*.example.com` matches its subdomains.
pub(crate) fn domain_matches(pattern: &str, domain: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(parent) => domain
            .strip_suffix(parent)
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        None => pattern == domain,
    }
}
