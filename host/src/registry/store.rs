//! The content-addressed store of pulled blobs, under the cache directory:
//!
//! - `blobs/sha256/HEX`: manifests and components, each named by the SHA-256 of its bytes and
//!   checked against it on every read, so a changed or truncated file is never served;
//! - `plugins/MANIFEST-HEX/NAME.wasm`: a hard link (or copy) of a verified component under its
//!   plugin name, which the loader reads;
//! - `signatures/MANIFEST-HEX.json`: the signatures found for a manifest, verified against the
//!   trust policy on every start (they are signed, so they need no digest).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use sha2::{Digest, Sha256};

use super::cosign::Signature;

/// The store's root directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// `sha256:HEX` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::hex::hex(&Sha256::digest(bytes)))
}

/// The hex part of a `sha256:` digest, which callers have checked.
fn hex(digest: &str) -> &str {
    digest.strip_prefix("sha256:").unwrap_or(digest)
}

impl Store {
    /// The store under `cache_dir` (created on first write).
    pub fn new(cache_dir: &Path) -> Store {
        Store { root: cache_dir.join("oci") }
    }

    fn blob_path(&self, digest: &str) -> PathBuf {
        self.root.join("blobs").join("sha256").join(hex(digest))
    }

    /// Whether the store has a blob (not yet verified: `read` verifies).
    pub fn has(&self, digest: &str) -> bool {
        self.blob_path(digest).is_file()
    }

    /// The blob `digest`, verified. A blob whose bytes do not match is removed and reported.
    pub fn read(&self, digest: &str) -> Result<Vec<u8>> {
        let path = self.blob_path(digest);
        let bytes = std::fs::read(&path).with_context(|| format!("blob {digest} is not in the store"))?;
        let actual = sha256_digest(&bytes);
        if actual != digest && !crate::switched_off!("registry.store-verified") {
            let _ = std::fs::remove_file(&path);
            return Err(anyhow!(
                "blob {digest} in the store at {} has digest {actual}: it was changed on disk, so it was removed (pull again)",
                path.display()
            ));
        }
        Ok(bytes)
    }

    /// Stores `bytes` as `digest`, refusing bytes that are not `digest`.
    pub fn write(&self, digest: &str, bytes: &[u8]) -> Result<()> {
        let sent = sha256_digest(bytes);
        if sent != digest {
            return Err(anyhow!("the registry sent {sent} for blob {digest}: refused"));
        }
        write_atomically(&self.blob_path(digest), bytes)
    }

    /// The component `component` of manifest `manifest` as the file `NAME.wasm` the loader
    /// reads: verified now, then linked from the blob; beside it `NAME.policy.toml`, the
    /// requested policy the manifest was published with.
    pub fn plugin_file(&self, manifest: &str, component: &str, name: &str, policy: Option<&str>) -> Result<PathBuf> {
        self.read(component)?;
        let dir = self.root.join("plugins").join(hex(manifest));
        let path = dir.join(format!("{name}.wasm"));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        if let Some(policy) = policy {
            let sidecar = dir.join(format!("{name}.policy.toml"));
            match as_toml(policy) {
                Some(text) => write_atomically(&sidecar, text.as_bytes())?,
                None => {
                    tracing::warn!("{name}: the requested policy it was published with is not a JSON object: ignored")
                }
            }
        }
        // Made beside it, then renamed over it: another process (a serving mcpbox following the
        // lock, an `mcpbox update`) may be reading this very file, and must find the old link or
        // the new one, never none.
        let staged = dir.join(format!(".{name}.wasm.{}", staging_suffix()));
        if std::fs::hard_link(self.blob_path(component), &staged).is_err() {
            std::fs::copy(self.blob_path(component), &staged)
                .with_context(|| format!("cannot write {}", staged.display()))?;
        }
        let renamed = std::fs::rename(&staged, &path);
        // Renaming a link over another link of the same file does nothing (POSIX), so the
        // staged name may still be there, as it is when the rename failed.
        let _ = std::fs::remove_file(&staged);
        renamed.map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// The signatures stored for `manifest` (none if never pulled).
    pub fn signatures(&self, manifest: &str) -> Result<Vec<Signature>> {
        let path = self.root.join("signatures").join(format!("{}.json", hex(manifest)));
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).with_context(|| format!("{} is not a signature list", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(anyhow!("cannot read {}: {e}", path.display())),
        }
    }

    /// Records the signatures found for `manifest`.
    pub fn write_signatures(&self, manifest: &str, signatures: &[Signature]) -> Result<()> {
        let path = self.root.join("signatures").join(format!("{}.json", hex(manifest)));
        write_atomically(&path, &serde_json::to_vec_pretty(signatures)?)
    }
}

/// A name no other writer of the store uses now: this process's id, a count of its own, and
/// the time (processes in other PID namespaces may share the cache directory).
fn staging_suffix() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}.{count}.{nanos}", std::process::id())
}

/// A requested policy published as JSON, as the TOML a `.policy.toml` file holds.
fn as_toml(json: &str) -> Option<String> {
    let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).ok()?;
    toml::to_string(&value).ok()
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if dir.as_os_str().is_empty() => Path::new("."),
        Some(dir) => dir,
        None => return Err(anyhow!("{} has no directory", path.display())),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut file =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
    // A temporary file is its owner's only; what it becomes (a lock committed with the config,
    // a blob anyone may verify) is not secret.
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.persist(path).map_err(|e| anyhow!("cannot write {}: {}", path.display(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_blob_is_refused_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let digest = sha256_digest(b"component");
        assert!(store.write(&digest, b"something else").is_err());
        store.write(&digest, b"component").unwrap();
        assert_eq!(store.read(&digest).unwrap(), b"component");
        std::fs::write(store.blob_path(&digest), b"tampered").unwrap();
        let error = store.read(&digest).unwrap_err().to_string();
        assert!(error.contains("changed on disk"), "{error}");
        assert!(!store.has(&digest));
    }

    #[test]
    fn a_plugin_file_made_again_is_never_missing_to_a_reader() {
        // A serving mcpbox follows the lock while `mcpbox update` reads the same new version:
        // the file is replaced, never removed first (CI saw "cannot read .../echo.wasm").
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let component = sha256_digest(b"component");
        store.write(&component, b"component").unwrap();
        let manifest = sha256_digest(b"manifest");
        let path = store.plugin_file(&manifest, &component, "echo", None).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                for _ in 0..500 {
                    store.plugin_file(&manifest, &component, "echo", None).unwrap();
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(std::fs::read(&path).unwrap(), b"component", "after {reads} reads");
                reads += 1;
            }
            writer.join().unwrap();
        });
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("echo.wasm")], "nothing staged is left behind");
    }
}
