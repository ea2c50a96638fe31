//! One inner call a round of a 2026-07-28 request completed (`compose.rs`), as the request's
//! sealed `requestState` carries it (`request_state.rs`): a file of its own, since both use it.

use serde::{Deserialize, Serialize};

/// One inner call a round completed: the next round gets its result back instead of running
/// it again, where the same tool is called with the same arguments at the same place in the
/// order of calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Recorded {
    /// Its place among the request's inner calls, in the order they started.
    pub(crate) at: usize,
    /// How many places it and the calls it made took (a replayed call makes none).
    pub(crate) places: usize,
    /// A digest of the tool's name and its arguments.
    pub(crate) call: String,
    /// Its `CallToolResult`.
    pub(crate) result: serde_json::Value,
}
