//! A tool call in canonical form, for the permission engine and risk triage:
//! the tool's kind; for a shell call, every simple command after parsing
//! (wrappers stripped, quotes removed, spaces normalised) and what the parser
//! could not see through; every path the call names or mentions, canonical
//! (`~` and `$HOME` expanded, joined with the working directory, `.` and `..`
//! collapsed) and in comparison form (NFKC, lower case); the domains it
//! fetches; and any characters hidden in its arguments.

use std::sync::OnceLock;

use serde_json::Value;
use warden_analysis::effects;
use warden_analysis::path as paths;
use warden_analysis::sensitive;
use warden_analysis::shell;

use super::tools::{ToolKind, ToolRegistry};
use warden_types::request::ToolCall;

/// Argument keys that hold a path, whatever the tool.
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "notebook_path",
    "filepath",
    "filename",
    "file",
    "paths",
    "directory",
    "dir",
    "target",
    "source",
    "destination",
    "cwd",
    "working_directory",
];

/// The path keys that name the directory a tool runs in: every other path
/// key's value a tool may write (or remove, or move away).
const RUN_IN_KEYS: &[&str] = &["cwd", "working_directory"];

/// Where `~` points when neither the call nor the config says: a placeholder
/// that cannot collide with a real path, used for rules and calls alike.
const UNKNOWN_HOME: &str = "/~";

/// The canonical call.
#[derive(Clone, Debug)]
pub struct CanonicalCall {
    /// The tool's name, as called.
    pub tool: String,
    /// Its kind in the operator's registry.
    pub kind: ToolKind,
    /// `(server, tool)` of an `mcp__server__tool` call.
    pub mcp: Option<(String, String)>,
    /// Shell: every simple command, as `program arg… [> file]` with single spaces.
    pub commands: Vec<String>,
    /// Shell: the full analysis, for risk triage.
    pub shell: Option<shell::Analysis>,
    /// Why the command could not be seen through, if it could not.
    pub opaque: Vec<String>,
    /// The paths the call acts on (a file tool's `path`), comparison form.
    pub target_paths: Vec<String>,
    /// Every other path the arguments mention, comparison form.
    pub paths: Vec<String>,
    /// Shell: the paths among those that a command writes, removes or
    /// changes the mode of (redirections, `cp`'s destination, `tee`, …).
    pub written: Vec<String>,
    /// An MCP tool the operator has not registered read-only: the values of
    /// its path arguments (`path`, `file_path`, `destination`, … at any
    /// depth), comparison form, which it may write. What the server says of
    /// its own tool (`readOnlyHint`) does not count: only the registry does.
    pub mcp_written: Vec<String>,
    /// Shell: the paths the command uses only where a program reads or writes
    /// public material (`openssl dhparam -out`, `openssl x509 -in`; see
    /// `warden_analysis::sensitive::public_by_use`) and nowhere else in the
    /// call. The sensitive-path floor may tell these from secrets.
    pub public_by_use: Vec<String>,
    /// Hosts the call fetches, lower case.
    pub domains: Vec<String>,
    /// Hidden or control characters found in the arguments, described.
    pub suspicious: Vec<String>,
    /// The home and working directory the paths were resolved against.
    pub home: String,
    /// The working directory relative paths were resolved against.
    pub cwd: String,
    /// Home and working directory, canonical and in comparison form, made
    /// when a rule first needs them.
    home_key: OnceLock<String>,
    cwd_key: OnceLock<String>,
}

