//! What must hold for any `traceparent` header a harness sends
//! (`crates/server/src/telemetry/traceparent.rs`): no panic; a header read
//! names a trace and a span that are not zero, and written back and read
//! again it names the same ones. The corpus replay test
//! (`crates/server/tests/all/fuzz_corpus.rs`) runs it on the real crate.

use super::wire::TraceParent;

pub fn traceparent(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(parent) = TraceParent::parse(text) else {
        return;
    };
    assert_ne!(parent.trace_id, [0; 16]);
    assert_ne!(parent.span_id, [0; 8]);
    let again = TraceParent::header(&parent.trace_id, &parent.span_id, parent.sampled);
    assert_eq!(TraceParent::parse(&again), Some(parent), "{text:?}");
}
