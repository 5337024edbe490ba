//! The on-disk compiled-artifact cache: a second process loads a component
//! without compiling it, and an entry is used only when it is provably the one
//! this host wrote.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::common::*;
use warden_runtime::artifact_cache::{ArtifactCache, CacheMiss};
use warden_runtime::engine::SandboxEngine;
use warden_runtime::provider::ComponentBytes;

/// `warden check` on a config with the allowlist component and its data
/// directory in `dir`; returns stdout.
fn check(dir: &Path) -> String {
    let config = dir.join("warden.yaml");
    std::fs::write(
        &config,
        format!(
            "data_dir: data\nguardrails:\n  providers:\n    - {{name: a, wasm: \"{}\"}}\n",
            guest("allowlist").display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["check", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// The allowlist component compiled, and its bytes.
fn compiled() -> (ComponentBytes, wasmtime::component::Component) {
    let bytes = std::fs::read(guest("allowlist")).unwrap();
    let component = ComponentBytes::new(bytes.into(), "allowlist.wasm".into());
    let compiled = SandboxEngine::shared()
        .unwrap()
        .compile(&component.sha256, &|| component.bytes(), None)
        .unwrap()
        .component;
    (component, compiled)
}

fn engine() -> &'static wasmtime::Engine {
    SandboxEngine::shared().unwrap().engine()
}

#[test]
fn a_second_process_loads_the_component_from_the_artifact_cache() {
    let dir = tempfile::tempdir().unwrap();
    assert!(check(dir.path()).contains("compiled: now"));
    assert!(check(dir.path()).contains("compiled: loaded from the artifact cache"));
}

#[test]
fn a_corrupted_entry_is_compiled_again_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    check(dir.path());
    let entry = entries(&dir.path().join("data/compiled"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .unwrap();
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, bytes).unwrap();
    assert!(check(dir.path()).contains("compiled: now"));
    assert!(check(dir.path()).contains("compiled: loaded from the artifact cache"));
}

#[test]
fn an_entry_is_written_privately_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(cache.dir()), 0o700);
    let mut files = entries(cache.dir());
    files.sort();
    let artifact = cache.entry_path(engine(), &component.sha256);
    assert_eq!(
        files,
        [artifact.clone(), artifact.with_extension("record")],
        "the artifact and its record, no temporary file"
    );
    assert!(files.iter().all(|f| mode(f) == 0o600));
    assert!(cache.load(engine(), &component.sha256).is_ok());
}

#[test]
fn an_entry_others_may_write_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    let entry = cache.entry_path(engine(), &component.sha256);
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    let miss = cache.load(engine(), &component.sha256).err().unwrap();
    assert!(matches!(miss, CacheMiss::Untrusted(_)), "{miss}");
}

#[test]
fn a_cache_directory_others_may_write_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    std::fs::set_permissions(cache.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let miss = cache.load(engine(), &component.sha256).err().unwrap();
    assert!(matches!(miss, CacheMiss::Untrusted(_)), "{miss}");
}

#[test]
fn a_linked_artifact_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let elsewhere = ArtifactCache::new(dir.path().join("elsewhere"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    elsewhere
        .store(engine(), &component.sha256, &compiled)
        .unwrap();
    let artifact = cache.entry_path(engine(), &component.sha256);
    std::fs::remove_file(&artifact).unwrap();
    std::os::unix::fs::symlink(elsewhere.entry_path(engine(), &component.sha256), &artifact)
        .unwrap();
    let miss = cache.load(engine(), &component.sha256).err().unwrap();
    assert!(matches!(miss, CacheMiss::Untrusted(_)), "{miss}");
}

#[test]
fn an_artifact_that_differs_from_its_record_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    let artifact = cache.entry_path(engine(), &component.sha256);
    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&artifact, &bytes).unwrap();
    let miss = cache.load(engine(), &component.sha256).err().unwrap();
    assert!(matches!(miss, CacheMiss::Corrupt(_)), "{miss}");
    bytes.truncate(middle);
    std::fs::write(&artifact, &bytes).unwrap();
    let miss = cache.load(engine(), &component.sha256).err().unwrap();
    assert!(matches!(miss, CacheMiss::Corrupt(_)), "{miss}");
}

#[test]
fn an_entry_for_other_bytes_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    let other = "0".repeat(64);
    for extension in ["cwasm", "record"] {
        std::fs::rename(
            cache
                .entry_path(engine(), &component.sha256)
                .with_extension(extension),
            cache.entry_path(engine(), &other).with_extension(extension),
        )
        .unwrap();
    }
    let miss = cache.load(engine(), &other).err().unwrap();
    assert!(matches!(miss, CacheMiss::Corrupt(_)), "{miss}");
}

#[test]
fn the_cache_drops_the_least_recently_used_entries_past_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let (component, compiled) = compiled();
    let older = "a".repeat(64);
    cache.store(engine(), &older, &compiled).unwrap();
    cache.store(engine(), &component.sha256, &compiled).unwrap();
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .append(true)
        .open(cache.entry_path(engine(), &older).with_extension("record"))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let size = std::fs::metadata(cache.entry_path(engine(), &older))
        .unwrap()
        .len();
    cache.prune(size + size / 2);
    assert!(!cache.entry_path(engine(), &older).exists());
    assert!(
        !cache
            .entry_path(engine(), &older)
            .with_extension("record")
            .exists()
    );
    assert!(cache.load(engine(), &component.sha256).is_ok());
}

#[test]
fn a_missing_entry_is_a_plain_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path().join("compiled"));
    let miss = cache.load(engine(), &"1".repeat(64)).err().unwrap();
    assert!(matches!(miss, CacheMiss::Absent), "{miss}");
}

#[test]
fn a_cache_that_cannot_be_written_only_costs_a_compilation() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "a file where the cache directory should be").unwrap();
    let cache = ArtifactCache::new(blocker.join("compiled"));
    let bytes = std::fs::read(guest("allowlist")).unwrap();
    let component = ComponentBytes::new(bytes.into(), "allowlist.wasm".into());
    SandboxEngine::shared().unwrap().forget_compiled();
    let compiled = SandboxEngine::shared().unwrap().compile(
        &component.sha256,
        &|| component.bytes(),
        Some(&cache),
    );
    assert!(compiled.is_ok());
}

#[test]
fn a_component_that_changes_while_it_loads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.wasm");
    let mut bytes = std::fs::read(guest("allowlist")).unwrap();
    // A custom section only this test writes: bytes no cache has seen.
    bytes.extend_from_slice(&[0, 9, 4, b'u', b'n', b'i', b'q', 1, 2, 3, 4]);
    std::fs::write(&path, &bytes).unwrap();
    let sources = warden_runtime::provider::Sources {
        base_dir: dir.path(),
        builtins: &[],
        artifacts: None,
    };
    let component = ComponentBytes::resolve("p", "p.wasm", &sources).unwrap();
    std::fs::write(&path, b"other bytes").unwrap();
    let err = warden_runtime::provider::compile("p", &component, None)
        .err()
        .unwrap();
    assert!(
        matches!(err, warden::LoadError::Read { .. }) && err.to_string().contains("changed"),
        "{err}"
    );
}
