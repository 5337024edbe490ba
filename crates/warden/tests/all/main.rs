//! The integration tests of this crate, in one binary (each test binary links
//! wasmtime; one binary links it once).

mod common {
    pub use warden_testkit::*;
}

mod allowlist;
mod attribution;
mod bundle;
mod evasion_set;
mod evasions;
mod front_door;
mod gate;
mod hostile;
mod json_config;
#[cfg(feature = "language-providers")]
mod languages;
mod loading;
mod manifest;
mod oap;
mod permissions;
mod pipeline;
mod rule_packs;
mod rules;
mod service;
mod shadow;
mod shadow_config;
mod shared_file;
mod source_map;
mod triage;
