//! Builds the guest components tests use, the fixtures under `tests/fixtures/`
//! and the example provider, for `wasm32-wasip2` with a nested cargo, and tells
//! the crate where they are (`WARDEN_GUEST_DIR`). The shipped providers are
//! built too, so that tests can load them from files. Components are never
//! committed.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

include!("../../build/guests.rs");

/// Every guest package of the workspace.
const GUESTS: &[&str] = &[
    "warden-allowlist",
    "warden-rules",
    "example-command-guard",
    "warden-oap-passport",
    "fixture-hostile",
    "fixture-fs-importer",
    "fixture-contract-v2",
    "fixture-classifier",
];

fn main() {
    build_guests(
        GUESTS,
        &[
            "wit",
            "plugins",
            // The provider SDK alone of sdk/: installing the Python package
            // writes sdk/python/build, which would otherwise rebuild this crate.
            "sdk/provider",
            "tests/fixtures",
            "examples/providers/rust",
            "Cargo.toml",
            "Cargo.lock",
            "build",
        ],
    );
}
