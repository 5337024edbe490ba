//! Whether a model response says the same thing on every surface. A harness may
//! run a message's calls from its call list, from the provider's raw payload
//! (`raw_tool_calls`) or from its content blocks; only the call list is judged,
//! so every call on another surface must be one of those calls: the same id,
//! the same tool name and the same arguments. Where one is not, Warden never
//! saw what would run. Calls are read in the formats of
//! [`crate::call_formats::FORMATS`], at any depth of a content block; what
//! looks like a call in no known format is refused.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::call_formats::{self, Call, Format, Found, MAX_DEPTH, Marker};
use crate::message::{AiMessage, ModelToolCall};

/// A call on another surface that is not one of the judged calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SurfaceMismatch {
    /// `raw_tool_calls` or `content`.
    pub surface: Surface,
    /// The entry's position on that surface.
    pub index: usize,
    /// Where in the entry the call is nested (a JSON Pointer); empty when the
    /// entry is the call.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pointer: String,
    /// What differs, in a phrase.
    pub problem: String,
}

/// A surface of a message other than its call list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The provider's raw tool-call payload (`AiMessage::raw_tool_calls`).
    RawToolCalls,
    /// The message's content blocks (`AiMessage::content`).
    Content,
}

impl Surface {
    /// The surface as the wire spells it (`raw_tool_calls`, `content`).
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
            "{}[{}]{} {}",
            self.surface.as_str(),
            self.index,
            crate::text::excerpt(&self.pointer, QUOTED_CHARS * 2),
            self.problem
        )
    }
}

/// The longest a name or an id is quoted in a mismatch.
const QUOTED_CHARS: usize = 64;

impl AiMessage {
    /// Every call on the raw payload or in the content blocks that does not
    /// match a call of the list by id, name and arguments, and everything in a
    /// content block that names a tool and arguments in no known format or
    /// nests too deep to be searched. Calls whose id is in `removed` are not
    /// looked at: they go from every surface anyway.
    pub fn surface_mismatches(&self, removed: &HashSet<Option<String>>) -> Vec<SurfaceMismatch> {
        let mut mismatches = Vec::new();
        for (index, entry) in self.raw_tool_calls.iter().flatten().enumerate() {
            let mut found = |pointer: String, problem| {
                mismatches.push(SurfaceMismatch {
                    surface: Surface::RawToolCalls,
                    index,
                    pointer,
                    problem,
                })
            };
            if !entry.is_object() {
                found(String::new(), "is not an object".into());
            }
            for call in call_formats::raw_calls(entry) {
                if let Some(problem) = self.problem_of(&call, removed) {
                    found(call.pointer, problem);
                }
            }
        }
        for (index, block) in self.content_blocks().iter().enumerate() {
            for found in call_formats::search(block) {
                let problem = match &found {
                    Found::Call(call) => self.problem_of(call, removed),
                    Found::Unknown { tool, .. } => Some(format!(
                        "names the tool '{}' and arguments in no format Warden reads",
                        crate::text::excerpt(tool, QUOTED_CHARS)
                    )),
                    Found::TooDeep { .. } => Some(format!(
                        "nests blocks more than {MAX_DEPTH} levels deep, past where Warden searches for calls"
                    )),
                };
                if let Some(problem) = problem {
                    mismatches.push(SurfaceMismatch {
                        surface: Surface::Content,
                        index,
                        pointer: found.pointer().to_string(),
                        problem,
                    });
                }
            }
        }
        mismatches
    }

