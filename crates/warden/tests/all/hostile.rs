//! Hostile providers are contained: each misbehaviour becomes a deny with
//! `oap.evaluator_error` and a precise `warden.*` detail, the host keeps running,
//! and the next call to the same provider succeeds.

use std::sync::Arc;

use crate::common::*;
use serde_json::{Value, json};
use warden::{FailureKind, Verdict};

/// The provider answers its first call, misbehaves on the second (which kills
/// that instance) and answers the third on a fresh instance.
fn assert_contained(behaviour: &str, limits: Value, expected: &str) {
    let warden = hostile(json!({"behaviour": "alternate", "then": behaviour}), limits);
    let before = eval(&warden, "bash", cmd("ls"));
    assert_eq!(before.verdict, Verdict::Allow, "first call: {before:?}");

    let hostile = eval(&warden, "bash", cmd("ls"));
    assert_eq!(hostile.verdict, Verdict::Deny, "{hostile:?}");
    assert_eq!(
        codes(&hostile)[..2],
        ["oap.evaluator_error", expected],
        "{hostile:?}"
    );
    assert_eq!(
        hostile.reasons[0].message,
        "guardrail provider error (fail-closed)"
    );
    assert_eq!(detail(&hostile), Some(expected));

    let after = eval(&warden, "bash", cmd("ls"));
    assert_eq!(after.verdict, Verdict::Allow, "the call after: {after:?}");
}

#[test]
fn an_infinite_loop_is_stopped_by_the_timeout() {
    assert_contained(
        "infinite_loop",
        json!({"timeout_ms": 50, "fuel": 1u64 << 45}),
        "warden.timeout",
    );
}

#[test]
fn an_infinite_loop_runs_out_of_fuel() {
    assert_contained(
        "infinite_loop",
        json!({"timeout_ms": 10000, "fuel": 2_000_000}),
        "warden.fuel_exhausted",
    );
}

#[test]
fn a_memory_bomb_hits_the_memory_limit() {
    assert_contained(
        "memory_bomb",
        json!({"memory_mb": 16, "timeout_ms": 5000}),
        "warden.memory_limit",
    );
}

#[test]
fn deep_recursion_overflows_the_stack() {
    assert_contained(
        "deep_recursion",
        json!({"timeout_ms": 5000}),
        "warden.stack_overflow",
    );
}

#[test]
fn a_panic_is_a_trap() {
    assert_contained("panic", empty(), "warden.trap");
}

#[test]
fn unreachable_is_a_trap() {
    assert_contained("unreachable", empty(), "warden.trap");
}

#[test]
fn a_huge_decision_is_invalid() {
    assert_contained(
        "huge_decision",
        json!({"timeout_ms": 5000}),
        "warden.invalid_decision",
    );
}

#[test]
fn metadata_that_is_not_a_json_object_is_invalid() {
    assert_contained("invalid_metadata", empty(), "warden.invalid_decision");
}

/// Why a provider could not be configured.
fn configure_failure(warden: &warden::Warden) -> warden::ProviderFailure {
    let snapshot = warden.snapshot();
    let provider = &snapshot.providers().providers()[0];
    provider.health().unwrap_err().clone()
}

#[test]
fn a_loop_in_configure_denies_every_call_as_configure_failed() {
    let warden = hostile(
        json!({"behaviour": "infinite_loop", "in": "configure"}),
        json!({"configure_timeout_ms": 50, "configure_fuel": 1u64 << 45}),
    );
    let failure = configure_failure(&warden);
    assert_eq!(failure.kind, FailureKind::ConfigureFailed);
    assert!(
        failure
            .message
            .contains("ran past limits.configure_timeout_ms (50 ms)")
            && failure
                .message
                .contains("raise limits.configure_timeout_ms"),
        "{failure}"
    );
    for _ in 0..3 {
        let e = eval(&warden, "bash", cmd("ls"));
        assert_eq!(e.verdict, Verdict::Deny);
        assert_eq!(detail(&e), Some("warden.configure_failed"));
    }
}

#[test]
fn configure_out_of_its_fuel_names_the_limit_to_raise() {
    let warden = hostile(
        json!({"behaviour": "infinite_loop", "in": "configure"}),
        json!({"configure_timeout_ms": 60_000, "configure_fuel": 2_000_000}),
    );
    let failure = configure_failure(&warden);
    assert_eq!(failure.kind, FailureKind::ConfigureFailed);
    assert!(
        failure
            .message
            .contains("ran out of fuel (limits.configure_fuel: 2000000)")
            && failure.message.contains("raise limits.configure_fuel"),
        "{failure}"
    );
}

#[test]
fn configure_is_not_held_to_the_per_call_limits() {
    // The per-call limits cannot even start a loop; configure's own budget
    // stops it, and says so.
    let warden = hostile(
        json!({"behaviour": "infinite_loop", "in": "configure"}),
        json!({"timeout_ms": 1, "fuel": 1_000, "configure_timeout_ms": 60_000, "configure_fuel": 50_000_000}),
    );
    let failure = configure_failure(&warden);
    assert!(
        failure.message.contains("limits.configure_fuel"),
        "{failure}"
    );
}

