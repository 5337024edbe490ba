//! Benchmarks of the provider SDK's work: the rules provider with a hundred
//! rules, the second load of a multi-megabyte component through the artifact
//! cache, and one decision through the same policy in Rust, Python and
//! JavaScript.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::fixtures;
use crate::measure::{Measurement, measure};
use warden::Config;
use warden::Warden;
use warden_policy::interaction::InteractionMode;
use warden_runtime::artifact_cache::ArtifactCache;
use warden_runtime::engine::{CompiledFrom, SandboxEngine};
use warden_runtime::provider::{Provider, Sources};
use warden_types::Caller;
use warden_types::request::ToolCall;

/// Loads are slow enough that a few dozen say all there is to say.
const MAX_LOADS: usize = 30;

/// A hundred rules over every kind of field and operator, none of which
/// matches the benchmark call, so that each call tries all of them and ends
/// on the default: the worst case.
pub fn hundred_rules() -> Value {
    let rules: Vec<Value> = (0..100)
        .map(|i| {
            let condition = match i % 6 {
                0 => json!({"field": "tool_name", "op": "eq", "value": format!("tool_{i}")}),
                1 => json!({"field": "role_tool_key", "op": "in", "value": [format!("role{i}:bash"), format!("role{i}:write_file")]}),
                2 => json!({"field": "command", "op": "contains", "value": format!("forbidden-{i}")}),
                3 => json!({"field": "args.path", "op": "glob", "value": format!("/secret/{i}/**")}),
                4 => json!({"field": "command", "op": "matches", "value": format!("^(curl|wget) .*host{i}\\.example")}),
                _ => json!({"field": "thread_id", "op": "ne", "value": format!("thread-{i}")}),
            };
            // Holds for no benchmark call: after `ne`, the only other condition.
            let guard = json!({"field": "user_role", "op": "eq", "value": "nobody"});
            let action = ["allow", "ask", "deny"][i % 3];
            json!({
                "id": format!("rule-{i}"),
                "priority": i % 7,
                "when": [condition, guard],
                "action": action,
            })
        })
        .collect();
    json!({"policy_id": "bench", "default": "allow", "rules": rules})
}

pub fn rules(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let yaml = json!({"guardrails": {"providers": [{
        "name": "rules", "wasm": "builtin:rules", "config": hundred_rules(),
    }]}});
    let warden = Warden::new(&Config::parse(&yaml.to_string(), "<bench>", ".".into())?)?;
    let call = ToolCall::from_json(
        json!({"tool_name": "bash", "tool_input": {"command": "git status", "path": "/workspace/a.rs"},
               "context": {"user_role": "dev", "thread_id": "t-1"}})
        .to_string()
        .as_bytes(),
    )?;
    // As a caller trusted to say the user's role, so that the rules on it run.
    let judge = || {
        let e = warden.evaluate(&call, Caller::Internal).expect("decision");
        assert_eq!(e.policy_id.as_deref(), Some("bench#default"), "{e:?}");
    };
    // The provider's own decision, without the rest of the pipeline.
    let snapshot = warden.snapshot();
    let provider = &snapshot.providers().providers()[0];
    let guest = snapshot.provider_call(&call, Caller::Internal, InteractionMode::Interactive);
    let decide = || {
        let opinion = provider.evaluate(&guest).expect("an opinion");
        assert_eq!(opinion.decision.policy_id.as_deref(), Some("bench#default"));
    };
    Ok(vec![
        measure(
            "rules, 100 rules: the provider's decision",
            1,
            calls,
            &decide,
        ),
        measure("rules, 100 rules: the whole pipeline", 1, calls, &judge),
        measure("rules, 100 rules: the whole pipeline", 2, calls, &judge),
    ])
}

/// Where `scripts/build-language-providers` put the Python and JavaScript
/// components (`WARDEN_LANGUAGE_PROVIDERS` overrides).
fn language_component(file: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os("WARDEN_LANGUAGE_PROVIDERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/language-providers"));
    let path = dir.join(file);
    if !path.is_file() {
        bail!(
            "{} is missing: build it with scripts/build-language-providers (or set WARDEN_LANGUAGE_PROVIDERS)",
            path.display()
        );
    }
    Ok(path)
}

fn rust_twin() -> anyhow::Result<PathBuf> {
    fixtures::guest("command_guard")
}

fn command_guard(path: &std::path::Path, instance: &str) -> anyhow::Result<Config> {
    let config: Value = serde_norway::from_str(include_str!(
        "../../../examples/providers/command-guard.yaml"
    ))?;
    let yaml = json!({"guardrails": {"providers": [{
        "name": "command-guard", "wasm": path.display().to_string(), "config": config,
        "instance": instance,
    }]}});
    Ok(Config::parse(&yaml.to_string(), "<bench>", ".".into())?)
}

pub fn languages(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let call = ToolCall::new("bash", json!({"command": "git status"}));
    let mut out = Vec::new();
    for (language, path) in [
        ("Rust", rust_twin()?),
        ("Python", language_component("command_guard_py.wasm")?),
        ("JavaScript", language_component("command_guard_js.wasm")?),
    ] {
        for instance in ["warm", "fresh"] {
            let warden = Warden::new(&command_guard(&path, instance)?)?;
            let judge = || {
                let e = warden.evaluate(&call, Caller::Agent).expect("decision");
                assert!(e.allow, "{e:?}");
            };
            let n = if instance == "warm" {
                calls
            } else {
                (calls / 20).max(50)
            };
            out.push(measure(
                &format!("command-guard in {language}, {instance} instance"),
                1,
                n,
                &judge,
            ));
        }
    }
    Ok(out)
}

