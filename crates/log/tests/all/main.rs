//! The decision log's integration tests, through its public API.

mod lines;