#[test]
fn a_refused_configuration_denies_every_call_with_the_providers_message() {
    let warden = hostile(json!({"behaviour": "refuse_config"}), empty());
    let e = eval(&warden, "bash", cmd("ls"));
    assert_eq!(detail(&e), Some("warden.configure_failed"));
    assert!(
        e.reasons[1].message.contains("refuses every configuration"),
        "{e:?}"
    );
}

#[test]
fn a_request_over_max_input_bytes_never_reaches_the_provider() {
    let warden = hostile(empty(), json!({"max_input_bytes": 256}));
    let e = eval(&warden, "bash", json!({"command": "x".repeat(1000)}));
    assert_eq!(detail(&e), Some("warden.input_too_large"));
    // The host's own size check names its cause first (DeerFlow shows only it).
    assert_eq!(e.reasons[0].code, "warden.input_too_large");
    assert_eq!(e.stages[0].fuel_used, None);
    assert_eq!(eval(&warden, "bash", cmd("ls")).verdict, Verdict::Allow);
}

#[test]
fn a_call_that_finds_no_free_instance_in_time_is_denied() {
    // One instance; each call holds it for 600 ms of a 1000 ms budget, so of
    // three calls at once one must give up waiting.
    let warden = Arc::new(hostile(
        json!({"behaviour": "slow", "ms": 600}),
        json!({"pool_size": 1, "timeout_ms": 1000, "fuel": 1u64 << 45}),
    ));
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let warden = Arc::clone(&warden);
                s.spawn(move || eval(&warden, "bash", cmd("ls")))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let exhausted = outcomes
        .iter()
        .filter(|e| detail(e) == Some("warden.pool_exhausted"))
        .count();
    assert!(exhausted >= 1, "{outcomes:?}");
    assert!(
        outcomes.iter().any(|e| e.verdict == Verdict::Allow),
        "{outcomes:?}"
    );
    for e in &outcomes {
        assert!(
            e.verdict == Verdict::Allow || detail(e) == Some("warden.pool_exhausted"),
            "{e:?}"
        );
    }
}

#[test]
fn a_fail_open_provider_allows_and_shows_the_error() {
    let yaml = "guardrails:\n  providers:\n    - name: advisory\n      wasm: hostile.wasm\n      config: {behaviour: panic}\n      on_error: allow\n";
    let e = eval(&warden(yaml), "bash", cmd("ls"));
    assert_eq!(e.verdict, Verdict::Allow);
    assert_eq!(codes(&e)[..2], ["oap.evaluator_error", "warden.trap"]);
    assert_eq!(e.reasons[0].message, "guardrail provider error (fail-open)");
}

#[test]
fn global_fail_open_applies_to_providers_without_on_error() {
    let yaml = "guardrails:\n  fail_closed: false\n  providers:\n    - name: p\n      wasm: hostile.wasm\n      config: {behaviour: unreachable}\n";
    let e = eval(&warden(yaml), "bash", cmd("ls"));
    assert_eq!(e.verdict, Verdict::Allow);
    assert_eq!(e.reasons[0].code, "oap.evaluator_error");
}

#[test]
fn on_error_deny_overrides_a_global_fail_open() {
    let yaml = "guardrails:\n  fail_closed: false\n  providers:\n    - name: p\n      wasm: hostile.wasm\n      config: {behaviour: unreachable}\n      on_error: deny\n";
    assert_eq!(
        eval(&warden(yaml), "bash", cmd("ls")).verdict,
        Verdict::Deny
    );
}

#[test]
fn eight_threads_with_hostile_calls_mixed_in_never_get_a_wrong_allow() {
    let warden = Arc::new(hostile(
        json!({"behaviour": "from_input"}),
        json!({"pool_size": 8, "timeout_ms": 200, "memory_mb": 16, "fuel": 50_000_000u64}),
    ));
    let behaviours = [
        "verdict",
        "panic",
        "infinite_loop",
        "memory_bomb",
        "deep_recursion",
        "huge_decision",
        "invalid_metadata",
        "unreachable",
    ];
    std::thread::scope(|s| {
        for t in 0..8 {
            let warden = Arc::clone(&warden);
            s.spawn(move || {
                for i in 0..24 {
                    let behaviour = behaviours[(t + i) % behaviours.len()];
                    let e = eval(&warden, "probe", json!({"behaviour": behaviour}));
                    if behaviour == "verdict" {
                        assert_eq!(e.verdict, Verdict::Allow, "{e:?}");
                    } else {
                        assert_eq!(e.verdict, Verdict::Deny, "{behaviour}: {e:?}");
                        assert_eq!(e.reasons[0].code, "oap.evaluator_error", "{e:?}");
                    }
                }
            });
        }
    });
    assert_eq!(
        eval(&warden, "probe", json!({"behaviour": "verdict"})).verdict,
        Verdict::Allow
    );
}
