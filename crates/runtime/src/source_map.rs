//! Where each value of a YAML (or JSON) document is written: its line, by its
//! JSON pointer (`/permissions/allow/3`, `/rules/0`). serde_norway reads the
//! values and keeps no positions, so the text is walked once more with an
//! event parser that does (or, for JSON that reads alike as either, with
//! [`json_config`]'s, about five times faster). Only the first document is
//! mapped.
//!
//! Positions name a rule's place for a person; they never decide anything.
//! Text the position parser cannot read (serde_norway and it disagree only on
//! the margins of YAML) gives an empty map, and every position is then
//! absent: never an error.

use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Parser};
use warden_types::cause::SourcePosition;

use crate::json_config;

/// The line of every value of one document, by JSON pointer, with the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceMap {
    /// Shared: a provider keeps its configuration's map, and a policy of
    /// thousands of rules has a map of as many entries, copied only where
    /// it changes (`graft`).
    lines: Arc<HashMap<String, (u32, u32)>>,
    files: Vec<String>,
}

/// One open container while walking the events.
enum Frame {
    Sequence { next: usize },
    Mapping { key: Option<String> },
}

impl SourceMap {
    /// Maps `text`, naming `file` in its positions; an empty map where the
    /// text is not YAML the parser reads.
    pub fn of_yaml(text: &str, file: &str) -> SourceMap {
        let mut lines = HashMap::new();
        if json_config::lines(text, &mut lines).is_ok() {
            return SourceMap::new(lines, file);
        }
        SourceMap::of_yaml_events(text, file)
    }

    /// As [`SourceMap::of_yaml`], always with the YAML event parser: what
    /// the JSON walk is checked against.
    pub fn of_yaml_events(text: &str, file: &str) -> SourceMap {
        let mut lines = HashMap::new();
        if walk(text, &mut lines).is_err() {
            lines.clear();
        }
        SourceMap::new(lines, file)
    }

    fn new(lines: HashMap<String, (u32, u32)>, file: &str) -> SourceMap {
        SourceMap {
            lines: Arc::new(lines),
            files: vec![file.to_string()],
        }
    }

    /// The place of the value at `pointer`, if it was mapped.
    pub fn get(&self, pointer: &str) -> Option<SourcePosition> {
        let (file, line) = *self.lines.get(pointer)?;
        Some(SourcePosition {
            file: self.files[file as usize].clone(),
            line,
        })
    }

    /// The place of the value at `pointer`, or else of its nearest mapped
    /// ancestor (a value inside text the map could not look into, such as a
    /// document given as a string).
    pub fn locate(&self, pointer: &str) -> Option<SourcePosition> {
        let mut at = pointer;
        loop {
            if let Some(found) = self.get(at) {
                return Some(found);
            }
            at = &at[..at.rfind('/')?];
        }
    }

    /// The part of the map under `prefix`, re-rooted there (`/a/b/c` under
    /// `/a` becomes `/b/c`).
    pub fn subtree(&self, prefix: &str) -> SourceMap {
        let lines = self
            .lines
            .iter()
            .filter_map(|(pointer, at)| {
                let rest = pointer.strip_prefix(prefix)?;
                (rest.is_empty() || rest.starts_with('/')).then(|| (rest.to_string(), *at))
            })
            .collect();
        SourceMap {
            lines: Arc::new(lines),
            files: self.files.clone(),
        }
    }

    /// Puts `other` under the key `key` of this map's root (an included file
    /// whose value is put in under that key).
    pub fn graft(&mut self, key: &str, other: SourceMap) {
        let offset = self.files.len() as u32;
        self.files.extend(other.files);
        let prefix = format!("/{}", escape(key));
        let lines = Arc::make_mut(&mut self.lines);
        lines.retain(|pointer, _| {
            !(pointer == &prefix || pointer.starts_with(&format!("{prefix}/")))
        });
        for (pointer, &(file, line)) in other.lines.iter() {
            lines.insert(format!("{prefix}{pointer}"), (file + offset, line));
        }
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// A key as a JSON pointer segment (RFC 6901): `~` is `~0`, `/` is `~1`.
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Records the line each value of the first document starts on (in the
/// first file: the map's own).
fn walk(text: &str, lines: &mut HashMap<String, (u32, u32)>) -> Result<(), ()> {
    let mut stack: Vec<Frame> = Vec::new();
    // The pointer of each open container; the root's is "".
    let mut pointers: Vec<String> = Vec::new();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(drop)?;
        let line = (0, span.start.line() as u32);
        // Where a value starting here goes: `None` when it is a mapping's key.
        let place = |stack: &mut Vec<Frame>, pointers: &[String]| -> Option<String> {
            let parent = pointers.last().map(String::as_str).unwrap_or("");
            match stack.last_mut() {
                None => Some(String::new()),
                Some(Frame::Sequence { next }) => {
                    let at = format!("{parent}/{next}");
                    *next += 1;
                    Some(at)
                }
                Some(Frame::Mapping { key }) => {
                    key.take().map(|key| format!("{parent}/{}", escape(&key)))
                }
            }
        };
        match event {
            Event::DocumentEnd | Event::StreamEnd
                if !lines.is_empty() || matches!(event, Event::StreamEnd) =>
            {
                return Ok(());
            }
            Event::DocumentEnd | Event::StreamEnd => {}
            Event::Scalar(value, ..) => {
                let is_key = matches!(stack.last(), Some(Frame::Mapping { key: None }));
                if is_key {
                    if let Some(Frame::Mapping { key }) = stack.last_mut() {
                        *key = Some(value.into_owned());
                    }
                } else if let Some(at) = place(&mut stack, &pointers) {
                    lines.insert(at, line);
                }
            }
            Event::Alias(_) => {
                if let Some(at) = place(&mut stack, &pointers) {
                    lines.insert(at, line);
                }
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                let is_key = matches!(stack.last(), Some(Frame::Mapping { key: None }));
                // A complex key (a mapping or sequence as a key) is walked
                // under a name no pointer can reach.
                let at = if is_key {
                    if let Some(Frame::Mapping { key }) = stack.last_mut() {
                        *key = Some("\u{0}complex".into());
                    }
                    "\u{0}".to_string()
                } else {
                    place(&mut stack, &pointers).unwrap_or_default()
                };
                lines.insert(at.clone(), line);
                pointers.push(at);
                stack.push(match event {
                    Event::SequenceStart(..) => Frame::Sequence { next: 0 },
                    _ => Frame::Mapping { key: None },
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                pointers.pop();
            }
            _ => {}
        }
    }
    Ok(())
}
