//! The catalog being served, swapped whole on hot reload, and the changes clients may be told
//! about. Hot reload drives it ([`LiveCatalog::replace`]); the protocol layer reads the current
//! catalog per request and subscribes to [`Change`]s, which it turns into each era's
//! notifications. A request works on the catalog it started with: calls already running when
//! a new one is swapped in finish on the old plugins.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc};

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
    /// Where this process's own changes also go (the other replicas of a fleet).
    outbox: OnceLock<mpsc::UnboundedSender<Change>>,
}

impl LiveCatalog {
    /// Serves `catalog`.
    pub fn new(catalog: Catalog) -> Arc<LiveCatalog> {
        Arc::new(LiveCatalog {
            current: RwLock::new(Arc::new(catalog)),
            changes: broadcast::channel(CHANGE_BACKLOG).0,
            outbox: OnceLock::new(),
        })
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
            self.local_and_fleet(change.clone());
        }
        changes
    }

    /// Announces that a plugin changed the resource at `uri`.
    pub fn resource_updated(&self, uri: String) {
        self.local_and_fleet(Change::ResourceUpdated(uri));
    }

    fn local_and_fleet(&self, change: Change) {
        if let Some(outbox) = self.outbox.get() {
            let _ = outbox.send(change.clone());
        }
        let _ = self.changes.send(change);
    }

    /// Sends this process's changes to `outbox` too, from now on (set once: a fleet's
    /// replica forwards them to the others).
    pub fn forward_to(&self, outbox: mpsc::UnboundedSender<Change>) {
        let _ = self.outbox.set(outbox);
    }

    /// Tells this process's listeners of a change another replica made (not forwarded).
    pub fn announce(&self, change: Change) {
        let _ = self.changes.send(change);
    }

    /// A digest of what the current catalog serves (names and descriptors, as the binary
    /// prints them), to tell two versions of a catalog apart across replicas; another mcpbox
    /// build may digest the same catalog differently (a spurious list change, a harmless hint).
    pub fn fingerprint(&self) -> String {
        fn entries<T: std::fmt::Debug>(digest: &mut Sha256, entries: &[Entry<T>]) {
            for entry in entries {
                digest.update(format!("{}\0{:?}\0", entry.name, entry.item));
            }
        }
        let catalog = self.current();
        let mut digest = Sha256::new();
        entries(&mut digest, catalog.tools());
        entries(&mut digest, catalog.prompts());
        entries(&mut digest, catalog.templates());
        digest.update(format!("{:?}", catalog.resource_sources()));
        crate::hex::hex(&digest.finalize()[..16])
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
