//! Glob matching for paths and rule specifiers: `*` within a path segment,
//! `**` across segments, `?`, `[…]` (and `{a,b}`), case-sensitive or not; and
//! for names (a tool's), where `/` is a character like any other. Patterns are
//! checked once, when they are built.

use std::borrow::Cow;
use std::fmt;

/// A checked glob pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// The pattern as given.
    source: String,
    /// The pattern as matched: lower-cased unless case-sensitive, and for a
    /// name with every `/` made [`SLASH`].
    pattern: Vec<u8>,
    mode: Mode,
}

/// What a glob matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A path: `*`, `?` and `[…]` stay within a segment, `**` crosses segments.
    Path,
    /// A path, ignoring case.
    PathIgnoringCase,
    /// A name: case-insensitive, and `/` is no separator, so `*` matches any
    /// run of characters.
    Name,
}

/// What `/` becomes in a name and in its pattern. fast-glob's wildcards stop at
/// `/` and never at this byte, which UTF-8 text never holds: the same engine
/// (and the same syntax and validation) then matches names as plain strings.
const SLASH: u8 = 0xFF;

/// Why a pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobError {
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
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
        Glob::build(pattern, Mode::Path)
    }

    /// A pattern that ignores case (Unicode lower-casing of both sides).
    pub fn case_insensitive(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, Mode::PathIgnoringCase)
    }

    /// A pattern over names, not paths (a tool's name: `mcp__github__*`): case
    /// is ignored, and `/` is an ordinary character, so `*` matches any run of
    /// characters (`*` matches `foo/bar` and `/`) and `?` or `[…]` any one.
    pub fn name(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, Mode::Name)
    }

    fn build(pattern: &str, mode: Mode) -> Result<Glob, GlobError> {
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
        let matched = match mode {
            Mode::Path => pattern.as_bytes().to_vec(),
            Mode::PathIgnoringCase => pattern.to_lowercase().into_bytes(),
            Mode::Name => unslashed(pattern.to_lowercase()),
        };
        Ok(Glob {
            source: pattern.to_string(),
            pattern: matched,
            mode,
        })
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        fast_glob::glob_match(&self.pattern, self.subject(text))
    }

    /// `text` in the form the pattern is matched against: lower-cased unless
    /// case-sensitive, and for a name with every `/` made [`SLASH`].
    pub(crate) fn subject<'a>(&self, text: &'a str) -> Cow<'a, [u8]> {
        match self.mode {
            Mode::Path => Cow::Borrowed(text.as_bytes()),
            Mode::PathIgnoringCase => Cow::Owned(text.to_lowercase().into_bytes()),
            Mode::Name => Cow::Owned(unslashed(text.to_lowercase())),
        }
    }

    /// Whether two globs see a text in the same form (see [`Glob::subject`]).
    pub(crate) fn same_subject(&self, other: &Glob) -> bool {
        self.mode == other.mode
    }

    /// The longest run of bytes that every text the pattern matches contains,
    /// in the form the pattern is matched against (lower-cased unless
    /// case-sensitive, a name's `/` made a separator byte); empty when there
    /// is none. Only the
    /// part before the first class, brace or escape is read: what follows
    /// one may be literal or not, and a shorter literal is never wrong.
    pub fn required_literal(&self) -> &[u8] {
        let end = self
            .pattern
            .iter()
            .position(|b| matches!(b, b'[' | b']' | b'{' | b'}' | b',' | b'\\' | b'!'))
            .unwrap_or(self.pattern.len());
        // `/` is not required as written: `**/` also matches no directory.
        self.pattern[..end]
            .split(|b| matches!(b, b'*' | b'?' | b'/'))
            .max_by_key(|run| run.len())
            .unwrap_or_default()
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

/// `text` with every `/` made [`SLASH`], for a name glob.
fn unslashed(text: String) -> Vec<u8> {
    let mut bytes = text.into_bytes();
    for byte in &mut bytes {
        if *byte == b'/' {
            *byte = SLASH;
        }
    }
    bytes
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
