//! Whether a model response says the same thing on every surface. A harness may
//! run a message's calls from its call list, from the provider's raw payload
//! (`raw_tool_calls`) or from its content blocks; only the call list is judged,
//! so every call on another surface must be one of those calls: the same id,
//! the same tool name and the same arguments. Where one is not, Warden never
//! saw what would run.

use std::collections::HashSet;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::{AiMessage, ModelToolCall, is_tool_call_block, surface_id};

/// A call on another surface that is not one of the judged calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SurfaceMismatch {
    /// `raw_tool_calls` or `content`.
    pub surface: Surface,
    /// The entry's position on that surface.
    pub index: usize,
    /// What differs, in a phrase.
    pub problem: String,
}

/// A surface of a message other than its call list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    RawToolCalls,
    Content,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::RawToolCalls => "raw_tool_calls",
            Surface::Content => "content",
        }
    }
}

impl std::fmt::Display for SurfaceMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}[{}] {}",
            self.surface.as_str(),
            self.index,
            self.problem
        )
    }
}

/// The longest a name or an id is quoted in a mismatch.
const QUOTED_CHARS: usize = 64;

impl AiMessage {
    /// Every call on the raw payload or in the content blocks that does not
    /// match a call of the list by id, name and arguments. Entries whose id is
    /// in `removed` are not looked at: they go from every surface anyway.
    pub fn surface_mismatches(&self, removed: &HashSet<Option<String>>) -> Vec<SurfaceMismatch> {
        let raw = self
            .raw_tool_calls
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, entry)| (Surface::RawToolCalls, i, entry));
        let blocks = match &self.content {
            Some(Value::Array(blocks)) => blocks.as_slice(),
            _ => &[],
        };
        let blocks = blocks
            .iter()
            .enumerate()
            .filter(|(_, block)| is_tool_call_block(block))
            .map(|(i, block)| (Surface::Content, i, block));
        raw.chain(blocks)
            .filter(|(_, _, entry)| !removed.contains(&surface_id(entry)))
            .filter_map(|(surface, index, entry)| {
                self.unmatched(entry).map(|problem| SurfaceMismatch {
                    surface,
                    index,
                    problem,
                })
            })
            .collect()
    }

    /// Removes the entries of these mismatches from their surfaces.
    pub fn remove_mismatched(&mut self, mismatches: &[SurfaceMismatch]) {
        let drop = |surface: Surface, entries: &mut Vec<Value>| {
            let mut index = 0;
            entries.retain(|_| {
                let keep = !mismatches
                    .iter()
                    .any(|m| m.surface == surface && m.index == index);
                index += 1;
                keep
            });
        };
        if let Some(raw) = &mut self.raw_tool_calls {
            drop(Surface::RawToolCalls, raw);
        }
        if let Some(Value::Array(blocks)) = &mut self.content {
            drop(Surface::Content, blocks);
        }
    }

    /// Why `entry` is none of the listed calls, if it is not.
    fn unmatched(&self, entry: &Value) -> Option<String> {
        let Some(object) = entry.as_object() else {
            return Some("is not an object".into());
        };
        let id = surface_id(entry);
        let shown = match &id {
            Some(id) => format!("the call '{}'", crate::text::excerpt(id, QUOTED_CHARS)),
            None => "a call without an id".to_string(),
        };
        let same_id: Vec<&ModelToolCall> = self.tool_calls.iter().filter(|c| c.id == id).collect();
        if same_id.is_empty() {
            return Some(format!("is {shown}, which the call list does not have"));
        }
        let names = names(object);
        if names.is_empty() {
            return Some(format!("is {shown} without a tool name"));
        }
        let arguments = match arguments(object) {
            Ok(arguments) => arguments,
            Err(problem) => return Some(format!("is {shown}, whose arguments {problem}")),
        };
        let matches = |call: &&ModelToolCall| {
            names.iter().all(|n| *n == call.name) && arguments.iter().all(|a| *a == call.args)
        };
        if same_id.iter().any(matches) {
            return None;
        }
        Some(
            match same_id.iter().find(|c| names.iter().all(|n| *n == c.name)) {
                Some(_) => format!("is {shown} with other arguments than the call list's"),
                None => format!(
                    "is {shown} naming the tool '{}', not '{}' as the call list does",
                    crate::text::excerpt(
                        names.iter().find(|n| **n != same_id[0].name).unwrap_or(&""),
                        QUOTED_CHARS
                    ),
                    crate::text::excerpt(&same_id[0].name, QUOTED_CHARS)
                ),
            },
        )
    }
}

/// Every tool name an entry gives: `name`, and `function.name` (OpenAI chat).
fn names(entry: &Map<String, Value>) -> Vec<&str> {
    let function = entry.get("function").and_then(Value::as_object);
    [entry.get("name"), function.and_then(|f| f.get("name"))]
        .into_iter()
        .flatten()
        .map(|name| name.as_str().unwrap_or("\u{0}not a string"))
        .collect()
}

