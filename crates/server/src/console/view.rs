//! What the console shows of an approval: argument summaries a human can read
//! (every secret redacted by the one redactor, long values cut with the full
//! redacted value kept for expanding), the reasons that asked, the run and
//! its mode. Never a value as the model sent it.

use serde::Serialize;
use serde_json::Value;

use warden_approval::{
    ApprovalRecord, ApprovalStatus, ApprovalView, CallStatus, DecisionKind, Resolution,
};
use warden_policy::interaction::RunInteractionPolicy;
use warden_policy::redact::{Redactor, excerpt};
use warden_types::decision::Reason;

/// The characters of a value shown before it is cut.
pub const SUMMARY_CHARS: usize = 200;

/// An approval in the list.
#[derive(Serialize)]
pub struct Listed {
    pub approval_id: String,
    pub thread_id: String,
    pub principal: String,
    pub run_id: String,
    pub created_at: String,
    pub status: ApprovalStatus,
    /// The tools waiting, in request order.
    pub tools: Vec<String>,
}

impl Listed {
    pub fn of(view: &ApprovalView) -> Listed {
        Listed {
            approval_id: view.approval_id.clone(),
            thread_id: view.thread_id.clone(),
            principal: view.principal.clone(),
            run_id: view.run_id.clone(),
            created_at: view.created_at.clone(),
            status: view.status,
            tools: view.requests.iter().map(|r| r.tool_name.clone()).collect(),
        }
    }
}

/// One approval, as the detail page shows it.
#[derive(Serialize)]
pub struct Detail {
    pub approval_id: String,
    pub thread_id: String,
    pub principal: String,
    pub run_id: String,
    pub status: ApprovalStatus,
    pub created_at: String,
    /// The run's interaction mode, as the pause judged it.
    pub interaction_mode: String,
    /// The calls waiting for a human.
    pub requests: Vec<RequestView>,
    /// The other calls of the same response, and what became of them.
    pub others: Vec<OutcomeView>,
    /// Why per-call decisions cannot be taken (only a reject-all can).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionView>,
}

/// One call waiting for a human.
#[derive(Serialize)]
pub struct RequestView {
    pub request_id: String,
    pub tool_call_id: Option<String>,
    pub tool_name: String,
    /// Each argument, redacted and summarised.
    pub fields: Vec<Field>,
    /// The arguments as JSON, redacted, to start an edit from.
    pub args_json: String,
    /// Whether the redactor replaced anything: an edit must then give those
    /// values again.
    pub redacted: bool,
    /// The reasons the stages gave for asking.
    pub reasons: Vec<Reason>,
}

/// One argument.
#[derive(Serialize)]
pub struct Field {
    pub name: String,
    /// At most [`SUMMARY_CHARS`] characters.
    pub short: String,
    /// The whole redacted value, when `short` is cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full: Option<String>,
}

/// What became of one call, without its arguments.
#[derive(Serialize)]
pub struct OutcomeView {
    pub index: usize,
    /// The call's id in the model's message.
    pub id: Option<String>,
    pub name: String,
    pub status: CallStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionKind>,
    pub reasons: Vec<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// A resolution, without arguments or the message.
#[derive(Serialize)]
pub struct ResolutionView {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    /// The human who answered: the approver, or the name a relay gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The relay token that named `reviewer`, when a harness relayed the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    pub resolved_at: String,
    pub calls: Vec<OutcomeView>,
}

impl ResolutionView {
    pub fn of(resolution: &Resolution) -> ResolutionView {
        ResolutionView {
            approval_id: resolution.approval_id.clone(),
            thread_id: resolution.thread_id.clone(),
            run_id: resolution.run_id.clone(),
            reviewer: resolution.reviewer.clone(),
            relayed_by: resolution.relayed_by.clone(),
            resolved_at: resolution.resolved_at.clone(),
            calls: resolution.calls.iter().map(outcome).collect(),
        }
    }
}

fn outcome(call: &warden_approval::CallOutcome) -> OutcomeView {
    OutcomeView {
        index: call.index,
        id: call.id.clone(),
        name: call.name.clone(),
        status: call.status,
        request_id: call.request_id.clone(),
        decision: call.decision,
        reasons: call.reasons.clone(),
        decided_by: call.decided_by.clone(),
    }
}

impl Detail {
    pub fn of(record: &ApprovalRecord, redactor: &Redactor) -> Detail {
        let view = ApprovalView::from(record);
        let interaction_mode = RunInteractionPolicy::resolve(&record.context, record.caller)
            .map(|p| p.mode.as_str().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let requests = view
            .requests
            .iter()
            .map(|r| {
                let (args, redacted) = redact_value(redactor, &r.args);
                RequestView {
                    request_id: r.request_id.clone(),
                    tool_call_id: r.tool_call_id.clone(),
                    tool_name: r.tool_name.clone(),
                    fields: fields(&args),
                    args_json: serde_json::to_string_pretty(&args).unwrap_or_default(),
                    redacted,
                    reasons: r.reasons.clone(),
                }
            })
            .collect();
        Detail {
            approval_id: view.approval_id.clone(),
            thread_id: view.thread_id.clone(),
            principal: view.principal.clone(),
            run_id: view.run_id.clone(),
            status: view.status,
            created_at: view.created_at.clone(),
            interaction_mode,
            requests,
            others: record
                .calls
                .iter()
                .filter(|c| c.status != CallStatus::Pending)
                .map(outcome)
                .collect(),
            broken: view.broken.clone(),
            resolution: view.resolution.as_ref().map(ResolutionView::of),
        }
    }
}

/// `value` with every secret replaced, and whether any was. The JSON text is
/// redacted as a whole, so that a key names its value a secret
/// (`{"password": "…"}`) as it does in a command line.
pub fn redact_value(redactor: &Redactor, value: &Value) -> (Value, bool) {
    let text = value.to_string();
    let redacted = redactor.redact(&text);
    if redacted == text {
        return (value.clone(), false);
    }
    match serde_json::from_str(&redacted) {
        Ok(parsed) => (parsed, true),
        // A replacement broke the JSON: redact string by string instead.
        Err(_) => (redact_strings(redactor, value), true),
    }
}

fn redact_strings(redactor: &Redactor, value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.redact(s).into_owned()),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_strings(redactor, v)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_strings(redactor, v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Each top-level argument (or the whole value when it is not an object).
fn fields(args: &Value) -> Vec<Field> {
    let field = |name: &str, value: &Value| {
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let short = excerpt(&text, SUMMARY_CHARS);
        let cut = short != text;
        Field {
            name: name.to_string(),
            short,
            full: cut.then_some(text),
        }
    };
    match args {
        Value::Object(map) => map.iter().map(|(k, v)| field(k, v)).collect(),
        other => vec![field("", other)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_secret_in_the_arguments_is_redacted_in_the_summary_and_the_edit_text() {
        let args = json!({"command": "curl -H 'Authorization: Bearer abcdefgh12345' x", "password": "hunter2"});
        let (redacted, changed) = redact_value(&Redactor::builtin(), &args);
        assert!(changed);
        let text = redacted.to_string();
        assert!(
            !text.contains("abcdefgh12345") && !text.contains("hunter2"),
            "{text}"
        );
    }

    #[test]
    fn a_long_value_is_cut_and_kept_whole_for_expanding() {
        let long = "x".repeat(500);
        let f = fields(&json!({ "content": long }));
        assert_eq!(f[0].short.chars().count(), SUMMARY_CHARS + 1);
        assert_eq!(f[0].full.as_deref(), Some(long.as_str()));
        assert!(fields(&json!({"path": "a"}))[0].full.is_none());
    }
}
