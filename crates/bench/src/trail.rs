//! The tamper-evident trail's cost (`crates/log/src/chain.rs`): what the log's
//! writer thread adds to each line (the link, a SHA-256 of the line), what a
//! signed checkpoint costs, and what `warden log verify` takes a line.

use std::sync::Mutex;

use ed25519_dalek::SigningKey;
use warden_log::chain::Chain;
use warden_log::{CheckpointKey, verify};

use crate::measure::{Measurement, measure};

/// A decision line as the daemon writes one for an allowed shell call through
/// one provider (about 700 bytes).
const LINE: &str = r#"{"decision_id":"0193a5b2-7c1e-7d3a-9f2b-5e8c4a1d2f3e","time":"2026-12-05T21:00:00.123456Z","judged_at":"2026-12-05T21:00:00.123Z","thread_id":"thread-42","run_id":"run-7","tool_call_id":"call_abc123","agent_id":"agent-1","tool_name":"bash","verdict":"allow","reasons":[{"code":"oap.allowed","message":""}],"policy_id":null,"decided_by":null,"interaction_mode":"interactive","reach":"pause","generation":3,"stages":[{"stage":"request","verdict":"allow","duration_us":4},{"stage":"permissions","verdict":"allow","duration_us":21},{"stage":"provider:allowlist","verdict":"allow","digest":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","duration_us":38,"fuel_used":41234}],"duration_us":71,"fuel_used":41234,"error_detail":null,"caller":{"token":"harness","role":"agent"}}"#;

pub fn chain(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let key = || CheckpointKey {
        key: SigningKey::from_bytes(&[7; 32]),
        kid: "bench".into(),
    };
    let link = |every: u64, key: Option<CheckpointKey>| {
        let chain = Mutex::new(Chain::resume(b"", every, key));
        let out = Mutex::new(Vec::with_capacity(64 * 1024));
        measure(
            &format!(
                "link one line{}",
                match every {
                    0 => String::new(),
                    n => format!(", signed checkpoint every {n}"),
                }
            ),
            1,
            calls,
            &move || {
                let mut out = out.lock().unwrap();
                out.clear();
                chain.lock().unwrap().link(LINE.as_bytes(), &mut out);
            },
        )
    };
    // A 1,000-line chained log, verified whole: the figure is per log.
    let mut log = Vec::new();
    let mut chain = Chain::resume(b"", 100, Some(key()));
    for _ in 0..1000 {
        chain.link(LINE.as_bytes(), &mut log);
    }
    let public = key().key.verifying_key();
    let report = verify(&log, None, Some(&public));
    anyhow::ensure!(report.ok(), "the bench log must verify: {report:?}");
    let verified = measure(
        "verify a 1,000-line log (10 signed checkpoints)",
        1,
        (calls / 1000).max(20),
        &|| {
            assert!(verify(&log, None, Some(&public)).ok());
        },
    );
    Ok(vec![link(0, None), link(1, Some(key())), verified])
}
