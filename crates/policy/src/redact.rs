//! The one redactor: whatever Warden writes out (a reason message when it is
//! made, so that the answer, the decision log and a signed record agree; a
//! logged argument or id; an argument summary shown to a human) has its
//! secrets replaced by `[REDACTED]` by the same rules: the built-in patterns
//! (bearer and basic credentials, `password=`/`token:`/`api_key`-style
//! assignments, credentials in URLs, the password arguments of database and
//! SSH clients, AWS, GitHub, Slack, Google and `sk-` keys, JWTs, PEM private
//! keys) and the operator's (`decision_log.redact`).
//!
//! A token is recognised wherever it starts after a character that is not an
//! ASCII letter or digit: `x_ghp_…`, `key-AKIA…` and `curl_ghp_…` are
//! redacted as `ghp_…` alone is. A built-in pattern names the part of its match
//! that is secret (its `secret*` groups), and only that part is replaced:
//! `thread-ghp_…` is logged as `thread-[REDACTED]`, and an id keeps what makes
//! it useful for tracing.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use regex::{Captures, Regex, RegexSet};
use serde_json::Value;
pub use warden_types::text::excerpt;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// The most characters kept of a reason message (and of a logged value).
pub const MAX_REASON_CHARS: usize = 500;

/// The most characters of an argument (a command, a path, ...) a reason
/// message quotes.
pub const MAX_QUOTED_CHARS: usize = 120;

/// Where a token may start: the text's start, or after anything but an ASCII
/// letter or digit (so `_`, `-`, `=`, `:`, quotes and spaces all join). A
/// token then runs on over letters, digits, `_` and `-`, so that a token
/// written straight after another is taken with it rather than cut.
macro_rules! token_start {
    () => {
        r"(?:^|[^A-Za-z0-9])"
    };
}

/// A command-line value: quoted (the quotes kept), or up to a space, quote,
/// comma or shell separator. The `secret*` groups are what is replaced.
macro_rules! value {
    () => {
        r#"(?:"(?P<secret_dq>[^"]+)"|'(?P<secret_sq>[^']+)'|\\?["']?(?P<secret>[^\s"',;&\\]+))"#
    };
}

/// Between a flag and its value: `=`, spaces, or the `","` of an argument
/// vector written as JSON.
macro_rules! flag_gap {
    () => {
        r#"(?:=|\s+|",\s*")"#
    };
}

/// Up to a flag of the same command: not past a newline or a shell separator.
macro_rules! same_command {
    () => {
        r#"[^\n;&|]*?[\s"',]"#
    };
}

/// Secrets that are never written out, whatever the operator configured. Each
/// pattern's `secret*` groups are replaced; a pattern without one is replaced
/// whole.
const BUILTIN: &[&str] = &[
    // `Authorization: Bearer abc`, `basic dXNlcjpwYXNz`
    r"(?i)(?:^|[^a-z0-9])(?:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=_-]{8,})",
    // password=..., api_key: ..., "secret": "...", PGPASSWORD='...', MYSQL_PWD=...
    concat!(
        r#"(?i)[a-z0-9_-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[a-z0-9_-]*"#,
        r#"\\?["']?\s*[=:]\s*"#,
        value!()
    ),
    // user:password@ in URLs
    r"://(?P<secret>[^/\s:@]+:[^/\s@]+)@",
    // mysql, mariadb, mysqldump...: `-pPASSWORD` (a `-p` alone asks for it)
    concat!(
        r"(?i:(?:mysql|mariadb)[a-z_-]*)",
        same_command!(),
        r"-p",
        value!()
    ),
    // sshpass -p PASSWORD, sshpass -pPASSWORD
    concat!(
        r"sshpass",
        same_command!(),
        r#"-p(?:\s+|",\s*")?"#,
        value!()
    ),
    // redis-cli -a PASSWORD, --pass PASSWORD (its -p is the port)
    concat!(
        r"redis-cli",
        same_command!(),
        r"(?:-a|--pass)",
        flag_gap!(),
        value!()
    ),
    // mongo, mongosh, mongodump...: -p PASSWORD
    concat!(
        r"mongo[a-z]*",
        same_command!(),
        r"-p",
        flag_gap!(),
        value!()
    ),
    // any command's --password PASSWORD, --passwd, --pass (`=` is an assignment)
    concat!(
        r#"(?:^|[\s"',])--?(?:password|passwd|pass)"#,
        r#"(?:\s+|",\s*")"#,
        value!()
    ),
    // AWS access key ids, long-term and temporary
    concat!(
        token_start!(),
        r"(?P<secret>(?:AKIA|ASIA)[0-9A-Z]{16}[A-Za-z0-9_-]*)"
    ),
    // GitHub tokens, classic and fine-grained
    concat!(
        token_start!(),
        r"(?P<secret>gh[pousr]_[A-Za-z0-9_-]{20,}|github_pat_[A-Za-z0-9_-]{20,})"
    ),
    // Slack tokens
    concat!(
        token_start!(),
        r"(?P<secret>xox[abposr]-[A-Za-z0-9_-]{10,})"
    ),
    // OpenAI- and Anthropic-style keys
    concat!(token_start!(), r"(?P<secret>sk-[A-Za-z0-9_-]{20,})"),
    // Google API keys
    concat!(token_start!(), r"(?P<secret>AIza[0-9A-Za-z_-]{35,})"),
    // JSON Web Tokens: a header and a payload that are base64 JSON objects
    // (the signature too, when there is one)
    concat!(
        token_start!(),
        r"(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?)"
    ),
    // Any of the tokens above cut short by an excerpt (`…`) before it is long
    // enough to be told: what is left of it is still part of a secret.
    concat!(
        token_start!(),
        r"(?P<secret>(?:gh[pousr]_|github_pat_|AKIA|ASIA|xox[abposr]-|sk-|AIza|eyJ)[A-Za-z0-9_.-]*)…"
    ),
    // PEM private keys, to the end marker or the end of the text
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
];

