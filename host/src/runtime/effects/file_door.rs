//! The state of one call's filesystem door: which granted directory and guest path each open
//! descriptor stands for, the trees the call holds, what it may still write, and where its
//! effects and refusals are told. `filesystem.rs` is the door itself (the WASI calls).

use std::collections::HashMap;
use std::sync::Arc;

use super::quota::{CallWrites, Held, OverBudget};
use super::record::EffectLog;
use crate::runtime::grants::roots::Grant;

/// A granted directory as the door knows it.
#[derive(Debug)]
struct DoorGrant {
    name: String,
    guest_path: String,
    quota: Option<crate::runtime::grants::quota::Quota>,
    /// Taken at the call's first change in the tree, given back when the call ends.
    held: Option<Arc<Held>>,
}

/// What an open descriptor stands for.
#[derive(Debug, Clone)]
pub(crate) struct Opened {
    pub(crate) grant: usize,
    pub(crate) path: Arc<str>,
}

/// One call's filesystem door (in the call's store).
pub struct FileDoor {
    plugin: Arc<str>,
    grants: Vec<DoorGrant>,
    opened: HashMap<u32, Opened>,
    pub(crate) writes: Arc<CallWrites>,
    pub(crate) log: Option<Arc<EffectLog>>,
}

/// Where a refused write is told: the host log (once per call), the metric, the record.
#[derive(Debug, Clone)]
pub(crate) struct Refusals {
    pub(crate) plugin: Arc<str>,
    pub(crate) grant: String,
    pub(crate) writes: Arc<CallWrites>,
    pub(crate) log: Option<Arc<EffectLog>>,
}

impl Refusals {
    /// Tells of `refusal` at `path`.
    pub(crate) fn tell(&self, path: &str, refusal: &OverBudget) {
        let budget = if refusal.0.contains("max_write_mib") {
            "max_write_mib"
        } else if refusal.0.contains("max_files") {
            "max_files"
        } else {
            "max_mib"
        };
        crate::telemetry::metrics::metrics().write_refusals.with_label_values(&[&*self.plugin, budget]).inc();
        if self.writes.first_refusal() {
            tracing::warn!(plugin = %self.plugin, grant = %self.grant, budget, path, "refused a write: {refusal}");
        }
        if let Some(log) = &self.log {
            log.file(path, |file| file.refused.push(format!("{budget}: {refusal}")));
        }
    }
}

impl FileDoor {
    /// The door of a call of `plugin` with `grants`, which may write `write_limit` bytes;
    /// `log` records its effects when someone keeps a record.
    pub fn new(plugin: Arc<str>, grants: &[Grant], write_limit: u64, log: Option<Arc<EffectLog>>) -> FileDoor {
        let grants = grants
            .iter()
            .map(|g| DoorGrant {
                name: g.name.clone(),
                guest_path: g.guest_path.clone(),
                quota: g.quota.clone(),
                held: None,
            })
            .collect();
        FileDoor { plugin, grants, opened: HashMap::new(), writes: Arc::new(CallWrites::new(write_limit)), log }
    }

    /// A preopened directory handed to the guest at `guest_path`.
    pub(crate) fn preopened(&mut self, rep: u32, guest_path: &str) {
        if let Some(grant) = self.grants.iter().position(|g| g.guest_path == guest_path) {
            self.opened.insert(rep, Opened { grant, path: Arc::from(guest_path) });
        }
    }

    /// What the descriptor `rep` stands for (`None`: not a file of a grant, which WASI refuses).
    pub(crate) fn opened(&self, rep: u32) -> Option<Opened> {
        self.opened.get(&rep).cloned()
    }

    /// The guest path of `path` under the descriptor `rep`.
    pub(crate) fn path_under(&self, rep: u32, path: &str) -> Option<(usize, String)> {
        let opened = self.opened.get(&rep)?;
        Some((opened.grant, join(&opened.path, &self.grants[opened.grant].guest_path, path)))
    }

