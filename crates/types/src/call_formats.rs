//! Where a model response keeps tool calls outside its call list, and how each
//! format writes a call's id, tool name and arguments: one table, [`FORMATS`],
//! for every provider and framework format Warden reads, and the search of a
//! content block for calls nested in it (a `tool_use` inside a `tool_result`,
//! a `function_call` inside a Responses `message`, ...).
//!
//! What is not in the table is not trusted: a shape that names a tool and
//! arguments in no known format ([`Found::Unknown`]) and a block nested deeper
//! than Warden searches ([`Found::TooDeep`]) are refused by the surface check,
//! since a harness might run what Warden cannot read.

use serde_json::{Map, Value};

/// One way a model response format writes a tool call.
#[derive(Debug)]
pub struct Format {
    /// Whose format it is and what it is called there, for messages and docs.
    pub source: &'static str,
    /// How an entry in this format is recognised.
    pub marker: Marker,
    /// The keys of the call's id: the first key present is the id (a call id
    /// before an item id, for OpenAI Responses items).
    pub id: &'static [&'static str],
    /// The name of the tool, as the call list names it.
    pub tool: Tool,
    /// Where the arguments are.
    pub arguments: Arguments,
}

/// How a format is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// `"type": T` on the entry.
    Type(&'static str),
    /// An object under this key of the entry holds the call's fields (Gemini
    /// parts and Bedrock content blocks carry no `type`).
    Key(&'static str),
    /// Not recognised by anything: the reading of a raw payload entry in no
    /// format of the table ([`GENERIC`]).
    Any,
}

/// How a format names the tool.
#[derive(Debug)]
pub enum Tool {
    /// The name is under this key (`a.b`: key `b` of the object under `a`).
    Slot(&'static str),
    /// An MCP tool: the call list names it `mcp__<server>__<name>`, as Claude
    /// Code and Warden's rules do, from the entry's server key and name key.
    Mcp {
        /// The key of the MCP server's name.
        server: &'static str,
        /// The key of the tool's name on that server.
        name: &'static str,
    },
    /// A built-in tool whose entry carries no name: the call list names it
    /// this (the name the OpenAI Agents SDK gives the tool).
    Fixed(&'static str),
}

/// Where a format keeps the arguments.
#[derive(Debug)]
pub enum Arguments {
    /// JSON arguments (a value, or JSON text) under any of these keys; every
    /// one present must be the call list's arguments.
    Json(&'static [&'static str]),
    /// Freeform text under this key (OpenAI custom tools): the call list holds
    /// it as LangChain does, `{"__arg1": text}`.
    Text(&'static str),
}

/// The key LangChain lists a custom tool's freeform input under.
pub const TEXT_ARGUMENT: &str = "__arg1";

/// Every tool-call format Warden reads on a model response's surfaces.
/// `docs/daemon.md` ("Tool calls on every surface") names each; a test keeps
/// the two in step.
pub const FORMATS: &[Format] = &[
    Format {
        source: "LangChain tool_call",
        marker: Marker::Type("tool_call"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "LangChain tool_call_chunk",
        marker: Marker::Type("tool_call_chunk"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "LangChain server_tool_call",
        marker: Marker::Type("server_tool_call"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "LangChain server_tool_call_chunk",
        marker: Marker::Type("server_tool_call_chunk"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "OpenAI Chat Completions tool call",
        marker: Marker::Type("function"),
        id: &["id"],
        tool: Tool::Slot("function.name"),
        arguments: Arguments::Json(&["function.arguments"]),
    },
    Format {
        source: "Anthropic tool_use",
        marker: Marker::Type("tool_use"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["input"]),
    },
    Format {
        source: "Anthropic server_tool_use",
        marker: Marker::Type("server_tool_use"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["input"]),
    },
    Format {
        source: "Anthropic mcp_tool_use",
        marker: Marker::Type("mcp_tool_use"),
        id: &["id"],
        tool: Tool::Mcp {
            server: "server_name",
            name: "name",
        },
        arguments: Arguments::Json(&["input"]),
    },
    Format {
        source: "OpenAI Responses function_call",
        marker: Marker::Type("function_call"),
        id: &["call_id", "id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["arguments"]),
    },
    Format {
        source: "OpenAI Responses custom_tool_call",
        marker: Marker::Type("custom_tool_call"),
        id: &["call_id", "id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Text("input"),
    },
    Format {
        source: "OpenAI Responses local_shell_call",
        marker: Marker::Type("local_shell_call"),
        id: &["call_id", "id"],
        tool: Tool::Fixed("local_shell"),
        arguments: Arguments::Json(&["action"]),
    },
    Format {
        source: "OpenAI Responses shell_call",
        marker: Marker::Type("shell_call"),
        id: &["call_id", "id"],
        tool: Tool::Fixed("shell"),
        arguments: Arguments::Json(&["action"]),
    },
    Format {
        source: "OpenAI Responses apply_patch_call",
        marker: Marker::Type("apply_patch_call"),
        id: &["call_id", "id"],
        tool: Tool::Fixed("apply_patch"),
        arguments: Arguments::Json(&["operation"]),
    },
    Format {
        source: "OpenAI Responses computer_call",
        marker: Marker::Type("computer_call"),
        id: &["call_id", "id"],
        tool: Tool::Fixed("computer_use_preview"),
        arguments: Arguments::Json(&["action"]),
    },
    Format {
        source: "OpenAI Responses mcp_call",
        marker: Marker::Type("mcp_call"),
        id: &["id"],
        tool: Tool::Mcp {
            server: "server_label",
            name: "name",
        },
        arguments: Arguments::Json(&["arguments"]),
    },
    Format {
        source: "OpenAI Responses mcp_approval_request",
        marker: Marker::Type("mcp_approval_request"),
        id: &["id"],
        tool: Tool::Mcp {
            server: "server_label",
            name: "name",
        },
        arguments: Arguments::Json(&["arguments"]),
    },
    Format {
        source: "Vercel AI SDK tool-call",
        marker: Marker::Type("tool-call"),
        id: &["toolCallId"],
        tool: Tool::Slot("toolName"),
        arguments: Arguments::Json(&["input", "args"]),
    },
    Format {
        source: "Gemini functionCall part",
        marker: Marker::Key("functionCall"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "Gemini function_call part (Python SDK)",
        marker: Marker::Key("function_call"),
        id: &["id"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["args"]),
    },
    Format {
        source: "Bedrock Converse toolUse",
        marker: Marker::Key("toolUse"),
        id: &["toolUseId"],
        tool: Tool::Slot("name"),
        arguments: Arguments::Json(&["input"]),
    },
];

/// A raw payload entry in no format of the table (OpenAI's chat entries
/// without a `type`, a harness's own `{id, name, args}`): read by its `id`.
pub const GENERIC: Format = Format {
    source: "a tool call",
    marker: Marker::Any,
    id: &["id"],
    tool: Tool::Slot("name"),
    arguments: Arguments::Json(&["args"]),
};

/// Name slots read on every entry besides its format's own: a harness may read
/// any of them, so each one present must name the call list's tool.
const OTHER_NAMES: [&str; 3] = ["name", "toolName", "function.name"];

/// Argument slots read on every entry besides its format's own, likewise.
const OTHER_ARGUMENTS: [&str; 6] = [
    "input",
    "args",
    "arguments",
    "function.input",
    "function.args",
    "function.arguments",
];

/// How deep in a content block calls are searched for, in JSON levels below
/// the block. Real nesting is a few levels (a `tool_use` in a `tool_result`'s
/// content is two); anything deeper is refused rather than left unsearched.
pub const MAX_DEPTH: usize = 16;

/// Keys that, in a shape no format matches, name a tool.
const UNKNOWN_NAMES: [&str; 6] = [
    "name",
    "tool",
    "tool_name",
    "toolName",
    "function_name",
    "functionName",
];

/// Keys that, in a shape no format matches, hold a call's arguments.
const UNKNOWN_ARGUMENTS: [&str; 5] = ["input", "args", "arguments", "tool_input", "toolInput"];

/// Blocks that name a tool and arguments but are no call anyone runs: Vercel's
/// records of a call that already ran (`tool-result`, `tool-error`), and
/// LangChain's `invalid_tool_call` (arguments that did not parse, which
/// LangChain never runs). Calls nested in them are still found.
const NOT_CALLS: [&str; 3] = ["tool-result", "tool-error", "invalid_tool_call"];

/// A call, or what may be one, found in a content block.
#[derive(Debug)]
pub enum Found<'a> {
    /// A call in a known format.
    Call(Call<'a>),
    /// An object that names a tool (`tool`) and arguments in no known format.
    Unknown {
        /// Where it is in its block (JSON Pointer).
        pointer: String,
        /// The tool it names.
        tool: String,
    },
    /// Containers nested past [`MAX_DEPTH`], not searched.
    TooDeep {
        /// Where the unsearched container is (JSON Pointer).
        pointer: String,
    },
}

impl Found<'_> {
    /// Where it is in its block: a JSON Pointer (RFC 6901), empty for the block itself.
    pub fn pointer(&self) -> &str {
        match self {
            Found::Call(call) => &call.pointer,
            Found::Unknown { pointer, .. } | Found::TooDeep { pointer } => pointer,
        }
    }
}

/// A call in a known format: the object that holds its fields.
#[derive(Debug)]
pub struct Call<'a> {
    /// The format the entry is in.
    pub format: &'static Format,
    /// Where the entry is in its block (JSON Pointer), empty for the block itself.
    pub pointer: String,
    /// The call's fields: the entry, or the object under the format's key.
    pub fields: &'a Map<String, Value>,
}

impl Call<'_> {
    /// The call's id; `None` when missing or null. A non-string id never
    /// matches a call's id.
    pub fn id(&self) -> Option<String> {
        let value = self.format.id.iter().find_map(|key| self.fields.get(*key));
        match value {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.clone()),
            Some(other) => Some(format!("\u{0}{other}")),
        }
    }

    /// Every name the entry gives the tool (as the call list would name it),
    /// or why it gives none that can be read.
    pub fn names(&self) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        match &self.format.tool {
            Tool::Slot(slot) => names.extend(slot_value(self.fields, slot).map(name_of)),
            Tool::Fixed(name) => names.push((*name).to_string()),
            Tool::Mcp { server, name } => {
                let server = self.fields.get(*server).and_then(Value::as_str);
                let Some(server) = server.filter(|s| !s.trim().is_empty()) else {
                    return Err("without an MCP server name".into());
                };
                if server.contains("__") {
                    // `mcp__a__b__c` would name server `a` or server `a__b`.
                    return Err(
                        "whose MCP server name holds '__', so its tool name is ambiguous".into(),
                    );
                }
                let tool = self.fields.get(*name).map(name_of).unwrap_or_default();
                names.push(format!("mcp__{server}__{tool}"));
            }
        }
        let own = self.format.tool.slots();
        names.extend(
            OTHER_NAMES
                .iter()
                .filter(|slot| !own.contains(slot))
                .filter_map(|slot| slot_value(self.fields, slot))
                .map(name_of),
        );
        Ok(names)
    }

    /// Every set of arguments the entry gives, as the call list would hold
    /// them; none at all is no arguments (`{}`). JSON text is parsed strictly.
    pub fn arguments(&self) -> Result<Vec<Value>, String> {
        let mut found = Vec::new();
        if let Arguments::Text(slot) = &self.format.arguments {
            match self.fields.get(*slot) {
                None => {}
                Some(Value::String(text)) => found.push(text_arguments(text)),
                Some(_) => return Err(format!("('{slot}') are not text")),
            }
        }
        for value in self
            .format
            .arguments
            .json_slots()
            .into_iter()
            .filter_map(|slot| slot_value(self.fields, slot))
        {
            found.push(match value {
                Value::String(text) if text.trim().is_empty() => Value::Object(Map::new()),
                Value::String(text) => crate::strict_json::parse_arguments(text)?,
                other => other.clone(),
            });
        }
        if found.is_empty() {
            found.push(Value::Object(Map::new()));
        }
        Ok(found)
    }
}

impl Tool {
    /// The keys this format reads the tool's name from.
    fn slots(&self) -> Vec<&'static str> {
        match self {
            Tool::Slot(slot) => vec![slot],
            Tool::Mcp { server, name } => vec![server, name],
            Tool::Fixed(_) => vec![],
        }
    }
}

impl Arguments {
    /// The keys this format reads arguments from.
    fn own(&self) -> &[&'static str] {
        match self {
            Arguments::Json(slots) => slots,
            Arguments::Text(slot) => std::slice::from_ref(slot),
        }
    }

    /// Every key read as JSON arguments: the format's, then the other slots
    /// that are not its own.
    fn json_slots(&self) -> Vec<&'static str> {
        let own = self.own();
        let json: &[&'static str] = match self {
            Arguments::Json(slots) => slots,
            Arguments::Text(_) => &[],
        };
        let other = OTHER_ARGUMENTS.iter().filter(|slot| !own.contains(slot));
        json.iter().chain(other).copied().collect()
    }
}

/// A custom tool's freeform text as the call list holds it.
fn text_arguments(text: &str) -> Value {
    let mut object = Map::new();
    object.insert(TEXT_ARGUMENT.into(), Value::String(text.into()));
    Value::Object(object)
}

/// A tool name as written; one that is not a string never matches a call.
fn name_of(value: &Value) -> String {
    value.as_str().unwrap_or("\u{0}not a string").to_string()
}

/// The value at a slot (`a.b`: key `b` of the object under `a`).
fn slot_value<'a>(fields: &'a Map<String, Value>, slot: &str) -> Option<&'a Value> {
    match slot.split_once('.') {
        None => fields.get(slot),
        Some((outer, inner)) => fields.get(outer)?.as_object()?.get(inner),
    }
}

/// The formats of the table that `entry` is in (a hostile entry may claim
/// several: each reading must agree with the call list).
pub fn calls_of(entry: &Value) -> Vec<Call<'_>> {
    calls_at(entry, String::new())
}

