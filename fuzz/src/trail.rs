//! The decision log's verifier (`warden log verify`) on any bytes: the log,
//! then optionally `\0` and a checkpoint file. It must never panic, and a log
//! chained by the writer's own code from whatever JSON objects the input holds
//! must verify intact. Shared with the corpus replay test
//! (`crates/log/tests/all/fuzz_corpus.rs`): `log_wire` is what each side gives it.

use super::log_wire::{Chain, verify};

pub fn log_verify(data: &[u8]) {
    let (log, checkpoints) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key();
    let _ = verify(log, checkpoints, Some(&key));
    let _ = verify(log, checkpoints, None);

    let mut chain = Chain::resume(b"", 3, None);
    let mut chained = Vec::new();
    for line in log.split(|&b| b == b'\n') {
        if let Ok(serde_json::Value::Object(mut object)) = serde_json::from_slice(line) {
            // The writer's records never carry the writer's own fields.
            object.remove("chain");
            object.remove("checkpoint");
            let record = serde_json::to_vec(&object).expect("a map serialises");
            chain.link(&record, &mut chained);
        }
    }
    let report = verify(&chained, None, None);
    assert!(
        report.ok(),
        "a log chained by the writer does not verify: {report:?}"
    );
}
