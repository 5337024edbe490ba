//! What a component is, and whether this host would load it and why not: the
//! facts `warden inspect` prints, found by the very checks a load runs.

use serde::Serialize;

use super::{
    CONTRACT_PACKAGE, CONTRACT_VERSION, ComponentBytes, check_contract, compile,
    is_forbidden_import, prepare,
};
use crate::artifact_cache::ArtifactCache;

/// A component, as the host sees it.
#[derive(Clone, Debug, Serialize)]
pub struct Inspection {
    /// The file it was read from.
    pub origin: String,
    /// The file's size, in bytes.
    pub size_bytes: usize,
    /// The file's SHA-256, hex.
    pub sha256: String,
    /// The contract version of its `warden:guardrail` export, if it has one.
    pub contract: Option<String>,
    /// What the component says it is (its `warden:manifest` section), if it
    /// carries one.
    pub manifest: Option<crate::manifest::Manifest>,
    /// Every import, each marked whether it alone makes the host refuse the component.
    pub imports: Vec<Import>,
    /// Every export, by name.
    pub exports: Vec<String>,
    /// Why the host would refuse it; `None` when it would load it.
    pub refusal: Option<String>,
}

/// One import and whether it alone makes the host refuse the component.
#[derive(Clone, Debug, Serialize)]
pub struct Import {
    /// The import's name (`wasi:filesystem/types@0.2.0`, ...).
    pub name: String,
    /// True when the host refuses a component that imports it.
    pub forbidden: bool,
}

impl Inspection {
    /// Whether the host would load the component.
    pub fn loadable(&self) -> bool {
        self.refusal.is_none()
    }
}

/// Compiles a component (through the artifact cache, if given) and runs the
/// host's load checks on it: import policy, contract export and version, and
/// linking against the sandbox. Configuration is not tried: that needs the
/// operator's config and is what `warden test` does.
pub fn inspect(component: &ComponentBytes, artifacts: Option<&ArtifactCache>) -> Inspection {
    let name = std::path::Path::new(&component.origin)
        .file_name()
        .map_or_else(
            || component.origin.clone(),
            |n| n.to_string_lossy().into_owned(),
        );
    let mut inspection = Inspection {
        origin: component.origin.clone(),
        size_bytes: component.size as usize,
        sha256: component.sha256.clone(),
        contract: None,
        manifest: None,
        imports: Vec::new(),
        exports: Vec::new(),
        refusal: None,
    };
    let compiled = match compile(&name, component, artifacts) {
        Ok(compiled) => compiled.component,
        Err(err) => {
            inspection.refusal = Some(err.to_string());
            return inspection;
        }
    };
    let engine = compiled.engine();
    let ty = compiled.component_type();
    inspection.imports = ty
        .imports(engine)
        .map(|(name, _)| Import {
            name: name.to_string(),
            forbidden: is_forbidden_import(name),
        })
        .collect();
    inspection.exports = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let provider_export = format!("{CONTRACT_PACKAGE}/provider@");
    inspection.contract = inspection
        .exports
        .iter()
        .find_map(|e| e.strip_prefix(&provider_export).map(str::to_string));
    let manifest = component.manifest(&name);
    inspection.manifest = manifest.as_ref().ok().cloned().flatten();
    let verdict = check_contract(&name, &compiled, "provider")
        .and_then(|()| manifest.map(drop))
        .and_then(|()| prepare(&name, &compiled));
    inspection.refusal = verdict.err().map(|err| err.to_string());
    inspection
}

/// The contract this host speaks, for display.
pub fn host_contract() -> String {
    format!("{CONTRACT_PACKAGE}@{CONTRACT_VERSION}")
}
