//! `warden inspect`: the facts about a component and the host's verdict on it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

/// `warden inspect`: the facts about a component and the host's verdict on it.
pub(crate) fn inspect(component: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use warden_runtime::input_file::{self, InputKind};
    use warden_runtime::provider::{ComponentBytes, inspect};
    let bytes = input_file::read(component, InputKind::Component)
        .with_context(|| format!("reading {}", component.display()))?;
    let inspection = inspect(
        &ComponentBytes::new(bytes.into(), component.display().to_string()),
        None,
    );
    if json {
        println!("{}", serde_json::to_string_pretty(&inspection)?);
    } else {
        let host = warden_runtime::provider::host_contract();
        println!("component  {}", inspection.origin);
        println!(
            "size       {} bytes ({:.1} MB)",
            inspection.size_bytes,
            inspection.size_bytes as f64 / 1e6
        );
        println!("sha256     {}", inspection.sha256);
        match &inspection.contract {
            Some(version) => println!("contract   warden:guardrail@{version} (this host: {host})"),
            None => println!(
                "contract   none (exports no warden:guardrail/provider; this host: {host})"
            ),
        }
        match &inspection.manifest {
            Some(m) => {
                println!("provider   {} {}", m.name, m.version);
                println!("manifest   built against {}", m.contract);
                match &m.config_schema {
                    Some(schema) => println!(
                        "config     checked at load against the manifest's JSON Schema:\n{}",
                        indent(&serde_json::to_string_pretty(schema)?)
                    ),
                    None => {
                        println!("config     no schema: the provider's configure alone judges it")
                    }
                }
            }
            None => println!(
                "manifest   no manifest (no `warden:manifest` section): loads, its config unchecked"
            ),
        }
        println!("imports    {}", inspection.imports.len());
        for import in &inspection.imports {
            let flag = if import.forbidden {
                "  <- not granted to providers"
            } else {
                ""
            };
            println!("  {}{flag}", import.name);
        }
        println!("exports    {}", inspection.exports.len());
        for export in &inspection.exports {
            println!("  {export}");
        }
        match &inspection.refusal {
            None => println!("verdict    loadable: this host would load it"),
            Some(why) => println!("verdict    REFUSED: {why}"),
        }
    }
    Ok(if inspection.loadable() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// The arguments of `warden inspect`.
#[derive(Args)]
pub(crate) struct InspectArgs {
    /// The component (.wasm).
    component: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    inspect(&args.component, args.json)
}
