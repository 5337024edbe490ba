//! The one redactor: whatever Warden writes out (a reason message when it is
//! made, so that the answer, the decision log and a signed record agree; a
//! logged argument; an argument summary shown to a human) has its secrets
//! replaced by `[REDACTED]` by the same rules: the built-in patterns (bearer
//! and basic credentials, `password=`/`token:`/`api_key`-style assignments,
//! credentials in URLs, AWS, GitHub, Slack and `sk-` keys, PEM private keys)
//! and the operator's (`decision_log.redact`).

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use regex::{Regex, RegexSet};
use serde_json::Value;
pub use warden_types::text::excerpt;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// The most characters kept of a reason message (and of a logged value).
pub const MAX_REASON_CHARS: usize = 500;

/// The most characters of an argument (a command, a path, ...) a reason
/// message quotes.
pub const MAX_QUOTED_CHARS: usize = 120;

/// Secrets that are never written out, whatever the operator configured.
const BUILTIN: &[(&str, &str)] = &[
    // `Authorization: Bearer abc`, `basic dXNlcjpwYXNz`
    (
        r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}",
        "$1 [REDACTED]",
    ),
    // password=..., api_key: ..., "secret": "..."
    (
        r#"(?i)\b([a-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[a-z0-9_-]*)("?\s*[=:]\s*"?)[^\s"',;&]+"#,
        "$1$2[REDACTED]",
    ),
    // user:password@ in URLs
    (r"://[^/\s:@]+:[^/\s@]+@", "://[REDACTED]@"),
    // AWS access key ids, GitHub, Slack and OpenAI-style tokens
    (r"\bAKIA[0-9A-Z]{16}\b", "[REDACTED]"),
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}\b", "[REDACTED]"),
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b", "[REDACTED]"),
    (r"\bsk-[A-Za-z0-9_-]{20,}\b", "[REDACTED]"),
    // PEM private keys, to the end marker or the end of the text
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
        "[REDACTED]",
    ),
];

/// A pattern the operator gave that is not a regular expression.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("decision_log.redact[{index}]: '{pattern}' is not a valid regular expression: {message}")]
pub struct PatternError {
    pub index: usize,
    pub pattern: String,
    pub message: String,
}

/// The built-in patterns and the operator's, compiled once; cheap to clone.
#[derive(Clone, Debug)]
pub struct Redactor {
    inner: Arc<Compiled>,
}

#[derive(Debug)]
struct Compiled {
    /// Which patterns occur at all, in one pass: most text has no secret.
    any: RegexSet,
    patterns: Vec<(Regex, &'static str)>,
}

static BUILTIN_ONLY: LazyLock<Redactor> =
    LazyLock::new(|| Redactor::new(&[]).expect("the built-in patterns compile"));

impl Default for Redactor {
    fn default() -> Self {
        Redactor::builtin()
    }
}

impl Redactor {
    /// The built-in patterns only.
    pub fn builtin() -> Redactor {
        BUILTIN_ONLY.clone()
    }

