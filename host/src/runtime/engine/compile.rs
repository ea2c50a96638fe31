//! Compiling plugin files, bounded (issue 13, item 5). A component can be crafted to keep
//! Cranelift busy for minutes, and a timer around a compile thread cannot stop it: the thread
//! keeps both cores busy after the timer fires. So a file mcpbox has not compiled before is
//! compiled in a child process (`mcpbox __compile`, the same binary and engine settings) that
//! is killed when its time is up; the child writes its result to wasmtime's compile cache, and
//! mcpbox then loads it from there. A file that once compiled within the bound is remembered
//! (by the SHA-256 of its bytes) and compiled in process from then on, where the cache makes
//! it take milliseconds. Files over a size bound are refused before anything reads them whole.
//!
//! Without a usable cache directory (`--no-cache`), the cache lives in a private temporary
//! directory for the life of the process, so that the child's work still reaches mcpbox.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::runtime::engine::{EngineOptions, artifact, build_engine_with_cache};

/// The largest plugin file mcpbox reads, by default: interpreter plugins are 12 to 40 MB.
pub const DEFAULT_MAX_PLUGIN_BYTES: u64 = 256 << 20;
/// The longest a plugin may take to compile, by default. A 12 MB JavaScript plugin takes about
/// 10 s on 2 cores in a release build, 66 s in a debug build beside one busy core, and over
/// 120 s in a debug build while the test suite compiles three more such plugins at once; the
/// default leaves room for a busy machine, and a compile bomb still stops within minutes.
pub const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(300);

/// How big a plugin file may be and how long its compilation may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileBounds {
    /// Files larger than this are refused.
    pub max_file_bytes: u64,
    /// A compilation running longer is stopped and the plugin refused.
    pub timeout: Duration,
}

impl Default for CompileBounds {
    fn default() -> Self {
        CompileBounds { max_file_bytes: DEFAULT_MAX_PLUGIN_BYTES, timeout: DEFAULT_COMPILE_TIMEOUT }
    }
}

/// The engine, and how plugin files are compiled for it. Cheap to clone.
#[derive(Clone)]
pub struct Compiler {
    engine: Engine,
    /// The options the engine was built with (a child builds the same engine from them), with
    /// the cache directory actually in use; `None` if no cache can be used, and then files are
    /// compiled in process (bounded in size, not in time).
    child_options: Option<EngineOptions>,
    bounds: CompileBounds,
    /// Keeps the private cache directory (when there is no other) until the last clone goes.
    _private_cache: Option<Arc<tempfile::TempDir>>,
}

impl Compiler {
    /// Builds the engine from `options` (and its epoch ticker) for compiling under `bounds`.
    pub fn new(options: &EngineOptions, bounds: CompileBounds) -> Result<Compiler> {
        let mut options = options.clone();
        let private_cache = match &options.cache_dir {
            Some(_) => None,
            None => {
                let dir = tempfile::Builder::new().prefix("mcpbox-compile-").tempdir();
                let dir = dir.context("cannot create a private compile cache directory")?;
                options.cache_dir = Some(dir.path().to_owned());
                Some(Arc::new(dir))
            }
        };
        let (engine, cached) = build_engine_with_cache(&options)?;
        let child_options = cached.then_some(options);
        if child_options.is_none() {
            tracing::warn!(
                "without a compile cache, plugins are compiled in process: their compile time is not bounded"
            );
        }
        Ok(Compiler { engine, child_options, bounds, _private_cache: private_cache })
    }

    /// A compiler that compiles in process, bounded in file size only: for programs that
    /// embed the runtime and are not the `mcpbox` binary (which the child process must be),
    /// such as the benchmarks.
    pub fn in_process(options: &EngineOptions, bounds: CompileBounds) -> Result<Compiler> {
        let (engine, _) = build_engine_with_cache(options)?;
        Ok(Compiler { engine, child_options: None, bounds, _private_cache: None })
    }

    /// The engine plugins are compiled for and run in.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles the plugin file `path` within the bounds (blocking: call from a blocking
    /// thread). The file is read once: the child compiles the very bytes returned here, so a
    /// file replaced meanwhile cannot slip a different component past the bound.
    pub fn compile(&self, path: &Path) -> Result<Compiled> {
        let bytes = read_bounded(path, self.bounds.max_file_bytes)?;
        // Compiled before (within the bounds): mapped from its artifact (artifact.rs).
        let artifacts = self.artifacts_dir();
        if let Some(component) = artifacts.and_then(|dir| artifact::load(&self.engine, dir, &bytes)) {
            return Ok(Compiled { component, bytes });
        }
        if bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[4..8] == [1, 0, 0, 0] {
            bail!(
                "{} is a core WebAssembly module, not a component: build it for wasm32-wasip2 (or wrap it with `wasm-tools component new`)",
                path.display()
            );
        }
        if let Some(options) = &self.child_options {
            let marker = vetted_marker(options, &bytes);
            if !marker.as_ref().is_some_and(|m| m.exists()) {
                match compile_in_child(options, path, &bytes, self.bounds.timeout) {
                    // Only a shortcut for next time: if it cannot be written, the file is
                    // compiled in a child again.
                    Ok(()) => {
                        if let Some(marker) = &marker {
                            let _ = marker.parent().map(std::fs::create_dir_all);
                            let _ = std::fs::write(marker, b"");
                        }
                    }
                    // mcpbox's own file is gone (replaced by an upgrade while it runs, say):
                    // compiling in process, unbounded in time, beats not loading at all.
                    Err(ChildError::CannotStart(why)) => {
                        tracing::warn!("{why}; compiling {} in process, without the time limit", path.display());
                    }
                    Err(ChildError::Failed(error)) => return Err(error),
                }
            }
        }
        let component = component_of(&self.engine, path, &bytes)?;
        if let Some(dir) = artifacts {
            artifact::store(&self.engine, dir, &bytes, &component);
        }
        Ok(Compiled { component, bytes })
    }

