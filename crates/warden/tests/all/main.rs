//! The integration tests of this crate, in one binary (each test binary links
//! wasmtime; one binary links it once).

mod common {
    pub use warden_testkit::*;
}

mod allowlist;
mod evasions;
mod front_door;
mod hostile;
#[cfg(feature = "language-providers")]
mod languages;
mod loading;
mod oap;
mod permissions;
mod pipeline;
mod rules;
mod service;
mod shared_file;
mod triage;