impl CanonicalCall {
    /// Canonicalises a call. `home` and `cwd` are the config's fallbacks for a
    /// context that names none.
    pub fn new(
        call: &ToolCall,
        tools: &ToolRegistry,
        home: Option<&str>,
        cwd: Option<&str>,
    ) -> CanonicalCall {
        let context = &call.context;
        let kind = tools.kind(&call.tool_name);
        let mut canonical = CanonicalCall {
            tool: call.tool_name.clone(),
            kind,
            mcp: mcp_parts(&call.tool_name),
            commands: Vec::new(),
            shell: None,
            opaque: Vec::new(),
            target_paths: Vec::new(),
            paths: Vec::new(),
            written: Vec::new(),
            mcp_written: Vec::new(),
            public_by_use: Vec::new(),
            domains: Vec::new(),
            suspicious: Vec::new(),
            home: context
                .home
                .as_deref()
                .or(home)
                .unwrap_or(UNKNOWN_HOME)
                .to_string(),
            cwd: context.cwd.as_deref().or(cwd).unwrap_or("/").to_string(),
            home_key: OnceLock::new(),
            cwd_key: OnceLock::new(),
        };
        let input = &call.tool_input;
        // A shell command is analysed as a command line, not read as a path.
        let command = (kind == ToolKind::Shell)
            .then(|| shell_command(input))
            .flatten();
        canonical.scan_strings(input, None, command);
        match kind {
            ToolKind::Shell => match command {
                Some(command) => canonical.analyse_shell(command),
                None => canonical
                    .opaque
                    .push("there is no command string (`command`, `cmd` or `args[0]`)".into()),
            },
            ToolKind::Read | ToolKind::Write => {
                for key in ["file_path", "notebook_path", "path", "paths", "filename"] {
                    for value in strings(input.get(key)) {
                        let path = canonical.canonical_path(value);
                        canonical.paths.retain(|p| *p != path);
                        canonical.target_paths.push(path);
                    }
                }
            }
            ToolKind::Mcp if !tools.is_read_only(&call.tool_name) => {
                let mut raw = Vec::new();
                path_arguments(input, None, &mut raw);
                for value in raw {
                    let path = canonical.canonical_path(value);
                    if !canonical.mcp_written.contains(&path) {
                        canonical.mcp_written.push(path);
                    }
                }
            }
            ToolKind::Fetch => {
                for key in ["url", "domain", "urls"] {
                    for value in strings(input.get(key)) {
                        canonical.domains.push(domain_of(value));
                    }
                }
            }
            _ => {}
        }
        canonical
    }

    /// A path resolved against this call's home and working directory, in
    /// comparison form. Rules' path patterns are resolved the same way.
    pub fn canonical_path(&self, raw: &str) -> String {
        paths::comparison_form(&paths::canonicalize(raw, Some(&self.cwd), Some(&self.home)))
    }

    /// The home directory, canonical and in comparison form.
    pub fn home_key(&self) -> &str {
        self.home_key
            .get_or_init(|| self.canonical_path(&self.home))
    }

    /// The working directory, canonical and in comparison form.
    pub fn cwd_key(&self) -> &str {
        self.cwd_key.get_or_init(|| self.canonical_path(&self.cwd))
    }

    fn add_path(&mut self, raw: &str) {
        let path = self.resolve(raw);
        if !self.paths.contains(&path) {
            self.paths.push(path);
        }
    }

    /// A path word of a shell command, canonical and in comparison form.
    fn resolve(&self, raw: &str) -> String {
        // A bare name (`id_rsa`, `status`) is a file in the working directory:
        // no need to parse the working directory again for each one.
        let bare = !raw.is_empty()
            && !raw.contains('/')
            && !raw.starts_with(['~', '$'])
            && raw != "."
            && raw != "..";
        if bare {
            let cwd = self.cwd_key();
            let name = paths::comparison_form(raw);
            let mut path = String::with_capacity(cwd.len() + 1 + name.len());
            path.push_str(cwd);
            if !cwd.ends_with('/') {
                path.push('/');
            }
            path.push_str(&name);
            path
        } else {
            self.canonical_path(raw)
        }
    }

