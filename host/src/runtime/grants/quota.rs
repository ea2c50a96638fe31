//! Write budgets on a writable directory (`[[roots]]` / `[[plugin.NAME.dirs]]` `max_mib`,
//! `max_files`): how large the tree under it may grow and how many entries it may hold through
//! mcpbox's plugins. Values only; the filesystem door (`runtime/effects/quota.rs`) measures and
//! enforces them.

use std::path::Path;
use std::sync::Arc;

/// The budget the operator set on one directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirQuota {
    /// The tree's bytes (the apparent sizes of its files) may not pass this.
    pub max_bytes: Option<u64>,
    /// The tree's entries (files, directories, links) may not pass this.
    pub max_files: Option<u64>,
}

impl DirQuota {
    /// Whether anything is bounded.
    pub fn is_set(&self) -> bool {
        self.max_bytes.is_some() || self.max_files.is_some()
    }
}

/// A granted directory's budget and the tree it is measured over: the operator's directory
/// (a client root inside it is part of the same tree), or a principal's own directory under a
/// `{sub}` base (each principal its own budget).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// The canonical directory whose whole tree the budget covers.
    pub tree: Arc<Path>,
    /// The limits.
    pub limits: DirQuota,
}

impl Quota {
    /// The budget `limits` over `tree`, if any limit is set.
    pub fn over(tree: &Path, limits: DirQuota) -> Option<Quota> {
        limits.is_set().then(|| Quota { tree: Arc::from(tree), limits })
    }
}
