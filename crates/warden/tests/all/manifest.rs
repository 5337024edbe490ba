//! A provider's manifest: the config schema it gives is checked at load (and
//! at reload, the serving set kept), naming the field; a component without a
//! manifest loads as before.

use crate::common::*;
use serde_json::{Value, json};
use warden::{Error, LoadError, Verdict, Warden};

fn allowlist_yaml(config: Value) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: gate\n      wasm: \"builtin:allowlist\"\n      config: {config}\n"
    )
}

#[test]
fn a_config_that_breaks_the_providers_schema_is_refused_at_load_naming_provider_and_field() {
    let err = Warden::new(&config(&allowlist_yaml(
        json!({"allowed_tools": ["bash", 3]}),
    )))
    .err()
    .expect("refused");
    let text = err.to_string();
    assert!(
        matches!(err, Error::Load(LoadError::ConfigSchema { .. })),
        "{text}"
    );
    assert!(
        text.contains("provider 'gate'") && text.contains("/allowed_tools/1"),
        "{text}"
    );
}

#[test]
fn an_unknown_config_key_is_refused_at_load_naming_it() {
    let err = Warden::new(&config(&allowlist_yaml(json!({"allow_tools": ["bash"]}))))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("allow_tools"), "{err}");
}

#[test]
fn a_config_that_fits_the_schema_loads_and_judges() {
    let warden = warden(&allowlist_yaml(json!({"denied_tools": ["bash"]})));
    assert_eq!(eval(&warden, "bash", empty()).verdict, Verdict::Deny);
    assert_eq!(eval(&warden, "read_file", empty()).verdict, Verdict::Allow);
}

#[test]
fn a_component_without_a_manifest_loads_as_before() {
    // The hostile fixture is built with wit-bindgen alone: no manifest.
    let warden = warden(
        "guardrails:\n  providers:\n    - {name: plain, wasm: hostile.wasm, config: {verdict: deny}}\n",
    );
    assert_eq!(warden.providers().providers[0].name, "plain");
    assert_eq!(eval(&warden, "bash", empty()).verdict, Verdict::Deny);
}

#[test]
fn a_reload_whose_config_breaks_the_schema_is_refused_and_the_previous_set_serves() {
    let warden = warden(&allowlist_yaml(json!({"denied_tools": ["bash"]})));
    let serving = warden.health().generation;
    let err = warden
        .reload(
            &config(&allowlist_yaml(json!({"denied_tools": "bash"}))),
            "new",
        )
        .unwrap_err();
    assert!(err.to_string().contains("/denied_tools"), "{err}");
    assert_eq!(warden.health().generation, serving);
    assert_eq!(eval(&warden, "bash", empty()).verdict, Verdict::Deny);
}
