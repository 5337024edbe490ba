//! One AI message as the approval gate sees it: the tool calls it asked for, and
//! the same calls on the provider's other surfaces (its raw tool-call payload and
//! its content blocks). Owns which calls can be answered by id, and rewriting
//! every surface alike: removing calls, and replacing a call's arguments.
//!
//! A wire type (the model response's body, and the gate's rewritten message),
//! with its logic here rather than in the approval crate: the logic is plain
//! JSON work, and the fuzz targets check it without building the host.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::{CallContext, ToolCall};

/// The tool-call part of one AI message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AiMessage {
    /// The calls, as the harness parsed them (`id`, `name`, `args`).
    pub tool_calls: Vec<ModelToolCall>,
    /// The provider's raw tool-call payload (OpenAI's `additional_kwargs.tool_calls`),
    /// when the harness sends it: the provider replays it, so a removed call must
    /// go from here too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_tool_calls: Option<Vec<Value>>,
    /// The message's content: a string, or content blocks, some of which may be
    /// tool calls (`tool_use`, `tool_call`, `function_call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelToolCall {
    /// The model's id for the call; null when the model gave none.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    /// LangChain's `"type": "tool_call"`, kept as sent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl ModelToolCall {
    /// The call as the pipeline judges it, in `context`.
    pub fn tool_call(&self, context: &CallContext) -> ToolCall {
        ToolCall {
            tool_name: self.name.clone(),
            tool_input: self.args.clone(),
            tool_call_id: self.id.clone(),
            context: context.clone(),
        }
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Content-block types that carry a tool call.
const TOOL_CALL_BLOCKS: [&str; 4] = ["tool_use", "tool_call", "tool_call_chunk", "function_call"];

/// Why a call cannot be answered by its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum Unaddressable {
    /// The call has no id.
    NullId,
    /// The id is empty (or blank): strict providers refuse it on replay.
    EmptyId,
    /// Other calls of the same message use the same id; an answer by id would
    /// answer them all.
    SharedId { id: String, tools: Vec<String> },
}

impl Unaddressable {
    /// Says it in a sentence, for the rejection note.
    pub fn describe(&self) -> String {
        let why = match self {
            Unaddressable::NullId => "the call has no id".to_string(),
            Unaddressable::EmptyId => "the call's id is empty".to_string(),
            Unaddressable::SharedId { id, tools } => format!(
                "its id '{id}' is shared by {} calls in the same response ({})",
                tools.len(),
                tools.join(", ")
            ),
        };
        format!("{why}, so no answer can be matched to it; it was removed from the response")
    }

    pub fn code(&self) -> &'static str {
        "warden.unaddressable_call"
    }
}

impl AiMessage {
    /// For each call, why it cannot be answered by id (`None` when it can).
    /// Every call of an id group shares the verdict: the whole group goes.
    pub fn addressability(&self) -> Vec<Option<Unaddressable>> {
        let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, call) in self.tool_calls.iter().enumerate() {
            if let Some(id) = call.id.as_deref() {
                groups.entry(id).or_default().push(i);
            }
        }
        self.tool_calls
            .iter()
            .map(|call| match call.id.as_deref() {
                None => Some(Unaddressable::NullId),
                Some(id) if id.trim().is_empty() => Some(Unaddressable::EmptyId),
                Some(id) => {
                    let group = &groups[id];
                    (group.len() > 1).then(|| Unaddressable::SharedId {
                        id: id.to_string(),
                        tools: group
                            .iter()
                            .map(|&j| self.tool_calls[j].name.clone())
                            .collect(),
                    })
                }
            })
            .collect()
    }

    /// The index of the one call with this id, if exactly one has it.
    pub fn position(&self, id: &str) -> Option<usize> {
        let mut found = self
            .tool_calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.id.as_deref() == Some(id))
            .map(|(i, _)| i);
        match (found.next(), found.next()) {
            (Some(i), None) => Some(i),
            _ => None,
        }
    }

    /// Removes every call whose id is in `ids` (`None` is the null id) from
    /// every surface: the call list, the raw payload and the content blocks.
    pub fn remove_calls(&mut self, ids: &HashSet<Option<String>>) {
        if ids.is_empty() {
            return;
        }
        self.tool_calls.retain(|c| !ids.contains(&c.id));
        if let Some(raw) = &mut self.raw_tool_calls {
            raw.retain(|entry| !ids.contains(&surface_id(entry)));
        }
        if let Some(Value::Array(blocks)) = &mut self.content {
            blocks.retain(|block| !(is_tool_call_block(block) && ids.contains(&surface_id(block))));
        }
    }

    /// Replaces the arguments of the call with this id on every surface.
    pub fn replace_args(&mut self, id: &str, args: &Value) {
        let key = Some(id.to_string());
        for call in self.tool_calls.iter_mut().filter(|c| c.id == key) {
            call.args = args.clone();
        }
        for entry in self.raw_tool_calls.iter_mut().flatten() {
            if surface_id(entry) == key {
                set_args(entry, args);
            }
        }
        if let Some(Value::Array(blocks)) = &mut self.content {
            for block in blocks.iter_mut() {
                if is_tool_call_block(block) && surface_id(block) == key {
                    set_args(block, args);
                }
            }
        }
    }
}