    /// A descriptor opened under a grant.
    pub(crate) fn open(&mut self, rep: u32, grant: usize, path: String) {
        self.opened.insert(rep, Opened { grant, path: Arc::from(path) });
    }

    /// A descriptor dropped (its number may be handed out again).
    pub(crate) fn close(&mut self, rep: u32) {
        self.opened.remove(&rep);
    }

    /// Whether changes in `grant` are budgeted by a tree.
    pub(crate) fn has_quota(&self, grant: usize) -> bool {
        self.grants.get(grant).is_some_and(|g| g.quota.is_some())
    }

    /// The call's hold on `grant`'s tree, taken now if not yet (`None`: no budget there).
    pub(crate) async fn hold(&mut self, grant: usize) -> Option<Arc<Held>> {
        let entry = self.grants.get_mut(grant)?;
        let quota = entry.quota.as_ref()?;
        if entry.held.is_none() {
            entry.held = Some(Arc::new(Held::take(quota).await));
        }
        entry.held.clone()
    }

    /// The hold already taken on `grant`'s tree, if any.
    pub(crate) fn held(&self, grant: usize) -> Option<Arc<Held>> {
        self.grants.get(grant).and_then(|g| g.held.clone())
    }

    /// How refusals in `grant` are told.
    pub(crate) fn refusals(&self, grant: usize) -> Refusals {
        Refusals {
            plugin: self.plugin.clone(),
            grant: self.grants.get(grant).map(|g| g.name.clone()).unwrap_or_default(),
            writes: self.writes.clone(),
            log: self.log.clone(),
        }
    }

    /// Charges a change in `grant` at `path`: `written` bytes to the call, `growth` bytes and
    /// `entries` to the tree; all or nothing, the refusal told.
    pub(crate) fn charge(
        &self,
        grant: usize,
        path: &str,
        written: u64,
        growth: u64,
        entries: u64,
    ) -> Result<(), OverBudget> {
        charge(&self.writes, self.held(grant).as_deref(), written, growth, entries)
            .inspect_err(|refusal| self.refusals(grant).tell(path, refusal))
    }

    /// Gives back a charge whose change did not happen.
    pub(crate) fn refund(&self, grant: usize, written: u64, growth: u64, entries: u64) {
        self.writes.refund(written);
        if let Some(held) = self.held(grant) {
            held.shrink(growth, entries);
        }
    }

    /// Records into the call's record, if it keeps one.
    pub(crate) fn record(&self, record: impl FnOnce(&EffectLog)) {
        if let Some(log) = &self.log {
            record(log);
        }
    }
}

/// Charges the call's `written` bytes and the tree's `growth` and `entries`: all or nothing.
pub(crate) fn charge(
    writes: &CallWrites,
    tree: Option<&Held>,
    written: u64,
    growth: u64,
    entries: u64,
) -> Result<(), OverBudget> {
    writes.charge(written)?;
    if let Some(tree) = tree
        && let Err(refusal) = tree.grow(growth, entries)
    {
        writes.refund(written);
        return Err(refusal);
    }
    Ok(())
}

/// `path` (relative, as WASI takes it) under `base`, with `.` and `..` folded; never above
/// `root`, the grant's own path (cap-std refuses such a path anyway: this is only its name).
fn join(base: &str, root: &str, path: &str) -> String {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    let floor = root.split('/').filter(|p| !p.is_empty()).count();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.len() > floor {
                    parts.pop();
                }
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_joined_and_folded_within_their_grant() {
        assert_eq!(join("/roots/data", "/roots/data", "a/./b/../c.txt"), "/roots/data/a/c.txt");
        assert_eq!(join("/roots/data/a", "/roots/data", "../../../etc/passwd"), "/roots/data/etc/passwd");
        assert_eq!(join("/home/me", "/home/me", "x"), "/home/me/x");
    }
}
