//! Reading a decision log for replay: each line becomes the call the live
//! pipeline judged, rebuilt through the daemon's own request parser
//! ([`ToolCall::from_json`]), or the reason it cannot be (never a guess).

use serde::Deserialize;
use serde_json::{Map, Value, json};
use warden_types::codes::APPROVAL_PENDING;
use warden_types::decision::Verdict;
use warden_types::request::ToolCall;

use super::facts::ReplayFacts;

/// What one line of a decision log is, for replay.
#[derive(Debug)]
pub enum Entry {
    /// A judged call, rebuilt.
    Call(Box<LoggedCall>),
    /// A decision line that cannot be judged again, and why.
    Skipped(Skip),
    /// Not a decision: a checkpoint of the hash chain, or an empty line.
    Other,
}

/// Why a decision line is not judged again.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// Not a JSON object.
    Malformed(String),
    /// A JSON object, but not a decision line: a field replay reads is
    /// missing or of the wrong type.
    FieldsMissing(String),
    /// The operator did not opt in the tool's arguments.
    ArgumentsNotLogged,
    /// The arguments are logged, but without what replay needs beside them
    /// (a line written before `replay` was logged): whether any was left out
    /// cannot be told.
    ReplayFactsMissing,
    /// Some of the call's arguments were not opted in.
    ArgumentsPartial,
    /// An argument, an id or a context key was redacted.
    Redacted,
    /// An argument, an id or a context key was cut.
    Cut,
    /// A call of a model response (the approval gate, its grants) or a
    /// resume's (a human's answer): the line keeps no context to judge it by.
    GateCall,
    /// The request was refused before it was judged (malformed by its
    /// model: size, JSON, names): its arguments were never read.
    RefusedAtIntake,
    /// The rebuilt request is refused by the request parser.
    Invalid(String),
}

impl Skip {
    /// The reason's name, as coverage counts it.
    pub fn code(&self) -> &'static str {
        match self {
            Skip::Malformed(_) => "malformed",
            Skip::FieldsMissing(_) => "fields_missing",
            Skip::ArgumentsNotLogged => "arguments_not_logged",
            Skip::ReplayFactsMissing => "replay_facts_missing",
            Skip::ArgumentsPartial => "arguments_partial",
            Skip::Redacted => "redacted",
            Skip::Cut => "cut",
            Skip::GateCall => "gate_call",
            Skip::RefusedAtIntake => "refused_at_intake",
            Skip::Invalid(_) => "request_invalid",
        }
    }

    /// What is wrong with the line, for a reason that names a problem in
    /// the log itself (not a choice the operator made).
    pub fn problem(&self) -> Option<&str> {
        match self {
            Skip::Malformed(why) | Skip::FieldsMissing(why) | Skip::Invalid(why) => Some(why),
            _ => None,
        }
    }
}

/// A logged call, rebuilt as the pipeline judged it.
#[derive(Debug)]
pub struct LoggedCall {
    /// The line's decision id.
    pub decision_id: String,
    /// The call, its context as the pipeline believed it and its clock the
    /// time it was judged at: to be judged as an internal caller's.
    pub call: ToolCall,
    /// What the log says of its judgment.
    pub logged: LoggedSide,
    /// The logged answer was not the policy's alone: the thread waited for a
    /// human (`warden.approval_pending`), or the approval store or the daemon
    /// could not judge it. Replay judges the policy only and counts it apart.
    pub approval_dependent: bool,
}

/// One side of a judgment, as the log or a replay states it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LoggedSide {
    /// The verdict.
    pub verdict: Verdict,
    /// The stage whose opinion decided (`permissions`, `provider:<name>`, ...).
    pub decided_by: Option<String>,
    /// The deciding provider's component digest, where the log has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The policy id that decided, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_id: Option<String>,
    /// The reasons, code and message.
    pub reasons: Vec<SideReason>,
}

/// A reason of one side.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
pub struct SideReason {
    /// The reason code.
    pub code: String,
    /// Its message.
    #[serde(default)]
    pub message: String,
}