fn calls_at(entry: &Value, pointer: String) -> Vec<Call<'_>> {
    let Some(object) = entry.as_object() else {
        return Vec::new();
    };
    let kind = object.get("type").and_then(Value::as_str);
    FORMATS
        .iter()
        .filter_map(|format| {
            let fields = match format.marker {
                Marker::Type(t) => (kind == Some(t)).then_some(object)?,
                Marker::Key(key) => object.get(key)?.as_object()?,
                Marker::Any => return None,
            };
            Some(Call {
                format,
                pointer: pointer.clone(),
                fields,
            })
        })
        .collect()
}

/// A raw payload entry read as a call: in its formats, else read generically.
pub fn raw_calls(entry: &Value) -> Vec<Call<'_>> {
    let calls = calls_of(entry);
    if !calls.is_empty() {
        return calls;
    }
    match entry.as_object() {
        Some(fields) => vec![Call {
            format: &GENERIC,
            pointer: String::new(),
            fields,
        }],
        None => Vec::new(),
    }
}

/// Every call in a content block, in a known format or not, at any depth up
/// to [`MAX_DEPTH`]. A call's own fields are not searched further (its
/// arguments are judged as arguments).
pub fn search(block: &Value) -> Vec<Found<'_>> {
    let mut found = Vec::new();
    walk(block, String::new(), 0, &mut found);
    found
}

