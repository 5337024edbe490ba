//! What the host refuses to load, and what it says about it.

use crate::common::*;
use warden::{Error, LoadError, Warden};

fn load(yaml: &str) -> Result<Warden, Error> {
    Warden::new(&config(yaml))
}

#[test]
fn a_component_importing_the_filesystem_is_refused_naming_the_import() {
    let err = load("guardrails:\n  providers:\n    - {name: leaky, wasm: fs_importer.wasm}\n")
        .err()
        .unwrap();
    assert!(
        matches!(err, Error::Load(LoadError::ForbiddenImport { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("wasi:filesystem/"), "{err}");
}

#[test]
fn a_component_built_against_another_contract_version_is_refused() {
    let err = load("guardrails:\n  providers:\n    - {name: future, wasm: contract_v2.wasm}\n")
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(
        matches!(err, Error::Load(LoadError::Contract { .. })),
        "{text}"
    );
    assert!(
        text.contains("warden:guardrail@0.2.0") && text.contains("0.1.0"),
        "{text}"
    );
}

#[test]
fn bytes_that_do_not_match_the_pin_are_refused_with_both_digests() {
    let pin = "0".repeat(64);
    let err = load(&format!(
        "guardrails:\n  providers:\n    - {{name: a, wasm: allowlist.wasm, sha256: \"{pin}\"}}\n"
    ))
    .err()
    .unwrap();
    let text = err.to_string();
    assert!(
        matches!(err, Error::Load(LoadError::DigestMismatch { .. })),
        "{text}"
    );
    assert!(
        text.contains(&format!("expected {pin}")) && text.contains("actual "),
        "{text}"
    );
}

#[test]
fn bytes_that_match_the_pin_load() {
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(
        std::fs::read(guest("allowlist")).unwrap(),
    ));
    let warden = load(&format!(
        "guardrails:\n  providers:\n    - {{name: a, wasm: allowlist.wasm, sha256: \"sha256:{digest}\"}}\n"
    ))
    .unwrap();
    assert_eq!(
        warden.snapshot().providers().providers()[0].digest(),
        digest
    );
}

#[test]
fn a_file_that_is_not_a_component_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("junk.wasm"), b"not wasm at all").unwrap();
    let config = warden::Config::parse(
        "guardrails:\n  providers:\n    - {name: junk, wasm: junk.wasm}\n",
        "t.yaml",
        dir.path().to_path_buf(),
    )
    .unwrap();
    let err = Warden::new(&config).err().unwrap();
    assert!(
        matches!(err, Error::Load(LoadError::Compile { .. })),
        "{err}"
    );
}

#[test]
fn a_missing_component_is_refused_naming_the_path() {
    let err = load("guardrails:\n  providers:\n    - {name: gone, wasm: nowhere.wasm}\n")
        .err()
        .unwrap();
    assert!(err.to_string().contains("nowhere.wasm"), "{err}");
}

#[test]
fn an_unknown_builtin_is_refused_listing_the_shipped_ones() {
    let err = load("guardrails:\n  providers:\n    - {name: x, wasm: \"builtin:nope\"}\n")
        .err()
        .unwrap();
    assert!(err.to_string().contains("allowlist"), "{err}");
}

#[test]
fn a_config_file_that_is_not_utf8_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warden.yaml");
    std::fs::write(&path, b"guardrails:\n  enabled: \xff\n").unwrap();
    let err = warden::Config::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("warden.yaml") && err.contains("not UTF-8"),
        "{err}"
    );
}

#[test]
fn a_config_file_read_with_its_digest_is_the_same_config_and_the_sha256_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warden.yaml");
    let text = "guardrails:\n  enabled: false\n";
    std::fs::write(&path, text).unwrap();
    let (config, digest) = warden::Config::load_with_digest(&path).unwrap();
    assert!(!config.guardrails.enabled);
    use sha2::Digest;
    assert_eq!(digest, hex::encode(sha2::Sha256::digest(text.as_bytes())));
}

#[test]
fn the_worst_case_of_a_snapshot_sums_its_providers_limits() {
    // Configure limits with room on a loaded machine: the load configures
    // one instance of each.
    let providers = "    - {name: a, wasm: builtin:allowlist, limits: {timeout_ms: 1, configure_timeout_ms: 20}}\n    \
                     - {name: b, wasm: allowlist.wasm, limits: {timeout_ms: 2, configure_timeout_ms: 30}}\n";
    let warden = load(&format!("guardrails:\n  providers:\n{providers}")).unwrap();
    // Each: its call limit waiting for an instance, then its configure limit
    // and one epoch tick (1 ms) configuring a new instance, and its call
    // limit and one tick for the call.
    let worst = std::time::Duration::from_millis((1 + 21 + 2) + (2 + 31 + 3));
    assert_eq!(warden.snapshot().worst_case(), worst);
    let disabled = load(&format!(
        "guardrails:\n  enabled: false\n  providers:\n{providers}"
    ))
    .unwrap();
    assert_eq!(disabled.snapshot().worst_case(), std::time::Duration::ZERO);
}
