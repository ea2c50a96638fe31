//! `[secrets.NAME]`: secrets read from where operators keep them (a file only its owner can
//! read, or an environment variable of mcpbox's), held in memory only and wiped when dropped,
//! and read again when their file changes (as the TLS certificate is). Nothing here prints a
//! value: errors name the secret, its file or its variable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use zeroize::Zeroizing;

use super::file::{ConfigFile, FileSecret};
use super::problems::Problems;
use crate::runtime::grants::credentials::Secret;

/// Every configured secret, by name, and the files to watch.
#[derive(Clone, Default)]
pub struct Secrets {
    by_name: BTreeMap<String, Arc<Secret>>,
    files: Vec<(PathBuf, Arc<Secret>)>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.keys()).finish()
    }
}

impl Secrets {
    /// The secret named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Secret>> {
        self.by_name.get(name).cloned()
    }

    /// Reads each file-kept secret again when its file changes, for as long as the returned
    /// watcher lives; `None` when no secret is kept in a file. A file that became unreadable,
    /// empty or readable by others keeps the value it had (and says so).
    pub fn watch(&self) -> Result<Option<Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>>> {
        if self.files.is_empty() {
            return Ok(None);
        }
        let files = self.files.clone();
        let mut debouncer = new_debouncer(Duration::from_millis(200), move |events: DebounceEventResult| {
            let Ok(events) = events else { return };
            for (path, secret) in &files {
                // Any change in the file's directory: a Kubernetes secret volume swaps a
                // `..data` symlink beside the file, and the file's own path sees no event.
                if !events.iter().any(|e| in_dir_of(&e.path, path)) {
                    continue;
                }
                match read_file(path) {
                    Ok(value) if *value == *secret.value() => {}
                    Ok(value) => {
                        secret.replace(value);
                        tracing::info!(secret = secret.name(), file = %path.display(), "secret read again");
                    }
                    Err(e) => tracing::warn!(secret = secret.name(), "keeping the secret's last value: {e:#}"),
                }
            }
        })
        .context("cannot watch the secrets' files")?;
        let mut dirs: Vec<PathBuf> = self.files.iter().filter_map(|(path, _)| path.parent()).map(dir_or_here).collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            debouncer
                .watcher()
                .watch(&dir, RecursiveMode::NonRecursive)
                .with_context(|| format!("cannot watch {}", dir.display()))?;
        }
        Ok(Some(debouncer))
    }
}

fn dir_or_here(dir: &Path) -> PathBuf {
    if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir.to_owned() }
}

/// Whether an event's path is in the directory of `watched` (events name absolute paths): how
/// a watcher of a file learns of a Kubernetes volume's `..data` swap beside it.
pub(crate) fn in_dir_of(event: &Path, watched: &Path) -> bool {
    let dir = |path: &Path| path.parent().map(dir_or_here).and_then(|dir| std::path::absolute(dir).ok());
    event
        .parent()
        .and_then(|parent| std::path::absolute(parent).ok())
        .is_some_and(|parent| Some(parent) == dir(watched))
}

/// Every `[secrets.NAME]` of `file`, each read now; each problem is kept in `problems`.
pub(crate) fn secrets(file: &ConfigFile, problems: &mut Problems) -> Secrets {
    let mut secrets = Secrets::default();
    for (name, section) in &file.config.secrets {
        let at = file.at(section.span());
        let read = read_secret(file, section.get_ref()).with_context(|| format!("{at}: [secrets.{name}]")).and_then(
            |(value, path)| match value.is_empty() {
                true => Err(anyhow!("{at}: [secrets.{name}] is empty")),
                false => Ok((value, path)),
            },
        );
        if let Some((value, path)) = problems.take(read) {
            let secret = Secret::new(name, value);
            if let Some(path) = path {
                secrets.files.push((path, secret.clone()));
            }
            secrets.by_name.insert(name.clone(), secret);
        }
    }
    secrets
}

/// The secret's value, and its file if it is kept in one.
fn read_secret(file: &ConfigFile, section: &FileSecret) -> Result<(Zeroizing<Vec<u8>>, Option<PathBuf>)> {
    match (&section.file, &section.env) {
        (Some(path), None) => {
            let path = file.resolve(path.get_ref());
            Ok((read_file(&path).context("file")?, Some(path)))
        }
        (None, Some(variable)) => {
            let value = std::env::var_os(variable.get_ref())
                .ok_or_else(|| anyhow!("env names `{}`, which is not set for mcpbox", variable.get_ref()))?;
            Ok((Zeroizing::new(value.into_encoded_bytes()), None))
        }
        _ => bail!("needs exactly one of `file` and `env`"),
    }
}

/// A secret file's content without its final line break; refused when anyone but its owner
/// may read or write it.
fn read_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 && !crate::switched_off!("secrets.owner-only-files") {
        bail!("{} may be read or written by group or others (mode {mode:o}): `chmod 600` it", path.display());
    }
    let mut value = Zeroizing::new(std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?);
    while value.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        value.pop();
    }
    if value.is_empty() {
        bail!("{} is empty", path.display());
    }
    Ok(value)
}
