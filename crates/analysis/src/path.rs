//! Lexical path canonicalisation: `~` and `$HOME` expansion with a given home,
//! joining with a given working directory, collapsing `.`, `..` and repeated
//! slashes (never above `/`); a comparison form (Unicode NFKC, then lower case)
//! under which case and look-alike spellings of a path compare equal; and
//! detection of characters that hide what a text says. Nothing here looks at
//! the file system: symbolic links are not resolved.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// `~`, `~/…`, `$HOME`, `${HOME}` (alone or followed by `/`) with `home`
/// substituted. Without a home, the path is returned unchanged.
pub fn expand_home<'a>(path: &'a str, home: Option<&str>) -> Cow<'a, str> {
    let Some(home) = home else {
        return Cow::Borrowed(path);
    };
    for prefix in ["~", "${HOME}", "$HOME"] {
        if let Some(rest) = path.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Cow::Owned(format!("{home}{rest}"));
        }
    }
    Cow::Borrowed(path)
}

/// The lexical canonical form of `path`: home expanded, made absolute against
/// `cwd` when relative, `.`, `..` and repeated slashes collapsed, no trailing
/// slash. `..` never climbs above `/`. A relative path without a `cwd` stays
/// relative (its leading `..` kept); so does a `~user` path.
pub fn canonicalize(path: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    let expanded = expand_home(path, home);
    let mut segments: Vec<&str> = Vec::with_capacity(16);
    // Joined with the working directory when relative; collapsed in one pass,
    // without building the joined text (this runs for every path of every call).
    let base = match cwd {
        Some(cwd) if !expanded.starts_with('/') && !expanded.starts_with('~') => {
            Some(expand_home(cwd, home))
        }
        _ => None,
    };
    let absolute = base.as_deref().unwrap_or(&expanded).starts_with('/');
    if let Some(base) = &base {
        collapse_into(&mut segments, base, absolute);
    }
    collapse_into(&mut segments, &expanded, absolute);
    let mut out = String::with_capacity(path.len() + base.as_ref().map_or(0, |b| b.len()) + 1);
    for (i, segment) in segments.iter().enumerate() {
        if absolute || i > 0 {
            out.push('/');
        }
        out.push_str(segment);
    }
    if out.is_empty() {
        out.push(if absolute { '/' } else { '.' });
    }
    // `./~` is a file named `~` here, not the home directory: keep it so, or
    // the canonical form would name another path (and change when
    // canonicalised again).
    if !absolute && names_home(&out) && !names_home(&expanded) {
        out.insert_str(0, "./");
    }
    out
}

/// Whether a path starts with what [`expand_home`] would expand, or a `~user`.
fn names_home(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or_default();
    first.starts_with('~') || first == "$HOME" || first == "${HOME}"
}

/// Adds the segments of `path` to `segments`, collapsing `.`, `..` and
/// repeated slashes; `..` never climbs above the root of an absolute path, nor
/// above an unexpanded `~` or `~user` (whose directory is not known here:
/// collapsing it would turn a home path into one relative to the working
/// directory).
fn collapse_into<'a>(segments: &mut Vec<&'a str>, path: &'a str, absolute: bool) {
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => match segments.last() {
                Some(&last)
                    if last != ".."
                        && !(segments.len() == 1 && !absolute && last.starts_with('~')) =>
                {
                    segments.pop();
                }
                _ if absolute => {}
                _ => segments.push(".."),
            },
            s => segments.push(s),
        }
    }
}

/// The form in which paths are compared: Unicode NFKC (full-width and other
/// compatibility look-alikes become their plain letters), then lower case.
pub fn comparison_form(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.nfkc().collect::<String>().to_lowercase()
}

/// A character that hides or disguises what a text says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suspicious {
    /// The character.
    pub character: char,
    /// Byte offset in the text.
    pub offset: usize,
    /// Why it is suspicious.
    pub kind: SuspiciousKind,
}

/// Why a character is suspicious.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SuspiciousKind {
    /// A control character other than tab, newline and carriage return.
    Control,
    /// A bidirectional override, embedding, isolate or mark (U+202A–U+202E,
    /// U+2066–U+2069, U+200E, U+200F, U+061C).
    Bidi,
    /// A tag character (U+E0000–U+E007F): invisible, used to smuggle text.
    Tag,
    /// A zero-width or invisible joiner/space (U+200B–U+200D, U+2060, U+FEFF, U+180E).
    ZeroWidth,
}

impl SuspiciousKind {
    /// The kind in words, for messages (`control character`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SuspiciousKind::Control => "control character",
            SuspiciousKind::Bidi => "bidirectional control character",
            SuspiciousKind::Tag => "tag character",
            SuspiciousKind::ZeroWidth => "zero-width character",
        }
    }
}

/// The kind of a suspicious character, if it is one.
pub fn suspicious_kind(c: char) -> Option<SuspiciousKind> {
    match c {
        '\t' | '\n' | '\r' => None,
        c if c.is_control() => Some(SuspiciousKind::Control),
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some(SuspiciousKind::Bidi),
        '\u{E0000}'..='\u{E007F}' => Some(SuspiciousKind::Tag),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' => {
            Some(SuspiciousKind::ZeroWidth)
        }
        _ => None,
    }
}

/// The first suspicious character of `text`, if any.
pub fn find_suspicious(text: &str) -> Option<Suspicious> {
    if text
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r'))
    {
        return None;
    }
    text.char_indices().find_map(|(offset, character)| {
        suspicious_kind(character).map(|kind| Suspicious {
            character,
            offset,
            kind,
        })
    })
}