fn walk<'a>(value: &'a Value, pointer: String, depth: usize, found: &mut Vec<Found<'a>>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(object) => {
            let calls = calls_at(value, pointer.clone());
            if !calls.is_empty() {
                found.extend(calls.into_iter().map(Found::Call));
                return;
            }
            if let Some(tool) = unknown_call(object) {
                found.push(Found::Unknown { pointer, tool });
                return;
            }
            object.iter().map(|(k, v)| (escape(k), v)).collect()
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    let children: Vec<_> = children
        .into_iter()
        .filter(|(_, v)| v.is_object() || v.is_array())
        .collect();
    if !children.is_empty() && depth >= MAX_DEPTH {
        found.push(Found::TooDeep { pointer });
        return;
    }
    for (step, child) in children {
        walk(child, format!("{pointer}/{step}"), depth + 1, found);
    }
}

/// A key as a JSON Pointer step (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The tool an object names, when it names a tool and arguments the way a call
/// would but in no format of the table: a string under a name key (`name`,
/// `tool`, `tool_name`, `toolName`, `function_name`, `functionName`), a
/// `function` that is a string or an object with a string `name`, or a `type`
/// `tool-<name>` (Vercel UI tool parts); together with an argument key
/// (`input`, `args`, `arguments`, `tool_input`, `toolInput`) on the object or
/// in its `function`. The `NOT_CALLS` blocks are none.
pub fn unknown_call(object: &Map<String, Value>) -> Option<String> {
    let kind = object.get("type").and_then(Value::as_str);
    if kind.is_some_and(|k| NOT_CALLS.contains(&k)) {
        return None;
    }
    let function = object.get("function");
    let function_object = function.and_then(Value::as_object);
    let has_arguments = |holder: &Map<String, Value>| {
        UNKNOWN_ARGUMENTS
            .iter()
            .any(|key| holder.get(*key).is_some_and(|v| !v.is_null()))
    };
    if !(has_arguments(object) || function_object.is_some_and(has_arguments)) {
        return None;
    }
    let named = UNKNOWN_NAMES
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))
        .or_else(|| function.and_then(Value::as_str))
        .or_else(|| {
            function_object
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
        })
        .or_else(|| {
            kind.and_then(|k| k.strip_prefix("tool-"))
                .filter(|n| !n.is_empty())
        });
    named.map(str::to_string)
}

