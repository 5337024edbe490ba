//! Every corpus entry and regression of the `forwarded_for` fuzz target
//! (`fuzz/corpus/forwarded_for`, `fuzz/regressions/forwarded_for`) replayed
//! through the target's own check (`fuzz/src/forwarded.rs`) on the real
//! crate: so `cargo test` covers every input the fuzzer was seeded with or
//! found a crash on.

#[path = "../../../../fuzz/src/forwarded.rs"]
mod forwarded;

/// The daemon's types, as the check names them.
mod wire {
    pub use warden_server::proxies::TrustedProxies;
}

#[test]
fn every_forwarded_for_input_holds() {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join("forwarded_for")) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| forwarded::forwarded_for(&data));
            assert!(outcome.is_ok(), "{} fails its check", path.display());
            count += 1;
        }
    }
    assert!(count >= 5, "only {count} inputs");
}
