//! Nothing to build: this script exists so that the build dependencies in
//! Cargo.toml, feature pins for what proc macros use, count (see there).

fn main() {}
