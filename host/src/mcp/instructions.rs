//! The server's `instructions` (`initialize` and `server/discover` results): the operator's
//! (`instructions` in the config), then the lines that point at the skills served
//! (extensions/skills §Pointer from Server Instructions). Read fresh for every answer, so a
//! skill added on disk shows up without a restart.

use super::session::Session;
use super::skills;

/// The most characters of instructions sent: they go into every model context the client
/// builds, so an operator's mistake must not fill it.
const MAX_INSTRUCTIONS_CHARS: usize = 16 << 10;

impl Session {
    /// What the server tells clients about itself; `None` when there is nothing to say.
    pub(crate) fn instructions(&self) -> Option<String> {
        let parts: Vec<String> = [self.state.instructions.clone(), skills::instructions(&self.state.skills.current())]
            .into_iter()
            .flatten()
            .filter(|part| !part.trim().is_empty())
            .collect();
        if parts.is_empty() {
            return None;
        }
        Some(parts.join("\n\n").chars().take(MAX_INSTRUCTIONS_CHARS).collect())
    }
}
