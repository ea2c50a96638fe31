//! `mcpbox inspect FILE.wasm`: what a component offers and needs, without serving it.

use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};
use wasmtime::Engine;

use crate::bindings::resources;
use crate::catalog::load_one;
use crate::plugin;
use crate::sandbox::{CallScope, Limits};

/// Describes the plugin at `path` as JSON.
pub async fn describe(engine: &Engine, path: &Path, limits: Limits) -> Result<Value> {
    let loaded = load_one(engine, path, limits).await?;
    let (imports, exports) = plugin::interface_names(engine, loaded.pre.component());
    // Resources without any grant: what the plugin lists on its own.
    let resources: Vec<resources::Resource> = match loaded.exports.resources.clone() {
        Some(indices) => loaded
            .run(CallScope::default(), move |store, instance| {
                Box::pin(async move { indices.load(&mut *store, &instance)?.call_list_resources(&mut *store).await })
            })
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let tools: Vec<Value> = loaded
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": format!("{}{}", loaded.prefix, t.descriptor.name),
                "title": t.descriptor.title,
                "description": t.descriptor.description,
                "inputSchema": t.input_schema,
                "outputSchema": t.output_schema,
            })
        })
        .collect();
    Ok(json!({
        "plugin": &*loaded.name,
        "path": path.display().to_string(),
        "exports": exports,
        "imports": imports,
        "tools": tools,
        "resources": resources.iter().map(|r| json!({ "uri": r.uri, "name": r.name, "mimeType": r.mime_type })).collect::<Vec<_>>(),
        "resourceTemplates": loaded.templates.iter().map(|t| json!({
            "name": format!("{}{}", loaded.prefix, t.name), "uriTemplate": t.uri_template, "description": t.description,
        })).collect::<Vec<_>>(),
        "prompts": loaded.prompts.iter().map(|p| json!({
            "name": format!("{}{}", loaded.prefix, p.name),
            "description": p.description,
            "arguments": p.arguments.iter().map(|a| json!({ "name": a.name, "required": a.required })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    }))
}

/// The same as readable text.
pub fn render(description: &Value) -> String {
    let mut out = String::new();
    let list = |key: &str| description[key].as_array().cloned().unwrap_or_default();
    out += &format!(
        "plugin {} ({})\n",
        description["plugin"].as_str().unwrap_or("?"),
        description["path"].as_str().unwrap_or("?")
    );
    out += "\nexports:\n";
    for e in list("exports") {
        out += &format!("  {}\n", e.as_str().unwrap_or_default());
    }
    out += "\nimports:\n";
    for i in list("imports") {
        out += &format!("  {}\n", i.as_str().unwrap_or_default());
    }
    out += &format!("\ntools ({}):\n", list("tools").len());
    for t in list("tools") {
        out += &format!(
            "  {}: {}\n",
            t["name"].as_str().unwrap_or_default(),
            t["description"].as_str().unwrap_or_default()
        );
        out += &format!("    input schema: {}\n", t["inputSchema"]);
        if !t["outputSchema"].is_null() {
            out += &format!("    output schema: {}\n", t["outputSchema"]);
        }
    }
    out += &format!("\nresources ({}):\n", list("resources").len());
    for r in list("resources") {
        out += &format!("  {} ({})\n", r["uri"].as_str().unwrap_or_default(), r["name"].as_str().unwrap_or_default());
    }
    out += &format!("\nresource templates ({}):\n", list("resourceTemplates").len());
    for t in list("resourceTemplates") {
        out += &format!(
            "  {}: {}\n",
            t["name"].as_str().unwrap_or_default(),
            t["uriTemplate"].as_str().unwrap_or_default()
        );
    }
    out += &format!("\nprompts ({}):\n", list("prompts").len());
    for p in list("prompts") {
        let args: Vec<String> = p["arguments"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|a| {
                        format!(
                            "{}{}",
                            a["name"].as_str().unwrap_or_default(),
                            if a["required"] == true { "" } else { "?" }
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out += &format!(
            "  {}({}): {}\n",
            p["name"].as_str().unwrap_or_default(),
            args.join(", "),
            p["description"].as_str().unwrap_or_default()
        );
    }
    out
}
