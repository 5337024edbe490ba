//! One AI message as the approval gate sees it: the tool calls it asked for, and
//! the same calls on the provider's other surfaces (its raw tool-call payload and
//! its content blocks). Owns which calls can be answered by id, and removing
//! calls from every surface alike ([`crate::surfaces`] replaces a call's
//! arguments, since what it cannot rewrite must then agree or go).
//!
//! A wire type (the model response's body, and the gate's rewritten message),
//! with its logic here rather than in the approval crate: the logic is plain
//! JSON work, and the fuzz targets check it without building the host.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::call_formats::{self, Call, Found};
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
    /// tool calls, or hold them (see `call_formats::FORMATS`).
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
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object (`{}` when absent).
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
    SharedId {
        /// The shared id.
        id: String,
        /// The tools of the calls that share it, in message order.
        tools: Vec<String>,
    },
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

    /// The reason code a removed call's rejection carries (`warden.unaddressable_call`).
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
    /// every surface: the call list, the raw payload and the content blocks (a
    /// block that holds such a call nested in it goes whole).
    pub fn remove_calls(&mut self, ids: &HashSet<Option<String>>) {
        if ids.is_empty() {
            return;
        }
        self.tool_calls.retain(|c| !ids.contains(&c.id));
        if let Some(raw) = &mut self.raw_tool_calls {
            raw.retain(|entry| !holds_any(call_formats::raw_calls(entry), ids));
        }
        self.retain_blocks(|_, block| {
            let calls = call_formats::search(block)
                .into_iter()
                .filter_map(|found| match found {
                    Found::Call(call) => Some(call),
                    _ => None,
                });
            !holds_any(calls, ids)
        });
    }

    /// The content blocks: the array's, or a lone object taken as one block.
    pub(crate) fn content_blocks(&self) -> &[Value] {
        match &self.content {
            Some(Value::Array(blocks)) => blocks,
            Some(block @ Value::Object(_)) => std::slice::from_ref(block),
            _ => &[],
        }
    }

    pub(crate) fn content_blocks_mut(&mut self) -> &mut [Value] {
        match &mut self.content {
            Some(Value::Array(blocks)) => blocks,
            Some(block @ Value::Object(_)) => std::slice::from_mut(block),
            _ => &mut [],
        }
    }

    /// Keeps the content blocks `keep` says to keep; a lone object block that
    /// goes leaves no content.
    pub(crate) fn retain_blocks(&mut self, mut keep: impl FnMut(usize, &Value) -> bool) {
        match &mut self.content {
            Some(Value::Array(blocks)) => {
                let mut index = 0;
                blocks.retain(|block| {
                    let kept = keep(index, block);
                    index += 1;
                    kept
                });
            }
            Some(block @ Value::Object(_)) if !keep(0, block) => self.content = None,
            _ => {}
        }
    }
}

/// Whether any of these calls has an id in `ids`.
fn holds_any<'a>(calls: impl IntoIterator<Item = Call<'a>>, ids: &HashSet<Option<String>>) -> bool {
    calls.into_iter().any(|call| ids.contains(&call.id()))
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
    fn a_removed_call_goes_from_every_format_and_every_depth() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {}}, {"id": "b", "name": "ls", "args": {}}],
            "raw_tool_calls": [{"toolUse": {"toolUseId": "a", "name": "bash", "input": {}}}, {"id": "b"}],
            "content": [
                {"type": "text", "text": "running"},
                {"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": {}},
                {"type": "tool_result", "content": [{"functionCall": {"id": "a", "name": "bash", "args": {}}}]},
                {"type": "tool-call", "toolCallId": "b", "toolName": "ls", "input": {}}
            ]
        }));
        m.remove_calls(&HashSet::from([Some("a".to_string())]));
        assert_eq!(m.raw_tool_calls.unwrap(), vec![json!({"id": "b"})]);
        let blocks = m.content.unwrap();
        assert_eq!(blocks.as_array().unwrap().len(), 2, "{blocks}");
        assert_eq!(blocks[1]["toolCallId"], "b");
    }

    #[test]
    fn a_string_content_is_left_alone() {
        let mut m = message(json!({"tool_calls": [{"id": "a", "name": "bash"}], "content": "ok"}));
        m.remove_calls(&HashSet::from([Some("a".to_string())]));
        assert_eq!(m.content, Some(json!("ok")));
        assert!(m.tool_calls.is_empty());
    }
}
