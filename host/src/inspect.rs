//! `mcpbox inspect FILE.wasm`: what a component offers and needs, without serving it.

use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};
use wasmtime::Engine;

use crate::bindings::resources;
use crate::catalog::{PluginOverride, load_one};
use crate::plugin;
use crate::policy::Policy;
use crate::sandbox::{CallScope, Limits};

/// Describes the plugin at `path` as JSON, with what it requests beside what `setting` (the
/// operator's config for it, if any) grants.
pub async fn describe(engine: &Engine, path: &Path, limits: Limits, setting: Option<PluginOverride>) -> Result<Value> {
    let configured = setting.is_some();
    let setting = setting.unwrap_or_default();
    let limits = setting.limits(limits);
    let (loaded, load_problem) = load_one(engine, path, limits, setting.policy.clone()).await?;
    let (imports, exports) = plugin::interface_names(engine, loaded.pre.component());
    // Resources without any directory: what the plugin lists on its own.
    let resources: Vec<resources::Resource> = match loaded.exports.resources.clone() {
        Some(indices) => loaded
            .run(
                CallScope::default(),
                |_| 0,
                move |store, instance| {
                    Box::pin(
                        async move { indices.load(&mut *store, &instance)?.call_list_resources(&mut *store).await },
                    )
                },
            )
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let policy: &Policy = &setting.policy;
    let granted = json!({
        "configured": configured,
        "sharedRoots": policy.shared_roots,
        "dirs": policy.dirs.iter().map(|d| json!({
            "path": d.dir.path.display().to_string(),
            "name": d.dir.name,
            "writable": d.dir.writable,
            "withinClientRoots": d.within_client_roots,
        })).collect::<Vec<_>>(),
        "network": policy.network.as_ref().map(|n| json!({
            "allow": n.allow.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "allowPrivate": n.allow_private,
        })),
        // Names only: values may be secrets.
        "env": policy.env.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>(),
        "stubUngranted": policy.stub_ungranted,
        "limits": {
            "timeoutMs": limits.timeout.as_millis() as u64,
            "memoryMib": limits.memory_bytes >> 20,
            "maxOutputBytes": limits.output_bytes,
            "maxConcurrency": setting.max_concurrency,
        },
    });
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
        "requested": loaded.requested,
        "granted": granted,
        "loadProblem": load_problem,
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
    out += &render_policy(description);
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

/// The "requested → granted" lines of the text form.
fn render_policy(description: &Value) -> String {
    let requested = &description["requested"];
    let granted = &description["granted"];
    let strings = |value: &Value| -> Vec<String> {
        value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
    };
    let or_none = |items: Vec<String>| if items.is_empty() { "none".to_owned() } else { items.join(", ") };
    let mut out = String::new();
    out += if granted["configured"] == true {
        "\npolicy (requested by the plugin → granted by the config):\n"
    } else {
        "\npolicy (requested by the plugin → granted; no config given, so the defaults):\n"
    };
    if requested.is_null() {
        out += "  the plugin requests nothing (no mcpbox-policy section, no .policy.toml)\n";
    } else if let Some(reason) = requested["reason"].as_str() {
        out += &format!("  reason given: {reason}\n");
    }
    let mut fs_granted = Vec::new();
    if granted["sharedRoots"] == true {
        fs_granted.push("the shared roots (--root, [[roots]])".to_owned());
    }
    for dir in granted["dirs"].as_array().into_iter().flatten() {
        fs_granted.push(format!(
            "{} ({}{})",
            dir["path"].as_str().unwrap_or_default(),
            if dir["writable"] == true { "read-write" } else { "read-only" },
            if dir["withinClientRoots"] == true { ", within client roots" } else { "" }
        ));
    }
    out += &format!("  filesystem: {} → {}\n", requested["filesystem"].as_str().unwrap_or("-"), or_none(fs_granted));
    let network = match granted["network"].as_object() {
        Some(n) => {
            let mut hosts = strings(&n["allow"]).join(", ");
            if n["allowPrivate"] == true {
                hosts += " (private addresses allowed)";
            }
            hosts
        }
        None if granted["stubUngranted"] == true => "none (wasi:http linked as a stub that refuses)".to_owned(),
        None => "none".to_owned(),
    };
    out += &format!("  network: {} → {network}\n", or_none(strings(&requested["network"])));
    out += &format!("  env: {} → {}\n", or_none(strings(&requested["env"])), or_none(strings(&granted["env"])));
    let limits = &granted["limits"];
    out += &format!(
        "  limits: timeout {} ms (requested {}), memory {} MiB (requested {}), output {} KiB, concurrency {}\n",
        limits["timeoutMs"],
        requested["timeout_ms"].as_u64().map_or("-".to_owned(), |v| v.to_string()),
        limits["memoryMib"],
        requested["memory_mib"].as_u64().map_or("-".to_owned(), |v| v.to_string()),
        limits["maxOutputBytes"].as_u64().unwrap_or_default() >> 10,
        limits["maxConcurrency"].as_u64().map_or("unlimited".to_owned(), |v| v.to_string()),
    );
    match description["loadProblem"].as_str() {
        Some(problem) => out += &format!("  loads under this policy: no: {problem}\n"),
        None => out += "  loads under this policy: yes\n",
    }
    out
}
