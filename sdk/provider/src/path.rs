//! Paths into a call's arguments. Two spellings:
//! - dotted, as in most policy languages: `command`, `options.force`,
//!   `files[0].path`, `["odd.key"].x`, optionally starting with `$.`;
//! - a JSON Pointer (RFC 6901), starting with `/`: `/files/0/path`.
//!
//! A path is parsed once (in `configure`) and looked up on every call.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

/// A parsed path into a JSON value. The empty path (or `$`) is the value itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPath {
    text: String,
    segments: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// An object key; on an array, a key that is a number is an index.
    Key(String),
    /// `[n]`: an array index.
    Index(usize),
}

/// Why a path could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    path: String,
    at: usize,
    message: &'static str,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid path '{}': {} at byte {}",
            self.path, self.message, self.at
        )
    }
}

impl std::error::Error for PathError {}

impl JsonPath {
    /// Parses a dotted path or a JSON Pointer.
    pub fn parse(text: &str) -> Result<JsonPath, PathError> {
        let segments = if text.starts_with('/') {
            pointer_segments(text)
        } else {
            dotted_segments(text)?
        };
        Ok(JsonPath {
            text: text.to_string(),
            segments,
        })
    }

    /// The value at this path, if there is one.
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.segments
            .iter()
            .try_fold(value, |value, segment| match (segment, value) {
                (Segment::Key(key), Value::Object(map)) => map.get(key),
                (Segment::Key(key), Value::Array(items)) => {
                    key.parse::<usize>().ok().and_then(|i| items.get(i))
                }
                (Segment::Index(i), Value::Array(items)) => items.get(*i),
                _ => None,
            })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for JsonPath {
    type Err = PathError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        JsonPath::parse(text)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A path in a provider's configuration: `#[serde]` fields of this type are
/// checked when the configuration is parsed.
impl<'de> serde::Deserialize<'de> for JsonPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        JsonPath::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn pointer_segments(text: &str) -> Vec<Segment> {
    text.split('/')
        .skip(1)
        .map(|token| Segment::Key(token.replace("~1", "/").replace("~0", "~")))
        .collect()
}

fn dotted_segments(text: &str) -> Result<Vec<Segment>, PathError> {
    let error = |at: usize, message: &'static str| PathError {
        path: text.to_string(),
        at,
        message,
    };
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    let mut i = 0;
    if text.starts_with('$') {
        i = 1;
        if bytes.get(1) == Some(&b'.') {
            i = 2;
            if i == bytes.len() {
                return Err(error(i, "a key is missing"));
            }
        }
    }
    // True where a key may start without a separator: the start, or after `]`.
    let mut at_start = true;
    while i < bytes.len() {
        match bytes[i] {
            b'[' => {
                let close = text[i..]
                    .find(']')
                    .map(|n| i + n)
                    .ok_or_else(|| error(i, "`[` is not closed"))?;
                let inner = &text[i + 1..close];
                if let Some(quoted) = quoted(inner) {
                    segments.push(Segment::Key(quoted.to_string()));
                } else {
                    let index = inner
                        .parse::<usize>()
                        .map_err(|_| error(i + 1, "expected an index or a quoted key"))?;
                    segments.push(Segment::Index(index));
                }
                i = close + 1;
                at_start = false;
            }
            b'.' if !at_start || !segments.is_empty() => {
                i += 1;
                let end = key_end(text, i);
                if end == i {
                    return Err(error(i, "a key is missing"));
                }
                segments.push(Segment::Key(text[i..end].to_string()));
                i = end;
                at_start = false;
            }
            b'.' => return Err(error(i, "a key is missing")),
            _ if at_start && segments.is_empty() => {
                let end = key_end(text, i);
                segments.push(Segment::Key(text[i..end].to_string()));
                i = end;
                at_start = false;
            }
            _ => return Err(error(i, "expected `.` or `[`")),
        }
    }
    Ok(segments)
}

/// Where a bare key starting at `from` ends.
fn key_end(text: &str, from: usize) -> usize {
    text[from..]
        .find(['.', '[', ']'])
        .map_or(text.len(), |n| from + n)
}

/// The key inside `"..."` or `'...'`, if quoted.
fn quoted(inner: &str) -> Option<&str> {
    let strip = |q: char| inner.strip_prefix(q).and_then(|s| s.strip_suffix(q));
    strip('"').or_else(|| strip('\''))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at<'v>(path: &str, value: &'v Value) -> Option<&'v Value> {
        JsonPath::parse(path).unwrap().lookup(value)
    }

    #[test]
    fn a_bare_key_finds_a_top_level_argument() {
        let v = json!({"command": "ls"});
        assert_eq!(at("command", &v), Some(&json!("ls")));
        assert_eq!(at("$.command", &v), Some(&json!("ls")));
    }

    #[test]
    fn dots_and_indices_walk_nested_values() {
        let v = json!({"files": [{"path": "/a"}, {"path": "/b"}], "o": {"force": true}});
        assert_eq!(at("files[1].path", &v), Some(&json!("/b")));
        assert_eq!(at("files.0.path", &v), Some(&json!("/a")));
        assert_eq!(at("o.force", &v), Some(&json!(true)));
    }

    #[test]
    fn a_quoted_key_may_hold_dots() {
        let v = json!({"a.b": {"c": 1}});
        assert_eq!(at(r#"["a.b"].c"#, &v), Some(&json!(1)));
        assert_eq!(at("['a.b'].c", &v), Some(&json!(1)));
    }

    #[test]
    fn a_json_pointer_is_accepted() {
        let v = json!({"files": [{"a/b": 2}]});
        assert_eq!(at("/files/0/a~1b", &v), Some(&json!(2)));
    }

    #[test]
    fn the_empty_path_is_the_whole_value() {
        let v = json!({"x": 1});
        assert_eq!(at("", &v), Some(&v));
        assert_eq!(at("$", &v), Some(&v));
    }

    #[test]
    fn a_missing_step_finds_nothing() {
        let v = json!({"files": []});
        assert_eq!(at("files[0]", &v), None);
        assert_eq!(at("nope.deeper", &v), None);
        assert_eq!(at("files.path", &v), None);
    }

    #[test]
    fn malformed_paths_are_refused_with_the_position() {
        for (bad, at) in [
            ("a..b", 2),
            ("a[", 1),
            ("a[x]", 2),
            (".a", 0),
            ("a]b", 1),
            ("$.", 2),
        ] {
            let err = JsonPath::parse(bad).unwrap_err();
            assert_eq!(err.at, at, "{bad}: {err}");
        }
    }

    #[test]
    fn a_path_in_a_config_is_checked_when_parsed() {
        let err = serde_json::from_str::<JsonPath>(r#""a..b""#).unwrap_err();
        assert!(err.to_string().contains("invalid path 'a..b'"), "{err}");
    }
}
