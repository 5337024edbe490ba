//! One guardrail provider: load its component (verify the pin, check its imports
//! and contract version, pre-instantiate), keep warm configured instances in a
//! pool, call it under its limits, and turn whatever goes wrong into a classified
//! [`ProviderFailure`].

mod classifier;
mod error;
mod failure;
mod inspect;
mod pool;
mod sandbox;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use wasmtime::component::Component;

pub use classifier::{Assessment, Classifier};
pub use error::LoadError;
pub use failure::{FailureKind, ProviderFailure};
pub use inspect::{Import, Inspection, host_contract, inspect};
pub use pool::PoolUsage;
pub use warden_types::Risk;

use crate::artifact_cache::ArtifactCache;
use crate::builtin;
use crate::engine::{Compiled, CompiledFrom, SandboxEngine};
use crate::input_file::{self, InputFile, InputKind};
use crate::manifest::Manifest;
use crate::source_map::SourceMap;
use crate::spec::{Limits, ProviderSpec};
pub use sandbox::ProviderInfo;
pub(crate) use sandbox::{Sandbox, World, impl_world, pre_instantiate};
use warden_types::OnError;
use warden_types::cause::SourcePosition;
use warden_types::codes;
use warden_types::decision::{Decision, Reason, Verdict};

/// Host bindings generated from the contract in `wit/`.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "guardrail-provider",
    });
}

use bindings::warden::guardrail::types as wit;
use bindings::{GuardrailProvider, GuardrailProviderPre};

/// The contract this host speaks.
pub const CONTRACT_PACKAGE: &str = "warden:guardrail";
/// The contract version this host speaks; a component built against an incompatible one
/// (another minor while 0.x, another major after) is refused.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// Imports that would hand a provider the host's files or network.
const FORBIDDEN_IMPORTS: &[&str] = &["wasi:filesystem/", "wasi:sockets/", "wasi:http/"];

/// The tool call as providers see it (the contract's `tool-call` record).
pub type GuestCall = wit::ToolCall;
pub use wit::InteractionMode as GuestInteractionMode;

/// Where a provider's component and configuration come from.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// Relative `wasm:` and `config_files:` paths are resolved against it (the
    /// configuration file's directory).
    pub base_dir: &'a Path,
    /// The components `builtin:<name>` may name.
    pub builtins: &'a [builtin::Builtin],
    /// The on-disk compiled cache, if any.
    pub artifacts: Option<&'a ArtifactCache>,
}

/// A provider's opinion on one call, with what it cost.
#[derive(Clone, Debug)]
pub struct Opinion {
    /// The provider's decision, as it returned it.
    pub decision: Decision,
    /// The WebAssembly fuel the call used.
    pub fuel_used: u64,
}

/// A loaded provider.
pub struct Provider {
    name: String,
    digest: String,
    source: String,
    on_error: OnError,
    sandbox: Sandbox<GuardrailProvider>,
    compiled_from: CompiledFrom,
    loaded_at: SystemTime,
    manifest: Option<Manifest>,
    /// Where each value of its configuration is written, for the rule a
    /// decision names.
    config_sources: SourceMap,
}

/// A component: its SHA-256, where it came from, and its bytes (a file's are
/// read only when they must be compiled: a component found compiled in the
/// artifact cache is only hashed, as it streams from the file).
pub struct ComponentBytes {
    data: ComponentData,
    /// `builtin:<name>` or the file's path, for messages.
    pub origin: String,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    /// The size of the component, in bytes.
    pub size: u64,
}

