//! JSON as a harness sends it, checked before it is parsed for real: that it is
//! JSON at all, how deeply it nests, and that no object names a key twice.
//!
//! Duplicate keys are refused because parsers disagree about them: serde takes
//! the last value, others the first, so a harness could run a value Warden never
//! judged. One pass over the text, no values built; only keys are compared.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What is wrong with a JSON text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonProblem {
    /// Not JSON: a syntax error, `NaN`, a lone surrogate, a number out of range.
    #[error("the body is not valid JSON: {message} (line {line}, column {column})")]
    Syntax {
        /// The parser's message.
        message: String,
        /// Where, 1-based.
        line: usize,
        /// Where in the line, 1-based.
        column: usize,
    },
    /// Arrays and objects nested deeper than the limit.
    #[error("the body nests JSON deeper than the limit of {limit} levels")]
    TooDeep {
        /// The deepest nesting accepted.
        limit: usize,
    },
    /// An object names the same key twice (after unescaping).
    #[error("the key '{key}' appears more than once in the object at {path}")]
    DuplicateKey {
        /// Where the object is, as a key path (`tool_input.x[0]`).
        path: String,
        /// The repeated key.
        key: String,
    },
}

/// Checks `json`: valid, no deeper than `max_depth`, no duplicate key anywhere.
pub fn check(json: &[u8], max_depth: usize) -> Result<(), JsonProblem> {
    let found = RefCell::new(None);
    let scan = Scan {
        depth: 0,
        max_depth,
        path: Path::Root,
        found: &found,
    };
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let outcome = scan
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (outcome, found.into_inner()) {
        (_, Some(problem)) => Err(problem),
        (Ok(()), None) => Ok(()),
        (Err(err), None) => Err(syntax(&err, max_depth)),
    }
}

fn syntax(err: &serde_json::Error, max_depth: usize) -> JsonProblem {
    let message = err.to_string();
    // serde_json's own nesting guard (128 levels) when the limit is higher.
    if message.starts_with("recursion limit exceeded") {
        return JsonProblem::TooDeep {
            limit: max_depth.min(128),
        };
    }
    let message = match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    JsonProblem::Syntax {
        message,
        line: err.line(),
        column: err.column(),
    }
}

/// Where a value sits, for the error: built only when one is reported.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => f.write_str("the top level"),
            Path::Key(Path::Root, key) => f.write_str(key),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(Path::Root, i) => write!(f, "[{i}]"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// One value to scan.
struct Scan<'p, 'f> {
    depth: usize,
    max_depth: usize,
    path: Path<'p>,
    found: &'f RefCell<Option<JsonProblem>>,
}

impl Scan<'_, '_> {
    /// Records the problem and stops the parse (the error text is not used).
    fn stop<E: de::Error>(&self, problem: JsonProblem) -> E {
        *self.found.borrow_mut() = Some(problem);
        E::custom("stopped")
    }

    fn nested<E: de::Error>(&self) -> Result<usize, E> {
        let depth = self.depth + 1;
        if depth > self.max_depth {
            return Err(self.stop(JsonProblem::TooDeep {
                limit: self.max_depth,
            }));
        }
        Ok(depth)
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.nested()?;
        let mut index = 0;
        loop {
            let item = Scan {
                depth,
                max_depth: self.max_depth,
                path: Path::Index(&self.path, index),
                found: self.found,
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let depth = self.nested()?;
        let mut seen = Seen::default();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = Scan {
                depth,
                max_depth: self.max_depth,
                path: Path::Key(&self.path, &key),
                found: self.found,
            };
            map.next_value_seed(value)?;
            if let Some(key) = seen.repeated(key) {
                return Err(self.stop(JsonProblem::DuplicateKey {
                    path: self.path.to_string(),
                    key: key.into_owned(),
                }));
            }
        }
        Ok(())
    }
}

/// Up to this many keys an object's are compared one by one: cheaper than
/// hashing each for the few keys a call's objects have (every request body
/// is checked).
const LISTED_KEYS: usize = 16;

/// The keys an object has named so far.
enum Seen<'de> {
    Listed(Vec<Cow<'de, str>>),
    Hashed(HashSet<Cow<'de, str>>),
}

impl Default for Seen<'_> {
    fn default() -> Self {
        Seen::Listed(Vec::new())
    }
}

impl<'de> Seen<'de> {
    /// Adds `key`; gives it back if the object named it before.
    fn repeated(&mut self, key: Cow<'de, str>) -> Option<Cow<'de, str>> {
        match self {
            Seen::Listed(keys) if keys.contains(&key) => Some(key),
            Seen::Listed(keys) if keys.len() < LISTED_KEYS => {
                keys.push(key);
                None
            }
            Seen::Listed(keys) => {
                let mut hashed: HashSet<_> = keys.drain(..).collect();
                hashed.insert(key);
                *self = Seen::Hashed(hashed);
                None
            }
            Seen::Hashed(keys) if keys.contains(&key) => Some(key),
            Seen::Hashed(keys) => {
                keys.insert(key);
                None
            }
        }
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_string()))
    }
}

/// How much of a repeated key an error quotes.
const QUOTED_KEY_CHARS: usize = 64;

/// JSON text of arguments, parsed strictly: a key given twice is refused, since
/// parsers disagree on which value wins.
pub fn parse_arguments(text: &str) -> Result<Value, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|err| format!("are not JSON ({err})"))?;
    Ok(value)
}

