//! Conformance vectors: a JSON Lines file of tool calls, each with the verdict
//! (and, optionally, the main reason code and the policy id) one provider must
//! give, and the runner that checks a loaded provider against them
//! (`warden test`). One vector a line:
//!
//! ```json
//! {"name": "rm is denied", "request": {"tool_name": "rm", "tool_input": {}}, "expect": {"verdict": "deny", "code": "oap.tool_not_allowed"}}
//! ```
//!
//! `request` is what a harness sends (`tool_name`, `tool_input`, `tool_call_id`,
//! `context`); its context may set the interaction mode, as a trusted caller
//! would. Blank lines and lines starting with `#` are skipped.

use serde::Deserialize;
use serde_json::Value;

use crate::guest_call::provider_call;
use warden_policy::interaction::{InteractionMode, RunInteractionPolicy};
use warden_runtime::provider::Provider;
use warden_types::Caller;
use warden_types::decision::{Decision, Verdict};
use warden_types::request::ToolCall;

/// One vector: a request and what the provider must answer.
#[derive(Clone, Debug)]
pub struct Vector {
    /// The line of the file it came from, 1-based.
    pub line: usize,
    /// The vector's name (its line number when it has none).
    pub name: String,
    /// The tool call.
    pub request: ToolCall,
    /// The run's interaction mode, resolved from the request's context.
    pub mode: InteractionMode,
    /// What the provider must answer.
    pub expect: Expectation,
}

/// What a provider must answer.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The verdict.
    pub verdict: Verdict,
    /// The code of the first (main) reason.
    #[serde(default)]
    pub code: Option<String>,
    /// The policy id, when the vector names one.
    #[serde(default)]
    pub policy_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    name: Option<String>,
    request: Value,
    expect: Expectation,
}

/// Why a vectors file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VectorError {
    /// A line is not a vector.
    #[error("{file}:{line}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, 1-based.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The file holds no vector.
    #[error("{file}: no vectors (one JSON object a line)")]
    Empty {
        /// The file.
        file: String,
    },
}

/// Parses a vectors file; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<Vector>, VectorError> {
    let mut vectors = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let invalid = |message: String| VectorError::Invalid {
            file: file.to_string(),
            line,
            message,
        };
        let mut deserializer = serde_json::Deserializer::from_str(trimmed);
        let parsed: Line = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|err| invalid(field_message(err.path().to_string(), err.into_inner())))?;
        let request = ToolCall::from_json(parsed.request.to_string().as_bytes())
            .map_err(|err| invalid(format!("request: {err}")))?;
        let mode = RunInteractionPolicy::resolve(&request.context, Caller::Internal)
            .map_err(|err| invalid(format!("request: {err}")))?
            .mode;
        vectors.push(Vector {
            line,
            name: parsed.name.unwrap_or_else(|| format!("line {line}")),
            request,
            mode,
            expect: parsed.expect,
        });
    }
    if vectors.is_empty() {
        return Err(VectorError::Empty {
            file: file.to_string(),
        });
    }
    Ok(vectors)
}

fn field_message(path: String, err: serde_json::Error) -> String {
    let message = err.to_string();
    let message = message
        .find(" at line ")
        .map_or(message.as_str(), |i| &message[..i]);
    if path == "." {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// A vector's result: what the provider answered and, when that is not what
/// the vector expects, how it differs.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// What the provider answered.
    pub actual: Decision,
    /// How it differs from what the vector expects, if it does.
    pub mismatch: Option<Mismatch>,
}

/// Expected and actual, each in one line (`deny oap.tool_not_allowed`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What the vector expects.
    pub expected: String,
    /// What the provider answered.
    pub actual: String,
}