/// A first and a second load of a small Rust component, of the rules provider,
/// and of the JavaScript (12 MB) and Python (18 MB) components: read, digest,
/// compile or deserialise, check, pre-instantiate, one configured instance. Before each second load the in-memory cache is
/// dropped, so it goes to disk as a new process would.
pub fn artifact_cache(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let dir = tempfile::tempdir().context("a temporary data directory")?;
    let cache = ArtifactCache::in_data_dir(dir.path());
    let mut out = Vec::new();
    let rules = json!({"guardrails": {"providers": [{
        "name": "rules", "wasm": "builtin:rules", "config": hundred_rules(),
    }]}});
    let subjects = [
        ("Rust command-guard", command_guard(&rust_twin()?, "warm")?),
        (
            "rules, 100 rules",
            Config::parse(&rules.to_string(), "<bench>", ".".into())?,
        ),
        (
            "JavaScript command-guard",
            command_guard(&language_component("command_guard_js.wasm")?, "warm")?,
        ),
        (
            "Python command-guard",
            command_guard(&language_component("command_guard_py.wasm")?, "warm")?,
        ),
    ];
    for (label, config) in subjects {
        let spec = &config.guardrails.providers[0];
        let sources = Sources {
            base_dir: &config.base_dir,
            builtins: warden::BUILTINS,
            artifacts: Some(&cache),
        };
        let load = |expected: CompiledFrom| {
            SandboxEngine::shared()
                .expect("the engine starts")
                .forget_compiled();
            let provider = Provider::load(spec, &sources, true).expect("the provider loads");
            assert!(provider.health().is_ok());
            assert_eq!(provider.compiled_from(), expected);
        };
        let size =
            warden_runtime::provider::ComponentBytes::resolve(&spec.name, &spec.wasm, &sources)?
                .size as f64
                / 1e6;
        let _ = std::fs::remove_dir_all(cache.dir());
        out.push(once(
            &format!("{label} ({size:.1} MB), first load: compile"),
            || load(CompiledFrom::Compilation),
        ));
        out.push(measure(
            &format!("{label} ({size:.1} MB), second load: artifact cache"),
            1,
            calls.min(MAX_LOADS),
            &|| load(CompiledFrom::Disk),
        ));
    }
    Ok(out)
}

/// One timed run, without warm-up: for what happens once (a first compile).
fn once(scenario: &str, op: impl FnOnce()) -> Measurement {
    let started = Instant::now();
    op();
    let us = started.elapsed().as_secs_f64() * 1e6;
    Measurement {
        scenario: scenario.to_string(),
        threads: 1,
        calls: 1,
        p50_us: us,
        p99_us: us,
        mean_us: us,
        throughput: 1e6 / us,
    }
}

/// Loading the shipped allowlist (a small Rust provider) from the on-disk
/// artifact cache, pinned by SHA-256 (today's load) and as a signed bundle
/// with two vectors (statement, key, signature, digests, manifest, then the
/// vectors run): the whole set's load through `Warden::new`, the in-memory
/// cache dropped before each, as a new process would.
pub fn bundle(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let dir = tempfile::tempdir().context("a temporary directory")?;
    let component = warden_runtime::builtin::component(warden::BUILTINS, "allowlist")
        .context("the shipped allowlist")?;
    std::fs::write(dir.path().join("allowlist.wasm"), component)?;
    let key = warden::signing::generate()?;
    let vectors = concat!(
        r#"{"name": "bash is denied", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "deny"}}"#,
        "\n",
        r#"{"name": "read_file is allowed", "request": {"tool_name": "read_file", "tool_input": {}}, "expect": {"verdict": "allow"}}"#,
        "\n",
    );
    let statement = warden::bundle::create(
        &dir.path().join("allowlist.bundle"),
        component,
        vectors,
        &key,
    )?;
    let config = |provider: Value| -> anyhow::Result<Config> {
        let mut provider = provider;
        provider["name"] = json!("gate");
        provider["config"] = json!({"denied_tools": ["bash"]});
        let mut config = Config::parse(
            &json!({"guardrails": {"providers": [provider]}}).to_string(),
            "<bench>",
            dir.path().into(),
        )?;
        config.set_data_dir(&dir.path().join("data"));
        Ok(config)
    };
    let pinned = config(json!({"wasm": "allowlist.wasm", "sha256": statement.component_sha256}))?;
    let bundled = config(json!({
        "wasm": "allowlist.bundle",
        "trust": {"publisher_keys": [{"key": statement.publisher_key}]},
    }))?;
    let mut out = Vec::new();
    for (label, config) in [
        (
            "allowlist pinned (sha256), from the artifact cache",
            &pinned,
        ),
        (
            "allowlist signed bundle, 2 vectors, from the artifact cache",
            &bundled,
        ),
    ] {
        let load = || {
            SandboxEngine::shared()
                .expect("the engine starts")
                .forget_compiled();
            Warden::new(config).expect("the set loads");
        };
        load(); // compiles once into the artifact cache
        out.push(measure(label, 1, calls.min(MAX_LOADS), &load));
    }
    Ok(out)
}
