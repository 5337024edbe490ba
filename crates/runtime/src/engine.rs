//! The one wasmtime `Engine` every provider runs on: component model, pooling
//! allocator (on-demand where the pool cannot be reserved), fuel, and epoch
//! interruption driven by a single ticker thread. Also the store state every
//! instance carries: an empty WASI context and a resource limiter that records
//! why it refused to grow.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::artifact_cache::{ArtifactCache, CacheMiss};

/// How often the ticker bumps the engine's epoch: the granularity of timeouts.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Guest stack: deep enough for honest code, shallow enough to trap recursion fast.
const MAX_WASM_STACK: usize = 512 * 1024;

/// How the process-wide engine is built. An embedder that sets these does so
/// with [`SandboxEngine::configure`] before the first provider loads; the
/// defaults are the daemon's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Reserve the pooling allocator (fast instantiation, address space
    /// reserved up front). When the reservation fails, instances are
    /// allocated on demand. False: always on demand (for a process that
    /// must not reserve address space).
    pub pooling: bool,
    /// Component instances the pool holds: room for every provider's pool
    /// twice over (the old and the new set during a swap).
    pub pool_instances: u32,
    /// The deepest guest stack, in bytes.
    pub max_wasm_stack: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            pooling: true,
            pool_instances: 512,
            max_wasm_stack: MAX_WASM_STACK,
        }
    }
}

/// Why the engine could not be started or configured. Nothing panics: every
/// provider load then fails with this, and a pipeline without providers still
/// judges calls.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// wasmtime refused the configuration, or the ticker thread could not start.
    #[error("cannot start the WebAssembly engine: {0}")]
    Start(String),
    /// The engine was started already with other options.
    #[error("the WebAssembly engine was started already with other options ({0:?})")]
    AlreadyStarted(EngineOptions),
}

/// The options the process-wide engine is (or will be) built with.
static OPTIONS: Mutex<Option<EngineOptions>> = Mutex::new(None);
/// The process-wide engine, or why it could not be started.
static SHARED: OnceLock<Result<SandboxEngine, EngineError>> = OnceLock::new();

/// The shared engine, its linker, and how instances are allocated.
pub struct SandboxEngine {
    engine: Engine,
    linker: Linker<HostState>,
    pooling: bool,
    /// Compiled components by SHA-256 of their bytes.
    compiled: Mutex<HashMap<String, Component>>,
    /// Held while a component is deserialised or compiled, so that loads of
    /// the same component at the same time compile it once (compilation is
    /// parallel inside already).
    compiling: Mutex<()>,
}

/// A compiled component and where it came from.
#[derive(Clone)]
pub struct Compiled {
    /// The component, ready to pre-instantiate.
    pub component: Component,
    /// Whether it came from memory, the disk cache or a compilation now.
    pub origin: CompiledFrom,
}

/// Where a compiled component came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompiledFrom {
    /// Compiled earlier by this process.
    Memory,
    /// Deserialised from the on-disk artifact cache.
    Disk,
    /// Compiled now.
    Compilation,
}

/// Compiled components kept in memory; past this the cache starts over.
const MAX_COMPILED: usize = 64;

impl SandboxEngine {
    /// The process-wide engine, created on first use with the configured
    /// options (else the defaults). One engine means one ticker thread, one
    /// pool reservation and one code cache for all providers.
    pub fn shared() -> Result<&'static SandboxEngine, EngineError> {
        SHARED
            .get_or_init(|| {
                let options = OPTIONS
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(EngineOptions::default)
                    .clone();
                SandboxEngine::new(&options)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Sets the options the process-wide engine is built with, and builds it.
    /// Call it before the first provider loads; once the engine has started,
    /// other options are refused (the same ones are not).
    pub fn configure(options: EngineOptions) -> Result<&'static SandboxEngine, EngineError> {
        {
            let mut chosen = OPTIONS.lock().unwrap_or_else(PoisonError::into_inner);
            match &*chosen {
                Some(current) if *current != options && SHARED.get().is_some() => {
                    return Err(EngineError::AlreadyStarted(current.clone()));
                }
                _ => *chosen = Some(options),
            }
        }
        SandboxEngine::shared()
    }

    fn new(options: &EngineOptions) -> Result<SandboxEngine, EngineError> {
        let start = |err: wasmtime::Error| EngineError::Start(format!("{err:#}"));
        let (engine, pooling) = match options.pooling.then(|| Engine::new(&config(options, true))) {
            Some(Ok(engine)) => (engine, true),
            reserved => {
                if let Some(Err(err)) = reserved {
                    tracing::warn!(
                        error = %err,
                        "cannot reserve the pooling allocator; instances are allocated on demand"
                    );
                }
                (Engine::new(&config(options, false)).map_err(start)?, false)
            }
        };
        start_epoch_ticker(&engine)
            .map_err(|err| EngineError::Start(format!("the epoch ticker thread: {err}")))?;
        let mut linker = Linker::new(&engine);
        // WASI with an empty context: a std guest needs wasi:io and wasi:cli to
        // start, and finds no files, sockets, environment or arguments there.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(start)?;
        Ok(SandboxEngine {
            engine,
            linker,
            pooling,
            compiled: Mutex::new(HashMap::new()),
            compiling: Mutex::new(()),
        })
    }

    /// Compiles a component, or returns the one compiled earlier from the same
    /// bytes: from memory (a reload or a second provider on the same component
    /// costs a lookup), else from the on-disk `artifacts` cache when one is
    /// given (a new process costs a deserialisation). `bytes` gives the
    /// component's bytes, asked for only when it must be compiled. A fresh
    /// compilation is written to that cache; a cache that cannot be read or
    /// written only costs the compilation.
    pub fn compile<'b>(
        &self,
        sha256: &str,
        bytes: &dyn Fn() -> std::io::Result<Cow<'b, [u8]>>,
        artifacts: Option<&ArtifactCache>,
    ) -> wasmtime::Result<Compiled> {
        let cached = self.cache().get(sha256).cloned();
        if let Some(component) = cached {
            return Ok(Compiled {
                component,
                origin: CompiledFrom::Memory,
            });
        }
        let _compiling = self
            .compiling
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Compiled by another thread while this one waited?
        let cached = self.cache().get(sha256).cloned();
        if let Some(component) = cached {
            return Ok(Compiled {
                component,
                origin: CompiledFrom::Memory,
            });
        }
        let loaded = artifacts.map(|disk| disk.load(&self.engine, sha256));
        let (component, origin) = match loaded {
            Some(Ok(component)) => (component, CompiledFrom::Disk),
            miss => {
                if let Some(Err(miss)) = &miss
                    && !matches!(miss, CacheMiss::Absent)
                {
                    tracing::warn!(component = sha256, %miss, "compiled-artifact cache entry not used");
                }
                let component = Component::new(&self.engine, bytes()?)?;
                if let Some(disk) = artifacts
                    && let Err(err) = disk.store(&self.engine, sha256, &component)
                {
                    tracing::warn!(dir = %disk.dir().display(), error = %err, "cannot write the compiled-artifact cache");
                }
                (component, CompiledFrom::Compilation)
            }
        };
        let mut cache = self.cache();
        if cache.len() >= MAX_COMPILED {
            cache.clear();
        }
        cache.insert(sha256.to_string(), component.clone());
        Ok(Compiled { component, origin })
    }

