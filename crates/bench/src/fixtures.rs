//! The test components some scenarios load (`hostile`, `command_guard`).
//! They are built by `warden-testkit` (`cargo build -p warden-testkit`) into
//! the target directory, never by a build of the `warden` binary, so they are
//! looked up when a scenario runs.

use std::path::PathBuf;

use anyhow::bail;

/// Where the test components are: `WARDEN_GUEST_DIR`, else where
/// `cargo build -p warden-testkit` puts them under `./target`.
fn guest_dir() -> PathBuf {
    std::env::var_os("WARDEN_GUEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/guests/wasm32-wasip2/wasm-release"))
}

/// The path of the test component `name` (`hostile`), or what to run to
/// build it.
pub fn guest(name: &str) -> anyhow::Result<PathBuf> {
    let path = guest_dir().join(format!("{name}.wasm"));
    if !path.is_file() {
        bail!(
            "{} is not built: run `cargo build -p warden-testkit` in the Warden checkout (or set WARDEN_GUEST_DIR to where the test components are)",
            path.display()
        );
    }
    Ok(path)
}
