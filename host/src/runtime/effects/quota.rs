//! Write budgets, enforced at the filesystem door: what one call may write (`max_write_mib`, on
//! by default) and how far a writable directory's tree may grow (`max_mib`, `max_files`).
//!
//! How a tree is measured: a call that writes into it while no other call of this process does,
//! and finds the last measure older than 10 s, walks it (the apparent sizes of its files, hard
//! links counted once, and its entries); every call adds what it grows the tree by (a write past
//! a file's end, `set-size` longer, an entry made) and takes off what it frees (an entry
//! removed, a file truncated) before the change is made. The directory itself is the shared
//! state: a replica of a fleet, or a call after the owner edited the tree by hand, measures
//! again within 10 s and sees every change, with no round trip per write. Calls running at once
//! in different replicas can each add up to their own `max_write_mib` past the budget.
//!
//! A write past a budget fails in the guest with WASI's `quota` error (`EDQUOT`: the operator's
//! quota, told apart from a disk that is really full, `insufficient-space`), before any byte of
//! it is written: nothing already written is cut.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::runtime::grants::quota::{DirQuota, Quota};

/// Why a write was refused; the guest sees WASI's `quota` error code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct OverBudget(pub String);

/// The most entries a walk counts: past it the tree is taken as full (growth refused, its
/// removals still counted) until a walk finds fewer (a tree is the operator's directory; this
/// only bounds a hostile plugin's work for the host).
const MAX_WALKED: u64 = 1_000_000;

/// Round three's walk stopped at this depth (what `writes.measure-complete` switched off
/// brings back, to prove the test that builds deeper trees guards it).
const ROUND_THREE_DEPTH: usize = 256;

/// A tree's measure stands this long: the first call that changes it after that, while no
/// other call of this process holds it, walks it again (10,100 entries: ~21 ms of that call).
const REMEASURE: Duration = Duration::from_secs(10);

/// A tree nobody wrote into for this long is forgotten (measured again when next written).
const FORGET: Duration = Duration::from_secs(600);

/// The trees written into, by canonical path.
static TREES: LazyLock<Mutex<HashMap<Arc<Path>, Arc<Tree>>>> = LazyLock::new(Mutex::default);

/// One tree's usage, shared by the calls of this process that write into it.
#[derive(Debug, Default)]
struct Tree {
    state: Mutex<TreeState>,
}

#[derive(Debug, Default)]
struct TreeState {
    /// Calls holding the tree now; the first one measures it if the measure is stale.
    writers: usize,
    bytes: u64,
    entries: u64,
    /// When it was last walked, and last held.
    measured: Option<Instant>,
    used: Option<Instant>,
}

/// A call's hold on a tree, taken before its first change there and given back when it ends.
#[derive(Debug)]
pub struct Held {
    tree: Arc<Tree>,
    limits: DirQuota,
}

impl Held {
    /// Takes `quota`'s tree for a call, measuring it if no call of this process holds it and
    /// its measure is older than [`REMEASURE`].
    pub async fn take(quota: &Quota) -> Held {
        let tree = {
            let mut trees = TREES.lock().unwrap_or_else(PoisonError::into_inner);
            trees.retain(|_, tree| {
                let state = tree.state();
                state.writers > 0 || state.used.is_some_and(|used| used.elapsed() < FORGET)
            });
            trees.entry(quota.tree.clone()).or_default().clone()
        };
        let stale = {
            let state = tree.state();
            state.writers == 0 && state.measured.is_none_or(|at| at.elapsed() >= REMEASURE)
        };
        if stale {
            let path = quota.tree.clone();
            let measured = tokio::task::spawn_blocking(move || measure(&path))
                .await
                .unwrap_or_else(|e| Err(format!("the walk failed: {e}")));
            // A tree that cannot be walked whole is taken as full: growth is refused (never
            // under-counted), what is freed still counts, and a later walk may find it whole.
            let measured = measured.unwrap_or_else(|why| {
                tracing::warn!(tree = %quota.tree.display(), "cannot measure a budgeted directory ({why}): nothing more may be written into it until it can be");
                (u64::MAX, u64::MAX)
            });
            let mut state = tree.state();
            // Another call may have taken it while this one measured: its count stands.
            if state.writers == 0 {
                (state.bytes, state.entries) = measured;
                state.measured = Some(Instant::now());
            }
        }
        let mut state = tree.state();
        state.writers += 1;
        state.used = Some(Instant::now());
        drop(state);
        Held { tree, limits: quota.limits }
    }