/// Asks the provider about the vector's request, as the pipeline would (a
/// provider failure becomes its fail-closed or fail-open decision), and
/// compares the answer with the expectation.
pub fn check(provider: &Provider, vector: &Vector) -> Outcome {
    let actual = opinion(provider, vector);
    let expect = &vector.expect;
    let code = actual.reasons.first().map(|r| r.code.as_str());
    let matches = actual.verdict == expect.verdict
        && expect.code.as_deref().is_none_or(|c| Some(c) == code)
        && expect
            .policy_id
            .as_deref()
            .is_none_or(|p| Some(p) == actual.policy_id.as_deref());
    let mismatch = (!matches).then(|| Mismatch {
        expected: describe(expect.verdict, expect.code.as_deref(), &expect.policy_id),
        actual: describe(actual.verdict, code, &actual.policy_id) + &explain(&actual),
    });
    Outcome { actual, mismatch }
}

/// The provider's decision on a vector's request, failures included.
fn opinion(provider: &Provider, vector: &Vector) -> Decision {
    match provider.evaluate(&provider_call(
        &vector.request,
        // A vector is a trusted request: its context is judged as written.
        &warden_policy::trust::admit(&vector.request, Caller::Internal),
        None,
        vector.mode,
    )) {
        Ok(opinion) => opinion.decision,
        Err(failure) => failure.to_decision(provider.name(), provider.on_error()),
    }
}

/// The main reason's message, and every further reason (a provider failure's
/// detail code comes second): ` (message; warden.trap: ...)`.
fn explain(decision: &Decision) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(first) = decision.reasons.first()
        && !first.message.is_empty()
    {
        parts.push(first.message.clone());
    }
    for reason in decision.reasons.iter().skip(1) {
        parts.push(format!("{}: {}", reason.code, reason.message));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

fn describe(verdict: Verdict, code: Option<&str>, policy_id: &Option<String>) -> String {
    let mut text = verdict.as_str().to_string();
    if let Some(code) = code {
        text.push(' ');
        text.push_str(code);
    }
    if let Some(policy_id) = policy_id {
        text.push_str(&format!(" policy_id={policy_id}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_line_parses_with_its_name_and_expectation() {
        let vectors = parse(
            "# comment\n\n{\"name\": \"n\", \"request\": {\"tool_name\": \"bash\"}, \"expect\": {\"verdict\": \"ask\", \"code\": \"x.y\"}}\n",
            "v.jsonl",
        )
        .unwrap();
        assert_eq!(vectors.len(), 1);
        assert_eq!(vectors[0].line, 3);
        assert_eq!(vectors[0].name, "n");
        assert_eq!(vectors[0].expect.verdict, Verdict::Ask);
        assert_eq!(vectors[0].expect.code.as_deref(), Some("x.y"));
    }

    #[test]
    fn an_unnamed_vector_is_named_for_its_line() {
        let vectors = parse(
            r#"{"request": {"tool_name": "bash"}, "expect": {"verdict": "allow"}}"#,
            "v",
        )
        .unwrap();
        assert_eq!(vectors[0].name, "line 1");
    }

    #[test]
    fn a_bad_verdict_is_refused_with_file_line_and_field() {
        let err = parse(
            "\n{\"request\": {\"tool_name\": \"bash\"}, \"expect\": {\"verdict\": \"maybe\"}}",
            "v.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("v.jsonl:2: expect.verdict:"), "{err}");
    }

    #[test]
    fn a_malformed_request_is_refused_naming_its_field() {
        let err = parse(
            r#"{"request": {"tool_name": "bash", "tool_input": []}, "expect": {"verdict": "allow"}}"#,
            "v",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("v:1: request:") && err.contains("tool_input"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_interaction_mode_is_refused() {
        let err = parse(
            r#"{"request": {"tool_name": "bash", "context": {"interaction_mode": "sometimes"}}, "expect": {"verdict": "allow"}}"#,
            "v",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("interaction_mode"), "{err}");
    }

    #[test]
    fn a_file_without_vectors_is_refused() {
        assert!(matches!(
            parse("# nothing\n", "v"),
            Err(VectorError::Empty { .. })
        ));
    }

    #[test]
    fn an_expectation_reads_as_verdict_code_and_policy() {
        assert_eq!(
            describe(Verdict::Deny, Some("a.b"), &Some("p".into())),
            "deny a.b policy_id=p"
        );
        assert_eq!(describe(Verdict::Allow, None, &None), "allow");
    }
}
