//! One tool call, as a provider sees it: the tool, its arguments (parsed on
//! first use) and what the host knows about the run, with the lookups that
//! policies need.

use std::cell::OnceCell;

use serde_json::{Map, Value};

use crate::bindings::warden::guardrail::types as wit;
use crate::path::JsonPath;
use warden_analysis::{self as analysis, shell::Analysis};

/// How the run that made the call interacts with humans, as the host resolved
/// it from trusted context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InteractionMode {
    /// A human is present and can answer.
    #[default]
    Interactive,
    /// A scheduled run: nobody is watching.
    Scheduled,
    /// A run triggered by a webhook.
    Webhook,
    /// An autonomous run that must not ask.
    Autonomous,
}

impl InteractionMode {
    /// The mode as the wire spells it: `interactive`, `scheduled`, `webhook`
    /// or `autonomous`.
    pub fn as_str(self) -> &'static str {
        match self {
            InteractionMode::Interactive => "interactive",
            InteractionMode::Scheduled => "scheduled",
            InteractionMode::Webhook => "webhook",
            InteractionMode::Autonomous => "autonomous",
        }
    }
}

/// A tool call.
///
/// ```
/// use warden_provider::{json, Call, JsonPath};
///
/// let call = Call::new("write_file", json!({"path": "/tmp/x", "options": {"mode": 420}}))
///     .with_user_role("viewer");
/// assert_eq!(call.arg_str("path"), Some("/tmp/x"));
/// assert_eq!(call.get(&JsonPath::parse("options.mode").unwrap()), Some(&json!(420)));
/// assert_eq!(call.role_tool_key(), Some("viewer:write_file"));
/// ```
#[derive(Clone, Debug)]
pub struct Call {
    tool_name: String,
    /// The arguments as the host sent them: a JSON object, as text.
    input_json: String,
    input: OnceCell<Value>,
    role_tool_key: OnceCell<Option<String>>,
    agent_id: Option<String>,
    thread_id: Option<String>,
    run_id: Option<String>,
    tool_call_id: Option<String>,
    user_id: Option<String>,
    user_role: Option<String>,
    oauth_provider: Option<String>,
    oauth_id: Option<String>,
    is_subagent: bool,
    timestamp: String,
    interaction_mode: InteractionMode,
}

impl Call {
    /// A call with no attribution, in an interactive run; for tests. Add
    /// attribution with the `with_*` methods.
    pub fn new(tool_name: impl Into<String>, input: Value) -> Call {
        Call {
            tool_name: tool_name.into(),
            input_json: input.to_string(),
            input: OnceCell::from(input),
            role_tool_key: OnceCell::new(),
            agent_id: None,
            thread_id: None,
            run_id: None,
            tool_call_id: None,
            user_id: None,
            user_role: None,
            oauth_provider: None,
            oauth_id: None,
            is_subagent: false,
            timestamp: "1970-01-01T00:00:00Z".into(),
            interaction_mode: InteractionMode::Interactive,
        }
    }

