//! One condition of a rule: a request field, an operator and a value, checked
//! and compiled once in `configure` and tested on every call.
//!
//! Every field is compared as text: a string is its content, any other JSON
//! value (a number, `true`, a list) its compact JSON. A field the request does
//! not have equals nothing: `ne` holds for it and every other operator fails.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashSet;

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use serde::Deserialize;
use serde_json::Value;
use warden_provider::{Call, ConfigError, Glob, JsonPath};

/// The largest compiled regex accepted: bounds the memory one rule may take.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A condition as written in the policy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    field: String,
    op: Op,
    value: Value,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Op {
    Eq,
    Ne,
    In,
    Contains,
    Glob,
    Matches,
}

/// A request field a condition can test.
#[derive(Clone, Debug)]
pub enum Field {
    ToolName,
    UserRole,
    /// `role:tool`.
    RoleToolKey,
    /// The `command` argument.
    Command,
    /// The arguments as JSON text.
    Message,
    ThreadId,
    AgentId,
    UserId,
    RunId,
    InteractionMode,
    IsSubagent,
    /// An argument by path: `args.files[0].path`, `args/files/0/path`.
    Arg(JsonPath),
}

const FIELDS: &str = "tool_name, user_role, role_tool_key, command, message, thread_id, agent_id, user_id, run_id, interaction_mode, is_subagent, args.<path>";

impl Field {
    fn parse(name: &str) -> Result<Field, String> {
        Ok(match name {
            "tool_name" => Field::ToolName,
            "user_role" => Field::UserRole,
            "role_tool_key" => Field::RoleToolKey,
            "command" => Field::Command,
            "message" => Field::Message,
            "thread_id" => Field::ThreadId,
            "agent_id" => Field::AgentId,
            "user_id" => Field::UserId,
            "run_id" => Field::RunId,
            "interaction_mode" => Field::InteractionMode,
            "is_subagent" => Field::IsSubagent,
            "args" => Field::Arg(JsonPath::parse("").map_err(|e| e.to_string())?),
            _ => {
                let path = name
                    .strip_prefix("args.")
                    .or_else(|| name.strip_prefix("args").filter(|p| p.starts_with('/')))
                    .ok_or_else(|| format!("unknown field '{name}' (known: {FIELDS})"))?;
                Field::Arg(JsonPath::parse(path).map_err(|e| e.to_string())?)
            }
        })
    }

    /// The field's value on a call, as text; `None` when the call has none.
    pub fn text<'c>(&self, call: &'c Call) -> Option<Cow<'c, str>> {
        let borrowed = |s: Option<&'c str>| s.map(Cow::Borrowed);
        match self {
            Field::ToolName => Some(Cow::Borrowed(call.tool_name())),
            Field::UserRole => borrowed(call.user_role()),
            Field::RoleToolKey => borrowed(call.role_tool_key()),
            Field::Command => borrowed(call.command()),
            Field::Message => Some(Cow::Borrowed(call.input_json())),
            Field::ThreadId => borrowed(call.thread_id()),
            Field::AgentId => borrowed(call.agent_id()),
            Field::UserId => borrowed(call.user_id()),
            Field::RunId => borrowed(call.run_id()),
            Field::InteractionMode => Some(Cow::Borrowed(call.interaction_mode().as_str())),
            Field::IsSubagent => Some(Cow::Borrowed(if call.is_subagent() {
                "true"
            } else {
                "false"
            })),
            Field::Arg(path) => call.get(path).map(as_text),
        }
    }
}

/// How a JSON value compares: a string by its content, anything else by its JSON.
fn as_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// An operator with its compiled value.
#[derive(Debug)]
enum Test {
    Eq(String),
    Ne(String),
    /// Short lists are scanned: cheaper than hashing for a handful of values.
    InList(Vec<String>),
    InSet(HashSet<String>),
    Contains(String),
    /// The glob, and the literal text every match starts with: most texts
    /// are ruled out by a prefix comparison without running the matcher.
    Glob(Glob, String),
    /// Checked when the policy is loaded, compiled the first time the policy
    /// index puts its rule in front of a call: compiling is the costly part
    /// of a regex, and most of a large policy's never need to run.
    Matches(LazyRegex),
}

/// A regex whose syntax was checked, compiled on first use.
#[derive(Debug)]
struct LazyRegex {
    pattern: String,
    /// Every match starts with one of these, or every match ends with one of
    /// these (whichever set's shortest text is the longer); `None` when
    /// neither can be said.
    literals: Option<Vec<Vec<u8>>>,
    compiled: OnceCell<Regex>,
}

impl LazyRegex {
    fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            // The syntax was checked in `configure`; only a pattern whose
            // compiled form is over the size limit fails here, and a trap
            // fails closed.
            RegexBuilder::new(&self.pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .unwrap_or_else(|e| panic!("regex '{}' cannot be compiled: {e}", self.pattern))
        })
    }
}

/// What the policy index files a condition under: values the field must
/// equal, texts one of which the field must contain, or a regex the field
/// must match.
pub enum Key<'c> {
    /// The field equals one of these (`eq`, `in`).
    Equals(Vec<&'c str>),
    /// The field contains one of these (`contains`; a glob's literal prefix;
    /// the literals a regex's every match starts with).
    Contains(Vec<Vec<u8>>),
    /// The field matches this regex, which has no such literals
    /// (`[0-9]{4}`).
    Matches(&'c str),
}

impl Key<'_> {
    /// How little the key narrows, and how much it costs to look up: the
    /// index prefers the lowest.
    pub fn rank(&self) -> u8 {
        match self {
            Key::Equals(_) => 0,
            Key::Contains(_) => 1,
            Key::Matches(_) => 2,
        }
    }
}

