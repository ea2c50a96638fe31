//! A running server follows its lock: when `mcpbox.lock` changes (`mcpbox update`, a lock
//! pulled from version control), the references are resolved again under the same rules as at
//! start (trust, `--locked`) and the reloader serves the new files. A reference that fails
//! keeps its previous version serving, as a local file that fails to reload does. The config
//! itself is read at start only.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, new_debouncer};
use tokio::sync::mpsc;

use crate::config::Settings;
use crate::registry::{Resolution, Unwatched};
use crate::runtime::catalog::reload::{DEBOUNCE, PulledFiles};

/// Watches the lock of `settings` until the process ends; `served` are the files each
/// reference serves now.
pub(crate) fn follow_lock(settings: &Settings, served: Vec<(String, PathBuf)>, pulled: PulledFiles) -> Result<()> {
    let lock = std::path::absolute(&settings.registry.lock_path)
        .with_context(|| format!("cannot resolve {}", settings.registry.lock_path.display()))?;
    let dir = lock.parent().map(PathBuf::from).unwrap_or_default();
    let (sender, mut changes) = mpsc::unbounded_channel::<()>();
    let watched = lock.clone();
    let mut debouncer = new_debouncer(DEBOUNCE, move |events: DebounceEventResult| match events {
        Ok(events) if events.iter().any(|e| e.path == watched) => {
            let _ = sender.send(());
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("watching the lock file: {e}"),
    })
    .context("cannot start watching the lock file")?;
    debouncer
        .watcher()
        .watch(&dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    tracing::info!(lock = %lock.display(), "following the lock file");
    let settings = settings.clone();
    let mut served: BTreeMap<String, PathBuf> = served.into_iter().collect();
    tokio::spawn(async move {
        let _debouncer = debouncer;
        while changes.recv().await.is_some() {
            while changes.try_recv().is_ok() {}
            let Resolution { files, failed } = match super::resolve::resolve(&settings, false, &Unwatched).await {
                Ok(resolution) => resolution,
                Err(error) => {
                    tracing::warn!(
                        "the lock changed but cannot be followed, the plugins serve as they were: {error:#}"
                    );
                    continue;
                }
            };
            for unresolved in failed {
                tracing::warn!("{}: keeping the version served: {:#}", unresolved.reference, unresolved.error);
            }
            served.extend(files);
            // The config's order, each reference's newest file that resolved.
            let files = settings.plugin_refs.iter().filter_map(|r| served.get(r.written()).cloned()).collect();
            if !crate::switched_off!("registry.server-follows-lock") {
                pulled.replace(files);
            }
        }
    });
    Ok(())
}