/// The fields of a decision line replay reads.
#[derive(Deserialize)]
struct Line {
    decision_id: String,
    judged_at: String,
    tool_name: String,
    verdict: Verdict,
    reasons: Vec<SideReason>,
    #[serde(default)]
    policy_id: Option<String>,
    #[serde(default)]
    decided_by: Option<String>,
    #[serde(default)]
    stages: Vec<Stage>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    mcp_server: Option<String>,
    #[serde(default)]
    mcp_client_claimed: Option<String>,
    #[serde(default)]
    traceparent: Option<String>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    replay: Option<ReplayFacts>,
}

#[derive(Deserialize)]
struct Stage {
    stage: String,
    #[serde(default)]
    digest: Option<String>,
}

/// Reads one line of a decision log (without its newline).
pub fn read_line(line: &[u8]) -> Entry {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Entry::Other;
    }
    let object: Map<String, Value> = match serde_json::from_slice(line) {
        Ok(object) => object,
        Err(err) => return Entry::Skipped(Skip::Malformed(err.to_string())),
    };
    if object.contains_key("checkpoint") {
        return Entry::Other;
    }
    if object.contains_key("source") {
        return Entry::Skipped(Skip::GateCall);
    }
    let line: Line = match serde_json::from_value(Value::Object(object)) {
        Ok(line) => line,
        Err(err) => return Entry::Skipped(Skip::FieldsMissing(err.to_string())),
    };
    match rebuild(line) {
        Ok(call) => Entry::Call(Box::new(call)),
        Err(skip) => Entry::Skipped(skip),
    }
}

/// The call a line records, or why it cannot be rebuilt without inventing.
fn rebuild(line: Line) -> Result<LoggedCall, Skip> {
    let first_code = line.reasons.first().map(|r| r.code.as_str());
    let approval_dependent = match line.decided_by.as_deref() {
        Some("intake") if first_code == Some(APPROVAL_PENDING) => true,
        Some("intake") => return Err(Skip::RefusedAtIntake),
        // The approval store or the daemon could not judge the call.
        Some("store" | "daemon") => true,
        _ => false,
    };
    let arguments = line.arguments.ok_or(Skip::ArgumentsNotLogged)?;
    let facts = line.replay.ok_or(Skip::ReplayFactsMissing)?;
    if !facts.omitted.is_empty() {
        return Err(Skip::ArgumentsPartial);
    }
    if !facts.redacted.is_empty() {
        return Err(Skip::Redacted);
    }
    if !facts.cut.is_empty() {
        return Err(Skip::Cut);
    }
    let mut input = arguments;
    for name in &facts.as_text {
        let value = input.get_mut(name).ok_or_else(|| {
            Skip::Invalid(format!(
                "replay.as_text names `{name}`, not a logged argument"
            ))
        })?;
        let text = value.as_str().ok_or_else(|| {
            Skip::Invalid(format!(
                "argument `{name}` is listed as JSON text but is not a string"
            ))
        })?;
        *value = serde_json::from_str(text).map_err(|err| {
            Skip::Invalid(format!(
                "argument `{name}` is not the JSON text of a value: {err}"
            ))
        })?;
    }
    let mut context = facts.context;
    context.agent_id = line.agent_id;
    context.thread_id = line.thread_id;
    context.run_id = line.run_id;
    context.mcp_server = line.mcp_server;
    context.mcp_client = line.mcp_client_claimed;
    context.traceparent = line.traceparent;
    // Judged by the clock of the live call, as an internal caller's
    // timestamp is (the context holds only what the live caller was believed).
    context.timestamp = Some(line.judged_at);
    let body = json!({
        "tool_name": line.tool_name,
        "tool_input": input,
        "tool_call_id": line.tool_call_id,
        "context": context,
    });
    // The daemon's own parser and checks, from the bytes, as a request is.
    let call = ToolCall::from_json(body.to_string().as_bytes())
        .map_err(|err| Skip::Invalid(err.to_string()))?;
    let digest = line
        .decided_by
        .as_deref()
        .and_then(|by| line.stages.iter().find(|s| s.stage == by))
        .and_then(|s| s.digest.clone());
    Ok(LoggedCall {
        decision_id: line.decision_id,
        call,
        logged: LoggedSide {
            verdict: line.verdict,
            decided_by: line.decided_by,
            digest,
            policy_id: line.policy_id,
            reasons: line.reasons,
        },
        approval_dependent,
    })
}