pub(crate) fn is_tool_call_block(block: &Value) -> bool {
    block
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TOOL_CALL_BLOCKS.contains(&t))
}

/// A surface entry's call id: `call_id` for OpenAI Responses `function_call`
/// items (their `id` names the item, not the call), else `id`. A missing or
/// null id is `None`; a non-string id never matches a call's id.
pub(crate) fn surface_id(entry: &Value) -> Option<String> {
    let key = if entry.get("type").and_then(Value::as_str) == Some("function_call")
        && entry.get("call_id").is_some()
    {
        "call_id"
    } else {
        "id"
    };
    match entry.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(format!("\u{0}{other}")),
    }
}

/// Replaces arguments wherever a surface keeps them: `input` (Anthropic),
/// `args` (LangChain), `arguments` (OpenAI, a JSON string), and inside
/// `function` (OpenAI chat). A string stays a string.
fn set_args(entry: &mut Value, args: &Value) {
    let Some(object) = entry.as_object_mut() else {
        return;
    };
    for key in ["input", "args", "arguments"] {
        if let Some(slot) = object.get_mut(key) {
            *slot = match slot {
                Value::String(_) => Value::String(args.to_string()),
                _ => args.clone(),
            };
        }
    }
    if let Some(function) = object.get_mut("function") {
        set_args(function, args);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(value: Value) -> AiMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn null_empty_and_shared_ids_are_unaddressable_and_unique_ids_are_not() {
        let m = message(json!({"tool_calls": [
            {"id": "a", "name": "bash", "args": {}},
            {"id": null, "name": "ls", "args": {}},
            {"name": "ls", "args": {}},
            {"id": "", "name": "read_file", "args": {}},
            {"id": "b", "name": "bash", "args": {}},
            {"id": "b", "name": "read_file", "args": {}},
        ]}));
        let a = m.addressability();
        assert_eq!(a[0], None);
        assert_eq!(a[1], Some(Unaddressable::NullId));
        assert_eq!(a[2], Some(Unaddressable::NullId));
        assert_eq!(a[3], Some(Unaddressable::EmptyId));
        let shared = Some(Unaddressable::SharedId {
            id: "b".into(),
            tools: vec!["bash".into(), "read_file".into()],
        });
        assert_eq!(a[4], shared);
        assert_eq!(a[5], shared);
    }

    #[test]
    fn a_removed_call_goes_from_every_surface() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {}}, {"id": "b", "name": "ls", "args": {}}],
            "raw_tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
            "content": [
                {"type": "text", "text": "running"},
                {"type": "tool_use", "id": "a", "name": "bash", "input": {}},
                {"type": "function_call", "id": "fc_1", "call_id": "b", "name": "ls", "arguments": "{}"}
            ]
        }));
        m.remove_calls(&HashSet::from([Some("a".to_string())]));
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.raw_tool_calls.as_ref().unwrap().len(), 1);
        assert_eq!(m.raw_tool_calls.as_ref().unwrap()[0]["id"], "b");
        let blocks = m.content.as_ref().unwrap().as_array().unwrap();
        assert_eq!(blocks.len(), 2, "the text block and b's block stay");
        assert_eq!(blocks[1]["call_id"], "b");
    }

    #[test]
    fn removing_the_null_id_removes_id_less_entries_only() {
        let mut m = message(json!({
            "tool_calls": [{"id": null, "name": "bash", "args": {}}, {"id": "b", "name": "ls", "args": {}}],
            "raw_tool_calls": [{"function": {"name": "bash"}}, {"id": "b"}],
            "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "name": "bash", "input": {}}]
        }));
        m.remove_calls(&HashSet::from([None]));
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.raw_tool_calls.unwrap(), vec![json!({"id": "b"})]);
        assert_eq!(m.content.unwrap(), json!([{"type": "text", "text": "hi"}]));
    }

    #[test]
    fn replaced_arguments_reach_every_surface_in_its_own_form() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {"command": "rm -rf /"}}],
            "raw_tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"rm -rf /\"}"}}],
            "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "rm -rf /"}}]
        }));
        let args = json!({"command": "ls"});
        m.replace_args("a", &args);
        assert_eq!(m.tool_calls[0].args, args);
        let raw = &m.raw_tool_calls.as_ref().unwrap()[0]["function"]["arguments"];
        assert_eq!(raw, &Value::String(args.to_string()));
        assert_eq!(m.content.as_ref().unwrap()[0]["input"], args);
    }

    #[test]
    fn a_string_content_is_left_alone() {
        let mut m = message(json!({"tool_calls": [{"id": "a", "name": "bash"}], "content": "ok"}));
        m.remove_calls(&HashSet::from([Some("a".to_string())]));
        assert_eq!(m.content, Some(json!("ok")));
        assert!(m.tool_calls.is_empty());
    }
}
