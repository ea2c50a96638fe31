//! Which `mcpbox:plugin` interfaces a plugin exports, as handles into its component.

use crate::runtime::engine::bindings::{completion, metadata, prompts, resources, tools};

/// Handles to the interfaces the plugin exports; `None` for those it doesn't.
#[derive(Clone, Default)]
pub struct Exports {
    /// `mcpbox:plugin/tools`
    pub tools: Option<tools::GuestIndices>,
    /// `mcpbox:plugin/resources`
    pub resources: Option<resources::GuestIndices>,
    /// `mcpbox:plugin/prompts`
    pub prompts: Option<prompts::GuestIndices>,
    /// `mcpbox:plugin/completion`
    pub completion: Option<completion::GuestIndices>,
    /// `mcpbox:plugin/metadata` (since 0.1.3)
    pub metadata: Option<metadata::GuestIndices>,
}

impl Exports {
    /// Whether it exports any `mcpbox:plugin` interface that describes something.
    pub(crate) fn any(&self) -> bool {
        self.tools.is_some() || self.resources.is_some() || self.prompts.is_some()
    }
}
