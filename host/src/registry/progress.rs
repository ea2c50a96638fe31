//! How a transfer goes, reported to whoever draws it.

/// How a download or upload goes, for the command line to draw: the registry layer draws
/// nothing itself. One transfer at a time.
pub(crate) trait Progress: Sync {
    /// A transfer of `total` bytes begins; `what` says of what (`pulling oci://...`).
    fn begin(&self, what: &str, total: u64);
    /// `bytes` more went through.
    fn advance(&self, bytes: u64);
    /// The transfer ended, whether it succeeded or not.
    fn end(&self);
}

/// Progress nobody watches (`serve`, whose log says what was pulled).
pub(crate) struct Unwatched;

impl Progress for Unwatched {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}
