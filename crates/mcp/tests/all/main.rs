//! The MCP core's integration tests: one binary (README, "Layout").

mod elicitation;
mod fuzz_corpus;
mod session;