enum ComponentData {
    Memory(std::borrow::Cow<'static, [u8]>),
    File(PathBuf),
}

impl ComponentBytes {
    /// Finds the component named by a provider spec (`builtin:<name>` or a
    /// path relative to `base_dir`) and hashes it.
    pub fn resolve(provider: &str, wasm: &str, sources: &Sources<'_>) -> Result<Self, LoadError> {
        if let Some(name) = wasm.strip_prefix("builtin:") {
            let builtins = sources.builtins;
            let bytes =
                builtin::component(builtins, name).ok_or_else(|| LoadError::UnknownBuiltin {
                    provider: provider.into(),
                    name: name.into(),
                    shipped: builtin::names(builtins).join(", "),
                })?;
            return Ok(ComponentBytes::new(bytes.into(), wasm.into()));
        }
        let path: PathBuf = sources.base_dir.join(wasm);
        let read_error = |source| LoadError::Read {
            provider: provider.into(),
            path: path.display().to_string(),
            source,
        };
        let file = InputFile::open(&path, InputKind::Component).map_err(read_error)?;
        let mut hasher = Sha256::new();
        let size = std::io::copy(&mut file.reader(), &mut hasher).map_err(read_error)?;
        input_file::too_large(size, InputKind::Component).map_err(read_error)?;
        Ok(ComponentBytes {
            origin: path.display().to_string(),
            data: ComponentData::File(path),
            sha256: hex::encode(hasher.finalize()),
            size,
        })
    }

    /// A component held in memory.
    pub fn new(bytes: std::borrow::Cow<'static, [u8]>, origin: String) -> Self {
        let sha256 = hex::encode(Sha256::digest(&bytes));
        ComponentBytes {
            size: bytes.len() as u64,
            data: ComponentData::Memory(bytes),
            origin,
            sha256,
        }
    }

    /// The manifest the component carries (`None` without one), checked
    /// against the contract this host speaks.
    pub fn manifest(&self, provider: &str) -> Result<Option<Manifest>, LoadError> {
        let bytes = self.bytes().map_err(|source| LoadError::Read {
            provider: provider.into(),
            path: self.origin.clone(),
            source,
        })?;
        let manifest = Manifest::read(&bytes).map_err(|source| LoadError::Manifest {
            provider: provider.into(),
            path: self.origin.clone(),
            source,
        })?;
        match &manifest {
            Some(m)
                if !m
                    .contract_version()
                    .is_some_and(|v| compatible(v, CONTRACT_VERSION)) =>
            {
                Err(LoadError::Contract {
                    provider: provider.into(),
                    message: format!(
                        "its manifest says it was built against {}; this host speaks \
                         {CONTRACT_PACKAGE}@{CONTRACT_VERSION}",
                        m.contract
                    ),
                })
            }
            _ => Ok(manifest),
        }
    }

    /// The bytes. A file is read again, and refused if it no longer has the
    /// digest it had when it was resolved (and pinned).
    pub fn bytes(&self) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
        match &self.data {
            ComponentData::Memory(bytes) => Ok(std::borrow::Cow::Borrowed(bytes)),
            ComponentData::File(path) => {
                let bytes = input_file::read(path, InputKind::Component)?;
                if hex::encode(Sha256::digest(&bytes)) != self.sha256 {
                    return Err(std::io::Error::other(
                        "the file changed while it was being loaded",
                    ));
                }
                Ok(std::borrow::Cow::Owned(bytes))
            }
        }
    }
}

/// Compiles a component and checks it against the contract: no forbidden
/// imports, the provider export at a compatible version. Returns the component
/// ready to pre-instantiate. `artifacts` is the on-disk compiled cache, if any.
pub fn compile_checked(
    provider: &str,
    component: &ComponentBytes,
    export: &str,
    artifacts: Option<&ArtifactCache>,
) -> Result<Compiled, LoadError> {
    let compiled = compile(provider, component, artifacts)?;
    check_contract(provider, &compiled.component, export)?;
    Ok(compiled)
}

/// Compiles a component (or finds it compiled), without judging it.
pub fn compile(
    provider: &str,
    component: &ComponentBytes,
    artifacts: Option<&ArtifactCache>,
) -> Result<Compiled, LoadError> {
    let engine = SandboxEngine::shared().map_err(|err| LoadError::Engine {
        provider: provider.into(),
        message: err.to_string(),
    })?;
    engine
        .compile(&component.sha256, &|| component.bytes(), artifacts)
        .map_err(|err| match err.downcast::<std::io::Error>() {
            Ok(source) => LoadError::Read {
                provider: provider.into(),
                path: component.origin.clone(),
                source,
            },
            Err(err) => LoadError::Compile {
                provider: provider.into(),
                path: component.origin.clone(),
                message: format!("{err:#}"),
            },
        })
}

