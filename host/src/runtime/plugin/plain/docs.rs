//! The doc comments of a plain component's exported functions, where the component carries
//! them, to describe its tools.

use std::collections::HashMap;

use serde_json::Value;

/// The doc comments of a component's exported functions, where the component carries them: the
/// `package-docs` custom section that wit-component writes for a WIT package (a version byte,
/// then JSON), which tools such as `wit-docs-inject` add to components, as other WebAssembly
/// tool hosts read it. Compilers of guest code (rustc's wasm-component-ld, componentize-py)
/// leave it out, so most components have none.
#[derive(Debug, Default)]
pub(crate) struct FunctionDocs {
    /// (interface name without package and version, or `None` at the root; function) → docs.
    docs: HashMap<(Option<String>, String), String>,
}

impl FunctionDocs {
    pub(crate) fn from_component(bytes: &[u8]) -> FunctionDocs {
        let mut found = FunctionDocs::default();
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else { break };
            if let wasmparser::Payload::CustomSection(section) = payload
                && section.name() == "package-docs"
                && let Some((_version, json)) = section.data().split_first()
                && let Ok(package) = serde_json::from_slice::<Value>(json)
            {
                found.add_package(&package);
            }
        }
        found
    }

    fn add_package(&mut self, package: &Value) {
        let mut add_funcs = |interface: Option<&str>, funcs: &Value| {
            for (function, meta) in funcs.as_object().into_iter().flatten() {
                if let Some(docs) = meta["docs"].as_str() {
                    self.docs.insert((interface.map(str::to_owned), function.clone()), docs.trim().to_owned());
                }
            }
        };
        for (interface, meta) in package["interfaces"].as_object().into_iter().flatten() {
            add_funcs(Some(interface), &meta["funcs"]);
        }
        for world in package["worlds"].as_object().into_iter().flat_map(|worlds| worlds.values()) {
            // `funcs` holds a world's imported functions, and its exported ones when nothing
            // of that name is imported; `func_exports` the rest.
            add_funcs(None, &world["funcs"]);
            add_funcs(None, &world["func_exports"]);
            for (interface, meta) in world["interface_exports"].as_object().into_iter().flatten() {
                add_funcs(Some(interface), &meta["funcs"]);
            }
        }
    }

    pub(super) fn get(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.docs.get(&(interface.map(str::to_owned), function.to_owned())).map(String::as_str)
    }
}
