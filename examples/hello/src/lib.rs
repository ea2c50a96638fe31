//! The smallest useful mcpbox plugin: one tool, written with the Rust SDK.

use mcpbox_sdk::prelude::*;

/// Arguments of `greet`; the doc comments become the schema's descriptions.
#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn plugin() -> Plugin {
    Plugin::new().tool(Tool::new("greet", "Greets someone by name", |args: Greet| Ok(format!("Hello, {}!", args.name))))
}

mcpbox_sdk::export_plugin!(plugin);
