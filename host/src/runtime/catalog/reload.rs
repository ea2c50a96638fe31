//! Hot reload: watch the plugin directories and files, and when a `.wasm` is added, changed or
//! removed, compile it off the serving path and swap a new catalog in atomically. Calls already
//! running hold their `Arc<Plugin>` and finish on the old version; new calls see the new one. A
//! file that fails to compile or load keeps its previous version serving (the reason is
//! logged). The new catalog goes to [`LiveCatalog::replace`], which tells subscribers what
//! changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::runtime::engine::compile::Compiler;
use anyhow::{Context, Result};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, new_debouncer};
use tokio::sync::mpsc;

use crate::runtime::catalog::live::LiveCatalog;
use crate::runtime::catalog::pins::{FirstUse, Pins};
use crate::runtime::catalog::{self, Catalog, is_plugin_file};
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::plugin_config::PluginConfigs;
use crate::runtime::plugin::Plugin;
use crate::runtime::sandbox::linker::Linkers;

/// Events closer together than this are one change (an editor or `cp` writes in bursts).
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(150);

/// What identifies a version of a file on disk.
type Stamp = (SystemTime, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// What makes the reloader look again.
enum Trigger {
    /// A watched file or directory changed.
    Files,
    /// The files served beside the watched paths are now these.
    Pulled(Vec<PathBuf>),
    /// The pins file changed (`mcpbox accept`).
    Pins,
}

/// A handle to replace the files served beside the watched paths: plugins pulled from
/// registries, whose files never change (a new version is a new file), so they are not
/// watched; whoever pulls them says when the set changes.
#[derive(Clone)]
pub struct PulledFiles(mpsc::UnboundedSender<Trigger>);

impl PulledFiles {
    /// Serves `files` instead of the pulled files served until now.
    pub fn replace(&self, files: Vec<PathBuf>) {
        let _ = self.0.send(Trigger::Pulled(files));
    }
}

/// The plugins currently served, by file, and how to load more.
pub struct Reloader {
    compiler: Compiler,
    linkers: Linkers,
    /// Watched: plugin files and directories.
    paths: Vec<PathBuf>,
    /// Served too, not watched: see [`PulledFiles`].
    pulled: Vec<PathBuf>,
    triggers: (mpsc::UnboundedSender<Trigger>, mpsc::UnboundedReceiver<Trigger>),
    configs: PluginConfigs,
    limits: Limits,
    loaded: BTreeMap<PathBuf, (Stamp, Arc<Plugin>)>,
    /// Files that failed to load, as they were then: retried only once they change, not on
    /// every event (reading a file to compile it is an event of its own).
    failed: BTreeMap<PathBuf, Stamp>,
    live: Arc<LiveCatalog>,
    /// What each plugin's definitions are pinned to; read again when its file changes.
    pins: Arc<Pins>,
}

impl Reloader {
    /// Takes over the plugins `live` serves (loaded from `paths` and `pulled` under `configs`).
    pub fn new(
        compiler: Compiler,
        paths: Vec<PathBuf>,
        pulled: Vec<PathBuf>,
        configs: PluginConfigs,
        limits: Limits,
        live: Arc<LiveCatalog>,
        pins: Arc<Pins>,
    ) -> Result<Reloader> {
        let loaded = live
            .current()
            .plugins()
            .iter()
            .filter_map(|plugin| Some((plugin.path.clone(), (stamp(&plugin.path)?, plugin.clone()))))
            .collect();
        let linkers = Linkers::new(compiler.engine())?;
        let triggers = mpsc::unbounded_channel();
        Ok(Reloader {
            compiler,
            linkers,
            paths,
            pulled,
            triggers,
            configs,
            limits,
            loaded,
            failed: BTreeMap::new(),
            live,
            pins,
        })
    }

    /// The handle that replaces the pulled files once watching runs.
    pub fn pulled_files(&self) -> PulledFiles {
        PulledFiles(self.triggers.0.clone())
    }

    /// Watches the plugin paths until the process ends. Directories are watched for their
    /// `.wasm` files; a file named on its own is watched through its directory.
    pub fn spawn(mut self) -> Result<()> {
        let sender = self.triggers.0.clone();
        let pins_file = self.pins.path().map(Path::to_owned);
        let pins_changed = pins_file.clone();
        let mut debouncer = new_debouncer(DEBOUNCE, move |events: DebounceEventResult| match events {
            Ok(events) => {
                if events.iter().any(|e| pins_changed.as_ref().is_some_and(|pins| e.path == *pins)) {
                    let _ = sender.send(Trigger::Pins);
                }
                if events.iter().any(|e| is_plugin_file(&e.path)) {
                    let _ = sender.send(Trigger::Files);
                }
            }
            Err(e) => tracing::warn!("watching plugin directories: {e}"),
        })
        .context("cannot start watching the plugin directories")?;
        let mut watched_dirs = Vec::new();
        for path in &self.paths {
            let watched =
                if path.is_dir() { path.clone() } else { path.parent().map(Path::to_owned).unwrap_or_default() };
            debouncer
                .watcher()
                .watch(&watched, RecursiveMode::NonRecursive)
                .with_context(|| format!("cannot watch {}", watched.display()))?;
            watched_dirs.push(watched);
        }
        // The pins file's directory, for `mcpbox accept` (its writes rename a file in).
        if let Some(dir) = pins_file.as_deref().and_then(Path::parent).filter(|d| !watched_dirs.iter().any(|w| w == d))
            && let Err(error) = debouncer.watcher().watch(dir, RecursiveMode::NonRecursive)
        {
            tracing::warn!(
                "cannot watch the pins file's directory {}: {error}; accepted changes serve after a restart",
                dir.display()
            );
        }
        tracing::info!(paths = ?self.paths, "watching plugins for changes");
        let (_, mut receiver) = std::mem::replace(&mut self.triggers, mpsc::unbounded_channel::<Trigger>());
        tokio::spawn(async move {
            let _debouncer = debouncer;
            while let Some(first) = receiver.recv().await {
                // A burst is one rescan; the last set of pulled files wins.
                let mut trigger = Some(first);
                let mut pins = false;
                while let Some(next) = trigger.take().or_else(|| receiver.try_recv().ok()) {
                    match next {
                        Trigger::Pulled(files) => self.pulled = files,
                        Trigger::Pins => pins = true,
                        Trigger::Files => {}
                    }
                }
                if pins && let Err(error) = self.pins.reread() {
                    tracing::warn!("keeping the pins as they were: {error:#}");
                }
                self.rescan(pins).await;
            }
        });
        Ok(())
    }

    /// Brings the served plugins in line with the files on disk (and with the pins, when
    /// `pins_changed`).
    async fn rescan(&mut self, pins_changed: bool) {
        let (mut files, problems) = catalog::discover(&self.paths);
        for problem in problems {
            tracing::warn!("{:#}", problem.error);
        }
        files.extend(self.pulled.iter().cloned());
        let mut changed = false;
        self.failed.retain(|path, _| files.contains(path));
        let gone: Vec<PathBuf> = self.loaded.keys().filter(|p| !files.contains(p)).cloned().collect();
        for path in gone {
            tracing::info!(path = %path.display(), "plugin removed");
            self.loaded.remove(&path);
            changed = true;
        }
        let stale: Vec<(PathBuf, Stamp)> = files
            .iter()
            .filter_map(|path| {
                let now = stamp(path)?;
                let same = self.loaded.get(path).is_some_and(|(before, _)| *before == now);
                let failed_as_is =
                    self.failed.get(path) == Some(&now) && !crate::switched_off!("reload.broken-file-tried-once");
                (!same && !failed_as_is).then(|| (path.clone(), now))
            })
            .collect();
        if !stale.is_empty() {
            let paths: Vec<PathBuf> = stale.iter().map(|(p, _)| p.clone()).collect();
            let results = catalog::load_files(&self.compiler, &self.linkers, &paths, &self.configs, self.limits).await;
            for ((path, now), (_, result)) in stale.into_iter().zip(results) {
                match result {
                    Ok(plugin) => {
                        self.failed.remove(&path);
                        let verb = if self.loaded.contains_key(&path) { "reloaded" } else { "added" };
                        tracing::info!(plugin = %plugin.name, path = %path.display(), "plugin {verb}");
                        self.loaded.insert(path, (now, Arc::new(plugin)));
                        changed = true;
                    }
                    Err(error) => {
                        if self.loaded.contains_key(&path) {
                            tracing::warn!(path = %path.display(), "keeping the previous version: {error:#}");
                        } else {
                            tracing::warn!(path = %path.display(), "not loaded: {error:#}");
                        }
                        self.failed.insert(path, now);
                    }
                }
            }
        }
        if !changed && !pins_changed {
            return;
        }
        let plugins = self.loaded.values().map(|(_, p)| p.clone()).collect();
        let (catalog, problems) = Catalog::assemble(plugins, &self.pins, FirstUse::Pin);
        for problem in problems {
            tracing::warn!("{:#}", problem.error);
        }
        self.live.replace(catalog);
    }
}
