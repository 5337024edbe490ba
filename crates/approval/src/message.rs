//! One AI message as the approval gate sees it: the tool calls it asked for, and
//! the same calls on the provider's other surfaces. A wire type, with its logic
//! (which calls can be answered by id, rewriting every surface alike), in
//! `warden_types::message`; this module keeps its old path.

pub use warden_types::message::{AiMessage, ModelToolCall, Unaddressable};