    /// The tool's name, e.g. `bash` or `mcp__github__create_issue`.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The arguments, a JSON object. Parsed on first use.
    pub fn input(&self) -> &Value {
        self.input.get_or_init(|| {
            // The host sends a JSON object; anything else reads as no arguments.
            serde_json::from_str::<Value>(&self.input_json)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| Value::Object(Map::new()))
        })
    }

    /// The arguments as the JSON text the host sent (DeerFlow's `message`).
    pub fn input_json(&self) -> &str {
        &self.input_json
    }

    /// A top-level argument.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.input().get(name)
    }

    /// A top-level argument that is a string.
    pub fn arg_str(&self, name: &str) -> Option<&str> {
        self.arg(name).and_then(Value::as_str)
    }

    /// The argument at a path: `files[0].path`, `/files/0/path`.
    pub fn get(&self, path: &JsonPath) -> Option<&Value> {
        path.lookup(self.input())
    }

    /// The string argument at a path.
    pub fn get_str(&self, path: &JsonPath) -> Option<&str> {
        self.get(path).and_then(Value::as_str)
    }

    /// The shell command of a shell tool: the `command` argument.
    pub fn command(&self) -> Option<&str> {
        self.arg_str("command")
    }

    /// The shell analysis of [`Call::command`]: every simple command the line
    /// would run, seen through quoting, wrappers (`sudo`, `env`), `bash -c`,
    /// `eval`, substitutions and pipes, exactly as the host analyses it.
    ///
    /// ```
    /// use warden_provider::{json, Call};
    ///
    /// let call = Call::new("bash", json!({"command": "sudo env X=1 bash -c '/bin/r\"\"m -rf /tmp/x' | tee log"}));
    /// let shell = call.shell().unwrap();
    /// assert!(shell.commands.iter().any(|c| c.is("rm") && c.flags().contains("--recursive")));
    /// ```
    pub fn shell(&self) -> Option<Analysis> {
        self.command().map(analysis::shell::analyze)
    }

    /// The places the shell command would contact over the network: the
    /// URLs of `curl` and `wget`, the remotes of `git`, the destinations of
    /// `ssh`, `scp`, `sftp`, `rsync`, `nc`, `telnet`, and `/dev/tcp/…`, each
    /// with its host (lower-cased) and port when known; empty without a
    /// command. A destination that is not literal (`curl "$URL"`) has no host:
    /// a provider that allows only listed hosts refuses it. What the analysis
    /// cannot see through (`eval "$x"`, a computed program) is not here either:
    /// check [`Analysis::is_opaque`] too.
    ///
    /// ```
    /// use warden_provider::{json, Call};
    ///
    /// let call = Call::new("bash", json!({"command": "curl -o out.html -H 'X: y' https://api.example.com/v1 && git push git@code.example.org:o/r.git"}));
    /// let hosts: Vec<_> = call.contacts().into_iter().map(|c| c.host.unwrap()).collect();
    /// assert_eq!(hosts, ["api.example.com", "code.example.org"]);
    /// ```
    pub fn contacts(&self) -> Vec<analysis::contacts::Contact> {
        self.shell().map(|a| a.contacts()).unwrap_or_default()
    }

    /// A string argument as a lexically canonical path (the host's own
    /// canonicalisation): `.`, `..` and repeated slashes collapsed, `..` never
    /// above `/`. The contract carries neither the run's working directory nor
    /// the home directory, so a relative path stays relative and `~` stays as
    /// written: treat those as the unknowns they are.
    /// ```
    /// use warden_provider::{json, Call};
    ///
    /// let call = Call::new("read_file", json!({"path": "/srv/app/../../etc//passwd"}));
    /// assert_eq!(call.path_arg("path").as_deref(), Some("/etc/passwd"));
    /// ```
    pub fn path_arg(&self, name: &str) -> Option<String> {
        self.arg_str(name)
            .map(|path| analysis::path::canonicalize(path, None, None))
    }

    /// `role:tool`, e.g. `viewer:bash`; none without a user role. Built on
    /// first use.
    pub fn role_tool_key(&self) -> Option<&str> {
        self.role_tool_key
            .get_or_init(|| {
                self.user_role
                    .as_ref()
                    .map(|role| format!("{role}:{}", self.tool_name))
            })
            .as_deref()
    }

    /// The agent (or passport) making the call.
    pub fn agent_id(&self) -> Option<&str> {
        self.agent_id.as_deref()
    }

    /// The conversation thread the call belongs to.
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// The agent run that made the call.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The model's id for this tool call.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// The end user on whose behalf the agent acts.
    pub fn user_id(&self) -> Option<&str> {
        self.user_id.as_deref()
    }

    /// The end user's role, e.g. `admin`.
    pub fn user_role(&self) -> Option<&str> {
        self.user_role.as_deref()
    }

    /// The OAuth provider that authenticated the end user.
    pub fn oauth_provider(&self) -> Option<&str> {
        self.oauth_provider.as_deref()
    }

    /// The end user's id at that OAuth provider.
    pub fn oauth_id(&self) -> Option<&str> {
        self.oauth_id.as_deref()
    }

    /// True when a subagent made the call.
    pub fn is_subagent(&self) -> bool {
        self.is_subagent
    }

    /// When the call was made, RFC 3339 UTC.
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }

    /// How the run may reach a human (interactive, scheduled, webhook, autonomous).
    pub fn interaction_mode(&self) -> InteractionMode {
        self.interaction_mode
    }

    /// The call, made by this agent (or passport).
    pub fn with_agent_id(mut self, id: impl Into<String>) -> Self {
        self.agent_id = Some(id.into());
        self
    }

    /// The call, in this thread.
    pub fn with_thread_id(mut self, id: impl Into<String>) -> Self {
        self.thread_id = Some(id.into());
        self
    }

    /// The call, in this run.
    pub fn with_run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }

    /// The call, with this model id.
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// The call, on behalf of this end user.
    pub fn with_user_id(mut self, id: impl Into<String>) -> Self {
        self.user_id = Some(id.into());
        self
    }

    /// The call, on behalf of a user with this role.
    pub fn with_user_role(mut self, role: impl Into<String>) -> Self {
        self.user_role = Some(role.into());
        self.role_tool_key = OnceCell::new();
        self
    }

    /// The call, with the end user authenticated by this OAuth provider as `id`.
    pub fn with_oauth(mut self, provider: impl Into<String>, id: impl Into<String>) -> Self {
        self.oauth_provider = Some(provider.into());
        self.oauth_id = Some(id.into());
        self
    }

    /// The call, made (or not) by a subagent.
    pub fn with_subagent(mut self, is_subagent: bool) -> Self {
        self.is_subagent = is_subagent;
        self
    }

    /// The call, made at this RFC 3339 time.
    pub fn with_timestamp(mut self, timestamp: impl Into<String>) -> Self {
        self.timestamp = timestamp.into();
        self
    }

    /// The call, in a run of this interaction mode.
    pub fn with_interaction_mode(mut self, mode: InteractionMode) -> Self {
        self.interaction_mode = mode;
        self
    }
}

