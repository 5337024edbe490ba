//! The decision log's integration tests, through its public API.

mod fuzz_corpus;
mod lines;
mod trail;
