//! `mcpbox.lock`: every registry reference the config names, pinned to the manifest digest it
//! resolved to. A tag is resolved once; afterwards the lock decides, so a served plugin never
//! changes because a tag moved (removing a pin re-resolves; `serve --locked` refuses anything
//! not in it).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};

/// The file's schema version.
const VERSION: u32 = 1;

/// The lock file, as read or about to be written.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    version: u32,
    #[serde(default, rename = "plugin")]
    plugins: Vec<Locked>,
    #[serde(skip)]
    changed: bool,
}

/// One pinned reference.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// The reference as the config writes it.
    pub reference: String,
    /// The manifest digest it resolved to (the component is the one that manifest names: the
    /// signature covers the manifest, so the component is never taken from anywhere else).
    pub digest: String,
}

/// Where the lock of a config lives: `mcpbox.lock` beside it, or in the current directory
/// when there is no config file.
pub fn lock_path(config: Option<&Path>) -> PathBuf {
    match config.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join("mcpbox.lock"),
        _ => PathBuf::from("mcpbox.lock"),
    }
}

impl Lock {
    /// Reads `path`; a missing file is an empty lock.
    pub fn read(path: &Path) -> Result<Lock> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Lock { version: VERSION, ..Lock::default() });
            }
            Err(e) => return Err(anyhow!("cannot read the lock file {}: {e}", path.display())),
        };
        let lock: Lock = toml::from_str(&text).map_err(|e| anyhow!("{}: {}", path.display(), e.message()))?;
        if lock.version != VERSION {
            return Err(anyhow!(
                "{}: version {} is not {VERSION}, the one this mcpbox reads",
                path.display(),
                lock.version
            ));
        }
        Ok(lock)
    }

    /// The pin of `reference`, if locked.
    pub fn get(&self, reference: &str) -> Option<&Locked> {
        self.plugins.iter().find(|locked| locked.reference == reference)
    }

    /// Pins `locked.reference` (replacing an older pin); returns the older pin if it differed.
    pub fn pin(&mut self, locked: Locked) -> Option<Locked> {
        match self.plugins.iter_mut().find(|old| old.reference == locked.reference) {
            Some(old) if *old == locked => None,
            Some(old) => {
                self.changed = true;
                Some(std::mem::replace(old, locked))
            }
            None => {
                self.changed = true;
                self.plugins.push(locked);
                None
            }
        }
    }

    /// Writes the lock to `path` if a pin changed.
    pub fn save(&mut self, path: &Path) -> Result<()> {
        if !self.changed {
            return Ok(());
        }
        self.version = VERSION;
        self.plugins.sort_by(|a, b| a.reference.cmp(&b.reference));
        let text = format!(
            "# Written by mcpbox: every registry reference of the config, pinned to a digest.\n# Remove a pin to re-resolve its tag; commit this file with the config.\n{}",
            toml::to_string(self)?
        );
        // Whole or not at all: a server watching the lock reads it when it changes.
        super::store::write_atomically(path, text.as_bytes())
            .with_context(|| format!("cannot write the lock file {}", path.display()))?;
        self.changed = false;
        Ok(())
    }
}