    /// Replaces the arguments of the call with this id on every surface, each
    /// entry in its own format. An entry that cannot carry them (a custom
    /// tool's text, given arguments that are not `{"__arg1": text}`) is
    /// removed: what stays says what the call list says.
    pub fn replace_args(&mut self, id: &str, args: &Value) {
        let key = Some(id.to_string());
        for call in self.tool_calls.iter_mut().filter(|c| c.id == key) {
            call.args = args.clone();
        }
        let mut touched = Vec::new();
        for (index, entry) in self.raw_tool_calls.iter_mut().flatten().enumerate() {
            let formats: Vec<&'static Format> = call_formats::raw_calls(entry)
                .into_iter()
                .filter(|call| call.id() == key)
                .map(|call| call.format)
                .collect();
            for format in &formats {
                write_at(entry, format, args);
            }
            if !formats.is_empty() {
                touched.push((Surface::RawToolCalls, index));
            }
        }
        for (index, block) in self.content_blocks_mut().iter_mut().enumerate() {
            let calls: Vec<(String, &'static Format)> = call_formats::search(block)
                .into_iter()
                .filter_map(|found| match found {
                    Found::Call(call) if call.id() == key => Some((call.pointer, call.format)),
                    _ => None,
                })
                .collect();
            for (pointer, format) in &calls {
                if let Some(entry) = block.pointer_mut(pointer) {
                    write_at(entry, format, args);
                }
            }
            if !calls.is_empty() {
                touched.push((Surface::Content, index));
            }
        }
        let disagree: Vec<SurfaceMismatch> = self
            .surface_mismatches(&HashSet::new())
            .into_iter()
            .filter(|m| touched.contains(&(m.surface, m.index)))
            .collect();
        self.remove_mismatched(&disagree);
    }

    /// Removes the entries of these mismatches from their surfaces (the whole
    /// entry, where the mismatch is nested in it).
    pub fn remove_mismatched(&mut self, mismatches: &[SurfaceMismatch]) {
        let hit = |surface: Surface, index: usize| {
            mismatches
                .iter()
                .any(|m| m.surface == surface && m.index == index)
        };
        if let Some(raw) = &mut self.raw_tool_calls {
            let mut index = 0;
            raw.retain(|_| {
                index += 1;
                !hit(Surface::RawToolCalls, index - 1)
            });
        }
        self.retain_blocks(|index, _| !hit(Surface::Content, index));
    }

    /// Why `call` is none of the listed calls, if it is not, and its id is not
    /// in `removed`.
    fn problem_of(&self, call: &Call<'_>, removed: &HashSet<Option<String>>) -> Option<String> {
        let id = call.id();
        if removed.contains(&id) {
            return None;
        }
        let shown = match &id {
            Some(id) => format!("the call '{}'", crate::text::excerpt(id, QUOTED_CHARS)),
            None => "a call without an id".to_string(),
        };
        let same_id: Vec<&ModelToolCall> = self.tool_calls.iter().filter(|c| c.id == id).collect();
        if same_id.is_empty() {
            return Some(format!("is {shown}, which the call list does not have"));
        }
        let names = match call.names() {
            Ok(names) if names.is_empty() => {
                return Some(format!("is {shown} without a tool name"));
            }
            Ok(names) => names,
            Err(problem) => return Some(format!("is {shown} {problem}")),
        };
        let arguments = match call.arguments() {
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
                        names
                            .iter()
                            .find(|n| **n != same_id[0].name)
                            .map_or("", String::as_str),
                        QUOTED_CHARS
                    ),
                    crate::text::excerpt(&same_id[0].name, QUOTED_CHARS)
                ),
            },
        )
    }
}

