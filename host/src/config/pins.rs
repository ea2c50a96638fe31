//! Where definitions are pinned (`runtime/catalog/pins.rs`), from the config's place or the
//! plugin paths, and whether `--locked` and `--unpinned` apply.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::ServeArgs;
use super::file::ConfigFile;
use crate::runtime::catalog::PinSettings;

/// Where definitions are pinned: `mcpbox.pins.json` beside the config; without one, in the
/// state directory (`$MCPBOX_STATE_DIR`, else `$XDG_STATE_HOME/mcpbox`, else
/// `~/.local/state/mcpbox`) under `pins/`, named by a digest of the plugin paths given, so the
/// same command line finds the same pins (a client's working directory may not be writable,
/// and should not decide what is trusted).
pub(super) fn pin_settings(file: &ConfigFile, args: &ServeArgs) -> PinSettings {
    let path = match &args.config {
        Some(config) => Some(config.parent().unwrap_or(std::path::Path::new("")).join("mcpbox.pins.json")),
        None => state_dir().map(|dir| {
            let mut digest = Sha256::new();
            for path in file.config.plugins.iter().chain(&args.paths) {
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
                digest.update(path.as_os_str().as_encoded_bytes());
                digest.update([0]);
            }
            dir.join("pins").join(format!("{}.json", crate::hex::hex(&digest.finalize()[..8])))
        }),
    };
    PinSettings { path, locked: args.locked, off: args.unpinned }
}

/// Where mcpbox keeps state of its own that is not a cache.
fn state_dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("MCPBOX_STATE_DIR")
        .or_else(|| set("XDG_STATE_HOME").map(|d| d.join("mcpbox")))
        .or_else(|| set("HOME").map(|d| d.join(".local/state/mcpbox")))
}
