//! Builds the shipped providers under `plugins/` for `wasm32-wasip2` with a
//! nested cargo (with the `shipped-providers` feature only), and tells the
//! crate where they are (`WARDEN_GUEST_DIR`) so that they are embedded as
//! `builtin:<name>`. Components are never committed. The test fixtures are
//! built by `warden-testkit`, never by a build of the library.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

include!("../../build/guests.rs");

/// The shipped providers.
const GUESTS: &[&str] = &["warden-allowlist", "warden-rules", "warden-oap-passport"];

fn main() {
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_SHIPPED_PROVIDERS");
    if env::var_os("CARGO_FEATURE_SHIPPED_PROVIDERS").is_none() {
        return;
    }
    build_guests(
        GUESTS,
        &[
            "wit",
            "plugins",
            // The provider SDK alone of sdk/: installing the Python package
            // writes sdk/python/build, which would otherwise rebuild this crate.
            "sdk/provider",
            "crates/analysis",
            "crates/types",
            "Cargo.toml",
            "Cargo.lock",
            "build",
        ],
    );
}