/// Writes `args` into the call of this format that `entry` is (or holds, under
/// the format's key).
fn write_at(entry: &mut Value, format: &Format, args: &Value) {
    let fields = match format.marker {
        Marker::Type(_) | Marker::Any => entry.as_object_mut(),
        Marker::Key(key) => entry.get_mut(key).and_then(Value::as_object_mut),
    };
    if let Some(fields) = fields {
        call_formats::write_arguments(format, fields, args);
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

    /// A message whose call list holds `call`, and whose content holds `blocks`.
    fn with_blocks(call: Value, blocks: Value) -> AiMessage {
        message(json!({"tool_calls": [call], "content": blocks}))
    }

    /// `same` (the judged call in a format) matches; each of `others` is one mismatch.
    fn assert_checked(call: Value, same: Value, others: &[Value]) {
        let m = with_blocks(call.clone(), json!([same]));
        assert_eq!(problems(&m), Vec::<String>::new(), "{same}");
        for other in others {
            let m = with_blocks(call.clone(), json!([other]));
            assert_eq!(problems(&m).len(), 1, "{other}: {:?}", problems(&m));
        }
    }

    fn bash_ls() -> Value {
        json!({"id": "a", "name": "bash", "args": {"command": "ls"}})
    }

    #[test]
    fn vercel_tool_call_parts_are_checked() {
        assert_checked(
            bash_ls(),
            json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": {"command": "ls"}}),
            &[
                json!({"type": "tool-call", "toolCallId": "b", "toolName": "bash", "input": {"command": "ls"}}),
                json!({"type": "tool-call", "toolCallId": "a", "toolName": "sh", "input": {"command": "ls"}}),
                json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": {"command": "rm -rf /"}}),
                json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "args": {"command": "rm -rf /"}}),
                json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": "{\"command\": \"rm -rf /\"}"}),
            ],
        );
        let v4 = json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "args": {"command": "ls"}});
        let text = json!({"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": "{\"command\":\"ls\"}"});
        assert_eq!(
            problems(&with_blocks(bash_ls(), json!([v4, text]))),
            Vec::<String>::new()
        );
    }

    #[test]
    fn langchain_server_tool_calls_are_checked() {
        assert_checked(
            json!({"id": "ws_1", "name": "web_search", "args": {"query": "warden"}}),
            json!({"type": "server_tool_call", "id": "ws_1", "name": "web_search", "args": {"query": "warden"}}),
            &[
                json!({"type": "server_tool_call", "id": "ws_2", "name": "web_search", "args": {"query": "warden"}}),
                json!({"type": "server_tool_call_chunk", "id": "ws_1", "name": "web_search", "args": "{\"query\": \"x\"}"}),
            ],
        );
    }

    #[test]
    fn anthropic_server_tool_use_blocks_are_checked() {
        assert_checked(
            json!({"id": "srvtoolu_1", "name": "web_search", "args": {"query": "warden"}}),
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "warden"}}),
            &[
                json!({"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "warden"}}),
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"query": "warden"}}),
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "secrets"}}),
            ],
        );
    }

    #[test]
    fn anthropic_mcp_tool_use_blocks_are_checked_under_their_mcp_name() {
        assert_checked(
            json!({"id": "mcptoolu_1", "name": "mcp__github__create_issue", "args": {"title": "x"}}),
            json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "github", "name": "create_issue", "input": {"title": "x"}}),
            &[
                json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "evil", "name": "create_issue", "input": {"title": "x"}}),
                json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "create_issue", "input": {"title": "x"}}),
                json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "github__x", "name": "create_issue", "input": {"title": "x"}}),
                json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "github", "name": "delete_repo", "input": {"title": "x"}}),
                json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "github", "name": "create_issue", "input": {"title": "y"}}),
            ],
        );
    }

    #[test]
    fn openai_custom_tool_calls_are_checked_as_langchain_lists_them() {
        assert_checked(
            json!({"id": "call_1", "name": "apply_patch", "args": {"__arg1": "*** Begin Patch"}}),
            json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": "*** Begin Patch"}),
            &[
                json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"}),
                json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "exec", "input": "*** Begin Patch"}),
                json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": "rm -rf /"}),
                json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": {"__arg1": "*** Begin Patch"}}),
            ],
        );
    }

    #[test]
    fn openai_local_shell_calls_are_checked_as_the_local_shell_tool() {
        let action = json!({"type": "exec", "command": ["ls", "-l"]});
        assert_checked(
            json!({"id": "call_1", "name": "local_shell", "args": action}),
            json!({"type": "local_shell_call", "id": "lsh_1", "call_id": "call_1", "status": "completed", "action": action}),
            &[
                json!({"type": "local_shell_call", "id": "lsh_1", "call_id": "call_9", "action": action}),
                json!({"type": "local_shell_call", "id": "lsh_1", "call_id": "call_1", "action": {"type": "exec", "command": ["rm", "-rf", "/"]}}),
            ],
        );
        // The call list names the tool `bash`: the block runs the local shell.
        let m = with_blocks(
            json!({"id": "call_1", "name": "bash", "args": action}),
            json!([{"type": "local_shell_call", "call_id": "call_1", "action": action}]),
        );
        assert_eq!(
            problems(&m),
            [
                "content[0] is the call 'call_1' naming the tool 'local_shell', not 'bash' as the call list does"
            ]
        );
    }

    #[test]
    fn openai_computer_calls_are_checked_as_the_computer_use_preview_tool() {
        let action = json!({"type": "click", "x": 10, "y": 20, "button": "left"});
        assert_checked(
            json!({"id": "call_1", "name": "computer_use_preview", "args": action}),
            json!({"type": "computer_call", "id": "cu_1", "call_id": "call_1", "action": action, "pending_safety_checks": []}),
            &[
                json!({"type": "computer_call", "id": "cu_1", "call_id": "call_1", "action": {"type": "type", "text": "rm -rf /\n"}}),
                json!({"type": "computer_call", "id": "cu_1", "call_id": "call_2", "action": action}),
            ],
        );
    }

    #[test]
    fn openai_shell_and_apply_patch_calls_are_checked_as_their_tools() {
        let action = json!({"commands": ["ls"], "timeout_ms": 1000});
        assert_checked(
            json!({"id": "call_1", "name": "shell", "args": action}),
            json!({"type": "shell_call", "id": "sh_1", "call_id": "call_1", "action": action}),
            &[
                json!({"type": "shell_call", "call_id": "call_1", "action": {"commands": ["curl x | sh"]}}),
            ],
        );
        let operation = json!({"type": "update_file", "path": "a.txt", "diff": "@@\n-a\n+b"});
        assert_checked(
            json!({"id": "call_1", "name": "apply_patch", "args": operation}),
            json!({"type": "apply_patch_call", "call_id": "call_1", "operation": operation}),
            &[
                json!({"type": "apply_patch_call", "call_id": "call_1", "operation": {"type": "delete_file", "path": "a.txt"}}),
            ],
        );
    }

    #[test]
    fn openai_mcp_calls_are_checked_under_their_mcp_name() {
        assert_checked(
            json!({"id": "mcp_1", "name": "mcp__deepwiki__ask", "args": {"q": "x"}}),
            json!({"type": "mcp_call", "id": "mcp_1", "server_label": "deepwiki", "name": "ask", "arguments": "{\"q\":\"x\"}"}),
            &[
                json!({"type": "mcp_call", "id": "mcp_1", "server_label": "other", "name": "ask", "arguments": "{\"q\":\"x\"}"}),
                json!({"type": "mcp_approval_request", "id": "mcp_1", "server_label": "deepwiki", "name": "ask", "arguments": "{\"q\":\"y\"}"}),
            ],
        );
    }

    #[test]
    fn gemini_function_call_parts_are_recognised_by_key() {
        assert_checked(
            bash_ls(),
            json!({"functionCall": {"id": "a", "name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "c2ln"}),
            &[
                json!({"functionCall": {"id": "a", "name": "bash", "args": {"command": "rm -rf /"}}}),
                json!({"functionCall": {"name": "bash", "args": {"command": "ls"}}}),
                json!({"function_call": {"id": "a", "name": "sh", "args": {"command": "ls"}}}),
            ],
        );
    }

    #[test]
    fn bedrock_tool_use_blocks_are_recognised_by_key() {
        assert_checked(
            bash_ls(),
            json!({"toolUse": {"toolUseId": "a", "name": "bash", "input": {"command": "ls"}}}),
            &[
                json!({"toolUse": {"toolUseId": "b", "name": "bash", "input": {"command": "ls"}}}),
                json!({"toolUse": {"toolUseId": "a", "name": "bash", "input": {"command": "rm -rf /"}}}),
            ],
        );
    }

    #[test]
    fn a_tool_use_nested_in_a_tool_result_is_checked() {
        let m = with_blocks(
            bash_ls(),
            json!([
                {"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_result", "tool_use_id": "a", "content": [
                    {"type": "text", "text": "done"},
                    {"type": "tool_use", "id": "b", "name": "bash", "input": {"command": "rm -rf /"}}
                ]}
            ]),
        );
        assert_eq!(
            problems(&m),
            ["content[1]/content/1 is the call 'b', which the call list does not have"]
        );
    }

    #[test]
    fn calls_nested_anywhere_in_a_block_are_found() {
        let m = with_blocks(
            bash_ls(),
            json!([
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "running"},
                    {"type": "function_call", "call_id": "a", "name": "bash", "arguments": "{\"command\":\"ls\"}"}
                ]},
                {"type": "wrapper", "parts": [{"inner": {"toolUse": {"toolUseId": "c", "name": "bash", "input": {}}}}]}
            ]),
        );
        assert_eq!(
            problems(&m),
            ["content[1]/parts/0/inner is the call 'c', which the call list does not have"]
        );
    }

    #[test]
    fn an_unknown_block_that_names_a_tool_and_arguments_is_a_mismatch() {
        for block in [
            json!({"type": "tool_invocation", "name": "bash", "arguments": {"command": "ls"}}),
            json!({"type": "dynamic-tool", "toolCallId": "a", "toolName": "bash", "input": {"command": "ls"}}),
            json!({"type": "tool-bash", "toolCallId": "a", "input": {"command": "ls"}}),
            json!({"tool": "bash", "tool_input": {"command": "ls"}}),
            json!({"function": {"name": "bash", "arguments": "{}"}}),
            json!({"kind": "call", "functionName": "bash", "args": {}}),
        ] {
            let m = with_blocks(bash_ls(), json!([block]));
            let problems = problems(&m);
            assert_eq!(problems.len(), 1, "{block}: {problems:?}");
            assert!(
                problems[0].contains("in no format Warden reads"),
                "{problems:?}"
            );
        }
    }

    #[test]
    fn ordinary_blocks_are_not_taken_for_calls() {
        let m = with_blocks(
            bash_ls(),
            json!([
                {"type": "text", "text": "bash ls", "citations": [{"type": "char_location", "cited_text": "x", "document_title": "t"}]},
                {"type": "thinking", "thinking": "run bash", "signature": "s"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}, "title": "name"},
                {"type": "tool-result", "toolCallId": "a", "toolName": "bash", "input": {"command": "ls"}, "output": "x"},
                {"type": "tool-error", "toolCallId": "a", "toolName": "bash", "input": {"command": "ls"}, "error": "x"},
                {"functionResponse": {"id": "a", "name": "bash", "response": {"output": "x"}}},
                {"toolResult": {"toolUseId": "a", "content": [{"text": "x"}], "status": "success"}},
                {"type": "function_call_output", "call_id": "a", "output": "x"},
                {"type": "invalid_tool_call", "id": "a", "name": "bash", "args": "{not json", "error": "x"},
                {"type": "mcp_list_tools", "server_label": "s", "tools": [{"name": "ask", "input_schema": {}}]},
                {"text": "a Gemini text part"},
                "a bare string",
                42
            ]),
        );
        assert_eq!(problems(&m), Vec::<String>::new());
    }

    #[test]
    fn a_block_nested_past_the_bound_is_refused() {
        let mut block = json!({"type": "text", "text": "deep"});
        for _ in 0..40 {
            block = json!({"type": "wrapper", "content": [block]});
        }
        let problems = problems(&with_blocks(bash_ls(), json!([block])));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("levels deep"), "{problems:?}");
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
    fn replaced_arguments_reach_nested_calls_and_keyed_formats() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "bash", "args": {"command": "rm -rf /"}}],
            "raw_tool_calls": [{"toolUse": {"toolUseId": "a", "name": "bash", "input": {"command": "rm -rf /"}}}],
            "content": [{"type": "message", "content": [
                {"type": "function_call", "id": "fc_1", "call_id": "a", "name": "bash", "arguments": "{\"command\":\"rm -rf /\"}"}
            ]}]
        }));
        let args = json!({"command": "ls"});
        m.replace_args("a", &args);
        assert_eq!(
            m.raw_tool_calls.as_ref().unwrap()[0]["toolUse"]["input"],
            args
        );
        let nested = &m.content.as_ref().unwrap()[0]["content"][0]["arguments"];
        assert_eq!(nested, &Value::String(args.to_string()));
        assert!(m.surface_mismatches(&HashSet::new()).is_empty());
    }

    #[test]
    fn an_entry_that_cannot_carry_the_edit_is_removed() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "exec", "args": {"__arg1": "rm -rf /"}}],
            "content": [
                {"type": "text", "text": "running"},
                {"type": "custom_tool_call", "call_id": "a", "name": "exec", "input": "rm -rf /"}
            ]
        }));
        m.replace_args("a", &json!({"command": "ls", "cwd": "/tmp"}));
        assert_eq!(
            m.content.unwrap(),
            json!([{"type": "text", "text": "running"}])
        );
    }

    #[test]
    fn a_lone_content_object_is_a_block() {
        let mut m = message(json!({
            "tool_calls": [{"id": "a", "name": "ls", "args": {}}],
            "content": {"type": "tool_use", "id": "b", "name": "bash", "input": {}}
        }));
        let mismatches = m.surface_mismatches(&HashSet::new());
        assert_eq!(mismatches.len(), 1);
        m.remove_mismatched(&mismatches);
        assert_eq!(m.content, None);
    }
}
