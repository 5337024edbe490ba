//! Records the Rust compiler that builds this binary (`WARDEN_RUSTC_VERSION`,
//! its `rustc --version`): `warden new provider` pins it in a Rust scaffold's
//! `rust-toolchain.toml`, so that a provider is built, and rebuilt to match its
//! digest, with a compiler known to build the SDK.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc)
        .arg("--version")
        .output()
        .expect("run rustc --version");
    assert!(output.status.success(), "rustc --version failed");
    let version = String::from_utf8(output.stdout).expect("rustc's version is UTF-8");
    println!("cargo:rustc-env=WARDEN_RUSTC_VERSION={}", version.trim());
}
