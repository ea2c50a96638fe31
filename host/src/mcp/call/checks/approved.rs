//! What the server and each session remember of approvals (`approval.rs` asks for them):
//! "allow for this session" per session and per principal, and the approval answers calls
//! used up.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use ring::rand::{SecureRandom, SystemRandom};
use rmcp::ErrorData as McpError;

/// How long a principal's "allow for this session" lasts in 2026-07-28 requests, which have no
/// session of their own: a working day.
pub(crate) const PRINCIPAL_SESSION: Duration = Duration::from_secs(8 * 3600);
/// At most this many remembered approvals and used-up question ids (the oldest go first).
const REMEMBERED: usize = 10_000;

/// A tool of one version of one plugin: what an "allow for this session" covers (a plugin
/// reloaded with other bytes is asked about again).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ApprovedTool {
    pub(crate) plugin: String,
    pub(crate) tool: String,
    pub(crate) fingerprint: u64,
}

/// What the server remembers of approvals beside each session's own: principals' "for this
/// session" in 2026-07-28 requests, and the question ids calls used up.
pub(crate) struct Approvals {
    /// How long a legacy session's question waits.
    pub(crate) timeout: Duration,
    /// How long a question id must stay used up: the `requestState` that carries it expires.
    state_ttl: Duration,
    pub(crate) principals: Mutex<HashMap<(String, ApprovedTool), Instant>>,
    used: Mutex<HashMap<String, Instant>>,
    random: SystemRandom,
}

impl Approvals {
    pub(crate) fn new(timeout: Duration, state_ttl: Duration) -> Approvals {
        Approvals {
            timeout,
            state_ttl,
            principals: Mutex::default(),
            used: Mutex::default(),
            random: SystemRandom::new(),
        }
    }

    /// Marks the question `id` used: its answer approved one call, which ran.
    pub(crate) fn use_up(&self, id: &str) {
        let until = Instant::now() + self.state_ttl;
        remember(&mut self.used.lock().unwrap_or_else(PoisonError::into_inner), id.to_owned(), until);
    }

    pub(crate) fn used(&self, id: &str) -> bool {
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.get(id).is_some_and(|until| *until > Instant::now()) && !crate::switched_off!("approvals.once")
    }

    pub(crate) fn new_id(&self) -> Result<String, McpError> {
        let mut bytes = [0u8; 16];
        self.random.fill(&mut bytes).map_err(|_| McpError::internal_error("cannot make a question id", None))?;
        Ok(crate::hex::hex(&bytes))
    }
}

/// Keeps `key` until `until`, dropping what expired, and the oldest entry when full.
pub(crate) fn remember<K: Eq + std::hash::Hash + Clone>(map: &mut HashMap<K, Instant>, key: K, until: Instant) {
    let now = Instant::now();
    map.retain(|_, expiry| *expiry > now);
    if map.len() >= REMEMBERED
        && let Some(oldest) = map.iter().min_by_key(|(_, expiry)| **expiry).map(|(k, _)| k.clone())
    {
        map.remove(&oldest);
    }
    map.insert(key, until);
}

/// The approvals one session remembers ("allow for this session").
pub(crate) type SessionApprovals = std::sync::Arc<Mutex<HashSet<ApprovedTool>>>;