/// Whether the host refuses a component that imports `name`: the imports that
/// would hand a provider the host's files or network.
pub fn is_forbidden_import(name: &str) -> bool {
    FORBIDDEN_IMPORTS.iter().any(|p| name.starts_with(p))
}

/// Checks a compiled component against the contract: no forbidden imports,
/// and the `export` interface (`provider`) at a version this host speaks.
pub fn check_contract(provider: &str, compiled: &Component, export: &str) -> Result<(), LoadError> {
    let engine = compiled.engine();
    let ty = compiled.component_type();
    for (import, _) in ty.imports(engine) {
        if is_forbidden_import(import) {
            return Err(LoadError::ForbiddenImport {
                provider: provider.into(),
                import: import.into(),
            });
        }
    }
    let wanted = format!("{CONTRACT_PACKAGE}/{export}");
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let found = exports.iter().find_map(|name| {
        name.strip_prefix(&wanted)
            .and_then(|rest| rest.strip_prefix('@'))
            .map(|version| (name, version))
    });
    match found {
        Some((_, version)) if compatible(version, CONTRACT_VERSION) => Ok(()),
        Some((name, version)) => Err(LoadError::Contract {
            provider: provider.into(),
            message: format!(
                "the component exports `{name}`, built against contract {CONTRACT_PACKAGE}@{version}; \
                 this host speaks {CONTRACT_PACKAGE}@{CONTRACT_VERSION}"
            ),
        }),
        None => Err(LoadError::Contract {
            provider: provider.into(),
            message: format!(
                "the component does not export `{wanted}@{CONTRACT_VERSION}` (it exports: {})",
                if exports.is_empty() {
                    "nothing".into()
                } else {
                    exports.join(", ")
                }
            ),
        }),
    }
}

/// Whether this host speaks `version` of the contract: same major; for 0.x,
/// same minor.
pub fn speaks_contract(version: &str) -> bool {
    compatible(version, CONTRACT_VERSION)
}

/// Semver compatibility: same major; for 0.x, same minor.
fn compatible(version: &str, ours: &str) -> bool {
    let parts = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split(['.', '-', '+']);
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    match (parts(version), parts(ours)) {
        (Some((0, a)), Some((0, b))) => a == b,
        (Some((a, _)), Some((b, _))) => a == b,
        _ => false,
    }
}

/// Reads a component, verifies its pin and compiles it (through the on-disk
/// compiled cache `artifacts`, if any) with the contract checks.
pub(crate) fn load_component(
    name: &str,
    wasm: &str,
    pin: Option<&str>,
    export: &str,
    sources: &Sources<'_>,
) -> Result<(ComponentBytes, Compiled), LoadError> {
    let component = ComponentBytes::resolve(name, wasm, sources)?;
    if let Some(pin) = pin {
        let expected = pin
            .strip_prefix("sha256:")
            .unwrap_or(pin)
            .to_ascii_lowercase();
        if expected != component.sha256 {
            return Err(LoadError::DigestMismatch {
                provider: name.into(),
                path: component.origin.clone(),
                expected,
                actual: component.sha256.clone(),
            });
        }
    }
    let compiled = compile_checked(name, &component, export, sources.artifacts)?;
    Ok((component, compiled))
}

/// Pre-instantiates a checked provider component and checks that its exports
/// have the contract's types: the last load check before an instance is made.
pub(crate) fn prepare(provider: &str, component: &Component) -> Result<(), LoadError> {
    <GuardrailProvider as World>::pre(pre_instantiate(provider, component)?)
        .map(drop)
        .map_err(|err| LoadError::Contract {
            provider: provider.into(),
            message: format!("{err:#}"),
        })
}

