//! The machinery every sandboxed component shares, whatever world it exports:
//! pre-instantiation, configured instances in a bounded pool, calls under fuel,
//! deadline and memory limits, and the classification of whatever goes wrong.

use std::time::Instant;

use wasmtime::Store;
use wasmtime::component::{Component, InstancePre};

use super::error::LoadError;
use super::failure::{FailureKind, ProviderFailure, truncate};
use super::pool::{InstancePool, PoolUsage};
use crate::engine::{HostState, SandboxEngine};

/// What a provider says it is.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProviderInfo {
    /// The name the component reports.
    pub name: String,
    /// The version the component reports.
    pub version: String,
}

/// Pre-instantiates a checked component with the shared linker.
pub(crate) fn pre_instantiate(
    provider: &str,
    component: &Component,
) -> Result<InstancePre<HostState>, LoadError> {
    SandboxEngine::shared()
        .map_err(|err| LoadError::Engine {
            provider: provider.into(),
            message: err.to_string(),
        })?
        .linker()
        .instantiate_pre(component)
        .map_err(|err| LoadError::Link {
            provider: provider.into(),
            message: format!("{err:#}"),
        })
}
use crate::spec::{InstanceMode, Limits};

/// A component world the host can run: how to instantiate it and call the
/// functions every world has (`info`, `configure`).
pub(crate) trait World: Sized + Send + 'static {
    type Pre: Send + Sync + 'static;

    fn pre(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre>;

    fn instantiate(pre: &Self::Pre, store: &mut Store<HostState>) -> wasmtime::Result<Self>;

    fn info(&self, store: &mut Store<HostState>) -> wasmtime::Result<ProviderInfo>;

    fn configure(
        &self,
        store: &mut Store<HostState>,
        config: &str,
    ) -> wasmtime::Result<Result<(), String>>;
}

/// Implements [`World`] for a world type made by `bindgen!` (`$world`, its
/// pre-instance `$pre`), whose exported interface (reached by `$interface`)
/// has the `info` and `configure` that every world of the contract has.
macro_rules! impl_world {
    ($world:ty, $pre:ident, $interface:ident) => {
        impl $crate::provider::World for $world {
            type Pre = $pre<$crate::engine::HostState>;

            fn pre(
                instance_pre: wasmtime::component::InstancePre<$crate::engine::HostState>,
            ) -> wasmtime::Result<Self::Pre> {
                $pre::new(instance_pre)
            }

            fn instantiate(
                pre: &Self::Pre,
                store: &mut wasmtime::Store<$crate::engine::HostState>,
            ) -> wasmtime::Result<Self> {
                pre.instantiate(store)
            }

            fn info(
                &self,
                store: &mut wasmtime::Store<$crate::engine::HostState>,
            ) -> wasmtime::Result<$crate::provider::ProviderInfo> {
                let info = self.$interface().call_info(store)?;
                Ok($crate::provider::ProviderInfo {
                    name: info.name,
                    version: info.version,
                })
            }

            fn configure(
                &self,
                store: &mut wasmtime::Store<$crate::engine::HostState>,
                config: &str,
            ) -> wasmtime::Result<Result<(), String>> {
                self.$interface().call_configure(store, config)
            }
        }
    };
}
pub(crate) use impl_world;

/// A live, configured instance and its store.
struct Instance<W> {
    store: Store<HostState>,
    guest: W,
}

/// A loaded component of world `W`, ready to be called.
pub(crate) struct Sandbox<W: World> {
    pre: W::Pre,
    /// The engine the component was compiled for, which its stores run on.
    engine: wasmtime::Engine,
    pool: InstancePool<Instance<W>>,
    limits: Limits,
    instance_mode: InstanceMode,
    config_json: String,
    info: ProviderInfo,
    /// Set when the first instance could not be configured: every call then
    /// fails with this, without touching the guest again.
    broken: Option<ProviderFailure>,
}

impl<W: World> Sandbox<W> {
    /// Pre-instantiates a checked component and brings up one configured
    /// instance. A failure to configure does not fail the load: it is kept
    /// and every call fails with it.
    pub(crate) fn new(
        name: &str,
        component: &Component,
        limits: Limits,
        instance_mode: InstanceMode,
        config_json: String,
    ) -> Result<Self, LoadError> {
        let pre = W::pre(pre_instantiate(name, component)?).map_err(|err| LoadError::Contract {
            provider: name.into(),
            message: format!("{err:#}"),
        })?;
        let mut sandbox: Sandbox<W> = Sandbox {
            pre,
            engine: component.engine().clone(),
            pool: InstancePool::new(limits.pool_size),
            limits,
            instance_mode,
            config_json,
            info: ProviderInfo {
                name: name.into(),
                version: "unknown".into(),
            },
            broken: None,
        };
        let first = sandbox.instantiate().and_then(|mut instance| {
            arm(&mut instance.store, &sandbox.limits);
            let info = instance.guest.info(&mut instance.store).map_err(|err| {
                let cause = sandbox.classify(&err, &instance.store);
                ProviderFailure::new(
                    FailureKind::ConfigureFailed,
                    format!("info: {} ({})", cause.message, cause.kind.code()),
                )
            })?;
            Ok((instance, info))
        });
        match first {
            Ok((instance, info)) => {
                sandbox.info = info;
                if instance_mode == InstanceMode::Warm {
                    sandbox.pool.seed(instance);
                }
            }
            Err(failure) => {
                tracing::warn!(provider = name, %failure, "component could not be configured; every call will fail");
                sandbox.broken = Some(failure);
            }
        }
        Ok(sandbox)
    }

