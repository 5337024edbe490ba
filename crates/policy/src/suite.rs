//! A policy test suite, as `warden policy test` reads it: calls, each with
//! the verdict and reason code (and optionally the deciding rule) a whole
//! configuration must give it, in YAML (or JSON):
//!
//! ```yaml
//! cases:
//!   - name: rm is denied
//!     request: {tool_name: bash, tool_input: {command: rm -rf ./src}}
//!     expect: {verdict: deny, code: perm.rule_deny, rule: Bash(rm -rf *)}
//!   - name: an internal caller's scheduled run
//!     caller: internal
//!     request: {tool_name: bash, tool_input: {command: ls}, context: {non_interactive: true}}
//!     expect: {verdict: allow}
//! ```
//!
//! `request` is what a harness sends (`warden eval`'s request). A suite that
//! is not one (unknown key, wrong type, a request that is not a request, no
//! cases) is refused saying what and where (the key's path, and the line
//! where the YAML parser knows it).

use serde::Deserialize;
use serde_json::Value;
use warden_types::decision::Verdict;
use warden_types::request::ToolCall;

/// A suite: its cases, in the order written.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The cases.
    pub cases: Vec<Case>,
}

/// One call and what the configuration must answer.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its place in `cases`, from 0.
    pub index: usize,
    /// Its name (`cases[i]` when it has none).
    pub name: String,
    /// The call.
    pub request: ToolCall,
    /// Whether the call comes from an internal caller (which may set the
    /// run's interaction mode and the attribution); else from an agent.
    pub internal: bool,
    /// What the configuration must answer.
    pub expect: Expectation,
}

/// What a case expects.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The verdict.
    pub verdict: Verdict,
    /// The code of the first (deciding) reason.
    #[serde(default)]
    pub code: Option<String>,
    /// A rule that decided: a permission rule as written, or a rules
    /// provider's rule id.
    #[serde(default)]
    pub rule: Option<String>,
}

/// Who calls, in a case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum CallerKind {
    #[default]
    Agent,
    Internal,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteText {
    cases: Vec<CaseText>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseText {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    caller: CallerKind,
    request: Value,
    expect: Expectation,
}

/// Why a suite was refused: what is wrong, and where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: {at}: {message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
pub struct SuiteError {
    /// The suite's file.
    pub file: String,
    /// The key's path in it (`cases[2].expect.verdict`), or `<top level>`.
    pub at: String,
    /// What is wrong.
    pub message: String,
    /// The line, where the YAML parser knows it.
    pub line: Option<usize>,
}

impl Suite {
    /// Reads a suite; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Suite, SuiteError> {
        let error = |at: String, message: String, line: Option<usize>| SuiteError {
            file: file.to_string(),
            at,
            message,
            line,
        };
        let deserializer = serde_norway::Deserializer::from_str(text);
        let parsed: SuiteText = serde_path_to_error::deserialize(deserializer).map_err(|err| {
            let at = err.path().to_string();
            let inner = err.into_inner();
            let line = inner.location().map(|l| l.line());
            let message = inner.to_string();
            // The YAML error's own "at line X column Y"; the line is said once.
            let message = match message.find(" at line ") {
                Some(i) => message[..i].to_string(),
                None => message,
            };
            let at = if at == "." { "<top level>".into() } else { at };
            error(at, message, line)
        })?;
        if parsed.cases.is_empty() {
            return Err(error("cases".into(), "holds no case".into(), None));
        }
        let mut cases = Vec::with_capacity(parsed.cases.len());
        for (index, case) in parsed.cases.into_iter().enumerate() {
            let body = serde_json::to_vec(&case.request).unwrap_or_default();
            let request = ToolCall::from_json(&body).map_err(|err| {
                error(
                    format!("cases[{index}].request"),
                    format!("not a request: {err}"),
                    None,
                )
            })?;
            if case.expect.code.as_deref().is_some_and(str::is_empty)
                || case.expect.rule.as_deref().is_some_and(str::is_empty)
            {
                return Err(error(
                    format!("cases[{index}].expect"),
                    "code and rule, when given, must not be empty".into(),
                    None,
                ));
            }
            cases.push(Case {
                index,
                name: case.name.unwrap_or_else(|| format!("cases[{index}]")),
                request,
                internal: case.caller == CallerKind::Internal,
                expect: case.expect,
            });
        }
        Ok(Suite { cases })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_reads_its_cases_in_order() {
        let suite = Suite::parse(
            "cases:\n  - name: a\n    request: {tool_name: bash, tool_input: {command: ls}}\n    expect: {verdict: allow}\n  - caller: internal\n    request: {tool_name: read_file}\n    expect: {verdict: deny, code: x.y, rule: r}\n",
            "s.yaml",
        )
        .unwrap();
        assert_eq!(suite.cases.len(), 2);
        assert_eq!(suite.cases[0].name, "a");
        assert!(!suite.cases[0].internal);
        assert_eq!(suite.cases[1].name, "cases[1]");
        assert!(suite.cases[1].internal);
        assert_eq!(suite.cases[1].expect.rule.as_deref(), Some("r"));
    }

    #[test]
    fn a_misspelled_key_is_refused_with_its_path_and_line() {
        let err = Suite::parse(
            "cases:\n  - request: {tool_name: bash}\n    expect: {verdict: allow, cod: x}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert_eq!(err.at, "cases[0].expect.cod");
        assert_eq!(err.line, Some(3));
        assert!(err.message.contains("unknown field `cod`"), "{err}");
    }

    #[test]
    fn an_unknown_verdict_is_refused_with_its_path() {
        let err = Suite::parse(
            "cases:\n  - request: {tool_name: bash}\n    expect: {verdict: maybe}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert_eq!(err.at, "cases[0].expect.verdict");
    }

    #[test]
    fn a_request_that_is_not_one_is_refused_naming_the_case() {
        let err = Suite::parse(
            "cases:\n  - request: {tool_name: bash}\n    expect: {verdict: allow}\n  - request: {tool_input: {}}\n    expect: {verdict: allow}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert_eq!(err.at, "cases[1].request");
    }

    #[test]
    fn a_suite_without_cases_is_refused() {
        assert_eq!(
            Suite::parse("cases: []\n", "s.yaml").unwrap_err().at,
            "cases"
        );
        assert_eq!(
            Suite::parse("{}\n", "s.yaml").unwrap_err().at,
            "<top level>"
        );
        assert!(Suite::parse("- 1\n", "s.yaml").is_err());
    }
}