    /// Where compiled plugins are kept to be mapped: the user's cache directory, not a private
    /// one that dies with the process (`--no-cache`), and not without the bounded compile.
    fn artifacts_dir(&self) -> Option<&Path> {
        if self._private_cache.is_some() {
            return None;
        }
        self.child_options.as_ref()?.cache_dir.as_deref()
    }
}

/// A compiled plugin and the bytes of its file, as read once.
pub struct Compiled {
    /// The component.
    pub component: Component,
    /// The file's bytes (its metadata and fingerprint are read from these).
    pub bytes: Vec<u8>,
}

fn component_of(engine: &Engine, path: &Path, bytes: &[u8]) -> Result<Component> {
    Component::new(engine, bytes).map_err(|e| anyhow!("{} is not a valid WebAssembly component: {e:#}", path.display()))
}

/// The file's bytes, refused if it is larger than `max` (checked before and while reading, so
/// a file that grows meanwhile cannot slip past).
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let too_big = |size: u64| {
        anyhow!(
            "{} is {:.1} MiB, over the {} MiB limit for plugin files (--max-plugin-mib, [limits] max_plugin_mib)",
            path.display(),
            size as f64 / f64::from(1 << 20),
            max >> 20
        )
    };
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let size = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
    if size > max && !crate::switched_off!("compile.size-limit") {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or_default());
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > max && !crate::switched_off!("compile.size-limit") {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Where the note that `bytes` compiled within the bounds once lives, in the cache directory.
fn vetted_marker(options: &EngineOptions, bytes: &[u8]) -> Option<PathBuf> {
    let name = crate::hex::hex(&Sha256::digest(bytes));
    options.cache_dir.as_ref().map(|dir| dir.join("mcpbox-compiled-within-bounds").join(name))
}

/// Why a compilation in a child process did not succeed.
enum ChildError {
    /// The child could not be started at all.
    CannotStart(String),
    /// It ran and failed, or ran out of time.
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for ChildError {
    fn from(error: anyhow::Error) -> Self {
        ChildError::Failed(error)
    }
}

/// Compiles `bytes` (of `path`) in a child process into the compile cache, killing it after
/// `timeout`.
fn compile_in_child(options: &EngineOptions, path: &Path, bytes: &[u8], timeout: Duration) -> Result<(), ChildError> {
    let exe = std::env::current_exe()
        .map_err(|e| ChildError::CannotStart(format!("cannot find mcpbox's own executable to compile in: {e}")))?;
    let mut command = Command::new(&exe);
    command.arg("__compile").arg("--max-memory-bytes").arg(options.max_memory_bytes.to_string());
    command.arg("--bytes").arg(bytes.len().to_string());
    if let Some(dir) = &options.cache_dir {
        command.arg("--cache-dir").arg(dir);
    }
    if options.pooling {
        command.arg("--pooling");
    }
    if options.copy_on_write {
        command.arg("--copy-on-write");
    }
    // Errors only: the pipe is read once the child is done, so a chatty child (MCPBOX_LOG=debug
    // logs every Cranelift pass) must not fill it and stall.
    // Its stdin is a pipe: first the bytes to compile, then held open while mcpbox waits. If
    // mcpbox dies, the pipe closes and the child stops too (see `compile_child`), so no
    // compilation outlives the server.
    command.arg(path).env("MCPBOX_LOG", "error").stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| ChildError::CannotStart(format!("cannot start {} to compile in: {e}", exe.display())))?;
    let stdin = child.stdin.take();
    let started = Instant::now();
    let waited = std::thread::scope(|scope| {
        // Written beside the wait, so that a child that stops reading cannot stall the timer;
        // the writer keeps the pipe open until the wait is over.
        let (done, over) = std::sync::mpsc::channel::<()>();
        scope.spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(bytes);
                let _ = over.recv();
            }
        });
        let waited = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if started.elapsed() >= timeout && !crate::switched_off!("compile.time-limit") => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(ChildError::Failed(anyhow!(
                        "compiling {} took longer than {} s, the compile time limit, and was stopped (--compile-timeout, [limits] compile_timeout_ms)",
                        path.display(),
                        timeout.as_secs_f64()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => break Err(ChildError::Failed(anyhow!("cannot wait for the compiling process: {e}"))),
            }
        };
        drop(done);
        waited
    });
    let status = waited?;
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    // The child's error is its last `mcpbox: ...` message, which may span lines.
    let reason = stderr.rfind("mcpbox: ").map_or("", |at| &stderr[at + "mcpbox: ".len()..]).trim();
    if reason.is_empty() {
        return Err(ChildError::Failed(anyhow!("compiling {} failed ({status})", path.display())));
    }
    Err(ChildError::Failed(anyhow!(reason.to_owned())))
}

/// `mcpbox __compile`: the child side. Reads the `len` bytes of `path` the parent sends on
/// stdin, builds the engine from `options` and compiles them, which stores the result in the
/// compile cache.
pub fn compile_child(options: &EngineOptions, path: &Path, len: usize) -> Result<()> {
    let mut bytes = vec![0u8; len];
    std::io::stdin().read_exact(&mut bytes).context("the plugin's bytes did not arrive whole")?;
    // The parent holds our stdin open while it waits; end of input means it is gone.
    std::thread::spawn(|| {
        let _ = std::io::stdin().read(&mut [0u8; 1]);
        while crate::switched_off!("compile.stops-with-mcpbox") {
            std::thread::park();
        }
        std::process::exit(3);
    });
    let (engine, _) = build_engine_with_cache(options)?;
    component_of(&engine, path, &bytes).map(drop)
}
