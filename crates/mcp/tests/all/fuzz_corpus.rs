//! Every corpus entry and regression of the `mcp_session` fuzz target
//! (`fuzz/corpus/mcp_session`, `fuzz/regressions/mcp_session`) replayed through
//! the target's own check (`fuzz/src/mcp.rs`) on the real crate, so `cargo
//! test` covers every input the fuzzer was seeded with or found a crash on.

#[path = "../../../../fuzz/src/mcp.rs"]
mod mcp;

#[test]
fn every_mcp_session_corpus_entry_keeps_the_invariant() {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut replayed = 0;
    for folder in ["corpus/mcp_session", "regressions/mcp_session"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(folder)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            mcp::mcp_session(&std::fs::read(&path).unwrap());
            replayed += 1;
        }
    }
    assert!(replayed >= 6, "only {replayed} inputs replayed");
}
