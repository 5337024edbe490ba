//! Providers in other languages: the command-guard policy written in Rust (with
//! the SDK), in Python (componentize-py) and in JavaScript (componentize-js)
//! loads in the host unchanged, passes the same vectors, and agrees with its
//! twins on every one. The Python and JavaScript components are built by
//! `scripts/build-language-providers` (run by `scripts/test`); this file is
//! compiled only with `--features language-providers`.

use std::path::PathBuf;

use crate::common::*;
use serde_json::{Value, json};
use warden::config::ProviderSpec;
use warden::vectors::{self, Vector};
use warden::{Config, Verdict};
use warden_runtime::artifact_cache::ArtifactCache;
use warden_runtime::provider::{Provider, Sources};

const LANGUAGES: [&str; 3] = ["rust", "python", "javascript"];

/// Where `scripts/build-language-providers` puts the components
/// (`WARDEN_LANGUAGE_PROVIDERS` overrides it).
fn language_dir() -> PathBuf {
    std::env::var_os("WARDEN_LANGUAGE_PROVIDERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/language-providers"))
}

fn component(language: &str) -> PathBuf {
    let path = match language {
        "rust" => guest("command_guard"),
        "python" => language_dir().join("command_guard_py.wasm"),
        "javascript" => language_dir().join("command_guard_js.wasm"),
        other => unreachable!("no {other} provider"),
    };
    assert!(
        path.is_file(),
        "{} is missing: run scripts/build-language-providers",
        path.display()
    );
    path
}

fn example(file: &str) -> PathBuf {
    repo_root().join("examples/providers").join(file)
}

fn policy_config() -> Value {
    let text = std::fs::read_to_string(example("command-guard.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

fn load(language: &str, config: Value) -> Provider {
    let yaml = json!({"guardrails": {"providers": [{
        "name": language,
        "wasm": component(language).display().to_string(),
        "config": config,
    }]}});
    let config = Config::parse(&yaml.to_string(), "test.yaml", ".".into()).unwrap();
    let spec: &ProviderSpec = &config.guardrails.providers[0];
    let artifacts = ArtifactCache::in_data_dir(&config.data_dir());
    let sources = Sources {
        base_dir: &config.base_dir,
        builtins: warden::BUILTINS,
        artifacts: Some(&artifacts),
    };
    Provider::load(spec, &sources, true).expect("the provider loads")
}

fn the_vectors() -> Vec<Vector> {
    let path = example("command-guard.vectors.jsonl");
    vectors::parse(&std::fs::read_to_string(&path).unwrap(), "vectors").unwrap()
}

fn passes_every_vector(language: &str) {
    let provider = load(language, policy_config());
    assert!(provider.health().is_ok(), "{:?}", provider.health());
    assert_eq!(provider.info().name, "command-guard");
    for vector in the_vectors() {
        let outcome = vectors::check(&provider, &vector);
        assert!(
            outcome.mismatch.is_none(),
            "{language}: {} (line {}): {:?}",
            vector.name,
            vector.line,
            outcome.mismatch
        );
    }
}

#[test]
fn the_rust_provider_passes_every_vector() {
    passes_every_vector("rust");
}

#[test]
fn the_python_provider_passes_every_vector() {
    passes_every_vector("python");
}

#[test]
fn the_javascript_provider_passes_every_vector() {
    passes_every_vector("javascript");
}

#[test]
fn python_and_javascript_agree_with_the_rust_twin_on_every_vector() {
    let providers: Vec<Provider> = LANGUAGES.iter().map(|l| load(l, policy_config())).collect();
    for vector in the_vectors() {
        let decisions: Vec<_> = providers
            .iter()
            .map(|p| vectors::check(p, &vector).actual)
            .collect();
        for (language, decision) in LANGUAGES.iter().zip(&decisions).skip(1) {
            assert_eq!(
                decision, &decisions[0],
                "{language} and rust disagree on {}",
                vector.name
            );
        }
    }
}

#[test]
fn every_language_refuses_a_misspelt_key_naming_it() {
    for language in LANGUAGES {
        let provider = load(language, json!({"blocked_tools": [], "ask_tool": []}));
        let failure = provider.health().expect_err(language);
        assert!(
            failure.message.contains("ask_tool"),
            "{language}: {failure}"
        );
    }
}

#[test]
fn every_language_refuses_a_value_of_the_wrong_type_naming_the_field() {
    for language in LANGUAGES {
        let provider = load(language, json!({"blocked_tools": ["a", 7]}));
        let failure = provider.health().expect_err(language);
        assert!(
            failure.message.contains("blocked_tools[1]"),
            "{language}: {failure}"
        );
    }
}

#[test]
fn the_three_run_side_by_side_in_one_pipeline() {
    let providers: Vec<Value> = LANGUAGES
        .iter()
        .map(|l| json!({"name": l, "wasm": component(l).display().to_string(), "config": policy_config()}))
        .collect();
    let w = warden(&json!({"guardrails": {"providers": providers}}).to_string());
    let allowed = eval(&w, "bash", json!({"command": "git status"}));
    assert_eq!(allowed.verdict, Verdict::Allow);
    let providers_asked = allowed
        .stages
        .iter()
        .filter(|s| s.stage.starts_with("provider:"))
        .count();
    assert_eq!(providers_asked, 3);
    let denied = eval(&w, "bash", json!({"command": "rm -rf /"}));
    assert_eq!(denied.verdict, Verdict::Deny);
    assert_eq!(denied.reasons[0].code, "guard.command_blocked");
}

#[test]
fn an_interpreter_provider_runs_within_sixteen_megabytes() {
    for language in ["python", "javascript"] {
        let yaml = json!({"guardrails": {"providers": [{
            "name": language,
            "wasm": component(language).display().to_string(),
            "config": policy_config(),
            "limits": {"memory_mb": 16},
        }]}});
        let e = eval(&warden(&yaml.to_string()), "bash", json!({"command": "ls"}));
        assert_eq!(e.verdict, Verdict::Allow, "{language}: {e:?}");
    }
}