    /// Fills [`CanonicalCall::public_by_use`]: a path counts when every word
    /// of the call that names it is one `public_by_use` points at (the same
    /// word, not merely the same name), so any other use of the file keeps
    /// it secret.
    fn find_public_uses(&mut self, analysis: &shell::Analysis) {
        let mut public = Vec::new();
        let mut other = Vec::new();
        for simple in &analysis.commands {
            let uses = sensitive::public_by_use(simple);
            let words = simple.paths().into_iter().chain(
                simple
                    .operands()
                    .filter(|o| o.literal)
                    .map(|o| o.value.as_str()),
            );
            for raw in words {
                let path = self.resolve(raw);
                if uses.iter().any(|u| std::ptr::eq(*u, raw)) {
                    public.push(path);
                } else {
                    other.push(path);
                }
            }
        }
        other.extend(analysis.network_paths.iter().map(|p| self.resolve(p)));
        public.retain(|p| !other.contains(p));
        public.sort();
        public.dedup();
        self.public_by_use = public;
    }

    /// Walks every string in the arguments: suspicious characters anywhere,
    /// and path-like strings (or any string under a path key), except the
    /// shell command itself.
    fn scan_strings(&mut self, value: &Value, key: Option<&str>, command: Option<&str>) {
        match value {
            Value::String(s) => {
                if let Some(found) = paths::find_suspicious(s) {
                    self.suspicious.push(describe(found, key));
                }
                if command.is_some_and(|c| std::ptr::eq(c, s.as_str())) {
                    return;
                }
                if key.is_some_and(|k| PATH_KEYS.contains(&k)) {
                    self.add_path(s);
                } else if let Some(path) = path_like(s) {
                    self.add_path(path);
                }
            }
            Value::Array(items) => items
                .iter()
                .for_each(|v| self.scan_strings(v, key, command)),
            Value::Object(map) => {
                for (k, v) in map {
                    if let Some(found) = paths::find_suspicious(k) {
                        self.suspicious
                            .push(describe(found, Some("an argument's key")));
                    }
                    self.scan_strings(v, Some(k), command);
                }
            }
            _ => {}
        }
    }

    fn analyse_shell(&mut self, command: &str) {
        let analysis = shell::analyze(command);
        if let Some(error) = &analysis.error {
            self.opaque.push(format!("it does not parse: {error}"));
        }
        for opaque in &analysis.opaque {
            self.opaque
                .push(format!("{:?} `{}`", opaque.kind, opaque.text));
        }
        for simple in &analysis.commands {
            if let Some(text) = normalised_command(simple) {
                self.commands.push(text);
            }
            for path in simple.paths() {
                self.add_path(path);
            }
            for path in effects::written(simple) {
                let path = self.canonical_path(path);
                if !self.written.contains(&path) {
                    self.written.push(path);
                }
            }
            // A literal operand may name a file relative to the working
            // directory (`cat id_rsa`).
            for operand in simple.operands() {
                if operand.literal && !operand.value.contains("://") {
                    self.add_path(&operand.value);
                }
            }
        }
        for path in &analysis.network_paths {
            self.add_path(path);
        }
        // Only openssl has public uses; most calls never look further.
        if analysis.commands.iter().any(|c| c.is("openssl")) {
            self.find_public_uses(&analysis);
        }
        self.shell = Some(analysis);
    }
}

/// `program arg… [> file]` of a simple command with single spaces: git's
/// global options dropped (`git -C . push` is `git push` to a rule), and the
/// files it writes through redirections kept, so that `git status > x` is not
/// mistaken for `git status`. `None` when there is no program to name.
fn normalised_command(simple: &shell::Command) -> Option<String> {
    let program = simple.program.as_deref()?;
    let args: Vec<&str> = simple.args.iter().map(|a| a.value.as_str()).collect();
    let (program, args) = match program {
        "git" => (program, git_subcommand_and_args(&args)),
        // `[ -f x ]` is `test -f x`, to a rule as to the shell.
        "[" => ("test", args.strip_suffix(&["]"]).unwrap_or(&args[..])),
        _ => (program, &args[..]),
    };
    // The words joined with single spaces, as `normalise_spaces` of them
    // joined would be, built in one string (this runs for every command).
    let mut text =
        String::with_capacity(program.len() + args.iter().map(|a| a.len() + 1).sum::<usize>());
    push_words(&mut text, program);
    for arg in args {
        push_words(&mut text, arg);
    }
    for redirect in &simple.redirects {
        if redirect.op.writes() && redirect.target.value != "/dev/null" {
            push_words(&mut text, redirect.op.as_str());
            push_words(&mut text, &redirect.target.value);
        }
    }
    Some(text)
}

