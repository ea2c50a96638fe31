//! Compiled plugins mapped from files. wasmtime's compile cache keeps a compiled component
//! compressed, and a cache hit decompresses it into the process's anonymous memory: an
//! interpreter plugin's ~37 MiB of machine code and memory image, resident whether it runs or
//! not, once per plugin (twenty interpreter plugins held 751 MiB after start). So mcpbox keeps
//! each component it compiled once more, uncompressed, in `artifacts/` of its cache directory,
//! and maps it from there (`Component::deserialize_file`): the kernel reads in only the pages
//! that run, shares them between plugins built from the same file, can drop them under
//! pressure, and wasmtime maps the memory image from the file instead of copying it.
//!
//! A mapped artifact is machine code mcpbox runs, trusted as wasmtime trusts its own cache.
//! Only mcpbox writes it: into a directory it makes private (0700), as a private file (0600)
//! renamed into place whole; an artifact or directory another user owns or may write is never
//! mapped (the plugin is compiled as before, and a warning says why). Its name is the SHA-256
//! of the plugin file and of the engine's compatibility hash (wasmtime's version and settings),
//! and wasmtime checks the header again when it maps one. At most [`KEPT`] are kept.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Artifacts kept; the least recently written go first (an interpreter plugin's is ~40 MB).
const KEPT: usize = 64;

/// The artifact of `bytes` for `engine` in `cache_dir`, mapped, if mcpbox wrote one.
pub(crate) fn load(engine: &Engine, cache_dir: &Path, bytes: &[u8]) -> Option<Component> {
    let path = path_of(engine, cache_dir, bytes);
    let metadata = std::fs::symlink_metadata(&path).ok()?;
    let directory = path.parent().and_then(|d| std::fs::symlink_metadata(d).ok()).filter(|d| d.is_dir());
    let verdict = match directory {
        Some(directory) => trusted(&directory).map_err(|why| format!("is in a directory that {why}")),
        None => Err("has no directory".to_owned()),
    };
    if let Err(why) = verdict.and_then(|()| trusted(&metadata)) {
        tracing::warn!("not mapping the compiled plugin {}: it {why}; compiling it", path.display());
        return None;
    }
    // SAFETY: wasmtime requires that the file holds a component it serialized and that no one
    // changes it while it is mapped. mcpbox alone writes these files (`store`: private, written
    // whole under another name, then renamed, never written again), in a directory only this
    // user may write, checked just above; wasmtime checks the header (version, settings).
    #[expect(
        unsafe_code,
        reason = "mapping compiled code from a file is unsafe in wasmtime; the module header says why it holds"
    )]
    let mapped = unsafe { Component::deserialize_file(engine, &path) };
    match mapped {
        Ok(component) => Some(component),
        Err(error) => {
            tracing::warn!("cannot map the compiled plugin {} ({error:#}); compiling it", path.display());
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// Keeps `component`, compiled from `bytes`, for [`load`] next time; failing is only slower.
pub(crate) fn store(engine: &Engine, cache_dir: &Path, bytes: &[u8], component: &Component) {
    let path = path_of(engine, cache_dir, bytes);
    if path.exists() {
        return;
    }
    if let Err(error) = write(&path, component) {
        tracing::debug!("cannot keep the compiled plugin {}: {error:#}", path.display());
    }
}

fn write(path: &Path, component: &Component) -> anyhow::Result<()> {
    let dir = path.parent().ok_or_else(|| anyhow::anyhow!("no directory"))?;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let serialized = component.serialize()?;
    let partial = dir.join(format!(
        ".{}.{}",
        std::process::id(),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("artifact")
    ));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial)?;
    let written = file.write_all(&serialized).and_then(|()| file.sync_all());
    if let Err(error) = written.and_then(|()| std::fs::rename(&partial, path)) {
        let _ = std::fs::remove_file(&partial);
        return Err(error.into());
    }
    prune(dir);
    Ok(())
}

/// Removes the oldest artifacts beyond [`KEPT`].
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut artifacts: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".cwasm")))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if artifacts.len() > KEPT {
        artifacts.sort();
        for (_, old) in &artifacts[..artifacts.len() - KEPT] {
            let _ = std::fs::remove_file(old);
        }
    }
}

fn path_of(engine: &Engine, cache_dir: &Path, bytes: &[u8]) -> PathBuf {
    let mut settings = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut settings);
    let mut digest = Sha256::new();
    digest.update(settings.finish().to_le_bytes());
    digest.update(bytes);
    cache_dir.join("artifacts").join(format!("{}.cwasm", crate::hex::hex(&digest.finalize())))
}

/// Whether a file or directory is this user's and no one else may write it.
fn trusted(metadata: &std::fs::Metadata) -> Result<(), String> {
    if crate::switched_off!("engine.artifact-trust") {
        return Ok(());
    }
    if metadata.file_type().is_symlink() {
        return Err("is a symbolic link".into());
    }
    if Some(metadata.uid()) != own_uid() {
        return Err(format!("belongs to user {}, not to this one", metadata.uid()));
    }
    if metadata.permissions().mode() & 0o022 != 0 {
        return Err(format!("may be written by others (mode {:o})", metadata.permissions().mode() & 0o777));
    }
    Ok(())
}

/// This process's real user id, from `/proc/self/status` (no `unsafe` `getuid` needed).
fn own_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_artifact_others_may_write_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.cwasm");
        std::fs::write(&file, b"x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(trusted(&std::fs::symlink_metadata(&file).unwrap()), Ok(()));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o622)).unwrap();
        let why = trusted(&std::fs::symlink_metadata(&file).unwrap()).unwrap_err();
        assert!(why.contains("written by others (mode 622)"), "{why}");
        let link = dir.path().join("b.cwasm");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(trusted(&std::fs::symlink_metadata(&link).unwrap()).unwrap_err().contains("symbolic link"));
    }
}
