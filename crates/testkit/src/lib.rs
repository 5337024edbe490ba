//! Warden's test kit: the guest components tests load (the fixtures under
//! `tests/fixtures/`, the example provider, and the shipped providers as
//! files), built by this crate's build script for tests and benchmarks only,
//! never by a build of the library; and the helpers the integration tests of
//! every crate share.

pub mod approval;
pub mod postgres;
pub mod secrets;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden::{Caller, Config, Evaluation, ToolCall, Warden};

/// Where this crate's build script put the guest components.
pub const GUEST_DIR: &str = env!("WARDEN_GUEST_DIR");

/// Where this crate's build script put the guest components.
pub fn guest_dir() -> PathBuf {
    PathBuf::from(GUEST_DIR)
}

/// The path of a built guest component, e.g. `hostile`.
pub fn guest(name: &str) -> PathBuf {
    guest_dir().join(format!("{name}.wasm"))
}

/// A configuration from YAML text; relative `wasm:` paths resolve in the guest dir.
pub fn config(yaml: &str) -> Config {
    Config::parse(yaml, "test.yaml", guest_dir()).expect("valid test config")
}

pub fn warden(yaml: &str) -> Warden {
    Warden::new(&config(yaml)).expect("load the test config")
}

/// Warden with the hostile fixture as its only provider.
pub fn hostile(provider_config: Value, limits: Value) -> Warden {
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: hostile\n      wasm: hostile.wasm\n      config: {provider_config}\n      limits: {limits}\n"
    );
    warden(&yaml)
}

pub fn call(tool: &str, input: Value) -> ToolCall {
    ToolCall::new(tool, input)
}

pub fn eval(warden: &Warden, tool: &str, input: Value) -> Evaluation {
    warden
        .evaluate(&call(tool, input), Caller::Agent)
        .expect("a decision")
}

/// The detail code of a provider failure (the second reason), if any.
pub fn detail(e: &Evaluation) -> Option<&str> {
    e.metadata.get("error_detail").and_then(Value::as_str)
}

pub fn codes(e: &Evaluation) -> Vec<&str> {
    e.reasons.iter().map(|r| r.code.as_str()).collect()
}

pub fn empty() -> Value {
    json!({})
}

pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the test kit lives in crates/ of the workspace root")
}

/// A shell tool's arguments.
pub fn cmd(command: &str) -> Value {
    json!({ "command": command })
}