/// A JSON value whose objects may not repeat a key.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key '{}' is given twice",
                    crate::text::excerpt(&key, QUOTED_KEY_CHARS)
                )));
            }
            let value = map.next_value_seed(StrictValue)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(json: &str) -> Option<JsonProblem> {
        check(json.as_bytes(), 8).err()
    }

    #[test]
    fn plain_json_passes() {
        assert_eq!(
            problem(r#"{"a": [1, {"b": "c"}], "d": {"a": 1}}"#),
            None,
            "the same key in different objects is fine"
        );
    }

    #[test]
    fn a_key_named_twice_is_found_with_its_path() {
        assert_eq!(
            problem(r#"{"tool_input": {"x": [{"cmd": "ls", "cmd": "rm -rf /"}]}}"#),
            Some(JsonProblem::DuplicateKey {
                path: "tool_input.x[0]".into(),
                key: "cmd".into()
            })
        );
    }

    #[test]
    fn a_key_named_twice_in_a_large_object_is_found() {
        // Past the keys compared one by one: the first key again, and the last.
        let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        for again in ["k0", "k39"] {
            let text = format!("{{{}, \"{again}\": 1}}", keys.join(", "));
            assert_eq!(
                problem(&text),
                Some(JsonProblem::DuplicateKey {
                    path: "the top level".into(),
                    key: again.into()
                }),
                "{again}"
            );
        }
        assert_eq!(problem(&format!("{{{}}}", keys.join(", "))), None);
    }

    #[test]
    fn a_key_spelled_with_an_escape_is_the_same_key() {
        assert!(matches!(
            problem(r#"{"command": "ls", "comm\u0061nd": "rm"}"#),
            Some(JsonProblem::DuplicateKey { key, .. }) if key == "command"
        ));
    }

    #[test]
    fn a_duplicate_at_the_top_is_named_so() {
        assert_eq!(
            problem(r#"{"tool_name": "a", "tool_name": "b"}"#)
                .unwrap()
                .to_string(),
            "the key 'tool_name' appears more than once in the object at the top level"
        );
    }

    #[test]
    fn nan_and_lone_surrogates_are_not_json() {
        for text in [
            r#"{"a": NaN}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": 1e999}"#,
            "{\"a\": 1",
        ] {
            assert!(
                matches!(problem(text), Some(JsonProblem::Syntax { .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn nesting_past_the_limit_is_too_deep() {
        let deep = format!("{}{}", "[".repeat(9), "]".repeat(9));
        assert_eq!(problem(&deep), Some(JsonProblem::TooDeep { limit: 8 }));
        let ok = format!("{}{}", "[".repeat(8), "]".repeat(8));
        assert_eq!(problem(&ok), None);
    }

    #[test]
    fn nesting_past_serde_jsons_own_guard_is_too_deep_too() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            check(deep.as_bytes(), 256),
            Err(JsonProblem::TooDeep { limit: 128 })
        );
    }

    #[test]
    fn trailing_text_is_not_json() {
        assert!(matches!(problem("{} {"), Some(JsonProblem::Syntax { .. })));
    }
}
