//! The permission engine: a deterministic, native evaluator that runs before the
//! providers. Stages, strictest wins, any error is a deny:
//! 1. canonical arguments (see `canonical`); suspicious characters ask;
//! 2. sensitive paths deny, whatever the rules or the mode;
//! 3. `read_only` mode denies every tool that is not registered read-only;
//! 4. rules: any deny, else any ask, else allow when every part is allowed;
//!    what the shell parser cannot see through is at least an ask;
//! 5. the mode's default when no rule decided.

use serde::Deserialize;

use super::canonical::CanonicalCall;
use super::rules::{RuleOutcome, RuleSet, RuleSources};
use super::sensitive::{self, Access, SensitivePaths, SensitivePathsConfig};
use super::tools::{ToolKind, ToolRegistry, ToolsConfig};
use warden_types::cause::RuleRef;
use warden_types::decision::{Decision, Reason, Verdict};

use warden_types::codes::{self, PERMISSIONS_POLICY};

/// How calls that no rule decides are treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Read-only tools are allowed; every other tool asks.
    Default,
    /// Everything the rules do not deny or ask is allowed.
    #[default]
    FullAuto,
    /// Only read-only tools run; every other tool is denied.
    ReadOnly,
}

impl Mode {
    /// The mode as the config spells it (`default`, `full_auto`, `read_only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::FullAuto => "full_auto",
            Mode::ReadOnly => "read_only",
        }
    }
}

/// The `permissions:` block. Without it the engine runs in `full_auto` with no
/// rules: sensitive paths, suspicious characters and opaque commands still apply.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// How calls that no rule decides are treated.
    pub mode: Mode,
    /// Permission rules that allow (`Bash(git status)`, `Read(~/src/**)`).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Permission rules that ask a human.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Permission rules that deny; a deny wins over any allow or ask.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Paths no call may touch: the built-in credential and key paths, and the operator's.
    #[serde(default)]
    pub sensitive_paths: SensitivePathsConfig,
    /// Which tool names are shells, file tools, fetches; which are read-only.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// The home directory for `~` when a call's context names none.
    #[serde(default)]
    pub home: Option<String>,
    /// The working directory for relative paths when a call's context names none.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Where each rule is written: filled by the configuration's loader,
    /// never read from the file.
    #[serde(skip)]
    pub sources: RuleSources,
}

impl Default for PermissionsConfig {
    fn default() -> Self {
        PermissionsConfig {
            mode: Mode::FullAuto,
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            sensitive_paths: SensitivePathsConfig::default(),
            tools: ToolsConfig::default(),
            home: None,
            cwd: None,
            sources: RuleSources::default(),
        }
    }
}

/// The engine, compiled from the config once per load.
#[derive(Clone, Debug)]
pub struct PermissionEngine {
    mode: Mode,
    rules: RuleSet,
    sensitive: SensitivePaths,
    pub(crate) tools: ToolRegistry,
    pub(crate) home: Option<String>,
    pub(crate) cwd: Option<String>,
}

impl PermissionEngine {
    /// Compiles the config; an error names the key (relative to `permissions`).
    pub fn new(config: &PermissionsConfig) -> Result<Self, (String, String)> {
        let mut rules = RuleSet::parse(&config.deny, &config.ask, &config.allow)
            .map_err(|(at, err)| (at, err.to_string()))?;
        rules.place(&config.sources);
        let sensitive = sensitive::compile(&config.sensitive_paths)
            .map_err(|message| ("sensitive_paths".to_string(), message))?;
        let tools = ToolRegistry::new(&config.tools).map_err(|e| ("tools".to_string(), e.0))?;
        Ok(PermissionEngine {
            mode: config.mode,
            rules,
            sensitive,
            tools,
            home: config.home.clone(),
            cwd: config.cwd.clone(),
        })
    }

    /// The mode: what becomes of a call no rule decides.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The tool registry the engine classifies calls by.
    pub fn registry(&self) -> &ToolRegistry {
        &self.tools
    }

    /// A call in canonical form, with this engine's registry and its fallback
    /// home and working directory.
    pub fn canonical(&self, call: &warden_types::request::ToolCall) -> CanonicalCall {
        CanonicalCall::new(call, &self.tools, self.home.as_deref(), self.cwd.as_deref())
    }