    /// Drops the compiled components held in memory, so that the next load
    /// goes to the disk cache as a new process would.
    pub fn forget_compiled(&self) {
        self.cache().clear();
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Component>> {
        self.compiled.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The wasmtime engine every provider is compiled and run by.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(crate) fn linker(&self) -> &Linker<HostState> {
        &self.linker
    }

    /// Whether instances come from the pooling allocator.
    pub fn is_pooling(&self) -> bool {
        self.pooling
    }

    /// The epoch deadline, in ticks, that traps no earlier than `timeout`.
    pub fn ticks_for(timeout: Duration) -> u64 {
        let tick = EPOCH_TICK.as_nanos();
        (timeout.as_nanos().div_ceil(tick) as u64).saturating_add(1)
    }
}

fn config(options: &EngineOptions, pooling: bool) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(true)
        .max_wasm_stack(options.max_wasm_stack);
    if pooling {
        let mut pool = PoolingAllocationConfig::new();
        // Each memory slot reserves address space, not RAM.
        let instances = options.pool_instances;
        pool.total_component_instances(instances)
            .total_core_instances(instances.saturating_mul(4))
            .total_memories(instances)
            .total_tables(instances)
            .table_elements(MAX_TABLE_ELEMENTS);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// One thread for the whole process bumps the epoch every tick; it stops when
/// the engine is gone.
fn start_epoch_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("warden-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
}

/// What each store holds: the empty WASI context and the limiter.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: SandboxLimiter,
}

impl HostState {
    pub(crate) fn new(memory_bytes: usize) -> Self {
        HostState {
            // No preopens, env or args; stdin closed; stdout and stderr discarded.
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            limiter: SandboxLimiter {
                memory_bytes,
                exceeded: None,
            },
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Which limit a guest ran into, so that the failure is classified precisely
/// (a refused growth surfaces as a plain error, not as a `Trap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LimitHit {
    Memory { desired: usize },
    Table { desired: usize },
}

pub(crate) struct SandboxLimiter {
    memory_bytes: usize,
    pub(crate) exceeded: Option<LimitHit>,
}

/// Table elements a provider may have: generous for interpreters' function
/// tables, small enough to bound the host's memory.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl wasmtime::ResourceLimiter for SandboxLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.exceeded = Some(LimitHit::Memory { desired });
            wasmtime::bail!(
                "memory limit: the guest asked for {desired} bytes, the limit is {}",
                self.memory_bytes
            );
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > MAX_TABLE_ELEMENTS {
            self.exceeded = Some(LimitHit::Table { desired });
            wasmtime::bail!("table limit: the guest asked for {desired} elements");
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_never_fires_before_its_timeout() {
        assert_eq!(SandboxEngine::ticks_for(Duration::from_millis(100)), 101);
        assert_eq!(SandboxEngine::ticks_for(Duration::from_micros(1500)), 3);
        assert_eq!(SandboxEngine::ticks_for(Duration::ZERO), 1);
    }

    #[test]
    fn the_shared_engine_is_created_once() {
        let a = SandboxEngine::shared().unwrap() as *const _;
        let b = SandboxEngine::shared().unwrap() as *const _;
        assert_eq!(a, b);
    }

    #[test]
    fn other_options_are_refused_once_the_engine_has_started() {
        SandboxEngine::shared().unwrap();
        let current = OPTIONS.lock().unwrap().clone().unwrap();
        assert!(SandboxEngine::configure(current.clone()).is_ok());
        let other = EngineOptions {
            max_wasm_stack: current.max_wasm_stack / 2,
            ..current
        };
        assert!(matches!(
            SandboxEngine::configure(other),
            Err(EngineError::AlreadyStarted(_))
        ));
    }

    #[test]
    fn an_engine_wasmtime_refuses_is_an_error_not_a_panic() {
        let options = EngineOptions {
            pooling: false,
            max_wasm_stack: 0,
            ..EngineOptions::default()
        };
        assert!(matches!(
            SandboxEngine::new(&options),
            Err(EngineError::Start(_))
        ));
    }
}
