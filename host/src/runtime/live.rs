//! The catalog being served, swapped whole on hot reload, and the changes clients may be told
//! about. Hot reload drives it ([`LiveCatalog::replace`]); the protocol layer reads the current
//! catalog per request and subscribes to [`Change`]s, which it turns into each era's
//! notifications. A request works on the catalog it started with: calls already running when
//! a new one is swapped in finish on the old plugins.

use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::broadcast;

use crate::runtime::catalog::{Catalog, Entry};

/// How many changes a slow subscriber may fall behind before it skips some (it then sees
/// `Lagged` and carries on: list changes are idempotent hints).
const CHANGE_BACKLOG: usize = 64;

/// A change clients may be told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool list changed.
    Tools,
    /// The prompt list changed.
    Prompts,
    /// The resource templates, or the plugins that list resources, changed.
    Resources,
    /// A plugin said the resource at this URI changed.
    ResourceUpdated(String),
}

/// The catalog being served, and the broadcast of its changes.
pub struct LiveCatalog {
    current: RwLock<Arc<Catalog>>,
    changes: broadcast::Sender<Change>,
}

impl LiveCatalog {
    /// Serves `catalog`.
    pub fn new(catalog: Catalog) -> Arc<LiveCatalog> {
        Arc::new(LiveCatalog { current: RwLock::new(Arc::new(catalog)), changes: broadcast::channel(CHANGE_BACKLOG).0 })
    }

    /// The catalog served now.
    pub fn current(&self) -> Arc<Catalog> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Serves `catalog` from now on and announces which lists changed; returns them.
    pub fn replace(&self, catalog: Catalog) -> Vec<Change> {
        let new = Arc::new(catalog);
        let old = std::mem::replace(&mut *self.current.write().unwrap_or_else(PoisonError::into_inner), new.clone());
        let changes = changes_between(&old, &new);
        tracing::info!(tools = new.tools().len(), prompts = new.prompts().len(), ?changes, "now serving");
        for change in &changes {
            let _ = self.changes.send(change.clone());
        }
        changes
    }

    /// Announces that a plugin changed the resource at `uri`.
    pub fn resource_updated(&self, uri: String) {
        let _ = self.changes.send(Change::ResourceUpdated(uri));
    }

    /// Changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

/// What differs between two catalogs, by content: names and descriptors, and which plugin
/// versions (by file fingerprint) list resources. A plugin reloaded unchanged changes nothing.
fn changes_between(old: &Catalog, new: &Catalog) -> Vec<Change> {
    let mut changes = Vec::new();
    if !same_entries(old.tools(), new.tools()) {
        changes.push(Change::Tools);
    }
    if !same_entries(old.prompts(), new.prompts()) {
        changes.push(Change::Prompts);
    }
    if !same_entries(old.templates(), new.templates()) || old.resource_sources() != new.resource_sources() {
        changes.push(Change::Resources);
    }
    changes
}

/// Whether two sorted lists serve the same names with the same descriptors (which plugin
/// index holds them does not matter).
fn same_entries<T: PartialEq>(a: &[Entry<T>], b: &[Entry<T>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.name == b.name && a.item == b.item)
}
