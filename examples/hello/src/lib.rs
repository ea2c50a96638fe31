//! The smallest useful mcpbox plugin: one tool, written with the Rust SDK as an annotated
//! function.

use mcpbox_sdk::prelude::*;

/// Arguments of `greet`; the doc comments become the schema's descriptions.
#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

mcpbox_sdk::tools! {
    /// Greets someone by name
    fn greet(args: Greet) -> Result<String, Error> {
        Ok(format!("Hello, {}!", args.name))
    }
}

fn plugin() -> Plugin {
    Plugin::new().tool(greet::tool())
}

mcpbox_sdk::export_plugin!(plugin);