    /// Whether the tool named `tool` is denied by its name alone, whatever its
    /// arguments: by the `read_only` bound, or by a deny rule on the whole
    /// tool (`mcp__fs__write_file`, `mcp__fs__*`). What a gateway withholds
    /// from a tool listing; calls are judged in full all the same.
    pub fn denies_by_name(&self, tool: &str) -> bool {
        let call = self.canonical(&warden_types::request::ToolCall::new(
            tool,
            serde_json::Value::Object(Default::default()),
        ));
        (self.mode == Mode::ReadOnly && !self.tools.is_read_only(&call.tool))
            || self.rules.denying_tool(&call).is_some()
    }

    /// Every permission rule with what it made of `call` (see
    /// [`RuleSet::explain`]), for `warden explain`.
    pub fn explain_rules(&self, call: &CanonicalCall) -> Vec<crate::rules::RuleCheck> {
        self.rules.explain(call)
    }

    /// Judges a canonical call.
    pub fn evaluate(&self, call: &CanonicalCall) -> Decision {
        self.judge(call).0
    }

    /// Judges a canonical call, and says whether an explicit allow or ask
    /// rule decided it (then risk triage's advisory findings stand aside).
    pub fn judge(&self, call: &CanonicalCall) -> (Decision, bool) {
        let judgment = self.judge_attributed(call);
        (judgment.decision, judgment.explicit)
    }

    /// As [`PermissionEngine::judge`], with the rules that decided, each
    /// with its text and place: what a decision's cause names.
    pub fn judge_attributed(&self, call: &CanonicalCall) -> Judgment {
        let (decision, explicit, rules) = self.judge_with_rules(call);
        Judgment {
            decision,
            explicit,
            rules,
        }
    }

    fn judge_with_rules(&self, call: &CanonicalCall) -> (Decision, bool, Vec<RuleRef>) {
        // 2. Sensitive paths: a hard boundary.
        // Public material (a public key, a certificate, `known_hosts` read) is
        // not a secret; what is written is judged as a write.
        let writes = call.kind == ToolKind::Write;
        let access = |path: &String, target: bool| {
            if (target && writes) || call.written.contains(path) || call.mcp_written.contains(path)
            {
                Access::Write
            } else {
                Access::Read
            }
        };
        let paths = call
            .paths
            .iter()
            .map(|p| (p, false))
            .chain(call.target_paths.iter().map(|p| (p, true)));
        for (path, target) in paths {
            let protecting = if call.public_by_use.contains(path) {
                self.sensitive
                    .protecting_used_publicly(path, access(path, target))
            } else {
                self.sensitive.protecting(path, access(path, target))
            };
            if let Some(pattern) = protecting {
                // A path under an unknown home reads better as `~/…`.
                let shown = path
                    .strip_prefix('/')
                    .filter(|p| p.starts_with("~/"))
                    .unwrap_or(path);
                return (
                    decision(
                        Verdict::Deny,
                        codes::SENSITIVE_PATH,
                        format!("'{shown}' is a sensitive path (matches '{pattern}')"),
                    ),
                    false,
                    Vec::new(),
                );
            }
        }
        // 3. The mode's upper bound.
        let read_only = self.tools.is_read_only(&call.tool);
        if self.mode == Mode::ReadOnly && !read_only {
            return (
                decision(
                    Verdict::Deny,
                    codes::READ_ONLY_MODE,
                    format!(
                        "read_only mode: '{}' is not a registered read-only tool",
                        call.tool
                    ),
                ),
                false,
                Vec::new(),
            );
        }
        // 4. Rules.
        let mut deciding: Vec<RuleRef> = Vec::new();
        let ruled = match self.rules.evaluate(call) {
            RuleOutcome::Deny(rule) => {
                let decision = decision(
                    Verdict::Deny,
                    codes::RULE_DENY,
                    format!("denied by rule {}", rule.text()),
                )
                .with_meta("rule", rule.text());
                return (placed(decision, &[rule]), true, vec![rule.reference()]);
            }
            RuleOutcome::Ask(rule) => {
                deciding.push(rule.reference());
                let decision = decision(
                    Verdict::Ask,
                    codes::RULE_ASK,
                    format!("rule {} asks for approval", rule.text()),
                )
                .with_meta("rule", rule.text());
                Some(placed(decision, &[rule]))
            }
            RuleOutcome::Allow(rules) => {
                deciding.extend(rules.iter().map(|r| r.reference()));
                let texts: Vec<&str> = rules.iter().map(|r| r.text()).collect();
                let decision = decision(
                    Verdict::Allow,
                    codes::RULE_ALLOW,
                    format!("allowed by {}", texts.join(", ")),
                )
                .with_meta("rule", texts.join(", "));
                Some(placed(decision, &rules))
            }
            RuleOutcome::NoMatch => None,
        };
        // 5. The mode's default.
        let explicit = ruled.is_some();
        let mut verdict = ruled.unwrap_or_else(|| self.mode_default(call, read_only));
        // What cannot be seen through, or hides characters, is at least an ask.
        let mut raise = |code: &str, message: String| {
            if verdict.verdict == Verdict::Allow {
                verdict = decision(Verdict::Ask, code, message);
            } else if verdict.verdict == Verdict::Ask {
                verdict.reasons.push(Reason::new(code, message));
            }
        };
        if let Some(opaque) = call.opaque.first() {
            raise(
                codes::OPAQUE_COMMAND,
                format!("the command cannot be analysed: {opaque}"),
            );
        }
        if let Some(what) = call.suspicious.first() {
            raise(
                codes::SUSPICIOUS_CHARACTERS,
                format!("the arguments hide characters: {what}"),
            );
        }
        // An ask raised over an allow rule is decided by what raised it.
        if verdict.verdict == Verdict::Ask && !verdict.metadata.contains_key("rule") {
            deciding.clear();
        }
        (verdict, explicit, deciding)
    }

