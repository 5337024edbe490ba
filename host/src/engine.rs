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
    pub component: Component,
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
    /// The process-wide engine, created on first use. One engine means one
    /// ticker thread, one pool reservation and one code cache for all providers.
    pub fn shared() -> &'static SandboxEngine {
        static SHARED: OnceLock<SandboxEngine> = OnceLock::new();
        SHARED.get_or_init(|| SandboxEngine::new().expect("create the wasmtime engine"))
    }

    fn new() -> wasmtime::Result<SandboxEngine> {
        let (engine, pooling) = match Engine::new(&config(true)) {
            Ok(engine) => (engine, true),
            Err(err) => {
                tracing::warn!(
                    error = %err,
                    "cannot reserve the pooling allocator; instances are allocated on demand"
                );
                (Engine::new(&config(false))?, false)
            }
        };
        start_epoch_ticker(&engine);
        let mut linker = Linker::new(&engine);
        // WASI with an empty context: a std guest needs wasi:io and wasi:cli to
        // start, and finds no files, sockets, environment or arguments there.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
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

fn config(pooling: bool) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(true)
        .max_wasm_stack(MAX_WASM_STACK);
    if pooling {
        let mut pool = PoolingAllocationConfig::new();
        // Room for every provider's pool twice over (old and new set during a
        // swap); each memory slot reserves address space, not RAM.
        pool.total_component_instances(512)
            .total_core_instances(2048)
            .total_memories(512)
            .total_tables(512)
            .table_elements(MAX_TABLE_ELEMENTS);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// One thread for the whole process bumps the epoch every tick; it stops when
/// the engine is gone.
fn start_epoch_ticker(engine: &Engine) {
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
        .expect("spawn the epoch ticker thread");
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
        let a = SandboxEngine::shared() as *const _;
        let b = SandboxEngine::shared() as *const _;
        assert_eq!(a, b);
    }
}