    /// Adds `bytes` and `entries` to the tree, or says which budget they would pass.
    pub fn grow(&self, bytes: u64, entries: u64) -> Result<(), OverBudget> {
        let mut state = self.tree.state();
        let (new_bytes, new_entries) = (state.bytes.saturating_add(bytes), state.entries.saturating_add(entries));
        if !crate::switched_off!("writes.tree-budget") {
            if let Some(max) = self.limits.max_bytes
                && bytes > 0
                && new_bytes > max
            {
                return Err(OverBudget(format!(
                    "the directory may hold at most {} MiB (max_mib): it holds {} bytes",
                    max >> 20,
                    state.bytes
                )));
            }
            if let Some(max) = self.limits.max_files
                && entries > 0
                && new_entries > max
            {
                return Err(OverBudget(format!(
                    "the directory may hold at most {max} entries (max_files): it holds {}",
                    state.entries
                )));
            }
        }
        (state.bytes, state.entries) = (new_bytes, new_entries);
        Ok(())
    }

    /// Takes `bytes` and `entries` off the tree (freed, or a growth that did not happen).
    pub fn shrink(&self, bytes: u64, entries: u64) {
        let mut state = self.tree.state();
        state.bytes = state.bytes.saturating_sub(bytes);
        state.entries = state.entries.saturating_sub(entries);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut state = self.tree.state();
        state.writers = state.writers.saturating_sub(1);
    }
}

impl Tree {
    fn state(&self) -> std::sync::MutexGuard<'_, TreeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The bytes (apparent sizes, a file with several links once) and entries under `root`,
/// symlinks counted but never followed; an error when it cannot be walked whole.
fn measure(root: &Path) -> Result<(u64, u64), String> {
    let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| e.to_string())?;
    measure_dir(&dir)
}

/// [`measure`] of an open directory: depth first, one open listing per level (no depth limit:
/// round three stopped at 256 levels, and 6 MiB at depth 262 was never counted again), at most
/// [`MAX_WALKED`] entries; anything it cannot read or open fails the whole walk.
pub(crate) fn measure_dir(dir: &Dir) -> Result<(u64, u64), String> {
    use cap_std::fs::MetadataExt;
    if crate::switched_off!("writes.measure-complete") {
        return Ok(round_three_measure(dir));
    }
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut linked = std::collections::HashSet::new();
    let mut levels = vec![dir.entries().map_err(|e| e.to_string())?];
    while let Some(listing) = levels.last_mut() {
        let Some(entry) = listing.next() else {
            levels.pop();
            continue;
        };
        let entry = entry.map_err(|e| e.to_string())?;
        entries += 1;
        if entries > MAX_WALKED {
            return Err(format!("more than {MAX_WALKED} entries"));
        }
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            let sub = entry.open_dir().map_err(|e| format!("{}: {e}", entry.file_name().to_string_lossy()))?;
            levels.push(sub.entries().map_err(|e| e.to_string())?);
        } else if kind.is_file() {
            let meta = entry.metadata().map_err(|e| e.to_string())?;
            if meta.nlink() <= 1 || linked.insert((meta.dev(), meta.ino())) {
                bytes = bytes.saturating_add(meta.len());
            }
        }
    }
    Ok((bytes, entries))
}

