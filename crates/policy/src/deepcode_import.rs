//! DeepCode's permission rules as Warden's `permissions` block, never looser
//! (`warden rules import --from deepcode`).
//!
//! DeepCode (`core/harness/permissions.py`) matches `fnmatch(tool, key)` and
//! `fnmatch(argument, pattern)` on the raw argument string (a shell call's
//! whole command line, a file tool's path as typed), and the last matching
//! rule wins; within one tool key the patterns are ordered by specificity
//! (characters that are not `*`/`?`, stable), across keys in the file's order.
//! Warden's rules are order-free (deny > ask > allow) and judge each command of
//! a line after quoting and wrappers. So:
//! - a deny or ask is emitted only where Warden's rule matches at least what
//!   DeepCode's does (a shell pattern that Warden reads as the same command,
//!   else the whole tool, which is stricter and reported); what neither can be
//!   is refused, naming the rule;
//! - an allow on a whole tool is emitted by the tool's exact name; an allow on a
//!   pattern never is, because Warden would also allow forms DeepCode's raw
//!   match does not (`sudo …`, `FOO=1 …`, `./src/x`, a line of allowed
//!   commands): the mode's default decides those calls, and the report lists them;
//! - every call Warden may judge stricter is described in the report by the
//!   tool names and the DeepCode argument pattern it concerns.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::canonical::CanonicalCall;
use super::permissions::{Mode, PermissionEngine, PermissionsConfig};
use super::tools::{ToolRegistry, ToolsConfig};

/// DeepCode's shell tools (`_SHELL_TOOL_NAMES`); a name ending `_<one>` is one too.
const DEEPCODE_SHELLS: &[&str] = &["bash", "exec", "execute_bash", "execute_commands"];

/// DeepCode's read-only tools (`_READ_ONLY_TOOLS`) and those its tool registry
/// adds (`default_coding_tools(...).read_only_tool_names`), as the product wires them.
const DEEPCODE_READ_ONLY: &[&str] = &[
    "read_file",
    "read_multiple_files",
    "read_code_mem",
    "get_file_structure",
    "search_code",
    "search_code_references",
    "get_indexes_overview",
    "get_operation_history",
    "grep",
    "glob",
    "ls",
    "list_dir",
    "web_fetch",
    "update_plan",
    "read",
    "skill",
];

/// DeepCode's sensitive paths that Warden's built-in list lacks, in Warden's syntax.
const DEEPCODE_SENSITIVE_ADD: &[&str] = &[".deepcode/credentials*", "deepcode_config.json"];

/// DeepCode's sensitive patterns that Warden's list spells narrower or
/// exempts as public material (`id_rsa.pub`, `cert.pem`, `.env.example`):
/// denied as path rules, which see no exemption.
const DEEPCODE_KEY_GLOBS: &[&str] = &["*id_rsa*", "*id_ed25519*", "*.pem", "*.key", ".env.*"];

/// The result of an import: the `permissions` block and what the report says.
#[derive(Debug)]
pub struct Import {
    /// The `permissions:` block, ready to serialise into a config.
    pub permissions: Value,
    /// Where Warden may be stricter than DeepCode, and why.
    pub report: Report,
}

/// The import's report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// DeepCode's mode as the file sets it (`default`, `plan`, `full_auto`).
    pub deepcode_mode: String,
    /// The Warden mode emitted.
    pub warden_mode: &'static str,
    /// Every kind of call on which Warden may decide stricter than DeepCode.
    pub stricter: Vec<Stricter>,
    /// What the rules cannot say either way (Warden's own stages, the adapter's part).
    pub notes: Vec<String>,
}

/// Calls Warden may judge stricter than DeepCode: a call of a tool matching one
/// of `tools` whose DeepCode argument (the command line, the raw path, or
/// `k=v …`) matches `calls` (both `fnmatch` patterns, as DeepCode matches).
#[derive(Debug, Serialize, PartialEq)]
pub struct Stricter {
    /// The DeepCode rule (or setting) concerned, where it is in the file.
    pub rule: String,
    /// Tool names or name patterns.
    pub tools: Vec<String>,
    /// The DeepCode argument pattern.
    pub calls: String,
    /// What DeepCode decides on those calls, at most.
    pub deepcode: String,
    /// What Warden decides instead, at least.
    pub warden: String,
    /// Why.
    pub why: String,
}

