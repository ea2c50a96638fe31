//! The wasmtime-facing room: the one engine with a reason per knob (`knobs`), plugin files
//! compiled within a size and a time bound in a child process (`compile`), whether freed
//! memory is reset in place (`resident`), compiled plugins mapped from uncompressed files of
//! the cache (`artifact`), functions shared between components compiled once (`functions`,
//! Cranelift's incremental cache on disk), the Rust types generated from our WIT
//! (`bindings`), and the pool's freed memory returned once no call runs (`idle`). Everything else takes an [`Engine`](wasmtime::Engine) from here and never touches
//! [`wasmtime::Config`]; this room knows no plugin, call or grant (the bottom of the runtime).

mod artifact;
pub(crate) mod bindings;
pub mod compile;
mod functions;
pub(crate) mod idle;
mod knobs;
pub mod resident;

pub(crate) use knobs::build_engine_with_cache;
pub use knobs::{
    COPY_ON_WRITE_FROM_BYTES, CopyOnWrite, EPOCH_TICK, EngineOptions, POOL_INSTANCES, POOL_STACKS, build_engine,
    copy_on_write, default_cache_dir,
};
