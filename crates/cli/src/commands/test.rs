//! `warden test`: a component against conformance vectors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use warden_server::Config;

/// `warden test`: loads the component as the only provider, under the same
/// config validation as a warden.yaml, and checks every vector.
pub(crate) fn test(
    component: &Path,
    vectors: &Path,
    config: Option<&Path>,
    limits: &[String],
    verbose: bool,
) -> anyhow::Result<ExitCode> {
    use serde_json::{Map, Value, json};
    use warden_runtime::artifact_cache::ArtifactCache;
    use warden_runtime::provider::{Provider, Sources};

    let text = std::fs::read_to_string(vectors)
        .with_context(|| format!("reading the vectors {}", vectors.display()))?;
    let vectors = warden::vectors::parse(&text, &vectors.display().to_string())?;
    let provider_config: Value = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the provider config {}", path.display()))?;
            serde_norway::from_str(&text)
                .with_context(|| format!("{}: not YAML or JSON", path.display()))?
        }
        None => json!({}),
    };
    let mut limit_map = Map::new();
    for limit in limits {
        let (key, value) = limit
            .split_once('=')
            .with_context(|| format!("--limit {limit}: expected KEY=VALUE"))?;
        let value: u64 = value
            .trim()
            .parse()
            .with_context(|| format!("--limit {limit}: the value is not a whole number"))?;
        limit_map.insert(key.trim().to_string(), value.into());
    }
    let name: String = component
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "provider".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    // The same parser and checks as a warden.yaml with this one provider.
    let spec = json!({"guardrails": {"providers": [{
        "name": name,
        "wasm": component.display().to_string(),
        "config": provider_config,
        "limits": limit_map,
    }]}});
    let mut config = Config::parse(&spec.to_string(), "<warden test>", PathBuf::from("."))
        .context("the provider config or limits")?;
    super::state_dir::place(&mut config.core, "test");
    let spec = &config.core.guardrails.providers[0];
    let artifacts = ArtifactCache::in_data_dir(&config.core.data_dir());
    let sources = Sources {
        base_dir: &config.core.base_dir,
        builtins: warden::BUILTINS,
        artifacts: Some(&artifacts),
    };
    let provider = match Provider::load(spec, &sources, true) {
        Ok(provider) => provider,
        // A config its manifest's schema refuses is the provider refusing
        // its config, as one its `configure` refuses is.
        Err(warden_runtime::provider::LoadError::ConfigSchema { provider, source }) => {
            eprintln!("warden: provider '{provider}' cannot be configured: {source}");
            return Ok(ExitCode::from(1));
        }
        Err(err) => return Err(err.into()),
    };
    if let Err(failure) = provider.health() {
        eprintln!(
            "warden: provider '{}' cannot be configured: {failure}",
            provider.name()
        );
        return Ok(ExitCode::from(1));
    }
    println!(
        "testing {} {} ({}) against {} vectors",
        provider.info().name,
        provider.info().version,
        component.display(),
        vectors.len()
    );
    let mut failed = 0;
    for vector in &vectors {
        let outcome = warden::vectors::check(&provider, vector);
        match outcome.mismatch {
            None if verbose => println!("ok    {}", vector.name),
            None => {}
            Some(mismatch) => {
                failed += 1;
                println!(
                    "FAIL  {} (line {})\n      expected: {}\n      actual:   {}",
                    vector.name, vector.line, mismatch.expected, mismatch.actual
                );
            }
        }
    }
    println!("{} passed, {} failed", vectors.len() - failed, failed);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

// The arguments of `warden test`.
#[derive(Args)]
pub(crate) struct TestArgs {
    /// The provider component (.wasm).
    component: PathBuf,
    /// The vectors file.
    #[arg(long)]
    vectors: PathBuf,
    /// The provider's configuration (YAML or JSON): what goes under `config:`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A sandbox limit, e.g. `memory_mb=256` or `fuel=2000000000` (repeatable).
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    limits: Vec<String>,
    /// Print every vector, not only the failures.
    #[arg(long, short)]
    verbose: bool,
}

pub(crate) fn run(args: TestArgs) -> anyhow::Result<ExitCode> {
    test(
        &args.component,
        &args.vectors,
        args.config.as_deref(),
        &args.limits,
        args.verbose,
    )
}
