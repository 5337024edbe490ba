//! The service API every face is built on: reload, the provider list, health
//! and the intake refusal, each the daemon's answer.

use crate::common::*;
use serde_json::json;
use warden::{Error, Verdict, Warden};

const ALLOWLIST: &str = "guardrails:\n  providers:\n    - {name: a, wasm: allowlist.wasm}\n";

fn refusing() -> String {
    format!(
        "guardrails:\n  providers:\n    - name: hostile\n      wasm: hostile.wasm\n      config: {}\n",
        json!({"behaviour": "refuse_config"})
    )
}

#[test]
fn a_reload_swaps_the_set_and_reports_both_generations() {
    let warden = warden(ALLOWLIST);
    let before = warden.health().generation;
    let report = warden.reload(&config(ALLOWLIST), "abc").unwrap();
    assert_eq!(report.previous_generation, before);
    assert!(report.generation > before);
    assert_eq!(warden.health().generation, report.generation);
    assert_eq!(report.providers[0].name, "a");
    assert_eq!(report.previous_providers, report.providers);
    assert_eq!(report.config_sha256, "abc");
    assert!(report.warnings.is_empty());
}

#[test]
fn a_reload_with_a_provider_that_refuses_its_configuration_changes_nothing() {
    let warden = warden(ALLOWLIST);
    let serving = warden.health().generation;
    let err = warden.reload(&config(&refusing()), "abc").unwrap_err();
    assert!(
        matches!(&err, Error::Unhealthy { provider, .. } if provider == "hostile"),
        "{err}"
    );
    assert_eq!(warden.health().generation, serving);
    assert_eq!(warden.providers().providers[0].name, "a");
}

#[test]
fn a_healthy_start_refuses_a_provider_that_refuses_its_configuration() {
    let err = Warden::new_healthy(&config(&refusing())).err().unwrap();
    assert!(matches!(err, Error::Unhealthy { .. }), "{err}");
    // The lenient start loads it, and the provider denies every call.
    assert!(Warden::new(&config(&refusing())).is_ok());
}

#[test]
fn the_provider_list_and_health_describe_the_live_set() {
    let warden = warden(ALLOWLIST);
    let list = warden.providers();
    let health = warden.health();
    assert_eq!(list.generation, health.generation);
    assert_eq!(health.status, "ok");
    assert_eq!(health.providers, 1);
    assert!(list.enabled);
    let provider = &list.providers[0];
    assert_eq!(provider.name, "a");
    assert_eq!(provider.digest.len(), 64);
    assert!(
        provider.loaded_since.ends_with('Z'),
        "{}",
        provider.loaded_since
    );
}

#[test]
fn the_intake_refusal_is_a_deny_decided_by_intake() {
    let warden = warden(ALLOWLIST);
    let e = warden.refusal("warden.invalid_json", "not JSON");
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.decided_by.as_deref(), Some(warden::INTAKE_STAGE));
    assert_eq!(e.reasons[0].code, "warden.invalid_json");
    assert_eq!(e.generation, warden.health().generation);
}
