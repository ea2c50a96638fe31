//! `mcpbox inspect FILE.wasm`: what a component offers and needs, without serving it, as one
//! typed [`Description`] printed as JSON (`--json`) or as text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use super::grants::{Granted, Style};
use crate::config::{ServeArgs, Settings};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::grants::requested::RequestedPolicy;
use crate::runtime::{CallScope, Limits, PluginConfig, catalog, interface_names, plugin_name};

/// `mcpbox inspect FILE [--json] [--config FILE]`.
pub(crate) async fn run(file: PathBuf, json: bool, config: Option<PathBuf>) -> Result<()> {
    // The engine `mcpbox serve FILE --config CONFIG` would build, so that the plugin compiled
    // here is the one serving loads from the cache (copy-on-write is part of its key).
    let cache_dir = std::env::var_os("MCPBOX_CACHE_DIR").map(PathBuf::from);
    let args = ServeArgs { paths: vec![file.clone()], config, cache_dir, ..Default::default() };
    let settings = Settings::from_args(&args)?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let name = plugin_name(&file);
    let plugin_config = settings.plugin_configs.get(&name).cloned();
    let limits = settings.limits;
    let mut description = describe(&compiler, &file, limits, plugin_config).await?;
    description.granted.through_callees = configured_callees(&settings, &name, &description.granted.may_call);
    if json {
        println!("{}", serde_json::to_string_pretty(&description)?);
    } else {
        print!("{}", description.render());
    }
    Ok(())
}

/// What the config grants the plugins whose tools `patterns` name (by their names, the
/// prefix before the first `.`), `name: grants` each: inspect sees one plugin, and the config
/// the others (`mcpbox check` reads the loaded catalog instead).
fn configured_callees(settings: &Settings, name: &str, patterns: &[String]) -> Vec<String> {
    let mut callees: Vec<String> = settings
        .plugin_configs
        .iter()
        .filter(|(other, _)| *other != name)
        .filter(|(other, _)| {
            let served = format!("{other}.");
            patterns.iter().any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => served.starts_with(prefix) || prefix.starts_with(&served),
                None => pattern.starts_with(&served),
            })
        })
        .map(|(other, config)| {
            let granted = Granted::new(&config.policy, settings.limits, None, None, true);
            let mut parts = granted.filesystem("the shared roots", Style::Long);
            parts.extend(granted.network(Style::Long).map(|network| format!("network {network}")));
            let grants = if parts.is_empty() { "nothing".to_owned() } else { parts.join(", ") };
            format!("{other}: {grants}")
        })
        .collect();
    callees.sort();
    callees
}

