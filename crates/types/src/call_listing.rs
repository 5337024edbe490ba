//! What can be read of a model response that cannot be parsed whole (nested
//! past serde's own depth guard, a key repeated in a call, a field of the
//! wrong type): the id and name of each of its tool calls, so that every call
//! comes back denied rather than vanishing from the answer. Arguments and the
//! other surfaces are skipped without recursion (serde_json ignores a value
//! with a loop, not a call per level), so any depth can be read.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use crate::message::{AiMessage, ModelToolCall};

/// The calls of `body`'s `message.tool_calls`, each with the first string
/// given for its `id` and `name` (an empty name when none is a string) and no
/// arguments; `raw_tool_calls` and a list `content`, when present, come back
/// empty (none of their calls may run). `None` when the body is not a JSON
/// object with such a list.
pub fn list_calls(body: &[u8]) -> Option<AiMessage> {
    let listed: Listed = serde_json::from_slice(body).ok()?;
    let message = listed.message?;
    Some(AiMessage {
        tool_calls: message
            .tool_calls?
            .0
            .into_iter()
            .map(|call| ModelToolCall {
                id: call.id,
                name: call.name.unwrap_or_default(),
                args: json!({}),
                kind: None,
            })
            .collect(),
        raw_tool_calls: message.raw_tool_calls.map(|_| Vec::new()),
        content: message
            .content
            .filter(Skimmed::is_list)
            .map(|_| Value::Array(Vec::new())),
    })
}

#[derive(Deserialize)]
struct Listed {
    message: Option<ListedMessage>,
}

#[derive(Deserialize)]
struct ListedMessage {
    tool_calls: Option<Calls>,
    raw_tool_calls: Option<IgnoredAny>,
    content: Option<Skimmed>,
}

/// A list of calls; an item that is not an object is a call with no name.
struct Calls(Vec<ListedCall>);

impl<'de> Deserialize<'de> for Calls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallsVisitor;
        impl<'de> Visitor<'de> for CallsVisitor {
            type Value = Calls;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of tool calls")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Calls, A::Error> {
                let mut calls = Vec::new();
                while let Some(call) = seq.next_element::<ListedCall>()? {
                    calls.push(call);
                }
                Ok(Calls(calls))
            }
        }
        deserializer.deserialize_seq(CallsVisitor)
    }
}

/// One call's id and name: the first string given for each.
#[derive(Default)]
struct ListedCall {
    id: Option<String>,
    name: Option<String>,
}

impl<'de> Deserialize<'de> for ListedCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Skimmed::Object(fields) = Skimmed::deserialize(deserializer)? else {
            return Ok(ListedCall::default());
        };
        let first = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        Ok(ListedCall {
            id: first("id"),
            name: first("name"),
        })
    }
}

/// Any value, skimmed: an object keeps its keys whose values are strings (in
/// order, repeats included), every other value only its kind.
enum Skimmed {
    Object(Vec<(String, String)>),
    List,
    Other,
}

impl Skimmed {
    fn is_list(&self) -> bool {
        matches!(self, Skimmed::List)
    }
}

impl<'de> Deserialize<'de> for Skimmed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkimVisitor)
    }
}

struct SkimVisitor;

/// A visitor's methods for the scalars it only skips, answering `$value`.
macro_rules! skip_scalars {
    ($ty:ty, $value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
            Ok($value)
        }
    };
}

impl<'de> Visitor<'de> for SkimVisitor {
    type Value = Skimmed;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skimmed, A::Error> {
        let mut fields = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            // A value inside an object is not skimmed again: strings or
            // nothing, so that no level recurses into the next.
            if let Text(Some(text)) = map.next_value::<Text>()? {
                fields.push((key, text));
            }
        }
        Ok(Skimmed::Object(fields))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skimmed, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Skimmed::List)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Skimmed, E> {
        Ok(Skimmed::Other)
    }
    skip_scalars!(Skimmed, Skimmed::Other);
}

/// A string, or `None` for any other value (skipped whole, at any depth).
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Text, E> {
        Ok(Text(Some(text.to_string())))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    skip_scalars!(Text, Text(None));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_nested_past_serdes_guard_is_listed_by_id_and_name() {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        let body = format!(
            r#"{{"message":{{"tool_calls":[{{"id":"c1","name":"bash","args":{{"x":{deep}}}}},{{"id":"c2","name":"read","args":{{}}}}],"content":[{deep}]}}}}"#
        );
        let message = list_calls(body.as_bytes()).unwrap();
        let listed: Vec<_> = message
            .tool_calls
            .iter()
            .map(|c| (c.id.as_deref(), c.name.as_str()))
            .collect();
        assert_eq!(listed, [(Some("c1"), "bash"), (Some("c2"), "read")]);
        assert_eq!(message.content, Some(json!([])));
    }

    #[test]
    fn a_repeated_key_or_a_call_that_is_no_object_is_still_listed() {
        let body = br#"{"message":{"tool_calls":[{"name":"bash","name":"ls","id":7},3]}}"#;
        let message = list_calls(body).unwrap();
        let listed: Vec<_> = message
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        assert_eq!(listed, [(None, "bash".into()), (None, String::new())]);
    }

    #[test]
    fn a_body_with_no_list_of_calls_lists_none() {
        assert!(list_calls(b"[1]").is_none());
        assert!(list_calls(br#"{"message":{"tool_calls":{}}}"#).is_none());
    }
}