    pub(crate) fn info(&self) -> &ProviderInfo {
        &self.info
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(crate) fn health(&self) -> Result<(), &ProviderFailure> {
        self.broken.as_ref().map_or(Ok(()), Err)
    }

    pub(crate) fn pool_usage(&self) -> PoolUsage {
        self.pool.usage()
    }

    /// Calls into the guest under the limits: `input_size` is checked against
    /// `max_input_bytes` first, `call` runs the export, `accept` validates its
    /// output. Returns the accepted output and the fuel used. An instance that
    /// failed in any way is discarded.
    pub(crate) fn call<R, T>(
        &self,
        input_size: usize,
        call: impl FnOnce(&W, &mut Store<HostState>) -> wasmtime::Result<R>,
        accept: impl FnOnce(R) -> Result<T, ProviderFailure>,
    ) -> Result<(T, u64), ProviderFailure> {
        if let Some(broken) = &self.broken {
            return Err(broken.clone());
        }
        let limits = &self.limits;
        if input_size > limits.max_input_bytes {
            return Err(ProviderFailure::new(
                FailureKind::InputTooLarge,
                format!(
                    "the request is {input_size} bytes; this provider accepts at most {}",
                    limits.max_input_bytes
                ),
            ));
        }
        let deadline = Instant::now() + limits.timeout();
        let mut slot = self.pool.acquire(deadline).ok_or_else(|| {
            ProviderFailure::new(
                FailureKind::PoolExhausted,
                format!(
                    "no instance became free within {} ms (pool of {})",
                    limits.timeout_ms, limits.pool_size
                ),
            )
        })?;
        let mut instance = match slot.instance.take() {
            Some(instance) => instance,
            None => self.instantiate()?,
        };
        arm(&mut instance.store, limits);
        let result = call(&instance.guest, &mut instance.store);
        let fuel_used = limits.fuel - instance.store.get_fuel().unwrap_or(0);
        let output = result.map_err(|err| self.classify(&err, &instance.store))?;
        let accepted = accept(output)?;
        if self.instance_mode == InstanceMode::Warm {
            slot.release(instance);
        }
        Ok((accepted, fuel_used))
    }

    fn classify(&self, err: &wasmtime::Error, store: &Store<HostState>) -> ProviderFailure {
        ProviderFailure::classify(err, store.data().limiter.exceeded, self.limits.timeout_ms)
    }

    /// A new configured instance.
    fn instantiate(&self) -> Result<Instance<W>, ProviderFailure> {
        let fail = |what: &str, err: wasmtime::Error, store: &Store<HostState>| {
            let cause = self.classify(&err, store);
            let kind = if cause.kind == FailureKind::PoolExhausted {
                FailureKind::PoolExhausted
            } else {
                FailureKind::ConfigureFailed
            };
            ProviderFailure::new(
                kind,
                format!("{what}: {} ({})", cause.message, cause.kind.code()),
            )
        };
        let mut store = Store::new(&self.engine, HostState::new(self.limits.memory_bytes()));
        store.limiter(|state| &mut state.limiter);
        // Loading is not judging: instantiation and `configure` run on their own budget.
        let limits = &self.limits;
        set_budget(
            &mut store,
            limits.configure_fuel,
            limits.configure_timeout(),
        );
        let guest = match W::instantiate(&self.pre, &mut store) {
            Ok(guest) => guest,
            Err(err) => return Err(fail("instantiate", err, &store)),
        };
        match guest.configure(&mut store, &self.config_json) {
            Ok(Ok(())) => Ok(Instance { store, guest }),
            Ok(Err(message)) => Err(ProviderFailure::new(
                FailureKind::ConfigureFailed,
                format!("configure refused the config: {}", truncate(&message, 500)),
            )),
            Err(err) => Err(
                match over_budget(self.classify(&err, &store).kind, limits) {
                    Some(message) => ProviderFailure::new(FailureKind::ConfigureFailed, message),
                    None => fail("configure", err, &store),
                },
            ),
        }
    }
}

/// What a `configure` that ran out of its budget says: which limit, and what
/// to raise; `None` for any other failure.
fn over_budget(kind: FailureKind, limits: &Limits) -> Option<String> {
    let (what, raise) = match kind {
        FailureKind::FuelExhausted => (
            format!(
                "ran out of fuel (limits.configure_fuel: {})",
                limits.configure_fuel
            ),
            "limits.configure_fuel",
        ),
        FailureKind::Timeout => (
            format!(
                "ran past limits.configure_timeout_ms ({} ms)",
                limits.configure_timeout_ms
            ),
            "limits.configure_timeout_ms",
        ),
        FailureKind::MemoryLimit => (
            format!(
                "needed more memory than limits.memory_mb ({} MB)",
                limits.memory_mb
            ),
            "limits.memory_mb",
        ),
        _ => return None,
    };
    Some(format!(
        "configure {what}: the configuration is too large for its budget; raise {raise} ({})",
        kind.code()
    ))
}

/// Refills the fuel and sets the deadline for one call into the guest.
fn arm(store: &mut Store<HostState>, limits: &Limits) {
    set_budget(store, limits.fuel, limits.timeout());
}

fn set_budget(store: &mut Store<HostState>, fuel: u64, timeout: std::time::Duration) {
    // Fuel is enabled on the shared engine, so this cannot fail.
    let _ = store.set_fuel(fuel);
    store.set_epoch_deadline(SandboxEngine::ticks_for(timeout));
}
