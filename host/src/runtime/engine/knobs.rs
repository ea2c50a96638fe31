//! The one place the wasmtime engine is configured. Every knob is here with the reason for it;
//! the rest of the host takes an [`Engine`] and never touches [`wasmtime::Config`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;
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
    /// The largest memory limit of any plugin: the pool's memory slots must hold it.
    pub max_memory_bytes: usize,
    /// Map each instance's initial memory from the module's image copy-on-write instead of
    /// copying it in (see [`build_engine`]; [`copy_on_write`] decides).
    pub copy_on_write: bool,
}

/// When instances map their memory image copy-on-write (see [`build_engine`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyOnWrite {
    /// When some plugin file is at least [`COPY_ON_WRITE_FROM_BYTES`] large.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl std::str::FromStr for CopyOnWrite {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(CopyOnWrite::Auto),
            "on" => Ok(CopyOnWrite::On),
            "off" => Ok(CopyOnWrite::Off),
            _ => Err(format!("`{text}` is not one of auto, on, off")),
        }
    }
}

/// Plugin files from this size on are interpreter guests with megabytes of initialized heap
/// (componentize-py makes 18 MB, componentize-js 12 MB), for which copy-on-write makes every
/// call several times faster; compiled guests are well under 1 MB, for which copying keeps
/// throughput under concurrency higher (measurements in [`build_engine`]).
pub const COPY_ON_WRITE_FROM_BYTES: u64 = 4 << 20;

/// Decides `mode` for the plugin `files` (at start-up: a plugin added later runs under the
/// same setting); returns the decision and why, for the log. The caller finds the files
/// (`catalog::discover`): the engine knows no plugin.
pub fn copy_on_write(mode: CopyOnWrite, files: &[PathBuf]) -> (bool, String) {
    match mode {
        CopyOnWrite::On => (true, "copy-on-write was asked for".to_owned()),
        CopyOnWrite::Off => (false, "copying was asked for".to_owned()),
        CopyOnWrite::Auto => {
            let largest = files
                .iter()
                .filter_map(|file| std::fs::metadata(file).ok().map(|m| (m.len(), file)))
                .max_by_key(|(size, _)| *size);
            match largest {
                Some((size, file)) => (
                    size >= COPY_ON_WRITE_FROM_BYTES,
                    format!("the largest plugin, {}, is {:.1} MB", file.display(), size as f64 / 1e6),
                ),
                None => (false, "no plugin yet".to_owned()),
            }
        }
    }
}

/// Builds the engine and starts its epoch ticker.
pub fn build_engine(options: &EngineOptions) -> Result<Engine> {
    build_engine_with_cache(options).map(|(engine, _)| engine)
}

/// [`build_engine`], and whether the compile cache is in use (it is not when its directory
/// cannot be used).
pub(crate) fn build_engine_with_cache(options: &EngineOptions) -> Result<(Engine, bool)> {
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
    // How a fresh instance gets its initial memory. Copying the data segments suits small
    // guests: a guest writes to its data pages in every call, and each copy-on-write fault
    // flushes the TLB of every core running one of our threads (an IPI; in a VM, a VM exit).
    // Measured with the pooling settings below: 9,744 -> 11,834 trivial calls/s over HTTP at
    // 64 in flight on 2 cores without copy-on-write. Interpreter guests (Python, JavaScript)
    // carry megabytes of initialized heap, which copying pays for on every call: a trivial
    // Python call took 7.3 ms copied and 1.65 ms copy-on-write, JavaScript 2.5 and 1.2 ms.
    // The setting is part of the compile cache key.
    config.memory_init_cow(options.copy_on_write);
    // Compile with every core, but plugins at start-up are compiled in parallel already.
    config.parallel_compilation(true);
    if options.pooling {
        if crate::switched_off!("sandbox.resident-reset-complete") {
            wasmtime::MCPBOX_FAILPOINT_FIRST_SCAN_ONLY.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let resident = crate::runtime::engine::resident::decide();
        tracing::debug!(bytes = resident.bytes, "resident resets of freed memory slots: {}", resident.why);
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pooling_config(
            options.max_memory_bytes,
            resident.bytes,
        )));
        crate::telemetry::metrics::metrics().pool_capacity.set(i64::from(POOL_INSTANCES));
    }
    let mut cached = false;
    if let Some(dir) = &options.cache_dir {
        // Compiling a component costs 0.2 s (a small Rust guest) to 20 s (an interpreter
        // guest); a cache hit costs milliseconds. Keyed by wasmtime version, flags and bytes.
        // A cache mcpbox cannot use is reported once, and mcpbox runs without it.
        match open_cache(dir) {
            Ok(cache) => {
                config.cache(Some(cache));
                // Functions shared with a plugin compiled before (the same interpreter inside)
                // are not compiled again (functions.rs).
                config.enable_incremental_compilation(std::sync::Arc::new(
                    crate::runtime::engine::functions::FunctionCache::new(dir),
                ))?;
                cached = true;
            }
            Err(why) => tracing::warn!("{why}; compiling every plugin afresh (set --cache-dir or MCPBOX_CACHE_DIR)"),
        }
    }
    let engine = Engine::new(&config).map_err(anyhow::Error::from).context("cannot create the wasmtime engine")?;
    start_epoch_ticker(&engine)?;
    if options.pooling {
        crate::runtime::engine::idle::watch(&engine);
        let pooled = engine.weak();
        crate::telemetry::metrics::metrics().sample_with(move |metrics| {
            let Some(pool) = pooled.upgrade().and_then(|engine| engine.pooling_allocator_metrics()) else { return };
            let resident = pool.unused_memory_bytes_resident() + pool.unused_table_bytes_resident();
            metrics.pool_resident_bytes.set(i64::try_from(resident).unwrap_or(i64::MAX));
            metrics.pool_warm_memories.set(i64::from(pool.unused_warm_memories()));
        });
    }
    Ok((engine, cached))
}

