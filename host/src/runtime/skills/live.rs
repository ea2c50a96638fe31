//! The skills served now, kept current: the operator's directories read at start and again
//! whenever a file under them changes (digests recomputed, so an entry never describes bytes
//! that are gone), plus the skills plugins ship, set by the catalog when it changes.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use anyhow::{Context, Result};
use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::watch;

use super::library::{Found, SkillLibrary};
use super::scan::{SkillSource, scan};

/// Events closer together than this are one change.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// The skills served now.
pub struct LiveSkills {
    sources: Vec<SkillSource>,
    current: RwLock<Arc<SkillLibrary>>,
    /// The operator's skills as last read, and the plugins' as last set.
    parts: Mutex<(Found, Found)>,
    /// Bumped on every change, for the protocol layer to announce.
    changes: watch::Sender<u64>,
    watcher: Mutex<Option<Debouncer<RecommendedWatcher>>>,
}

impl LiveSkills {
    /// Reads `sources` now; what is left out is logged.
    pub fn new(sources: Vec<SkillSource>) -> Arc<LiveSkills> {
        let live = Arc::new(LiveSkills {
            sources,
            current: RwLock::default(),
            parts: Mutex::default(),
            changes: watch::channel(0).0,
            watcher: Mutex::new(None),
        });
        live.rescan();
        live
    }

    /// Whether any skill may be served (a directory is configured, even if empty now).
    pub(crate) fn configured(&self) -> bool {
        !self.sources.is_empty() || !self.current().is_empty()
    }

    /// The library served now; a request keeps the one it started with.
    pub(crate) fn current(&self) -> Arc<SkillLibrary> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A receiver that sees every change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Reads the operator's directories again and serves what they hold now.
    pub(crate) fn rescan(&self) {
        let mut found = Vec::new();
        for source in &self.sources {
            let (mut skills, problems) = scan(source);
            for problem in problems {
                tracing::warn!("{problem}");
            }
            found.append(&mut skills);
        }
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        parts.0 = found;
        self.publish(&parts);
    }

    /// Serves `skills` as the plugins' (the catalog's, after a load or reload).
    pub(crate) fn set_plugin_skills(&self, skills: Found) {
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        parts.1 = skills;
        self.publish(&parts);
    }

    /// Builds the library from both parts (the operator's first: theirs win a URI) and swaps it
    /// in if it differs.
    fn publish(&self, parts: &(Found, Found)) {
        let all = parts.0.iter().chain(&parts.1).cloned().collect();
        let (library, problems) = SkillLibrary::new(all);
        for problem in problems {
            tracing::warn!("{problem}");
        }
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current.same_as(&library) {
            return;
        }
        tracing::info!(skills = library.skills().count(), "serving skills");
        *current = Arc::new(library);
        drop(current);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Watches the operator's directories for as long as this lives.
    pub fn watch(self: &Arc<Self>) -> Result<()> {
        if self.sources.is_empty() {
            return Ok(());
        }
        let weak = Arc::downgrade(self);
        let mut debouncer = new_debouncer(DEBOUNCE, move |events: DebounceEventResult| {
            if events.is_ok()
                && let Some(live) = weak.upgrade()
            {
                live.rescan();
            }
        })
        .context("cannot watch the skill directories")?;
        for source in &self.sources {
            debouncer
                .watcher()
                .watch(&source.path, RecursiveMode::Recursive)
                .with_context(|| format!("cannot watch the skill directory {}", source.path.display()))?;
        }
        *self.watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(debouncer);
        Ok(())
    }
}