/// Writes `args` wherever the entry keeps its arguments, each slot in its own
/// form (JSON text stays text; a custom tool's text is `__arg1`'s). An entry
/// with no argument slot gets its format's first. What a slot cannot hold is
/// left as it was: the caller checks the entry again.
pub fn write_arguments(format: &Format, fields: &mut Map<String, Value>, args: &Value) {
    let mut wrote = false;
    if let Arguments::Text(slot) = &format.arguments {
        let text = args
            .as_object()
            .filter(|a| a.len() == 1)
            .and_then(|a| a.get(TEXT_ARGUMENT))
            .and_then(Value::as_str);
        if let Some(text) = text {
            fields.insert((*slot).into(), Value::String(text.into()));
            wrote = true;
        }
    }
    let slots = format.arguments.json_slots();
    for slot in &slots {
        let target = match slot.split_once('.') {
            None => fields.get_mut(*slot),
            Some((outer, inner)) => fields
                .get_mut(outer)
                .and_then(Value::as_object_mut)
                .and_then(|o| o.get_mut(inner)),
        };
        if let Some(target) = target {
            *target = match target {
                Value::String(_) => Value::String(args.to_string()),
                _ => args.clone(),
            };
            wrote = true;
        }
    }
    if !wrote && let Arguments::Json([first, ..]) = &format.arguments {
        let (holder, key) = match first.split_once('.') {
            None => (Some(fields), *first),
            Some((outer, inner)) => (fields.get_mut(outer).and_then(Value::as_object_mut), inner),
        };
        if let Some(holder) = holder {
            holder.insert(key.into(), args.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marker_name(format: &Format) -> &'static str {
        match format.marker {
            Marker::Type(name) | Marker::Key(name) => name,
            Marker::Any => unreachable!("not in the table"),
        }
    }

    #[test]
    fn the_docs_name_every_format() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/daemon.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let (_, section) = docs.split_once("## Tool calls on every surface").unwrap();
        for format in FORMATS {
            let name = format!("`{}`", marker_name(format));
            assert!(
                section.contains(&name),
                "docs/daemon.md does not name {name}"
            );
        }
    }

    #[test]
    fn each_marker_is_one_format() {
        let mut markers: Vec<Marker> = FORMATS.iter().map(|f| f.marker).collect();
        markers.sort_by_key(|m| format!("{m:?}"));
        markers.dedup();
        assert_eq!(markers.len(), FORMATS.len());
    }

    #[test]
    fn a_call_in_a_key_format_is_read_under_its_key() {
        let part = json!({"functionCall": {"id": "a", "name": "bash", "args": {"command": "ls"}}});
        let calls = calls_of(&part);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].format.source, "Gemini functionCall part");
        assert_eq!(calls[0].id(), Some("a".into()));
        assert_eq!(calls[0].names(), Ok(vec!["bash".to_string()]));
        assert_eq!(calls[0].arguments(), Ok(vec![json!({"command": "ls"})]));
    }

    #[test]
    fn an_entry_that_claims_two_formats_is_read_in_both() {
        let entry = json!({"type": "tool_use", "id": "a", "name": "ls", "input": {},
                           "toolUse": {"toolUseId": "b", "name": "bash", "input": {}}});
        let ids: Vec<Option<String>> = calls_of(&entry).iter().map(Call::id).collect();
        assert_eq!(ids, [Some("a".to_string()), Some("b".to_string())]);
    }

    #[test]
    fn the_search_reports_where_each_call_is() {
        let block = json!({"type": "tool_result", "content": [
            {"type": "text", "text": "x"},
            {"a/b": {"type": "tool_use", "id": "b", "name": "bash", "input": {}}}
        ]});
        let found = search(&block);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer(), "/content/1/a~1b");
        assert!(matches!(&found[0], Found::Call(call) if call.id() == Some("b".into())));
    }

    #[test]
    fn a_call_is_not_searched_inside() {
        let block = json!({"type": "tool_use", "id": "a", "name": "spawn", "input":
            {"task": {"name": "build", "arguments": ["--release"]}}});
        assert_eq!(search(&block).len(), 1);
    }

    #[test]
    fn the_unknown_shape_needs_a_tool_name_and_arguments() {
        let unknown = |value: Value| unknown_call(value.as_object().unwrap());
        assert_eq!(
            unknown(json!({"name": "bash", "input": {}})),
            Some("bash".into())
        );
        assert_eq!(
            unknown(json!({"function": {"name": "bash", "arguments": "{}"}})),
            Some("bash".into())
        );
        assert_eq!(
            unknown(json!({"type": "tool-bash", "input": {}})),
            Some("bash".into())
        );
        assert_eq!(unknown(json!({"name": "bash"})), None, "no arguments");
        assert_eq!(
            unknown(json!({"name": "bash", "input": null})),
            None,
            "null arguments"
        );
        assert_eq!(
            unknown(json!({"input": {"command": "ls"}})),
            None,
            "no tool"
        );
        assert_eq!(
            unknown(json!({"name": 5, "input": {}})),
            None,
            "a name that is no string"
        );
        assert_eq!(unknown(json!({"type": "tool-", "input": {}})), None);
        assert_eq!(
            unknown(json!({"name": "schema", "parameters": {}})),
            None,
            "a tool definition"
        );
        assert_eq!(
            unknown(json!({"type": "tool-result", "toolName": "bash", "input": {}, "output": "x"})),
            None
        );
    }

    #[test]
    fn the_depth_bound_refuses_what_it_does_not_search() {
        let mut block = json!({"type": "tool_use", "id": "a", "name": "bash", "input": {}});
        for _ in 0..MAX_DEPTH {
            block = json!([block]);
        }
        assert!(
            matches!(search(&block)[..], [Found::Call(_)]),
            "a call at the bound is found"
        );
        let deeper = json!([block]);
        assert!(matches!(search(&deeper)[..], [Found::TooDeep { .. }]));
        let mut text = json!({"type": "text", "text": "x"});
        for _ in 0..MAX_DEPTH + 5 {
            text = json!([text]);
        }
        assert!(matches!(search(&text)[..], [Found::TooDeep { .. }]));
    }

    #[test]
    fn edited_arguments_are_written_in_each_formats_form() {
        let args = json!({"command": "ls"});
        let cases = [
            (
                json!({"type": "function_call", "call_id": "a", "name": "bash", "arguments": "{}"}),
                "arguments",
                json!(args.to_string()),
            ),
            (
                json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "args": {}}),
                "args",
                args.clone(),
            ),
            (
                json!({"type": "local_shell_call", "call_id": "a"}),
                "action",
                args.clone(),
            ),
            (
                json!({"type": "custom_tool_call", "call_id": "a", "name": "x", "input": "old"}),
                "input",
                json!("new"),
            ),
        ];
        for (mut entry, slot, expected) in cases {
            let format = calls_of(&entry)[0].format;
            let given = if format.source.contains("custom") {
                json!({"__arg1": "new"})
            } else {
                args.clone()
            };
            write_arguments(format, entry.as_object_mut().unwrap(), &given);
            assert_eq!(entry[slot], expected, "{}", format.source);
        }
    }
}