impl From<wit::ToolCall> for Call {
    fn from(call: wit::ToolCall) -> Call {
        Call {
            tool_name: call.tool_name,
            input_json: call.tool_input,
            input: OnceCell::new(),
            role_tool_key: OnceCell::new(),
            agent_id: call.agent_id,
            thread_id: call.thread_id,
            run_id: call.run_id,
            tool_call_id: call.tool_call_id,
            user_id: call.user_id,
            user_role: call.user_role,
            oauth_provider: call.oauth_provider,
            oauth_id: call.oauth_id,
            is_subagent: call.is_subagent,
            timestamp: call.timestamp,
            interaction_mode: match call.interaction_mode {
                wit::InteractionMode::Interactive => InteractionMode::Interactive,
                wit::InteractionMode::Scheduled => InteractionMode::Scheduled,
                wit::InteractionMode::Webhook => InteractionMode::Webhook,
                wit::InteractionMode::Autonomous => InteractionMode::Autonomous,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn from_host(tool_input: &str) -> Call {
        Call::from(wit::ToolCall {
            tool_name: "bash".into(),
            tool_input: tool_input.into(),
            agent_id: Some("agent-1".into()),
            thread_id: None,
            run_id: None,
            tool_call_id: None,
            user_id: None,
            user_role: Some("admin".into()),
            oauth_provider: None,
            oauth_id: None,
            is_subagent: true,
            timestamp: "2026-01-01T00:00:00Z".into(),
            interaction_mode: wit::InteractionMode::Webhook,
        })
    }

    #[test]
    fn a_call_from_the_host_keeps_its_attribution() {
        let call = from_host(r#"{"command":"ls"}"#);
        assert_eq!(call.agent_id(), Some("agent-1"));
        assert!(call.is_subagent());
        assert_eq!(call.interaction_mode(), InteractionMode::Webhook);
        assert_eq!(call.role_tool_key(), Some("admin:bash"));
    }

    #[test]
    fn arguments_are_parsed_from_the_hosts_json() {
        let call = from_host(r#"{"command":"ls -la","n":3}"#);
        assert_eq!(call.command(), Some("ls -la"));
        assert_eq!(call.arg("n"), Some(&json!(3)));
        assert_eq!(call.arg_str("n"), None);
        assert_eq!(call.input_json(), r#"{"command":"ls -la","n":3}"#);
    }

    #[test]
    fn arguments_that_are_not_an_object_read_as_none() {
        let call = from_host("[1,2]");
        assert_eq!(call.input(), &json!({}));
        assert_eq!(call.arg("0"), None);
    }

    #[test]
    fn without_a_role_there_is_no_role_tool_key() {
        assert_eq!(Call::new("bash", json!({})).role_tool_key(), None);
    }

    #[test]
    fn a_path_reaches_nested_string_arguments() {
        let call = Call::new("edit", json!({"files": [{"path": "/etc/passwd"}]}));
        let path = JsonPath::parse("files[0].path").unwrap();
        assert_eq!(call.get_str(&path), Some("/etc/passwd"));
    }
}