/// A pattern the operator gave that is not a regular expression.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("decision_log.redact[{index}]: '{pattern}' is not a valid regular expression: {message}")]
pub struct PatternError {
    /// Its position in `decision_log.redact`.
    pub index: usize,
    /// The pattern as given.
    pub pattern: String,
    /// The regex parser's message.
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
    patterns: Vec<Pattern>,
}

#[derive(Debug)]
struct Pattern {
    regex: Regex,
    /// The groups replaced (a built-in pattern's `secret*` groups); none: the
    /// whole match.
    secret_groups: Vec<usize>,
}

impl Pattern {
    fn builtin(source: &str) -> Pattern {
        let regex = Regex::new(source).expect("a built-in redaction pattern");
        let secret_groups = regex
            .capture_names()
            .enumerate()
            .filter(|(_, name)| name.is_some_and(|n| n.starts_with("secret")))
            .map(|(i, _)| i)
            .collect();
        Pattern {
            regex,
            secret_groups,
        }
    }

    /// `text` with this pattern's secrets replaced; borrowed when none is.
    fn replace<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.secret_groups.is_empty() {
            return self.regex.replace_all(text, REDACTED);
        }
        self.regex.replace_all(text, |caps: &Captures<'_>| {
            let whole = caps.get(0).expect("group 0 is the match");
            let mut out = String::with_capacity(whole.len());
            let mut at = whole.start();
            // A pattern's secret groups are alternatives: at most one takes part.
            for secret in self
                .secret_groups
                .iter()
                .filter_map(|&i| caps.get(i))
                .filter(|m| !m.is_empty())
            {
                out.push_str(&text[at..secret.start()]);
                out.push_str(REDACTED);
                at = secret.end();
            }
            out.push_str(&text[at..whole.end()]);
            out
        })
    }
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

    /// The built-in patterns and the operator's `extra` ones (`decision_log.redact`),
    /// which replace their whole match.
    pub fn new(extra: &[String]) -> Result<Redactor, PatternError> {
        let mut sources: Vec<&str> = BUILTIN.to_vec();
        let mut patterns: Vec<Pattern> = BUILTIN.iter().map(|p| Pattern::builtin(p)).collect();
        for (index, pattern) in extra.iter().enumerate() {
            let regex = Regex::new(pattern).map_err(|err| PatternError {
                index,
                pattern: pattern.clone(),
                message: err.to_string(),
            })?;
            patterns.push(Pattern {
                regex,
                secret_groups: Vec::new(),
            });
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
        let mut out = self.replace(text, found.iter());
        // A replacement can make a secret visible to a pattern that did not
        // match before (`x_AKIA…sshpass -pX`: after `[REDACTED]`, `sshpass`
        // starts a word): again, until nothing changes, so that redacting twice
        // changes nothing more.
        for _ in 0..MAX_PASSES {
            let found = self.inner.any.matches(&out);
            if !found.matched_any() {
                return out;
            }
            let again = self.replace(&out, found.iter());
            if again == out {
                return out;
            }
            out = Cow::Owned(again.into_owned());
        }
        // Still uncovering more: a text built to chain secret-shaped parts.
        // None of it is kept (and the cost stays bounded).
        Cow::Borrowed(REDACTED)
    }

    /// `text` with the secrets of the patterns `found` replaced.
    fn replace<'a>(&self, text: &'a str, found: impl Iterator<Item = usize>) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for i in found {
            if let Cow::Owned(replaced) = self.inner.patterns[i].replace(&out) {
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

/// The most passes after the first over a text that held a secret; a text
/// that still changes after them is redacted whole.
const MAX_PASSES: usize = 8;

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
    fn a_secret_a_replacement_uncovers_is_redacted_too() {
        // `-a` is past a `|` of redis-cli's command until the values that hold
        // one are replaced: the assignment's first, then mongosh's `-p`.
        let text = "redis-cli mongosh token=a|b -p c|d -a Hunter2 ping";
        let once = redacted(text);
        assert_eq!(
            once,
            "redis-cli mongosh token=[REDACTED] -p [REDACTED] -a [REDACTED] ping"
        );
        assert_eq!(redacted(&once), once);
    }

    #[test]
    fn tokens_written_back_to_back_are_redacted_together() {
        let keys = "AKIAIOSFODNN7EXAMPLE".repeat(3)
            + &"ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8".repeat(3);
        assert_eq!(redacted(&format!("x_{keys} keep")), "x_[REDACTED] keep");
        let bearer = "Authorization: Bearer abc_DEF-ghi_JKL.mno";
        assert_eq!(redacted(bearer), "Authorization: Bearer [REDACTED]");
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

    fn redacted(text: &str) -> String {
        Redactor::builtin().redact(text).into_owned()
    }

    #[test]
    fn a_token_joined_to_a_word_by_an_underscore_is_redacted() {
        let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        assert_eq!(redacted(&format!("x_{token}")), "x_[REDACTED]");
        assert_eq!(redacted(&format!("curl_{token}")), "curl_[REDACTED]");
        assert_eq!(
            redacted("key_AKIAIOSFODNN7EXAMPLE and more"),
            "key_[REDACTED] and more"
        );
    }

    #[test]
    fn a_key_prefix_inside_a_word_is_not_a_token() {
        for text in [
            "risk-assessment-for-the-whole-team-2026",
            "task-0123456789abcdefghijklmnop",
        ] {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn only_the_secret_part_of_an_id_is_replaced() {
        assert_eq!(
            redacted("thread-sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx-7"),
            "thread-[REDACTED]"
        );
        assert_eq!(
            redacted("call_AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q/7"),
            "call_[REDACTED]/7"
        );
    }

    #[test]
    fn a_jwt_is_redacted() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVlLTAx";
        assert_eq!(redacted(&format!("id={jwt}")), "id=[REDACTED]");
    }

    #[test]
    fn a_token_cut_short_by_an_excerpt_is_redacted() {
        assert_eq!(redacted("'curl x_ghp_A1b2C3…'"), "'curl x_[REDACTED]…'");
    }

    #[test]
    fn a_mysql_password_joined_to_its_flag_is_redacted_and_a_bare_flag_is_kept() {
        assert_eq!(
            redacted("mysql -uroot -pHunter2 shop"),
            "mysql -uroot -p[REDACTED] shop"
        );
        assert_eq!(redacted("mysql -P3306 -p shop"), "mysql -P3306 -p shop");
    }

    #[test]
    fn a_quoted_password_is_redacted_whole_and_its_quotes_kept() {
        assert_eq!(
            redacted("PGPASSWORD='Hunter2 Pg' psql"),
            "PGPASSWORD='[REDACTED]' psql"
        );
        assert_eq!(
            redacted(r#"{"password": "Hunter2 Pg", "user": "bob"}"#),
            r#"{"password": "[REDACTED]", "user": "bob"}"#
        );
    }

    #[test]
    fn a_redis_port_is_kept_and_its_password_redacted() {
        assert_eq!(
            redacted("redis-cli -p 6379 -a Hunter2 ping"),
            "redis-cli -p 6379 -a [REDACTED] ping"
        );
    }

    #[test]
    fn an_argument_vector_in_json_has_its_password_redacted() {
        assert_eq!(
            redacted(r#"["sshpass","-p","Hunter2","ssh","host"]"#),
            r#"["sshpass","-p","[REDACTED]","ssh","host"]"#
        );
    }

    #[test]
    fn an_operator_pattern_replaces_its_whole_match() {
        let r = Redactor::new(&["acct-(?P<secret>[0-9]+)".into()]).unwrap();
        assert_eq!(r.redact("bill acct-991 now"), "bill [REDACTED] now");
    }

    #[test]
    fn an_invalid_operator_pattern_is_refused_by_index() {
        let err = Redactor::new(&["ok".into(), "(".into()]).unwrap_err();
        assert_eq!(err.index, 1);
        assert!(err.to_string().contains("decision_log.redact[1]"), "{err}");
    }
}
