//! Host bindings generated from `wit/` (the `mcpbox:plugin` package), the same source the SDK
//! uses. Exports are called asynchronously so guests run on tokio's threads under epochs.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "described-plugin",
    // Sampling and elicitation wait for the client; the others but `detach` answer at once.
    // They may also stop the call (trap) when a stateless client must be asked first.
    imports: {
        "mcpbox:plugin/host.sample": async | trappable,
        "mcpbox:plugin/host.elicit": async | trappable,
        "mcpbox:plugin/host.ask": async | trappable,
        // Creating a task waits for the task store.
        "mcpbox:plugin/host.detach": async,
        // Another tool's call runs meanwhile; it may stop this one too (its questions).
        "mcpbox:plugin/host.call-tool": async | trappable,
    },
    exports: { default: async },
    // Hot reload compares descriptors to tell clients what changed; the output budget
    // measures every value a guest returns as the JSON it becomes, every field included
    // (runtime/sandbox/budget.rs), so no field can be left uncounted.
    additional_derives: [PartialEq, serde::Serialize],
});

pub use self::mcpbox::plugin::{host, types};
pub use exports::mcpbox::plugin::{completion, metadata, prompts, resources, tools};

/// The names of the interfaces a plugin may export, as they appear in a component's type.
pub mod export_names {
    /// `tools`
    pub const TOOLS: &str = "mcpbox:plugin/tools@0.1.4";
    /// `resources`
    pub const RESOURCES: &str = "mcpbox:plugin/resources@0.1.4";
    /// `prompts`
    pub const PROMPTS: &str = "mcpbox:plugin/prompts@0.1.4";
    /// `completion`
    pub const COMPLETION: &str = "mcpbox:plugin/completion@0.1.4";
    /// `metadata` (since 0.1.3)
    pub const METADATA: &str = "mcpbox:plugin/metadata@0.1.4";
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_wit_reference_shows_the_current_package() {
        let reference = include_str!("../../../../docs/wit.md");
        let package = include_str!("../../../../wit/plugin.wit");
        assert!(reference.contains(package), "docs/wit.md is out of date: copy wit/plugin.wit into it");
    }
}