/// Appends the whitespace-separated words of `piece` to `text`, each after a
/// single space unless `text` is empty.
fn push_words(text: &mut String, piece: &str) {
    for word in piece.split_whitespace() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
}

/// git's arguments from the subcommand on: `-C dir`, `-c k=v`, `--git-dir=…`
/// and the other global options come before it. What they change that a
/// rule cares about the analysis has already resolved: an alias is expanded
/// in place, and a pager, editor, ssh command or hook they set is a command
/// of its own.
fn git_subcommand_and_args<'a, 'b>(args: &'b [&'a str]) -> &'b [&'a str] {
    const WITH_VALUE: &[&str] = &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--config-env",
    ];
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if WITH_VALUE.contains(&arg) {
            i += 2;
        } else if arg.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    &args[i.min(args.len())..]
}

/// The command string of a shell call: `command`, else `cmd`, else `args[0]`.
pub fn shell_command(input: &Value) -> Option<&str> {
    input
        .get("command")
        .or_else(|| input.get("cmd"))
        .or_else(|| input.get("args").and_then(|a| a.get(0)))
        .and_then(Value::as_str)
}

/// The path in a free-form argument, when it looks like one: contains `/`,
/// starts with `~` or `.`, or is an `@file`; URLs and multi-line text are not.
fn path_like(value: &str) -> Option<&str> {
    let candidate = value.strip_prefix('@').unwrap_or(value);
    let looks = candidate.contains('/') || candidate.starts_with('~') || candidate.starts_with('.');
    (looks && !candidate.contains("://") && !candidate.contains('\n')).then_some(candidate)
}

fn describe(found: paths::Suspicious, key: Option<&str>) -> String {
    format!(
        "{} U+{:04X} in {}",
        found.kind.as_str(),
        found.character as u32,
        key.map_or("an argument".to_string(), |k| format!("'{k}'"))
    )
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The strings under the [`PATH_KEYS`] a tool may write (not [`RUN_IN_KEYS`]),
/// at any depth of the arguments.
fn path_arguments<'a>(value: &'a Value, key: Option<&str>, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s)
            if key.is_some_and(|k| PATH_KEYS.contains(&k) && !RUN_IN_KEYS.contains(&k)) =>
        {
            out.push(s)
        }
        Value::Array(items) => items.iter().for_each(|v| path_arguments(v, key, out)),
        Value::Object(map) => map
            .iter()
            .for_each(|(k, v)| path_arguments(v, Some(k), out)),
        _ => {}
    }
}

fn mcp_parts(tool: &str) -> Option<(String, String)> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    Some((server.to_string(), name.to_string()))
}

/// The host a URL (or a bare domain) names, lower case; the input itself,
/// lower-cased, when it does not parse, so that a rule can still deny it.
fn domain_of(raw: &str) -> String {
    let candidate = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    match url::Url::parse(&candidate) {
        Ok(url) => url
            .host_str()
            .unwrap_or_default()
            .trim_end_matches('.')
            .to_ascii_lowercase(),
        Err(_) => raw.to_ascii_lowercase(),
    }
}

/// Collapses runs of whitespace, so `git  push` and `git push` are the same.
pub fn normalise_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_words(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_joined_by_single_spaces_whatever_whitespace_they_hold() {
        for piece in ["", "a", " a  b ", "a\x0bb", "a\u{a0}b", "é", "\t", "x\ny"] {
            let mut text = String::from("git");
            push_words(&mut text, piece);
            let joined = ["git", piece].join(" ");
            let words: Vec<&str> = joined.split_whitespace().collect();
            assert_eq!(text, words.join(" "), "{piece:?}");
        }
        assert_eq!(normalise_spaces(" a \x0b b\u{3000}c "), "a b c");
    }
}