/// Every set of arguments an entry gives, wherever a provider keeps them (the
/// places `set_args` writes): `input`, `args`, `arguments`, inside `function`.
/// A string is JSON text (empty: no arguments). None at all: no arguments.
fn arguments(entry: &Map<String, Value>) -> Result<Vec<Value>, String> {
    let function = entry.get("function").and_then(Value::as_object);
    let slots = ["input", "args", "arguments"];
    let mut found = Vec::new();
    for holder in [Some(entry), function].into_iter().flatten() {
        for value in slots.iter().filter_map(|key| holder.get(*key)) {
            found.push(match value {
                Value::String(text) if text.trim().is_empty() => Value::Object(Map::new()),
                Value::String(text) => parse_arguments(text)?,
                other => other.clone(),
            });
        }
    }
    if found.is_empty() {
        found.push(Value::Object(Map::new()));
    }
    Ok(found)
}

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
                    crate::text::excerpt(&key, QUOTED_CHARS)
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
    use serde_json::json;

    fn message(value: Value) -> AiMessage {
        serde_json::from_value(value).unwrap()
    }

    fn problems(m: &AiMessage) -> Vec<String> {
        m.surface_mismatches(&HashSet::new())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn every_provider_shape_of_the_same_call_matches() {
        let m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {"command": "ls"}}],
            "raw_tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}},
                {"id": "a", "name": "bash", "args": {"command": "ls"}}
            ],
            "content": [
                {"type": "text", "text": "listing"},
                {"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_call", "id": "a", "name": "bash", "args": {"command": "ls"}},
                {"type": "function_call", "id": "fc_9", "call_id": "a", "name": "bash", "arguments": "{\"command\":\"ls\"}"}
            ]
        }));
        assert_eq!(problems(&m), Vec::<String>::new());
    }

    #[test]
    fn a_call_only_on_the_raw_payload_is_a_mismatch() {
        let m = message(json!({
            "tool_calls": [{"id": "a", "name": "ls", "args": {}}],
            "raw_tool_calls": [
                {"id": "a", "function": {"name": "ls", "arguments": "{}"}},
                {"id": "b", "function": {"name": "bash", "arguments": "{\"command\": \"rm -rf /\"}"}}
            ]
        }));
        assert_eq!(
            problems(&m),
            ["raw_tool_calls[1] is the call 'b', which the call list does not have"]
        );
    }

    #[test]
    fn another_name_or_other_arguments_under_the_same_id_are_mismatches() {
        let m = message(json!({
            "tool_calls": [{"id": "a", "name": "ls", "args": {"path": "."}}],
            "content": [
                {"type": "tool_use", "id": "a", "name": "bash", "input": {"path": "."}},
                {"type": "tool_use", "id": "a", "name": "ls", "input": {"path": "/"}}
            ]
        }));
        assert_eq!(
            problems(&m),
            [
                "content[0] is the call 'a' naming the tool 'bash', not 'ls' as the call list does",
                "content[1] is the call 'a' with other arguments than the call list's"
            ]
        );
    }

    #[test]
    fn arguments_that_repeat_a_key_are_a_mismatch() {
        let m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {"command": "ls"}}],
            "raw_tool_calls": [{"id": "a", "function": {"name": "bash",
                "arguments": "{\"command\": \"ls\", \"command\": \"rm -rf /\"}"}}]
        }));
        let problems = problems(&m);
        assert!(
            problems[0].contains("the key 'command' is given twice"),
            "{problems:?}"
        );
    }

    #[test]
    fn two_names_or_two_argument_slots_must_all_agree() {
        let m = message(json!({
            "tool_calls": [{"id": "a", "name": "ls", "args": {}}],
            "raw_tool_calls": [
                {"id": "a", "name": "ls", "function": {"name": "bash"}},
                {"id": "a", "name": "ls", "args": {}, "input": {"command": "rm"}}
            ]
        }));
        assert_eq!(problems(&m).len(), 2, "{:?}", problems(&m));
    }

    #[test]
    fn entries_of_removed_ids_and_text_blocks_are_not_looked_at() {
        let m = message(json!({
            "tool_calls": [{"id": "x", "name": "ls"}, {"id": "x", "name": "cat"}],
            "raw_tool_calls": [{"id": "x", "name": "rm"}],
            "content": [{"type": "text", "text": "rm -rf /"}, "a bare string"]
        }));
        assert!(
            m.surface_mismatches(&HashSet::from([Some("x".to_string())]))
                .is_empty()
        );
    }

    #[test]
    fn a_mismatched_entry_is_removed_from_its_surface_only() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "ls"}],
            "raw_tool_calls": [{"id": "a", "name": "ls"}, {"id": "b", "name": "rm"}],
            "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "c", "name": "rm", "input": {}}]
        }));
        let mismatches = m.surface_mismatches(&HashSet::new());
        m.remove_mismatched(&mismatches);
        assert_eq!(
            m.raw_tool_calls.unwrap(),
            vec![json!({"id": "a", "name": "ls"})]
        );
        assert_eq!(m.content.unwrap(), json!([{"type": "text", "text": "hi"}]));
        assert_eq!(m.tool_calls.len(), 1);
    }
}
