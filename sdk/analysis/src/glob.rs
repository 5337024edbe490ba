//! Glob matching for paths and rule specifiers: `*` within a path segment,
//! `**` across segments, `?`, `[…]` (and `{a,b}`), case-sensitive or not.
//! Patterns are checked once, when they are built.

use std::fmt;

/// A checked glob pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// The pattern as given.
    source: String,
    /// The pattern as matched (lower-cased when case-insensitive).
    pattern: String,
    case_insensitive: bool,
}

/// Why a pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobError {
    pub pattern: String,
    pub message: String,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid glob '{}': {}", self.pattern, self.message)
    }
}

impl std::error::Error for GlobError {}

impl Glob {
    /// A case-sensitive pattern.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, false)
    }

    /// A pattern that ignores case (Unicode lower-casing of both sides).
    pub fn case_insensitive(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, true)
    }

    fn build(pattern: &str, case_insensitive: bool) -> Result<Glob, GlobError> {
        let error = |message: String| GlobError {
            pattern: pattern.to_string(),
            message,
        };
        if pattern.is_empty() {
            return Err(error("the pattern is empty".into()));
        }
        // fast-glob reads a leading `!` as negation; a deny rule that silently
        // inverts would be a hole, so it is refused (write `\!` for a literal `!`).
        if pattern.starts_with('!') {
            return Err(error("a leading `!` (negation) is not supported".into()));
        }
        fast_glob::validate(pattern).map_err(|e| error(e.to_string()))?;
        Ok(Glob {
            source: pattern.to_string(),
            pattern: if case_insensitive {
                pattern.to_lowercase()
            } else {
                pattern.to_string()
            },
            case_insensitive,
        })
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        if self.case_insensitive {
            fast_glob::glob_match(&self.pattern, text.to_lowercase())
        } else {
            fast_glob::glob_match(&self.pattern, text)
        }
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern has any wildcard at all.
    pub fn is_literal(&self) -> bool {
        !self
            .source
            .bytes()
            .any(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'))
    }
}

/// `*` matches any run of characters (spaces and slashes included); the rest
/// matches itself.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}
