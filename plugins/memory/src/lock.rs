//! A lock file beside the memory file: WASI has no `flock`, but creating a file that must not
//! exist yet (`O_CREAT | O_EXCL`) is atomic on the host's filesystem, so exactly one writer
//! gets it, in this mcpbox or another one sharing the file. A writer holds it for one
//! read-change-write (milliseconds); one that finds it taken waits and tries again, within its
//! call's time limit. A lock left by a call that was stopped while holding it (its time limit,
//! its memory limit) is taken over once it is older than any writer holds one.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcpbox_sdk::Error;
use mcpbox_sdk::host::is_cancelled;

/// Older than this, a lock file belongs to a writer that was stopped: writers hold it for a
/// read-change-write of the graph, milliseconds even for large graphs.
const STALE_AFTER: Duration = Duration::from_secs(10);
const RETRY_EVERY: Duration = Duration::from_millis(2);

/// Held while it lives; removed when dropped.
pub(crate) struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Waits for the lock of `file` (until the call is cancelled or stopped by its time limit).
    pub(crate) fn acquire(file: &Path) -> Result<Lock, Error> {
        let mut name = file.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = file.with_file_name(name);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Ok(Lock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if is_stale(&path) {
                        // Another waiter may take it over at the same moment: removing and
                        // creating again keeps the creation the only test-and-set.
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if is_cancelled() {
                        return Err(Error::failed("cancelled while waiting for the memory file's lock"));
                    }
                    std::thread::sleep(RETRY_EVERY);
                }
                Err(e) => return Err(Error::failed(format!("cannot lock {}: {e}", path.display()))),
            }
        }
    }
}

fn is_stale(path: &Path) -> bool {
    let modified = std::fs::metadata(path).and_then(|m| m.modified());
    modified.is_ok_and(|at| SystemTime::now().duration_since(at).is_ok_and(|age| age > STALE_AFTER))
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
