//! The daemon crate's integration tests (the daemon's behaviour is tested
//! end to end in `crates/cli/tests/all`).

mod fuzz_corpus;
mod openapi;
