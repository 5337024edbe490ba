//! The argument policy: which of a call's arguments the log records (none
//! unless the operator opts in, field by field), redacted and capped.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};
use warden_policy::redact::{MAX_REASON_CHARS, Redactor};
use warden_types::caller::Attribution;
use warden_types::request::ToolCall;
use warden_types::{CallContext, Caller};

use crate::config::DecisionLogConfig;
use crate::error::DecisionLogError;
use crate::replay::facts::ReplayFacts;

pub use warden_policy::redact::REDACTED;

/// The most characters kept of a reason message or a logged argument.
pub const MAX_LOGGED_CHARS: usize = MAX_REASON_CHARS;

/// Which arguments are logged and how they are cleaned; swapped on reload.
pub struct ArgumentPolicy {
    fields: BTreeMap<String, Vec<String>>,
    redactor: Redactor,
}

impl ArgumentPolicy {
    /// Checks the whole `decision_log` block (on start and on every reload)
    /// and compiles its argument policy.
    pub fn new(config: &DecisionLogConfig) -> Result<ArgumentPolicy, DecisionLogError> {
        if !(1..=60_000).contains(&config.fsync_interval_ms) {
            return Err(DecisionLogError::Interval(config.fsync_interval_ms));
        }
        let range = |key, value, range| DecisionLogError::Range { key, value, range };
        if let Some(max) = config.rotate.max_bytes.filter(|m| *m < 4096) {
            return Err(range("rotate.max_bytes", max, "at least 4096"));
        }
        if let Some(age) = config.rotate.max_age_s.filter(|a| *a == 0) {
            return Err(range("rotate.max_age_s", age, "at least 1"));
        }
        for (tool, fields) in &config.arguments {
            if fields.iter().any(|f| f.is_empty()) {
                return Err(DecisionLogError::EmptyField { tool: tool.clone() });
            }
        }
        Ok(ArgumentPolicy {
            fields: config.arguments.clone(),
            redactor: Redactor::new(&config.redact)?,
        })
    }

    /// The opted-in arguments of a call, redacted and capped; `None` when the
    /// operator opted in none for this tool.
    pub fn arguments(&self, call: &ToolCall) -> Option<Map<String, Value>> {
        self.arguments_of(&call.tool_name, &call.tool_input)
    }

    /// As [`ArgumentPolicy::arguments`], for a tool's name and arguments.
    pub fn arguments_of(&self, tool_name: &str, tool_input: &Value) -> Option<Map<String, Value>> {
        let wanted = self.wanted(tool_name);
        if wanted.is_empty() {
            return None;
        }
        let input = tool_input.as_object()?;
        let mut out = Map::new();
        for field in wanted {
            if let Some(value) = input.get(field.as_str()) {
                out.insert(field.clone(), self.clean(value));
            }
        }
        Some(out)
    }

    /// What replay needs beside the logged arguments of `call` (see
    /// [`ReplayFacts`]); `None` when none of the tool's arguments are logged.
    pub fn replay_facts(&self, call: &ToolCall, caller: Caller) -> Option<ReplayFacts> {
        let wanted = self.wanted(&call.tool_name);
        let input = call.tool_input.as_object().filter(|_| !wanted.is_empty())?;
        let mut facts = ReplayFacts::default();
        for (name, value) in input {
            if !wanted.contains(&name) {
                facts.omitted.push(cap(&self.redact(name)));
                continue;
            }
            let text = match value {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                Value::Array(_) | Value::Object(_) => {
                    facts.as_text.push(name.clone());
                    Cow::Owned(value.to_string())
                }
                _ => continue,
            };
            self.note(name, &text, &mut facts);
        }
        let context = &call.context;
        for (key, id) in [
            ("agent_id", &context.agent_id),
            ("thread_id", &context.thread_id),
            ("run_id", &context.run_id),
            ("mcp_server", &context.mcp_server),
            ("mcp_client", &context.mcp_client),
            ("traceparent", &context.traceparent),
        ] {
            if let Some(id) = id {
                self.note(&format!("context.{key}"), id, &mut facts);
            }
        }
        if let Some(id) = &call.tool_call_id {
            self.note("tool_call_id", id, &mut facts);
        }
        self.note("tool_name", &call.tool_name, &mut facts);
        facts.context = self.believed(context, caller, &mut facts);
        Some(facts)
    }