/// Up to this many values, `in` scans a list.
const SHORT_LIST: usize = 16;

/// A compiled condition.
#[derive(Debug)]
pub struct Condition {
    /// The field as written: the index keeps one table per field.
    name: String,
    field: Field,
    test: Test,
}

impl Condition {
    /// Checks and compiles a condition; an error names the part at fault
    /// (`field`, `value`), relative to the condition.
    pub fn compile(spec: ConditionSpec) -> Result<Condition, ConfigError> {
        let field =
            Field::parse(&spec.field).map_err(|message| ConfigError::field("field", message))?;
        let value_error = |message: String| ConfigError::field("value", message);
        let scalar = || match &spec.value {
            Value::Array(_) | Value::Object(_) => Err(value_error(format!(
                "`{}` takes one value, not a list or a mapping",
                op_name(spec.op)
            ))),
            value => Ok(as_text(value).into_owned()),
        };
        let string = || match &spec.value {
            Value::String(s) => Ok(s.clone()),
            _ => Err(value_error(format!(
                "`{}` takes a string",
                op_name(spec.op)
            ))),
        };
        let test = match spec.op {
            Op::Eq => Test::Eq(scalar()?),
            Op::Ne => Test::Ne(scalar()?),
            Op::In => match &spec.value {
                Value::Array(items) => {
                    let values = items.iter().map(|v| as_text(v).into_owned());
                    if items.len() <= SHORT_LIST {
                        Test::InList(values.collect())
                    } else {
                        Test::InSet(values.collect())
                    }
                }
                _ => return Err(value_error("`in` takes a list".into())),
            },
            Op::Contains => Test::Contains(scalar()?),
            Op::Glob => {
                let pattern = string()?;
                let glob = Glob::new(&pattern).map_err(|e| value_error(e.to_string()))?;
                let prefix = pattern
                    .find(['*', '?', '[', '{', '\\'])
                    .map_or(pattern.as_str(), |end| &pattern[..end])
                    .to_string();
                Test::Glob(glob, prefix)
            }
            Op::Matches => {
                let pattern = string()?;
                // The regex crate's own parser, with its defaults: the
                // errors are the ones compiling would give.
                let hir = regex_syntax::parse(&pattern)
                    .map_err(|e| value_error(format!("invalid regex: {e}")))?;
                // `^git\s+deploy1\b` starts with one of six short texts
                // many rules share, and ends with `deploy1`.
                let extract = |kind| {
                    let literals = Extractor::new().kind(kind).extract(&hir);
                    literals.literals().map(|literals| {
                        literals
                            .iter()
                            .map(|l| l.as_bytes().to_vec())
                            .collect::<Vec<_>>()
                    })
                };
                let shortest = |set: &Option<Vec<Vec<u8>>>| {
                    set.as_ref()
                        .and_then(|set| set.iter().map(Vec::len).min())
                        .unwrap_or(0)
                };
                let (prefixes, suffixes) =
                    (extract(ExtractKind::Prefix), extract(ExtractKind::Suffix));
                let literals = if shortest(&suffixes) > shortest(&prefixes) {
                    suffixes
                } else {
                    prefixes
                };
                Test::Matches(LazyRegex {
                    pattern,
                    literals,
                    compiled: OnceCell::new(),
                })
            }
        };
        Ok(Condition {
            name: spec.field,
            field,
            test,
        })
    }

    /// The field as written.
    pub fn field_name(&self) -> &str {
        &self.name
    }

    /// The field the condition tests.
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// What the index can file this condition under, if anything: `ne` and
    /// a glob with no literal text hold for texts no table can list.
    pub fn key(&self) -> Option<Key<'_>> {
        let texts = |texts: Vec<Vec<u8>>| {
            (!texts.is_empty() && texts.iter().all(|t| !t.is_empty()))
                .then_some(Key::Contains(texts))
        };
        match &self.test {
            Test::Eq(value) => Some(Key::Equals(vec![value])),
            Test::InList(values) => Some(Key::Equals(values.iter().map(String::as_str).collect())),
            Test::InSet(values) => Some(Key::Equals(values.iter().map(String::as_str).collect())),
            Test::Contains(value) => texts(vec![value.as_bytes().to_vec()]),
            // The glob's literal prefix, or a longer text every match holds
            // (`git * --force`: ` --force`).
            Test::Glob(glob, prefix) => {
                let inner = glob.required_literal();
                texts(vec![if inner.len() > prefix.len() {
                    inner.to_vec()
                } else {
                    prefix.as_bytes().to_vec()
                }])
            }
            // A regex with no literal every match holds is filed under itself.
            Test::Matches(regex) => Some(
                regex
                    .literals
                    .clone()
                    .and_then(texts)
                    .unwrap_or(Key::Matches(&regex.pattern)),
            ),
            Test::Ne(_) => None,
        }
    }

    /// Whether the call satisfies the condition.
    pub fn holds(&self, call: &Call) -> bool {
        let Some(text) = self.field.text(call) else {
            return matches!(self.test, Test::Ne(_));
        };
        match &self.test {
            Test::Eq(value) => *text == **value,
            Test::Ne(value) => *text != **value,
            Test::InList(values) => values.iter().any(|v| *v == *text),
            Test::InSet(values) => values.contains(text.as_ref()),
            Test::Contains(value) => text.contains(value.as_str()),
            Test::Glob(glob, prefix) => text.starts_with(prefix.as_str()) && glob.matches(&text),
            Test::Matches(regex) => regex.get().is_match(&text),
        }
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Eq => "eq",
        Op::Ne => "ne",
        Op::In => "in",
        Op::Contains => "contains",
        Op::Glob => "glob",
        Op::Matches => "matches",
    }
}
