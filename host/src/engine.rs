//! The one place the wasmtime engine is configured. Every knob is here with the reason for it;
//! the rest of the host takes an [`Engine`] and never touches [`wasmtime::Config`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::{Cache, CacheConfig, Config, Engine};

/// How often the epoch ticker advances the engine's epoch. Each tick gives every running
/// guest a chance to notice its deadline or a cancellation, and to yield its thread, so this
/// is both the interrupt latency and the cost of a check (a few ns per tick per guest).
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Engine options that come from the command line or the config file.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Directory of wasmtime's compile cache; `None` turns the cache off.
    pub cache_dir: Option<PathBuf>,
    /// Reserve instance slots up front (faster instantiation, large virtual reservation).
    pub pooling: bool,
}

/// Builds the engine and starts its epoch ticker.
pub fn build_engine(options: &EngineOptions) -> Result<Engine> {
    let mut config = Config::new();
    // Calls run on tokio (async is implied by async linking and `call_async` in wasmtime 48):
    // guests suspend on fibers while host I/O (WASI, sleeps) is pending.
    config.wasm_component_model(true);
    // Deadlines and cancellation interrupt guests through epochs, not fuel: a check per loop
    // back-edge costs far less than fuel metering, and one ticker serves every store.
    config.epoch_interruption(true);
    // Deep recursion in a guest traps at 1 MiB of wasm stack instead of exhausting the fiber.
    config.max_wasm_stack(1 << 20);
    config.async_stack_size(2 << 20);
    // Compile with every core, but plugins at start-up are compiled in parallel already.
    config.parallel_compilation(true);
    if options.pooling {
        // Off by default until issue 5 measures it: it reserves address space per slot.
        let mut pool = wasmtime::PoolingAllocationConfig::default();
        pool.total_component_instances(256);
        pool.total_core_instances(1024);
        pool.total_memories(512);
        pool.total_tables(512);
        pool.max_memory_size(1 << 30);
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
    }
    if let Some(dir) = &options.cache_dir {
        // Compiling a component costs 0.2 s (a small Rust guest) to 20 s (an interpreter
        // guest); a cache hit costs milliseconds. Keyed by wasmtime version, flags and bytes.
        // wasmtime wants an absolute cache path; a relative one means "from here".
        let dir = std::path::absolute(dir)
            .with_context(|| format!("cannot resolve the compile cache directory {}", dir.display()))?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the compile cache directory {}", dir.display()))?;
        let mut cache_config = CacheConfig::new();
        cache_config.with_directory(&dir);
        let cache = Cache::new(cache_config)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("cannot use the compile cache directory {}", dir.display()))?;
        config.cache(Some(cache));
    }
    let engine = Engine::new(&config).map_err(anyhow::Error::from).context("cannot create the wasmtime engine")?;
    start_epoch_ticker(&engine);
    Ok(engine)
}

/// One ticker thread per engine. It holds only a weak reference, so it ends by itself when
/// the last engine handle is dropped (as in spin's engine set-up).
fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    let _ = std::thread::Builder::new().name("mcpbox-epoch".into()).spawn(move || {
        loop {
            std::thread::sleep(EPOCH_TICK);
            match weak.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => break,
            }
        }
    });
}

/// The default cache directory: `$XDG_CACHE_HOME/mcpbox` or `~/.cache/mcpbox`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("mcpbox"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("mcpbox"))
}