    /// The context keys the pipeline believed from `caller` (what
    /// `warden_policy::trust` and the interaction policy admit), strings
    /// cleaned; without the ids and the time a line logs on its own.
    fn believed(
        &self,
        context: &CallContext,
        caller: Caller,
        facts: &mut ReplayFacts,
    ) -> CallContext {
        let mut clean = |key: &str, value: &Option<String>, believed: bool| {
            let value = value.as_deref().filter(|_| believed)?;
            self.note(&format!("context.{key}"), value, facts);
            Some(cap(&self.redact(value)))
        };
        let asserts = caller.asserts();
        let internal = caller == Caller::Internal;
        let attribution = |field: Attribution| asserts.contains(field);
        CallContext {
            user_id: clean(
                "user_id",
                &context.user_id,
                attribution(Attribution::UserId),
            ),
            user_role: clean(
                "user_role",
                &context.user_role,
                attribution(Attribution::UserRole),
            ),
            oauth_provider: clean(
                "oauth_provider",
                &context.oauth_provider,
                attribution(Attribution::OauthProvider),
            ),
            oauth_id: clean(
                "oauth_id",
                &context.oauth_id,
                attribution(Attribution::OauthId),
            ),
            cwd: clean("cwd", &context.cwd, true),
            home: clean("home", &context.home, true),
            interaction_mode: clean("interaction_mode", &context.interaction_mode, internal),
            channel_name: clean("channel_name", &context.channel_name, internal),
            run_origin: clean("run_origin", &context.run_origin, internal),
            non_interactive: context.non_interactive.filter(|_| internal),
            disable_clarification: context.disable_clarification.filter(|_| internal),
            is_subagent: context.is_subagent,
            can_resume: context.can_resume,
            ..CallContext::default()
        }
    }

    /// Records in `facts` whether logging `text` (named `name`) redacts or
    /// cuts it.
    fn note(&self, name: &str, text: &str, facts: &mut ReplayFacts) {
        let redacted = self.redactor.redact(text);
        if redacted != text {
            facts.redacted.push(name.to_string());
        }
        if cap(&redacted) != redacted {
            facts.cut.push(name.to_string());
        }
    }

    /// The argument names opted in for a tool (its own and the wildcard's).
    fn wanted(&self, tool_name: &str) -> Vec<&String> {
        [self.fields.get(tool_name), self.fields.get("*")]
            .into_iter()
            .flatten()
            .flatten()
            .collect()
    }

    /// Strings are redacted and capped; other scalars are kept; objects and
    /// arrays are logged as their JSON text, redacted and capped.
    fn clean(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(cap(&self.redact(s))),
            Value::Array(_) | Value::Object(_) => {
                Value::String(cap(&self.redact(&value.to_string())))
            }
            scalar => scalar.clone(),
        }
    }

    /// `text` with every secret-shaped part replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// The redactor of this policy's configuration.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

/// At most [`MAX_LOGGED_CHARS`] characters, with `…` when cut.
pub fn cap(text: &str) -> String {
    warden_policy::redact::excerpt(text, MAX_LOGGED_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(yaml: &str) -> ArgumentPolicy {
        let config: DecisionLogConfig = serde_norway::from_str(yaml).unwrap();
        ArgumentPolicy::new(&config).unwrap()
    }

    #[test]
    fn no_argument_is_logged_without_an_opt_in() {
        let call = ToolCall::new("bash", json!({"command": "ls"}));
        assert_eq!(policy("{}").arguments(&call), None);
    }

    #[test]
    fn only_the_opted_in_fields_are_logged() {
        let p = policy("arguments: {bash: [command]}");
        let call = ToolCall::new("bash", json!({"command": "ls", "env": {"A": "1"}}));
        assert_eq!(
            Value::Object(p.arguments(&call).unwrap()),
            json!({"command": "ls"})
        );
    }

    #[test]
    fn a_wildcard_opts_in_a_field_for_every_tool() {
        let p = policy("arguments: {'*': [path]}");
        let call = ToolCall::new("read_file", json!({"path": "/etc/hosts", "limit": 3}));
        assert_eq!(
            Value::Object(p.arguments(&call).unwrap()),
            json!({"path": "/etc/hosts"})
        );
    }

    #[test]
    fn secrets_in_logged_arguments_are_redacted() {
        let p = policy("arguments: {bash: [command]}");
        let command = "curl -H 'Authorization: Bearer abcdefgh12345' https://bob:hunter2@example.com?api_key=XYZ123";
        let call = ToolCall::new("bash", json!({ "command": command }));
        let logged = p.arguments(&call).unwrap()["command"].to_string();
        for secret in ["abcdefgh12345", "hunter2", "XYZ123"] {
            assert!(!logged.contains(secret), "{secret} leaked: {logged}");
        }
        assert!(logged.contains(REDACTED), "{logged}");
    }

    #[test]
    fn operator_patterns_are_redacted_too() {
        let p = policy("arguments: {bash: [command]}\nredact: ['acct-[0-9]+']");
        let call = ToolCall::new("bash", json!({"command": "bill acct-991 now"}));
        assert_eq!(
            p.arguments(&call).unwrap()["command"],
            json!("bill [REDACTED] now")
        );
    }

    #[test]
    fn an_invalid_pattern_is_refused_by_index() {
        let config: DecisionLogConfig = serde_norway::from_str("redact: ['ok', '(']").unwrap();
        let err = ArgumentPolicy::new(&config).err().unwrap().to_string();
        assert!(err.contains("decision_log.redact[1]"), "{err}");
    }

    #[test]
    fn long_values_are_capped() {
        let long = "x".repeat(2 * MAX_LOGGED_CHARS);
        assert_eq!(cap(&long).chars().count(), MAX_LOGGED_CHARS + 1);
        assert_eq!(cap("short"), "short");
    }
}
