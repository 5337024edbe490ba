//! Every `log_verify` and `log_replay` fuzz corpus entry and regression
//! (`fuzz/corpus/TARGET`, `fuzz/regressions/TARGET`) replayed through the fuzz
//! target's own check (`fuzz/src/trail.rs`, `fuzz/src/replay.rs`), on the real
//! crate.

#[path = "../../../../fuzz/src/replay.rs"]
mod replay;
#[path = "../../../../fuzz/src/trail.rs"]
mod trail;

/// The replay reader, as `replay` names it.
mod replay_wire {
    pub use warden_log::replay::{Entry, read_line};
}

/// The log's types, as the check names them.
mod log_wire {
    pub use warden_log::chain::Chain;
    pub use warden_log::verify;
}

#[test]
fn every_log_verify_input_holds() {
    assert!(holds("log_verify", trail::log_verify) >= 5);
}

#[test]
fn every_log_replay_input_holds() {
    assert!(holds("log_replay", replay::log_replay) >= 3);
}

/// Runs `check` on every corpus entry and regression of `target`: how many.
fn holds(target: &str, check: fn(&[u8])) -> usize {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) else {
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
