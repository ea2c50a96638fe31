//! The server's `instructions` (`initialize` and `server/discover` results): the operator's
//! (`instructions` in the config), then the lines that point at the skills served
//! (extensions/skills §Pointer from Server Instructions). Read fresh for every answer, so a
//! skill added on disk shows up without a restart.

use crate::mcp::session::Session;
use crate::mcp::skills;
use crate::runtime::catalog::DefinitionKind;

/// The most characters of instructions sent: they go into every model context the client
/// builds, so an operator's mistake must not fill it.
const MAX_INSTRUCTIONS_CHARS: usize = 16 << 10;

impl Session {
    /// What the server tells clients about itself; `None` when there is nothing to say.
    pub(crate) fn instructions(&self) -> Option<String> {
        let catalog = self.state.catalog();
        // Each plugin's own (WIT 0.1.3), pinned like its definitions: withheld once changed.
        let plugins = catalog.plugins().iter().filter_map(|plugin| {
            let text = plugin.metadata.instructions.as_ref()?;
            if catalog.withholds(&plugin.name, DefinitionKind::Instructions, "instructions") {
                return None;
            }
            Some(format!("From the {} plugin:\n{text}", plugin.name))
        });
        let parts: Vec<String> = std::iter::once(self.state.instructions.clone())
            .flatten()
            .chain(plugins)
            .chain(skills::instructions(&self.state.skills.current()))
            .filter(|part| !part.trim().is_empty())
            .collect();
        if parts.is_empty() {
            return None;
        }
        Some(parts.join("\n\n").chars().take(MAX_INSTRUCTIONS_CHARS).collect())
    }
}