impl_world!(
    GuardrailProvider,
    GuardrailProviderPre,
    warden_guardrail_provider
);

impl Provider {
    /// Loads a provider: read, verify the pin, compile, check, read its
    /// manifest and check the config against the manifest's schema,
    /// pre-instantiate, and bring up one configured instance. A failure to configure does not
    /// fail the load: the provider then denies every call with
    /// `warden.configure_failed` (see [`Provider::health`]).
    pub fn load(
        spec: &ProviderSpec,
        sources: &Sources<'_>,
        fail_closed: bool,
    ) -> Result<Provider, LoadError> {
        let (config, config_sources) =
            spec.resolve(sources.base_dir)
                .map_err(|source| LoadError::ConfigFile {
                    provider: spec.name.clone(),
                    source,
                })?;
        let (component, compiled) = load_component(
            &spec.name,
            &spec.wasm,
            spec.sha256.as_deref(),
            "provider",
            sources,
        )?;
        let manifest = component.manifest(&spec.name)?;
        if let Some(schema) = manifest.as_ref().and_then(|m| m.config_schema.as_ref()) {
            crate::config_schema::validate(schema, &config).map_err(|source| {
                LoadError::ConfigSchema {
                    provider: spec.name.clone(),
                    source,
                }
            })?;
        }
        let sandbox = Sandbox::new(
            &spec.name,
            &compiled.component,
            spec.limits,
            spec.instance,
            config.to_string(),
        )?;
        let on_error = spec.on_error.unwrap_or(if fail_closed {
            OnError::Deny
        } else {
            OnError::Allow
        });
        Ok(Provider {
            name: spec.name.clone(),
            digest: component.sha256,
            source: component.origin,
            on_error,
            sandbox,
            compiled_from: compiled.origin,
            loaded_at: SystemTime::now(),
            manifest,
            config_sources,
        })
    }

    /// Where the part of its configuration at `pointer` (a JSON pointer
    /// into the config it was given, as a provider names the rule that
    /// decided in `rule_pointer`) is written: the value's own line, or its
    /// nearest written ancestor's.
    pub fn config_source(&self, pointer: &str) -> Option<SourcePosition> {
        self.config_sources.locate(pointer)
    }

    /// The provider's name in the config.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The component's SHA-256, hex.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// `builtin:<name>` or the component's path.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What the component says it is (its name and version).
    pub fn info(&self) -> &ProviderInfo {
        self.sandbox.info()
    }

    /// Its manifest, if its component carries one.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// Its sandbox limits, as configured.
    pub fn limits(&self) -> &Limits {
        self.sandbox.limits()
    }

    /// What its failure becomes: the spec's `on_error`, or `guardrails.fail_closed`'s.
    pub fn on_error(&self) -> OnError {
        self.on_error
    }

    /// When this provider was loaded.
    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }

    /// Where its compiled code came from: compiled at load, the on-disk
    /// artifact cache, or memory (compiled earlier by this process).
    pub fn compiled_from(&self) -> CompiledFrom {
        self.compiled_from
    }

    /// Its instance pool right now.
    pub fn pool_usage(&self) -> PoolUsage {
        self.sandbox.pool_usage()
    }

    /// Ok when the provider could be configured; otherwise why not.
    pub fn health(&self) -> Result<(), &ProviderFailure> {
        self.sandbox.health()
    }

    /// Asks the provider for its opinion on one call, under its limits.
    pub fn evaluate(&self, call: &GuestCall) -> Result<Opinion, ProviderFailure> {
        let max_output = self.limits().max_output_bytes;
        let (decision, fuel_used) = self.sandbox.call(
            input_size(call),
            |guest, store| guest.warden_guardrail_provider().call_evaluate(store, call),
            |raw| accept(raw, max_output),
        )?;
        Ok(Opinion {
            decision,
            fuel_used,
        })
    }
}

