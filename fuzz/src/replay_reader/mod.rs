//! The decision log's replay reader (`crates/log/src/replay/read.rs` and the
//! `replay` facts a line keeps, `facts.rs`): JSON and the request type only.
//! A folder of its own, so that the paths below start from one that exists.

#[path = "../../../crates/log/src/replay/facts.rs"]
pub mod facts;
#[path = "../../../crates/log/src/replay/read.rs"]
pub mod read;