/// Round three's walk (depth-limited, what it cannot read left out), kept only for the fail
/// point that proves the test of a deep tree guards the walk above.
fn round_three_measure(dir: &Dir) -> (u64, u64) {
    use cap_std::fs::MetadataExt;
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut linked = std::collections::HashSet::new();
    let Ok(first) = dir.try_clone() else { return (0, 0) };
    let mut pending = vec![(first, 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(listing) = dir.entries() else { continue };
        for entry in listing.flatten() {
            entries += 1;
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth < ROUND_THREE_DEPTH
                    && let Ok(sub) = entry.open_dir()
                {
                    pending.push((sub, depth + 1));
                }
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
                && (meta.nlink() <= 1 || linked.insert((meta.dev(), meta.ino())))
            {
                bytes = bytes.saturating_add(meta.len());
            }
        }
    }
    (bytes, entries)
}

/// What one call may still write (`max_write_mib`), shared by its descriptors and streams.
#[derive(Debug)]
pub struct CallWrites {
    limit: u64,
    written: AtomicU64,
    /// The host log got its line about a refusal in this call.
    logged: AtomicBool,
}

impl CallWrites {
    /// A call that may write `limit` bytes.
    pub fn new(limit: u64) -> CallWrites {
        CallWrites { limit, written: AtomicU64::new(0), logged: AtomicBool::new(false) }
    }

    /// Counts `bytes` against the call's limit, or says it would pass it.
    pub fn charge(&self, bytes: u64) -> Result<(), OverBudget> {
        let before = self.written.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit && !crate::switched_off!("writes.call-budget") {
            self.written.fetch_sub(bytes, Ordering::Relaxed);
            return Err(OverBudget(format!(
                "a call may write at most {} MiB (max_write_mib): it wrote {before} bytes",
                self.limit >> 20
            )));
        }
        Ok(())
    }

    /// Gives back `bytes` charged for a change that did not happen.
    pub fn refund(&self, bytes: u64) {
        let _ = self.written.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| Some(w.saturating_sub(bytes)));
    }

    /// Whether this is the call's first refusal (logged once per call; counted every time).
    pub fn first_refusal(&self) -> bool {
        !self.logged.swap(true, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_writes_up_to_its_limit_and_not_a_byte_more() {
        let writes = CallWrites::new(10);
        assert!(writes.charge(6).is_ok());
        assert!(writes.charge(5).is_err(), "6 + 5 > 10");
        assert!(writes.charge(4).is_ok(), "a refused charge took nothing");
        writes.refund(4);
        assert!(writes.charge(4).is_ok());
    }

    /// Round four: the walk stopped at 256 levels, so a file deeper down was never counted
    /// again; and a tree it cannot walk whole is full, never counted short.
    #[test]
    fn a_deep_tree_is_measured_whole_and_one_that_cannot_be_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_owned();
        for _ in 0..262 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("bottom"), vec![0u8; 6000]).unwrap();
        assert_eq!(measure(dir.path()).unwrap(), (6000, 263));
        assert!(measure(&dir.path().join("missing")).is_err());
    }

    #[tokio::test]
    async fn a_tree_is_measured_once_while_held_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![0u8; 1000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), vec![0u8; 24]).unwrap();
        std::fs::hard_link(dir.path().join("sub/b"), dir.path().join("c")).unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("up")).unwrap();
        assert_eq!(measure(dir.path()).unwrap(), (1024, 5), "a, sub, sub/b, c (a link to b, counted once), up");
        let limits = DirQuota { max_bytes: Some(2048), max_files: Some(6) };
        let quota = Quota::over(dir.path(), limits).unwrap();
        let held = Held::take(&quota).await;
        assert!(held.grow(1024, 1).is_ok());
        assert!(held.grow(1, 0).is_err(), "2048 bytes is the budget");
        assert!(held.grow(0, 1).is_err(), "6 entries is the budget");
        let second = Held::take(&quota).await;
        assert!(second.grow(1, 0).is_err(), "a second call shares the first one's count");
        held.shrink(1024, 1);
        assert!(second.grow(1, 1).is_ok());
    }
}