/// wasmtime's compile cache in `dir`, which must be a directory mcpbox can write (created if
/// missing); otherwise why not.
fn open_cache(dir: &std::path::Path) -> Result<Cache, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot use the compile cache directory {}: {e}", dir.display());
    // wasmtime wants an absolute cache path; a relative one means "from here". It gets a
    // directory of its own: its cleanup deletes whatever it does not recognize in its tree
    // (it deleted the registry store, `oci/`, when that lay beside its `modules/`).
    let dir = std::path::absolute(dir).map_err(|e| cannot(&e))?.join("wasmtime");
    std::fs::create_dir_all(&dir).map_err(|e| cannot(&e))?;
    // wasmtime's cache ignores failed writes; find out now, not by compiling every time.
    let probe = dir.join(format!(".mcpbox-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| cannot(&e))?;
    let _ = std::fs::remove_file(&probe);
    let mut cache_config = CacheConfig::new();
    cache_config.with_directory(&dir);
    Cache::new(cache_config).map_err(|e| cannot(&e))
}

/// Instances in the pool: the most calls that can run at once, counting instances made ahead
/// of calls (more are refused, reported as the host being busy).
pub const POOL_INSTANCES: u32 = 2000;

/// Fiber stacks in the pool: the most guests that run or wait on the host at once (a made-ahead
/// instance holds none; a thousand sleeping calls must fit, `hostile.rs`). Each stack's guard
/// page is an `mprotect` at start-up, which splits the pool's mapping: 2,000 of them were a
/// third of a cached start-up (3.5 ms).
pub const POOL_STACKS: u32 = 1024;

/// The pooling allocator reserves every slot up front and reuses it, so a call skips mmap,
/// munmap and most page faults of a fresh instance.
fn pooling_config(max_memory_bytes: usize, resident_reset_bytes: usize) -> wasmtime::PoolingAllocationConfig {
    let mut pool = wasmtime::PoolingAllocationConfig::default();
    pool.total_component_instances(POOL_INSTANCES);
    // A Rust component holds its main module and a few small shim modules.
    pool.total_core_instances(POOL_INSTANCES * 4);
    pool.total_memories(POOL_INSTANCES);
    // Every running call holds a fiber stack (wasmtime's default pool has 1,000).
    pool.total_stacks(POOL_STACKS);
    pool.total_tables(POOL_INSTANCES * 4);
    pool.max_memories_per_component(2);
    // Each memory slot reserves address space for the largest memory limit (the resource
    // limiter enforces each plugin's own below it) plus guard pages: 2,000 slots of a few GiB
    // fit easily in the 128 TiB of an x86-64 process, and nothing is committed until touched.
    pool.max_memory_size(max_memory_bytes.max(64 << 20));
    // A freed slot's written pages are reset in place (copied back from the image, or zeroed)
    // up to `resident_reset_bytes`, found by the kernel's page scan, instead of being given back
    // and faulted in again by the next instance (resident.rs says when, and why not always).
    // Without the scan this would `memset` that much of every slot: 1 MiB cost 10,500 calls/s
    // instead of 12,500 (HTTP, 64 in flight), so resident.rs turns it off there.
    pool.linear_memory_keep_resident(resident_reset_bytes);
    if resident_reset_bytes > 0 {
        // Off by default in wasmtime 48; resident.rs checked that the kernel has it.
        pool.pagemap_scan(wasmtime::Enabled::Yes);
        // Each unused warm slot holds up to that much: bound them (wasmtime's default is 100).
        pool.max_unused_warm_slots(crate::runtime::engine::resident::WARM_SLOTS);
    }
    // The same TLB shootdowns come from returning pages with madvise when a slot is freed:
    // batch the returns (one flush per 64 freed slots), and keep the small tables and the top
    // of the fiber stacks resident (zeroed in place). Measured on 2 cores, trivial calls over
    // HTTP at 64 in flight: 6,300/s with none of this, 8,900/s batching alone, 12,500/s with
    // copied memory images, batching and resident tables and stacks.
    pool.decommit_batch_size(64);
    pool.table_keep_resident(64 << 10);
    pool.async_stack_keep_resident(64 << 10);
    pool
}

/// One ticker thread per engine. It holds only a weak reference, so it ends by itself when
/// the last engine handle is dropped (as in spin's engine set-up). Without it no deadline
/// would ever fire, so failing to start it is an error, never a silent loss.
fn start_epoch_ticker(engine: &Engine) -> Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("mcpbox-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .context("cannot start the epoch thread that enforces every call's deadline")?;
    Ok(())
}

/// The default cache directory: `$XDG_CACHE_HOME/mcpbox` or `~/.cache/mcpbox`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("mcpbox"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("mcpbox"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_on_write_is_on_for_large_plugins_when_auto() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.wasm");
        std::fs::write(&small, vec![0u8; 300_000]).unwrap();
        let (on, why) = copy_on_write(CopyOnWrite::Auto, std::slice::from_ref(&small));
        assert!(!on, "{why}");
        assert!(why.ends_with("small.wasm, is 0.3 MB"), "{why}");
        let python = dir.path().join("python.wasm");
        std::fs::write(&python, vec![0u8; COPY_ON_WRITE_FROM_BYTES as usize]).unwrap();
        let paths = [small.clone(), python];
        let (on, why) = copy_on_write(CopyOnWrite::Auto, &paths);
        assert!(on && why.ends_with("python.wasm, is 4.2 MB"), "{why}");
        assert!(!copy_on_write(CopyOnWrite::Off, &paths).0);
        assert!(copy_on_write(CopyOnWrite::On, &[small]).0);
    }
}
