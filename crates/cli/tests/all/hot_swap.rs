//! Invariant 5 over real HTTP: the provider set is swapped 100 times while four
//! clients evaluate without pause; no call fails, none goes unguarded, and
//! every decision is attributable to exactly one provider set.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::daemon::*;
use serde_json::json;

const SWAPS: usize = 100;
const CLIENTS: usize = 4;

/// The two sets swapped in turn: the provider names differ, and so do their
/// verdicts on `bash`.
fn set(which: usize) -> (String, &'static [&'static str], &'static str) {
    if which.is_multiple_of(2) {
        (
            allowlist("alpha", &["bash"], &[]),
            &["provider:alpha"],
            "allow",
        )
    } else {
        (
            format!(
                "{}    - name: beta-second\n      wasm: builtin:allowlist\n      config: {{denied_tools: [bash]}}\n",
                allowlist("beta", &["bash", "ls"], &[])
            ),
            &["provider:beta", "provider:beta-second"],
            "deny",
        )
    }
}

/// What one client saw: (generation, stages, verdict) for each call.
type Seen = Vec<(u64, Vec<String>, String)>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_swaps_under_load_fail_no_call_and_leave_none_unguarded() {
    let (yaml, _, _) = set(0);
    let daemon = Arc::new(Daemon::start(&format!("{yaml}{}", server_block(false))));
    // generation -> which set it is
    let mut sets: BTreeMap<u64, usize> = BTreeMap::new();
    sets.insert(daemon.generation().await, 0);

    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let daemon = daemon.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut seen: Seen = Vec::new();
                let call = json!({"tool_name": "bash", "tool_input": {"command": "ls"}, "tool_call_id": format!("c{i}")});
                while !stop.load(Ordering::Relaxed) {
                    let (status, decision) = daemon.evaluate(AGENT, &call).await;
                    assert_eq!(status, 200, "client {i}: a call failed: {decision}");
                    let stages = provider_stages(&decision)
                        .iter()
                        .map(|s| s["stage"].as_str().unwrap().to_string())
                        .collect();
                    seen.push((
                        decision["generation"].as_u64().unwrap(),
                        stages,
                        decision["verdict"].as_str().unwrap().to_string(),
                    ));
                }
                seen
            })
        })
        .collect();

    for swap in 1..=SWAPS {
        let (yaml, _, _) = set(swap);
        daemon.write_config(&format!("{yaml}{}", server_block(false)));
        let (status, report) = daemon.reload().await;
        assert_eq!(status, 200, "swap {swap}: {report}");
        sets.insert(report["generation"].as_u64().unwrap(), swap % 2);
    }
    stop.store(true, Ordering::Relaxed);

    let mut calls = 0;
    let mut generations_seen = BTreeSet::new();
    for client in clients {
        for (generation, stages, verdict) in client.await.unwrap() {
            calls += 1;
            assert!(
                !stages.is_empty(),
                "an unguarded call (generation {generation})"
            );
            let which = *sets
                .get(&generation)
                .unwrap_or_else(|| panic!("generation {generation} was never swapped in"));
            let (_, expected_stages, expected) = set(which);
            assert_eq!(stages, expected_stages, "generation {generation}");
            assert_eq!(verdict, expected, "generation {generation}");
            generations_seen.insert(generation);
        }
    }
    println!(
        "{calls} calls judged by {} provider sets",
        generations_seen.len()
    );
    assert_eq!(sets.len(), SWAPS + 1, "every swap made a new generation");
    assert!(calls >= CLIENTS, "the clients made {calls} calls");
    assert!(
        generations_seen.len() > 1,
        "the calls all ran on one provider set; the test did not overlap calls and swaps"
    );
    let metrics = daemon.metrics().await;
    assert!(
        metrics.contains(&format!(
            "warden_reloads_total{{outcome=\"swapped\",trigger=\"admin\"}} {SWAPS}"
        )),
        "{metrics}"
    );
    assert!(!metrics.contains("outcome=\"failed\""), "{metrics}");
}
