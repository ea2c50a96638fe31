//! A writable directory's write budget as configured (`max_mib`, `max_files` in `[[roots]]` and
//! `[[plugin.NAME.dirs]]`).

use anyhow::{Result, anyhow};
use toml::Spanned;

use super::file::ConfigFile;
use super::problems::spanned_limit;
use crate::runtime::grants::limits;
use crate::runtime::grants::quota::DirQuota;

/// A directory's write budget (`max_mib`, `max_files` in `section`); refused on a read-only
/// directory, where it would bound nothing the operator could mean.
pub(super) fn dir_quota(
    file: &ConfigFile,
    section: &str,
    writable: bool,
    max_mib: &Option<Spanned<u64>>,
    max_files: &Option<Spanned<u64>>,
) -> Result<DirQuota> {
    let max_bytes = spanned_limit(file, max_mib, &format!("{section} max_mib"), limits::tree_bytes_from_mib)?;
    let files = spanned_limit(file, max_files, &format!("{section} max_files"), limits::tree_files)?;
    let quota = DirQuota { max_bytes, max_files: files };
    if quota.is_set() && !writable {
        let span = max_mib.as_ref().or(max_files.as_ref()).map(Spanned::span).unwrap_or_default();
        return Err(anyhow!(
            "{}: {section} max_mib and max_files bound what plugins write: this directory is read-only (set `writable = true` or drop them)",
            file.at(span)
        ));
    }
    Ok(quota)
}