    fn mode_default(&self, call: &CanonicalCall, read_only: bool) -> Decision {
        let (verdict, why) = match self.mode {
            // Nothing to say: full_auto allows what nothing else decides.
            Mode::FullAuto => {
                return Decision::new(Verdict::Allow, Vec::new()).with_policy(PERMISSIONS_POLICY);
            }
            Mode::Default | Mode::ReadOnly if read_only => (
                Verdict::Allow,
                format!("allows the read-only tool '{}'", call.tool),
            ),
            _ => {
                let what = if call.kind == ToolKind::Shell {
                    "a shell command"
                } else {
                    "a tool that is not read-only"
                };
                (
                    Verdict::Ask,
                    format!("asks before {what} ('{}')", call.tool),
                )
            }
        };
        decision(
            verdict,
            codes::MODE_DEFAULT,
            format!("{} mode {why}", self.mode.as_str()),
        )
    }
}

impl Default for PermissionEngine {
    fn default() -> Self {
        PermissionEngine::new(&PermissionsConfig::default())
            .expect("the default permissions compile")
    }
}

/// A permission engine's judgment with what decided it.
#[derive(Clone, Debug)]
pub struct Judgment {
    /// The decision.
    pub decision: Decision,
    /// Whether an explicit allow or ask rule decided.
    pub explicit: bool,
    /// The rules that decided (one deny or ask rule, or the allow rules that
    /// covered the call), each with its place; empty when no rule did.
    pub rules: Vec<RuleRef>,
}

/// `rule_source`: where the deciding rules are written (`file:line`, joined
/// as `rule` joins their texts), when every one is placed.
fn placed(decision: Decision, rules: &[&crate::rules::Rule]) -> Decision {
    let places: Option<Vec<String>> = rules
        .iter()
        .map(|r| r.source().map(ToString::to_string))
        .collect();
    match places {
        Some(places) if !places.is_empty() => decision.with_meta("rule_source", places.join(", ")),
        _ => decision,
    }
}

fn decision(verdict: Verdict, code: &str, message: String) -> Decision {
    Decision::new(verdict, vec![Reason::new(code, message)]).with_policy(PERMISSIONS_POLICY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(mode: Mode, deny: &[&str]) -> PermissionEngine {
        PermissionEngine::new(&PermissionsConfig {
            mode,
            deny: deny.iter().map(|r| r.to_string()).collect(),
            ..PermissionsConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn a_deny_rule_on_the_whole_tool_denies_it_by_name() {
        let engine = engine(Mode::FullAuto, &["mcp__fs__write_file", "mcp__db__*"]);
        assert!(engine.denies_by_name("mcp__fs__write_file"));
        assert!(engine.denies_by_name("mcp__db__drop"));
        assert!(!engine.denies_by_name("mcp__fs__read_file"));
    }

    #[test]
    fn a_deny_rule_with_a_specifier_does_not_deny_the_tool_by_name() {
        let engine = engine(Mode::FullAuto, &["Bash(rm *)", "Write(~/.ssh/**)"]);
        assert!(!engine.denies_by_name("bash"));
        assert!(!engine.denies_by_name("write"));
    }

    #[test]
    fn read_only_mode_denies_by_name_every_tool_not_registered_read_only() {
        let engine = engine(Mode::ReadOnly, &[]);
        assert!(engine.denies_by_name("mcp__fs__write_file"));
        assert!(!engine.denies_by_name("read"));
    }
}
