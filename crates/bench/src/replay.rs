//! `warden replay`'s cost: a decision log of 100,000 calls (shell commands,
//! file reads and writes, fetches; allowed and denied), written by the log's
//! own writer, judged again through the allowlist and OAP providers by
//! `warden_log::replay` on every core, as the command does. The figure is per
//! whole log (each sample one replay of all of it).

use std::num::NonZeroUsize;
use std::time::Instant;

use serde_json::json;
use warden::{Caller, Config, ToolCall, Warden};
use warden_log::{DecisionLog, DecisionLogConfig};

use crate::TYPICAL_COMMAND;
use crate::measure::{Measurement, summary};

/// The lines of the replayed log, as the issue states the target.
const LINES: usize = 100_000;
/// Replays timed, after one untimed.
const ROUNDS: usize = 3;

/// The allowlist and the OAP provider (the example passport).
fn config() -> Config {
    let passport: serde_json::Value =
        serde_json::from_str(include_str!("../../../examples/passport.json"))
            .expect("example passport");
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {{allowed_tools: [bash, read_file, write_file, web_fetch], denied_tools: [rm]}}\n      limits: {{timeout_ms: 1000}}\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {}\n      limits: {{timeout_ms: 1000}}\n",
        json!({ "passport": passport })
    );
    Config::parse(&yaml, "<bench>", ".".into()).expect("bench config")
}

/// The mixed calls the log repeats.
fn calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new("bash", json!({ "command": TYPICAL_COMMAND })),
        ToolCall::new("bash", json!({"command": "git status"})),
        ToolCall::new("read_file", json!({"path": "/workspace/src/main.rs"})),
        ToolCall::new(
            "write_file",
            json!({"path": "/workspace/notes.md", "content": "hello"}),
        ),
        ToolCall::new(
            "web_fetch",
            json!({"url": "https://docs.rs/wasmtime/latest/wasmtime/"}),
        ),
        ToolCall::new("rm", json!({"path": "/workspace"})),
    ]
}

pub fn replay(_calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let warden = Warden::new(&config())?;
    let dir = tempfile::tempdir()?;
    let log_config: DecisionLogConfig =
        serde_norway::from_str("arguments: {'*': [command, path, content, url]}\nchain: false\n")?;
    let log = DecisionLog::open(&log_config, dir.path())?;
    let calls = calls();
    // Each kind judged live and logged; the log is those lines repeated.
    for call in &calls {
        let evaluation = warden.evaluate(call, Caller::Agent)?;
        let id = DecisionLog::decision_id(&evaluation);
        log.record_judged(&id, call, Caller::Agent, &evaluation, None, None);
    }
    log.flush();
    let path = log.path().expect("an enabled log").to_path_buf();
    drop(log);
    let kinds = std::fs::read(&path)?;
    let lines: Vec<&[u8]> = kinds
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    anyhow::ensure!(lines.len() == calls.len(), "one line a call");
    let mut text = Vec::with_capacity(LINES * (kinds.len() / lines.len() + 1));
    for i in 0..LINES {
        text.extend_from_slice(lines[i % lines.len()]);
        text.push(b'\n');
    }
    let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    let judge = |call: &ToolCall, caller| warden.evaluate(call, caller);
    let once = || {
        let report = warden_log::replay::replay(&text, threads, &judge);
        assert_eq!(
            report.coverage.rejudged, LINES as u64,
            "{:?}",
            report.coverage
        );
        assert!(report.changed.is_empty(), "the same policy changes nothing");
    };
    once();
    let mut samples = Vec::with_capacity(ROUNDS);
    let started = Instant::now();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        once();
        samples.push(t.elapsed());
    }
    Ok(vec![summary(
        "replay 100,000 logged calls (allowlist + OAP), per log",
        threads.get(),
        samples,
        Some(started.elapsed()),
    )])
}