/// Why a DeepCode config could not be imported.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    /// The file is not a DeepCode config: says where and what.
    #[error("{at}: {message}")]
    Malformed {
        /// Where in the file (a line and column, or a key path).
        at: String,
        /// What is wrong.
        message: String,
    },
    /// A rule Warden cannot express without being looser, and nothing stricter is faithful.
    #[error("{rule}: cannot be imported: {message}")]
    Unsupported {
        /// The rule, where it is in the file.
        rule: String,
        /// Why, and what to write instead.
        message: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

/// One DeepCode rule, in the engine's order.
struct DcRule {
    tool: String,
    pattern: String,
    action: Action,
    /// Where it is: `security.permissions["bash"]["git push *"]`.
    at: String,
}

/// DeepCode's run mode, from `permissionMode` and `accessPreset`.
struct DcMode {
    /// `default`, `plan` or `full_auto`.
    mode: &'static str,
    /// The `full_access` preset turns DeepCode's sensitive-path check off.
    sensitive_off: bool,
    notes: Vec<String>,
}

/// Reads a `deepcode_config.json` (its `security` block) and turns its
/// permission rules into Warden's `permissions` block.
pub fn import(text: &[u8]) -> Result<Import, ImportError> {
    let root: Value = serde_json::from_slice(text).map_err(|e| ImportError::Malformed {
        at: format!("line {} column {}", e.line(), e.column()),
        message: format!("not JSON: {e}"),
    })?;
    let root = object(&root, "the file")?;
    let security = match root.get("security") {
        Some(value) => object(value, "security")?,
        None => {
            return Err(ImportError::Malformed {
                at: "security".into(),
                message:
                    "no `security` block: a DeepCode config keeps its rules in security.permissions"
                        .into(),
            });
        }
    };
    let mode = dc_mode(security)?;
    let rules = dc_rules(field(security, "permissions", "permissions")?)?;
    convert(&rules, mode)
}

/// The value of a key DeepCode reads in camelCase or snake_case; both is an error.
fn field<'v>(
    block: &'v Map<String, Value>,
    camel: &str,
    snake: &str,
) -> Result<Option<&'v Value>, ImportError> {
    match (block.get(camel), block.get(snake)) {
        (Some(_), Some(_)) if camel != snake => Err(ImportError::Malformed {
            at: format!("security.{camel}"),
            message: format!("set both as {camel} and {snake}; keep one"),
        }),
        (Some(v), _) | (None, Some(v)) => Ok((!v.is_null()).then_some(v)),
        (None, None) => Ok(None),
    }
}

fn object<'v>(value: &'v Value, at: &str) -> Result<&'v Map<String, Value>, ImportError> {
    value.as_object().ok_or_else(|| ImportError::Malformed {
        at: at.into(),
        message: format!("expected an object, found {}", kind_of(value)),
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string<'v>(value: &'v Value, at: &str) -> Result<&'v str, ImportError> {
    value.as_str().ok_or_else(|| ImportError::Malformed {
        at: at.into(),
        message: format!("expected a string, found {}", kind_of(value)),
    })
}

