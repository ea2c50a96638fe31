//! A directory the operator allows (`--root`, `[[roots]]`, a plugin's `dirs`), canonicalized
//! once so that `..` and symlinks cannot point it anywhere else.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::quota::DirQuota;

/// A directory the operator allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedDir {
    /// Canonical host path.
    pub path: PathBuf,
    /// Name in the guest (`/roots/<name>`); defaults to the directory's own name.
    pub name: Option<String>,
    /// Whether plugins may write there.
    pub writable: bool,
    /// `path` is a base: a call sees only its principal's directory under it
    /// (`runtime/grants/principal_dirs.rs`).
    pub per_principal: bool,
    /// How far plugins may grow the tree under it (writable directories only).
    pub quota: DirQuota,
}

impl AllowedDir {
    /// Canonicalizes `path`, which must be an existing directory.
    pub fn new(path: &Path, name: Option<String>, writable: bool) -> Result<Self> {
        let canonical =
            path.canonicalize().with_context(|| format!("root directory {} does not exist", path.display()))?;
        if !canonical.is_dir() {
            bail!("root {} is not a directory", path.display());
        }
        Ok(AllowedDir { path: canonical, name, writable, per_principal: false, quota: DirQuota::default() })
    }
}
