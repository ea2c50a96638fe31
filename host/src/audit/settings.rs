//! What the operator chose for the audit (`--audit PATH`, `[audit]`), checked by the config
//! layer (`config/audit.rs`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::registry::cosign::SigningKey;

/// How a call's arguments appear in its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arguments {
    /// Their SHA-256 only (the default): confirms given arguments, shows none.
    Digest,
    /// The arguments themselves (cut at [`FULL_ARGUMENTS_MAX`] bytes), with their digest.
    Full,
}

/// Bytes of arguments a line holds in full; longer ones are cut (their digest is whole).
pub(crate) const FULL_ARGUMENTS_MAX: usize = 64 << 10;

/// What happens to calls when a line cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Calls are refused until the audit can be written again (the default).
    Closed,
    /// Calls go on; the host logs each line lost and counts it.
    Open,
}

/// When lines reach the disk itself (`fsync`), not only the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fsync {
    /// After every line, before the response (the default).
    Line,
    /// At each checkpoint and rotation: a crash can lose the lines since.
    Checkpoint,
}

/// The audit as configured.
#[derive(Clone)]
pub(crate) struct AuditSettings {
    /// The file; `{replica}` in it becomes the replica's id.
    pub(crate) path: PathBuf,
    pub(crate) arguments: Arguments,
    /// Signs a checkpoint every `checkpoint_lines` lines or `checkpoint_every`, whichever
    /// comes first (and before each rotation).
    pub(crate) key: Option<Arc<SigningKey>>,
    pub(crate) checkpoint_lines: u64,
    pub(crate) checkpoint_every: Duration,
    /// The file is rotated (renamed `PATH.1`, `PATH.2`, ...) before it passes this size.
    pub(crate) rotate_bytes: u64,
    pub(crate) on_failure: OnFailure,
    pub(crate) fsync: Fsync,
    /// Also send every line as an OTLP log record to this collector (`otlp.rs`).
    pub(crate) otlp_endpoint: Option<String>,
}

impl AuditSettings {
    /// Defaults for a file at `path`.
    pub(crate) fn at(path: PathBuf) -> AuditSettings {
        AuditSettings {
            path,
            arguments: Arguments::Digest,
            key: None,
            checkpoint_lines: 1000,
            checkpoint_every: Duration::from_secs(60),
            rotate_bytes: 64 << 20,
            on_failure: OnFailure::Closed,
            fsync: Fsync::Line,
            otlp_endpoint: None,
        }
    }
}

impl std::fmt::Debug for AuditSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSettings")
            .field("path", &self.path)
            .field("arguments", &self.arguments)
            .field("key", &self.key.as_ref().map(|_| "set"))
            .field("checkpoint_lines", &self.checkpoint_lines)
            .field("checkpoint_every", &self.checkpoint_every)
            .field("rotate_bytes", &self.rotate_bytes)
            .field("on_failure", &self.on_failure)
            .field("fsync", &self.fsync)
            .field("otlp_endpoint", &self.otlp_endpoint)
            .finish()
    }
}