/// Bytes of the request a provider is given.
fn input_size(call: &GuestCall) -> usize {
    let optional = [
        &call.agent_id,
        &call.thread_id,
        &call.run_id,
        &call.tool_call_id,
        &call.user_id,
        &call.user_role,
        &call.oauth_provider,
        &call.oauth_id,
    ];
    call.tool_name.len()
        + call.tool_input.len()
        + call.timestamp.len()
        + optional
            .iter()
            .map(|f| f.as_ref().map_or(0, String::len))
            .sum::<usize>()
}

/// Turns a guest's decision into the host's, or refuses it: too large, metadata
/// that is not a JSON object, or a reason code that is empty, oversized or
/// claims the host's `warden.` namespace.
fn accept(raw: wit::Decision, max_bytes: usize) -> Result<Decision, ProviderFailure> {
    let invalid = |message: String| ProviderFailure::new(FailureKind::InvalidDecision, message);
    let size = raw.metadata.len()
        + raw.policy_id.as_ref().map_or(0, String::len)
        + raw
            .reasons
            .iter()
            .map(|r| r.code.len() + r.message.len())
            .sum::<usize>();
    if size > max_bytes {
        return Err(invalid(format!(
            "the decision is {size} bytes; the limit is {max_bytes}"
        )));
    }
    // Most decisions carry none: the SDK writes `{}`, which needs no parser.
    let metadata: Map<String, Value> = if raw.metadata == "{}" {
        Map::new()
    } else {
        serde_json::from_str(&raw.metadata)
            .map_err(|err| invalid(format!("the metadata is not a JSON object: {err}")))?
    };
    let mut reasons = Vec::with_capacity(raw.reasons.len());
    for reason in raw.reasons {
        if reason.code.is_empty() || reason.code.len() > 128 {
            return Err(invalid(
                "a reason code is empty or longer than 128 bytes".into(),
            ));
        }
        if reason.code.starts_with(codes::HOST_PREFIX) {
            return Err(invalid(format!(
                "the reason code '{}' is reserved for the host",
                reason.code
            )));
        }
        reasons.push(Reason {
            code: reason.code,
            message: reason.message,
        });
    }
    let verdict = match raw.verdict {
        wit::Verdict::Allow => Verdict::Allow,
        wit::Verdict::Ask => Verdict::Ask,
        wit::Verdict::Deny => Verdict::Deny,
    };
    Ok(Decision {
        verdict,
        reasons,
        policy_id: raw.policy_id,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(metadata: &str, codes: &[&str]) -> wit::Decision {
        wit::Decision {
            verdict: wit::Verdict::Allow,
            reasons: codes
                .iter()
                .map(|c| wit::Reason {
                    code: c.to_string(),
                    message: String::new(),
                })
                .collect(),
            policy_id: None,
            metadata: metadata.into(),
        }
    }

    #[test]
    fn contract_versions_are_compatible_within_a_zero_minor() {
        assert!(compatible("0.1.0", "0.1.0"));
        assert!(compatible("0.1.7", "0.1.0"));
        assert!(!compatible("0.2.0", "0.1.0"));
        assert!(!compatible("1.0.0", "0.1.0"));
        assert!(!compatible("garbage", "0.1.0"));
    }

    #[test]
    fn metadata_must_be_a_json_object() {
        assert!(accept(raw("{}", &[]), 1024).is_ok());
        for bad in ["", "[]", "null", "{", "\"x\""] {
            let err = accept(raw(bad, &[]), 1024).unwrap_err();
            assert_eq!(err.kind, FailureKind::InvalidDecision, "{bad:?}");
        }
    }

    #[test]
    fn a_provider_cannot_speak_for_the_host() {
        let err = accept(raw("{}", &["warden.timeout"]), 1024).unwrap_err();
        assert_eq!(err.kind, FailureKind::InvalidDecision);
    }

    #[test]
    fn an_oversized_decision_is_invalid() {
        let big = format!("{{\"k\":\"{}\"}}", "x".repeat(2000));
        assert_eq!(
            accept(raw(&big, &[]), 1024).unwrap_err().kind,
            FailureKind::InvalidDecision
        );
    }
}