    /// The built-in patterns and the operator's `extra` ones (`decision_log.redact`).
    pub fn new(extra: &[String]) -> Result<Redactor, PatternError> {
        let mut sources: Vec<&str> = BUILTIN.iter().map(|(p, _)| *p).collect();
        let mut patterns: Vec<(Regex, &'static str)> = BUILTIN
            .iter()
            .map(|(p, r)| (Regex::new(p).expect("a built-in redaction pattern"), *r))
            .collect();
        for (index, pattern) in extra.iter().enumerate() {
            let regex = Regex::new(pattern).map_err(|err| PatternError {
                index,
                pattern: pattern.clone(),
                message: err.to_string(),
            })?;
            patterns.push((regex, REDACTED));
            sources.push(pattern);
        }
        let any = RegexSet::new(sources).map_err(|err| PatternError {
            index: extra.len().saturating_sub(1),
            pattern: extra.last().cloned().unwrap_or_default(),
            message: err.to_string(),
        })?;
        Ok(Redactor {
            inner: Arc::new(Compiled { any, patterns }),
        })
    }

    /// `text` with every secret replaced.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let found = self.inner.any.matches(text);
        if !found.matched_any() {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for i in found.iter() {
            let (regex, replacement) = &self.inner.patterns[i];
            if let Cow::Owned(replaced) = regex.replace_all(&out, *replacement) {
                out = Cow::Owned(replaced);
            }
        }
        out
    }

    /// A reason message as it may be written out: where it quotes a long
    /// argument of the call verbatim (a command, a path), only an excerpt of
    /// it; every secret redacted; at most [`MAX_REASON_CHARS`] characters.
    pub fn reason_message(&self, message: &str, arguments: &Value) -> String {
        let mut text = Cow::Borrowed(message);
        for quoted in long_strings(arguments) {
            if text.contains(quoted) {
                let short = excerpt(&self.redact(quoted), MAX_QUOTED_CHARS);
                text = Cow::Owned(text.replace(quoted, &short));
            }
        }
        excerpt(&self.redact(&text), MAX_REASON_CHARS)
    }
}

/// How many argument strings a reason message is searched for.
const MAX_STRINGS_SEARCHED: usize = 16;

/// The argument strings longer than an excerpt (the first few, depth first),
/// longest first, so that a string quoting another is cut first.
fn long_strings(arguments: &Value) -> Vec<&str> {
    fn walk<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        if out.len() >= MAX_STRINGS_SEARCHED {
            return;
        }
        match value {
            Value::String(s) if s.chars().nth(MAX_QUOTED_CHARS).is_some() => out.push(s),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(arguments, &mut out);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_replaced_and_the_rest_is_kept() {
        let text = "curl -H 'Authorization: Bearer abcdefgh12345' https://bob:hunter2@example.com?api_key=XYZ123";
        let redacted = Redactor::builtin().redact(text).into_owned();
        for secret in ["abcdefgh12345", "hunter2", "XYZ123"] {
            assert!(!redacted.contains(secret), "{secret} leaked: {redacted}");
        }
        assert!(redacted.starts_with("curl -H 'Authorization: Bearer [REDACTED]'"));
    }

    #[test]
    fn text_without_a_secret_is_not_copied() {
        assert!(matches!(
            Redactor::builtin().redact("tool 'rm' is denied"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let r = Redactor::new(&["acct-[0-9]+".into()]).unwrap();
        let once = r
            .redact("token: abc123456789 https://u:p@h acct-9 Bearer zzzzzzzzzz")
            .into_owned();
        assert_eq!(r.redact(&once), once);
    }

    #[test]
    fn a_long_quoted_argument_becomes_an_excerpt() {
        let command = format!("echo {}", "x".repeat(1000));
        let message = format!("'{command}' is not in allowed_commands");
        let short = Redactor::builtin().reason_message(&message, &json!({ "command": command }));
        assert!(short.ends_with("…' is not in allowed_commands"), "{short}");
        assert!(short.chars().count() < MAX_QUOTED_CHARS + 40, "{short}");
    }

    #[test]
    fn a_secret_cut_by_the_excerpt_is_redacted_first() {
        // Cut first, the excerpt would end inside the token, too short to match.
        let command = format!(
            "{} curl -H 'Authorization: Bearer s3cr3t-t0ken-value'",
            "x".repeat(82)
        );
        let message = format!("blocked: {command}");
        let short = Redactor::builtin().reason_message(&message, &json!({ "command": command }));
        assert!(!short.contains("s3cr3t"), "{short}");
    }

    #[test]
    fn a_reason_message_is_capped() {
        let message = "y".repeat(3 * MAX_REASON_CHARS);
        let capped = Redactor::builtin().reason_message(&message, &json!({}));
        assert_eq!(capped.chars().count(), MAX_REASON_CHARS + 1);
    }

    #[test]
    fn an_invalid_operator_pattern_is_refused_by_index() {
        let err = Redactor::new(&["ok".into(), "(".into()]).unwrap_err();
        assert_eq!(err.index, 1);
        assert!(err.to_string().contains("decision_log.redact[1]"), "{err}");
    }
}
