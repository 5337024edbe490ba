//! The integration tests of this crate, in one binary (each test binary links
//! wasmtime; one binary links it once).

mod common {
    pub use crate::daemon_common as daemon;
    pub use warden_testkit::*;
}
pub mod daemon_common;

mod admission;
mod approval_answers;
mod approval_cli;
mod approval_idempotency;
mod approval_migrate;
mod approval_roles;
mod artifact_cache;
mod attribution;
mod authoring;
mod cli;
mod console;
mod daemon;
mod daemon_approval;
mod explain;
mod fleet;
mod hardening;
mod hook;
mod hot_swap;
mod input_files;
mod intake;
#[cfg(feature = "language-scaffolds")]
mod language_scaffolds;
mod log_verify;
mod mcp_stdio;
mod notify;
mod promotion;
mod redaction;
mod relay_reviewers;
mod release;
mod replay;
mod rules_import;
mod shadow;
mod signing;
mod soak;
mod state_dir;
mod store_lease;
mod surfaces;
mod throttle;
mod tools_offered;
mod trust;
mod two_nodes;
