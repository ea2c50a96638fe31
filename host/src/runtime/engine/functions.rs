//! Cranelift's incremental cache on disk: compiled functions kept by the hash of their IR, so
//! a component whose functions were compiled before, in any other component, costs only the
//! functions it does not share. Every JavaScript plugin carries the same JavaScript engine
//! (StarlingMonkey, ~12 MB of code) and every Python plugin the same CPython: the first of each
//! compiles in 11 to 20 s on 2 cores, and each further one only its own code (measured in
//! `docs/performance.md`, "Compiling").
//!
//! Entries live beside wasmtime's module cache (not inside it: its cleanup deletes what it does
//! not recognize), one file per function under a two-hex-digit fan-out, written to a temporary
//! name and renamed so a reader never sees half an entry. A missing or unreadable entry is a
//! miss: cranelift compiles the function again. A corrupt one is caught by cranelift, which
//! checks each entry's version marker and its key before using it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The store wasmtime hands cranelift's incremental cache.
#[derive(Debug)]
pub(crate) struct FunctionCache {
    dir: PathBuf,
}

impl FunctionCache {
    /// The store under `cache_dir` (created on the first insert).
    pub(crate) fn new(cache_dir: &Path) -> FunctionCache {
        // Absolute, as wasmtime's own cache path: the compile child may run elsewhere.
        let cache_dir = std::path::absolute(cache_dir).unwrap_or_else(|_| cache_dir.to_owned());
        FunctionCache { dir: cache_dir.join("functions") }
    }

    fn path(&self, key: &[u8]) -> PathBuf {
        let name = crate::hex::hex(&Sha256::digest(key));
        self.dir.join(&name[..2]).join(&name[2..])
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        std::fs::read(self.path(key)).ok().map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let path = self.path(key);
        let Some(parent) = path.parent() else { return false };
        if std::fs::create_dir_all(parent).is_err() {
            return false;
        }
        // A name of this process's own: parallel compilation and other processes write too.
        let temporary = path.with_extension(format!("{}.{:?}", std::process::id(), std::thread::current().id()));
        std::fs::write(&temporary, &value).is_ok() && std::fs::rename(&temporary, &path).is_ok()
    }
}
