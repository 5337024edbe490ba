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
mod approval_roles;
mod artifact_cache;
mod authoring;
mod cli;
mod console;
mod daemon;
mod daemon_approval;
mod hardening;
mod hook;
mod hot_swap;
mod input_files;
mod intake;
mod notify;
mod redaction;
mod relay_reviewers;
mod signing;
mod soak;
mod state_dir;
mod surfaces;
mod throttle;
mod trust;