/// A setting that names one of `choices` (`(spelling, DeepCode mode)`), lower-cased and trimmed as
/// DeepCode reads it; `what` names it in an error.
fn choice(
    security: &Map<String, Value>,
    (camel, snake): (&str, &str),
    what: &str,
    choices: &[(&str, &'static str)],
) -> Result<Option<&'static str>, ImportError> {
    let Some(value) = field(security, camel, snake)? else {
        return Ok(None);
    };
    let at = format!("security.{camel}");
    let given = string(value, &at)?.trim().to_lowercase();
    match choices.iter().find(|(name, _)| *name == given) {
        Some((_, mode)) => Ok(Some(mode)),
        None => Err(ImportError::Malformed {
            at,
            message: format!(
                "unknown {what} '{given}' ({})",
                choices
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

fn dc_mode(security: &Map<String, Value>) -> Result<DcMode, ImportError> {
    let mode = choice(
        security,
        ("permissionMode", "permission_mode"),
        "mode",
        &[
            ("default", "default"),
            ("plan", "plan"),
            ("full_auto", "full_auto"),
        ],
    )?;
    let preset = choice(
        security,
        ("accessPreset", "access_preset"),
        "preset",
        &[
            ("ask", "default"),
            ("read_only", "plan"),
            ("full_access", "full_auto"),
        ],
    )?;
    let mut notes = Vec::new();
    let strictness = |m: &str| match m {
        "plan" => 2,
        "default" => 1,
        _ => 0,
    };
    let chosen = match (mode, preset) {
        (None, None) => {
            notes.push("the file sets no permissionMode: DeepCode's own default, full_auto, is imported (DEEPCODE_PERMISSION_MODE or a client may choose another when DeepCode runs)".into());
            "full_auto"
        }
        (Some(m), None) => m,
        (None, Some(p)) => p,
        (Some(m), Some(p)) => {
            let stricter = if strictness(p) >= strictness(m) { p } else { m };
            if m != p {
                notes.push(format!(
                    "permissionMode ({m}) and accessPreset (mode {p}) disagree: the stricter, {stricter}, is imported"
                ));
            }
            stricter
        }
    };
    let sensitive_off = preset == Some("full_auto") && chosen == "full_auto";
    Ok(DcMode {
        mode: chosen,
        sensitive_off,
        notes,
    })
}

/// The rules in the order DeepCode's engine tries them (`normalize_permission_rules`).
fn dc_rules(permissions: Option<&Value>) -> Result<Vec<DcRule>, ImportError> {
    let Some(permissions) = permissions else {
        return Ok(Vec::new());
    };
    let permissions = object(permissions, "security.permissions")?;
    let mut rules = Vec::new();
    for (tool, spec) in permissions {
        let tool_at = format!("security.permissions[{}]", quoted(tool));
        match spec {
            Value::String(action) => rules.push(DcRule {
                tool: tool.clone(),
                pattern: "*".into(),
                action: action_of(action, &tool_at)?,
                at: tool_at,
            }),
            Value::Object(patterns) => {
                let mut ordered: Vec<(&String, &Value)> = patterns.iter().collect();
                ordered.sort_by_key(|(pattern, _)| specificity(pattern));
                for (pattern, action) in ordered {
                    let at = format!("{tool_at}[{}]", quoted(pattern));
                    let action = action_of(string(action, &at)?, &at)?;
                    rules.push(DcRule {
                        tool: tool.clone(),
                        pattern: pattern.clone(),
                        action,
                        at,
                    });
                }
            }
            other => {
                return Err(ImportError::Malformed {
                    at: tool_at,
                    message: format!(
                        "expected an action (\"allow\", \"ask\", \"deny\") or an object of patterns, found {}",
                        kind_of(other)
                    ),
                });
            }
        }
    }
    Ok(rules)
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

fn action_of(text: &str, at: &str) -> Result<Action, ImportError> {
    match text.to_lowercase().as_str() {
        "allow" => Ok(Action::Allow),
        "ask" => Ok(Action::Ask),
        "deny" => Ok(Action::Deny),
        _ => Err(ImportError::Malformed {
            at: at.into(),
            message: format!("unknown action '{text}' (allow, ask, deny)"),
        }),
    }
}

/// DeepCode's `_pattern_specificity`: `*` is 0, else the characters that are not `*` or `?`.
fn specificity(pattern: &str) -> usize {
    if pattern == "*" {
        0
    } else {
        pattern.chars().filter(|c| !matches!(c, '*' | '?')).count()
    }
}

fn is_deepcode_shell(tool: &str) -> bool {
    DEEPCODE_SHELLS
        .iter()
        .any(|s| tool == *s || tool.ends_with(&format!("_{s}")))
}

/// The lists being built, and the report.
struct Out {
    allow: Vec<String>,
    ask: Vec<String>,
    deny: Vec<String>,
    stricter: Vec<Stricter>,
}

impl Out {
    fn emit(&mut self, action: Action, rule: String) {
        let list = match action {
            Action::Allow => &mut self.allow,
            Action::Ask => &mut self.ask,
            Action::Deny => &mut self.deny,
        };
        if !list.contains(&rule) {
            list.push(rule);
        }
    }

    fn stricter(&mut self, entry: Stricter) {
        if !self.stricter.contains(&entry) {
            self.stricter.push(entry);
        }
    }
}

fn convert(rules: &[DcRule], mode: DcMode) -> Result<Import, ImportError> {
    let warden_mode = match mode.mode {
        "plan" => Mode::ReadOnly,
        "default" => Mode::Default,
        _ => Mode::FullAuto,
    };
    let defaults = ToolsConfig::default();
    let tools = ToolsConfig {
        read_only: DEEPCODE_READ_ONLY.iter().map(|s| s.to_string()).collect(),
        ..defaults.clone()
    };
    let registry = ToolRegistry::new(&tools).map_err(|e| ImportError::Malformed {
        at: "permissions.tools".into(),
        message: e.0,
    })?;
    let warden_default = |tool: &str| match warden_mode {
        Mode::FullAuto => Action::Allow,
        _ if registry.is_read_only(tool) => Action::Allow,
        Mode::Default => Action::Ask,
        Mode::ReadOnly => Action::Deny,
    };
    let mut out = Out {
        allow: Vec::new(),
        ask: Vec::new(),
        deny: Vec::new(),
        stricter: Vec::new(),
    };
    for (i, rule) in rules.iter().enumerate() {
        let label = format!("{} = {}", rule.at, rule.action.as_str());
        check_tool_name(rule, &label)?;
        let whole = rule.pattern.chars().all(|c| c == '*');
        // A rule DeepCode tries later overrides an earlier, stricter one on the
        // same tool; Warden's stricter rule wins whatever the order.
        if let Some(earlier) = rules[..i]
            .iter()
            .filter(|r| r.tool == rule.tool && r.action > rule.action)
            .map(|r| r.action)
            .max()
        {
            out.stricter(Stricter {
                rule: label.clone(),
                tools: vec![rule.tool.clone()],
                calls: rule.pattern.clone(),
                deepcode: rule.action.as_str().into(),
                warden: earlier.as_str().into(),
                why: "DeepCode's later, more specific rule overrides an earlier one; Warden's stricter rule wins whatever the order".into(),
            });
        }
        if warden_mode == Mode::ReadOnly
            && rule.action != Action::Deny
            && warden_default(&rule.tool) == Action::Deny
        {
            out.stricter(Stricter {
                rule: label.clone(),
                tools: vec![rule.tool.clone()],
                calls: rule.pattern.clone(),
                deepcode: rule.action.as_str().into(),
                warden: "deny".into(),
                why: "DeepCode's plan mode lets a rule pass a tool that is not read-only; Warden's read_only mode is a bound no rule lifts".into(),
            });
        }
        match (rule.action, whole) {
            (action, true) => out.emit(action, rule.tool.clone()),
            (Action::Allow, false) => {
                let instead = warden_default(&rule.tool);
                if instead != Action::Allow {
                    out.stricter(Stricter {
                        rule: label.clone(),
                        tools: vec![rule.tool.clone()],
                        calls: rule.pattern.clone(),
                        deepcode: "allow".into(),
                        warden: instead.as_str().into(),
                        why: format!(
                            "not emitted: a Warden allow on a pattern also allows what DeepCode's raw match does not (wrappers, `VAR=value`, quoting, other spellings of a path, a line of allowed commands); the {} mode's default decides these calls",
                            warden_mode.as_str()
                        ),
                    });
                }
            }
            (action, false) => {
                let shell = is_deepcode_shell(&rule.tool)
                    && registry.kind(&rule.tool) == super::tools::ToolKind::Shell;
                if shell {
                    let pattern = shell_pattern(&rule.pattern, &registry).map_err(|message| {
                        ImportError::Unsupported {
                            rule: label.clone(),
                            message,
                        }
                    })?;
                    out.emit(action, format!("Bash({pattern})"));
                    out.stricter(Stricter {
                        rule: label.clone(),
                        tools: defaults.shell.clone(),
                        calls: format!("*{}*", pattern.trim_end_matches('*').trim_end()),
                        deepcode: "allow".into(),
                        warden: action.as_str().into(),
                        why: "Warden judges every command of a line, through wrappers and quoting, and on every shell tool; DeepCode only the start of the raw line of this tool".into(),
                    });
                } else {
                    out.emit(action, rule.tool.clone());
                    out.stricter(Stricter {
                        rule: label.clone(),
                        tools: vec![rule.tool.clone()],
                        calls: "*".into(),
                        deepcode: "allow".into(),
                        warden: action.as_str().into(),
                        why: "DeepCode matches this tool's raw argument string, which no Warden rule can (Warden resolves paths); the rule is emitted for the whole tool".into(),
                    });
                }
            }
        }
    }
    if warden_mode != Mode::FullAuto {
        out.stricter(Stricter {
            rule: "DeepCode's read-only MCP tools".into(),
            tools: vec!["mcp_*".into()],
            calls: "*".into(),
            deepcode: "allow".into(),
            warden: warden_default("mcp_").as_str().into(),
            why: "DeepCode takes an MCP tool named `mcp_…_<read-only tool>` for read-only by its name; Warden never reads read-only-ness from a name".into(),
        });
    }
    let mut notes = mode.notes;
    let mut sensitive_add: Vec<String> = Vec::new();
    if mode.sensitive_off {
        out.stricter(Stricter {
            rule: "security.accessPreset = full_access".into(),
            tools: vec!["*".into()],
            calls: "*".into(),
            deepcode: "allow".into(),
            warden: "deny".into(),
            why: "the full_access preset turns DeepCode's sensitive-path check off; Warden's sensitive paths always apply".into(),
        });
    } else {
        sensitive_add.extend(DEEPCODE_SENSITIVE_ADD.iter().map(|s| s.to_string()));
        for glob in DEEPCODE_KEY_GLOBS {
            out.emit(Action::Deny, format!("Read(/**/{glob})"));
            out.emit(Action::Deny, format!("Edit(/**/{glob})"));
            out.stricter(Stricter {
                rule: format!("DeepCode's sensitive path {glob}"),
                tools: defaults.shell.clone(),
                calls: format!("*{}*", glob.trim_matches('*')),
                deepcode: "allow".into(),
                warden: "deny".into(),
                why: "DeepCode checks no path inside a shell command; Warden's Read/Edit deny rules apply to the paths a command mentions".into(),
            });
        }
    }
    notes.push("Warden's own stages may be stricter on any call, whatever the rules: sensitive paths inside shell commands and in any argument, risk triage, hidden characters, and commands its parser cannot see through (at least an ask)".into());
    notes.push("DeepCode also reads a shell call's `commands` or `script` argument; Warden's shell rules read `command` (else `cmd`): the DeepCode adapter must pass DeepCode's bash calls as `command`".into());
    notes.push("DeepCode denies an apply_patch whose envelope names a sensitive path; Warden's rules see no paths inside a patch, so the DeepCode adapter judges each of its paths as an edit".into());
    notes.push(format!(
        "read-only tools are DeepCode's ({}); a tool DeepCode's registry adds beyond these must be added to permissions.tools.read_only",
        DEEPCODE_READ_ONLY.join(", ")
    ));
    let permissions = json!({
        "mode": warden_mode.as_str(),
        "allow": out.allow,
        "ask": out.ask,
        "deny": out.deny,
        "sensitive_paths": {"add": sensitive_add},
        "tools": {"read_only": tools.read_only},
    });
    // What is emitted must load: a failure here is this module's defect, not the input's.
    let config: PermissionsConfig =
        serde_json::from_value(permissions.clone()).map_err(|e| ImportError::Unsupported {
            rule: "the emitted permissions".into(),
            message: e.to_string(),
        })?;
    PermissionEngine::new(&config).map_err(|(at, message)| ImportError::Unsupported {
        rule: format!("the emitted permissions.{at}"),
        message,
    })?;
    Ok(Import {
        permissions,
        report: Report {
            deepcode_mode: mode.mode.into(),
            warden_mode: warden_mode.as_str(),
            stricter: out.stricter,
            notes,
        },
    })
}

/// A tool key must name one tool as Warden's rules do: exactly, lower case.
fn check_tool_name(rule: &DcRule, label: &str) -> Result<(), ImportError> {
    let tool = &rule.tool;
    let refuse = |message: String| {
        Err(ImportError::Unsupported {
            rule: label.into(),
            message,
        })
    };
    if tool.chars().any(|c| matches!(c, '*' | '?' | '[' | ']')) {
        return refuse(format!(
            "the tool key '{tool}' is a pattern; Warden's rules name each tool (list the tools it stands for, one key each)"
        ));
    }
    if tool.is_empty()
        || tool.starts_with(|c: char| c.is_ascii_uppercase())
        || tool
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '(' | ')'))
    {
        return refuse(format!(
            "'{tool}' is not a tool name Warden's rules can hold (a lower-case name without spaces or parentheses)"
        ));
    }
    // The rest of Warden's rule grammar (an MCP name needs its server, ...).
    if let Err(e) = crate::rules::Rule::parse(tool) {
        return refuse(format!(
            "'{tool}' is not a tool name Warden's rules can hold: {}",
            e.message
        ));
    }
    Ok(())
}

/// A DeepCode shell pattern as a Warden command pattern matching at least the
/// same lines' first command: literal words, optionally followed by `*`, that
/// Warden's own parser reads back as the same single command.
fn shell_pattern(pattern: &str, registry: &ToolRegistry) -> Result<String, String> {
    let (literal, star) = match pattern.strip_suffix('*') {
        Some(rest) => (rest, true),
        None => (pattern, false),
    };
    let words = literal
        .strip_suffix(' ')
        .filter(|_| star)
        .unwrap_or(literal);
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+,=".contains(c);
    let well_formed = !words.is_empty()
        && words
            .split(' ')
            .all(|w| !w.is_empty() && w.chars().all(safe));
    if !well_formed {
        return Err(format!(
            "'{pattern}' is not literal words followed by an optional `*`: DeepCode matches it against the raw line (a `*` inside spans `;`, `|` and quotes), which no Warden command pattern covers; write one pattern per command, e.g. 'rm -rf *'"
        ));
    }
    if star && !words.contains(' ') && !literal.ends_with(' ') {
        return Err(format!(
            "'{pattern}': a `*` right after the program name also matches `{words}x=1 other-command`, an assignment Warden sees through; write '{words} *'"
        ));
    }
    let call = warden_types::request::ToolCall {
        tool_name: "bash".into(),
        tool_input: json!({ "command": words }),
        tool_call_id: None,
        context: Default::default(),
    };
    let canonical = CanonicalCall::new(&call, registry, Some("/"), Some("/"));
    if canonical.opaque.is_empty() && canonical.commands == [words] {
        let mut out = words.to_string();
        if star {
            out.push_str(if literal.ends_with(' ') { " *" } else { "*" });
        }
        // Warden reads a trailing `:*` as ` *`; `:**` keeps DeepCode's meaning.
        if out.ends_with(":*") {
            out.push('*');
        }
        Ok(out)
    } else {
        Err(format!(
            "'{pattern}': Warden reads `{words}` as {:?} (wrappers, assignments, a program's path and git's global options are seen through), so its rule would not match every line DeepCode's does",
            canonical.commands
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imported(config: Value) -> Import {
        import(config.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn patterns_are_tried_in_deepcode_order() {
        let rules = dc_rules(Some(
            &json!({"bash": {"git push *": "ask", "*": "allow", "git status*": "allow"}}),
        ))
        .unwrap();
        let order: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(order, ["*", "git push *", "git status*"]);
    }

    #[test]
    fn a_shell_deny_becomes_a_command_rule() {
        let import = imported(
            json!({"security": {"permissionMode": "default", "permissions": {"bash": {"rm -rf *": "deny", "*": "allow"}}}}),
        );
        assert_eq!(import.permissions["deny"][0], "Bash(rm -rf *)");
        assert_eq!(import.permissions["allow"], json!(["bash"]));
        assert_eq!(import.permissions["mode"], "default");
    }

    #[test]
    fn a_tool_key_warden_reads_as_a_broken_mcp_rule_is_refused_naming_it() {
        let err = import(
            json!({"security": {"permissions": {"mcp__": {"*": "ask"}}}})
                .to_string()
                .as_bytes(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ImportError::Unsupported { rule, .. } if !rule.starts_with("the emitted")),
            "{err}"
        );
        assert!(err.to_string().contains("'mcp__'"), "{err}");
    }

    #[test]
    fn a_pattern_warden_reads_otherwise_is_refused() {
        for pattern in [
            "sudo rm *",
            "FOO=1 make *",
            "/bin/rm *",
            "git -C x push *",
            "*rm*",
            "curl * | sh",
            "rm*",
        ] {
            let err = import(
                json!({"security": {"permissions": {"bash": {pattern: "deny"}}}})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap_err();
            assert!(
                matches!(err, ImportError::Unsupported { .. }),
                "{pattern}: {err}"
            );
            assert!(err.to_string().contains(pattern), "{err}");
        }
    }

    #[test]
    fn malformed_input_says_where() {
        let err =
            import(br#"{"security": {"permissions": {"bash": {"ls": "maybe"}}}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"security.permissions["bash"]["ls"]: unknown action 'maybe' (allow, ask, deny)"#
        );
        let err = import(b"{\"security\": [}").unwrap_err();
        assert!(err.to_string().starts_with("line 1 column"), "{err}");
    }
}