/// What `mcpbox inspect` shows of one plugin.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Description {
    plugin: String,
    path: String,
    exports: Vec<String>,
    imports: Vec<String>,
    requested: Option<RequestedPolicy>,
    granted: Granted,
    load_problem: Option<String>,
    tools: Vec<ToolView>,
    /// What the plugin lists without any directory.
    resources: Vec<ResourceView>,
    /// Why listing its resources failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    resources_error: Option<String>,
    resource_templates: Vec<TemplateView>,
    prompts: Vec<PromptView>,
    /// What it says beyond its descriptors (WIT 0.1.3): MCP Apps with their HTML's digest,
    /// the skills it ships, what it adds to the server's instructions.
    apps: Vec<AppView>,
    skills: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AppView {
    uri: String,
    /// The tools whose `_meta.ui.resourceUri` names it.
    tools: Vec<String>,
    /// `sha256:` of the HTML it served at load (what is pinned).
    html: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolView {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Map<String, Value>,
    output_schema: Option<Map<String, Value>>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    icons: Vec<Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceView {
    uri: String,
    name: String,
    mime_type: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateView {
    name: String,
    uri_template: String,
    description: Option<String>,
}

#[derive(Debug, Serialize)]
struct PromptView {
    name: String,
    description: Option<String>,
    arguments: Vec<PromptArgumentView>,
}

#[derive(Debug, Serialize)]
struct PromptArgumentView {
    name: String,
    required: bool,
}

/// Describes the plugin at `path`, with what it requests beside what `config` (the operator's
/// config for it, if any) grants.
pub(crate) async fn describe(
    compiler: &Compiler,
    path: &Path,
    limits: Limits,
    config: Option<PluginConfig>,
) -> Result<Description> {
    let configured = config.is_some();
    let config = config.unwrap_or_default();
    let limits = config.limits(limits);
    let (loaded, load_problem) = catalog::load_one(compiler, path, limits, config.policy.clone()).await?;
    let (imports, exports) = interface_names(compiler.engine(), loaded.component());
    let (resources, resources_error) = if loaded.exports.resources.is_some() {
        match loaded.list_resources(CallScope::default()).await {
            Ok(listed) => (listed, None),
            Err(error) => (Vec::new(), Some(error.to_string())),
        }
    } else {
        (Vec::new(), None)
    };
    let prefixed = |name: &str| format!("{}{name}", loaded.prefix);
    Ok(Description {
        plugin: loaded.name.to_string(),
        path: path.display().to_string(),
        exports,
        imports,
        requested: loaded.requested.clone(),
        granted: Granted::new(&config.policy, limits, config.max_concurrency, config.tasks.as_ref(), configured),
        load_problem,
        tools: loaded
            .tools
            .iter()
            .map(|t| ToolView {
                name: prefixed(&t.descriptor.name),
                title: t.descriptor.title.clone(),
                description: t.descriptor.description.clone(),
                input_schema: t.input_schema.clone(),
                output_schema: t.output_schema.clone(),
                meta: loaded.metadata.tools.get(&t.descriptor.name).and_then(|m| m.meta.clone()),
                icons: loaded.metadata.tools.get(&t.descriptor.name).map(|m| m.icons.clone()).unwrap_or_default(),
            })
            .collect(),
        resources: resources
            .into_iter()
            .map(|r| ResourceView { uri: r.uri, name: r.name, mime_type: r.mime_type })
            .collect(),
        resources_error,
        resource_templates: loaded
            .templates
            .iter()
            .map(|t| TemplateView {
                name: prefixed(&t.name),
                uri_template: t.uri_template.clone(),
                description: t.description.clone(),
            })
            .collect(),
        prompts: loaded
            .prompts
            .iter()
            .map(|p| PromptView {
                name: prefixed(&p.name),
                description: p.description.clone(),
                arguments: p
                    .arguments
                    .iter()
                    .map(|a| PromptArgumentView { name: a.name.clone(), required: a.required })
                    .collect(),
            })
            .collect(),
        apps: loaded
            .metadata
            .apps
            .iter()
            .map(|(uri, html)| AppView {
                uri: uri.clone(),
                tools: loaded
                    .metadata
                    .tools
                    .iter()
                    .filter(|(_, item)| {
                        let ui = item.meta.as_ref().and_then(|m| m.get("ui"));
                        ui.and_then(|ui| ui.get("resourceUri")).and_then(Value::as_str) == Some(uri)
                    })
                    .map(|(name, _)| prefixed(name))
                    .collect(),
                html: html.clone(),
            })
            .collect(),
        skills: loaded.metadata.skills.iter().map(|(skill, _)| skill.uri.clone()).collect(),
        instructions: loaded.metadata.instructions.clone(),
    })
}

impl Description {
    /// The description as readable text.
    fn render(&self) -> String {
        let mut out = format!("plugin {} ({})\n\nexports:\n", self.plugin, self.path);
        for export in &self.exports {
            let _ = writeln!(out, "  {export}");
        }
        out += "\nimports:\n";
        for import in &self.imports {
            let _ = writeln!(out, "  {import}");
        }
        out += &self.render_policy();
        let _ = writeln!(out, "\ntools ({}):", self.tools.len());
        for t in &self.tools {
            let _ = writeln!(out, "  {}: {}", t.name, t.description.as_deref().unwrap_or_default());
            let _ = writeln!(out, "    input schema: {}", Value::Object(t.input_schema.clone()));
            if let Some(output) = &t.output_schema {
                let _ = writeln!(out, "    output schema: {}", Value::Object(output.clone()));
            }
        }
        let _ = writeln!(out, "\nresources ({}):", self.resources.len());
        if let Some(error) = &self.resources_error {
            let _ = writeln!(out, "  listing failed: {error}");
        }
        for r in &self.resources {
            let _ = writeln!(out, "  {} ({})", r.uri, r.name);
        }
        let _ = writeln!(out, "\nresource templates ({}):", self.resource_templates.len());
        for t in &self.resource_templates {
            let _ = writeln!(out, "  {}: {}", t.name, t.uri_template);
        }
        let _ = writeln!(out, "\nprompts ({}):", self.prompts.len());
        for p in &self.prompts {
            let args: Vec<String> =
                p.arguments.iter().map(|a| format!("{}{}", a.name, if a.required { "" } else { "?" })).collect();
            let _ =
                writeln!(out, "  {}({}): {}", p.name, args.join(", "), p.description.as_deref().unwrap_or_default());
        }
        if !self.apps.is_empty() {
            let _ = writeln!(
                out,
                "
apps ({}), run in the client's sandboxed iframe:",
                self.apps.len()
            );
            for app in &self.apps {
                let _ = writeln!(out, "  {} for {} (HTML {})", app.uri, app.tools.join(", "), app.html);
            }
        }
        if !self.skills.is_empty() {
            let _ = writeln!(
                out,
                "
skills ({}):",
                self.skills.len()
            );
            for skill in &self.skills {
                let _ = writeln!(out, "  {skill}");
            }
        }
        if let Some(instructions) = &self.instructions {
            let _ = writeln!(
                out,
                "
instructions:
  {}",
                instructions.replace('\n', "\n  ")
            );
        }
        out
    }

    /// The "requested → granted" lines.
    fn render_policy(&self) -> String {
        let or_none = |items: &[String]| if items.is_empty() { "none".to_owned() } else { items.join(", ") };
        let requested = self.requested.clone().unwrap_or_default();
        let granted = &self.granted;
        let mut out = String::from(if granted.configured {
            "\npolicy (requested by the plugin → granted by the config):\n"
        } else {
            "\npolicy (requested by the plugin → granted; no config given, so the defaults):\n"
        });
        match (&self.requested, &requested.reason) {
            (None, _) => out += "  the plugin requests nothing (no mcpbox-policy section, no .policy.toml)\n",
            (Some(_), Some(reason)) => {
                let _ = writeln!(out, "  reason given: {reason}");
            }
            (Some(_), None) => {}
        }
        let filesystem = requested.filesystem.map_or("-".to_owned(), |access| {
            serde_json::to_value(access).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
        });
        let fs_granted = granted.filesystem("the shared roots (--root, [[roots]])", Style::Long);
        let _ = writeln!(out, "  filesystem: {filesystem} → {}", or_none(&fs_granted));
        let network = granted.network(Style::Long).unwrap_or_else(|| "none".to_owned());
        let _ = writeln!(out, "  network: {} → {network}", or_none(&requested.network));
        let _ = writeln!(out, "  env: {} → {}", or_none(&requested.env), or_none(&granted.env));
        if !granted.credentials.is_empty() {
            let _ = writeln!(
                out,
                "  credentials (set by mcpbox, never seen by the plugin): {}",
                granted.credentials.join("; ")
            );
        }
        let limits = &granted.limits;
        let _ = writeln!(
            out,
            "  limits: timeout {} ms (requested {}), memory {} MiB (requested {}), output {} KiB, concurrency {}",
            limits.timeout_ms,
            requested.timeout_ms.map_or("-".to_owned(), |v| v.to_string()),
            limits.memory_mib,
            requested.memory_mib.map_or("-".to_owned(), |v| v.to_string()),
            limits.max_output_bytes >> 10,
            limits.max_concurrency.map_or("unlimited".to_owned(), |v| v.to_string()),
        );
        if !granted.tasks.is_empty() {
            let _ = writeln!(out, "  tasks: {}", granted.tasks.join(", "));
        }
        if !granted.may_call.is_empty() {
            // Their results come back to it: what they reach, it reaches in data.
            let through = match granted.through_callees.as_slice() {
                [] => "no configured plugin".to_owned(),
                callees => callees.join("; "),
            };
            let _ = writeln!(out, "  may call: {} → reaching through them: {through}", granted.may_call.join(", "));
        }
        match &self.load_problem {
            Some(problem) => {
                let _ = writeln!(out, "  loads under this policy: no: {problem}");
            }
            None => out += "  loads under this policy: yes\n",
        }
        out
    }
}
