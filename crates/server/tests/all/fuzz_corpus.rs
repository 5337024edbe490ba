//! Every corpus entry and regression of the daemon's fuzz targets
//! (`forwarded_for`, `traceparent`: `fuzz/corpus/TARGET`,
//! `fuzz/regressions/TARGET`) replayed through the targets' own checks
//! (`fuzz/src/forwarded.rs`, `trace_context.rs`) on the real crate: so
//! `cargo test` covers every input the fuzzers were seeded with or found a
//! crash on.

#[path = "../../../../fuzz/src/forwarded.rs"]
mod forwarded;
#[path = "../../../../fuzz/src/trace_context.rs"]
mod trace_context;

/// The daemon's types, as the checks name them.
mod wire {
    pub use warden_server::proxies::TrustedProxies;
    pub use warden_server::telemetry::traceparent::TraceParent;
}

/// Runs `check` on every corpus entry and regression of `target`; returns
/// how many there were.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails its check", path.display());
            count += 1;
        }
    }
    count
}

#[test]
fn every_forwarded_for_input_holds() {
    assert!(replay("forwarded_for", forwarded::forwarded_for) >= 5);
}

#[test]
fn every_traceparent_input_holds() {
    assert!(replay("traceparent", trace_context::traceparent) >= 4);
}
