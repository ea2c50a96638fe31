//! All loaded plugins as one server: prefixed names, collision checks, deterministic lists,
//! and routing of calls to the plugin that serves them. This is the runtime's API for the
//! protocol layer, and it knows nothing of MCP's wire types.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use wasmtime::Engine;

use crate::bindings::{completion, prompts, resources, tools, types};
use crate::plugin::{self, Linkers, Plugin, ToolInfo};
use crate::policy::Policy;
use crate::sandbox::{CallError, CallScope, Limits};

/// What the operator's config says about one plugin.
#[derive(Debug, Clone, Default)]
pub struct PluginOverride {
    /// Replaces `<name>.` before its tool, prompt and template names.
    pub prefix: Option<String>,
    /// Serve only these tools (by the plugin's own names).
    pub tools: Option<Vec<String>>,
    /// Never serve these tools.
    pub exclude_tools: Vec<String>,
    /// Replace the global limits for this plugin.
    pub timeout: Option<std::time::Duration>,
    pub memory_bytes: Option<usize>,
    pub output_bytes: Option<usize>,
    /// At most this many calls at once.
    pub max_concurrency: Option<usize>,
    /// Directories, network, environment.
    pub policy: Policy,
}

impl PluginOverride {
    pub fn limits(&self, global: Limits) -> Limits {
        Limits {
            timeout: self.timeout.unwrap_or(global.timeout),
            memory_bytes: self.memory_bytes.unwrap_or(global.memory_bytes),
            output_bytes: self.output_bytes.unwrap_or(global.output_bytes),
        }
    }
}

/// Per-plugin settings, by plugin name.
pub type PluginOverrides = HashMap<String, PluginOverride>;

/// A plugin that failed to load, and why.
#[derive(Debug)]
pub struct LoadProblem {
    pub path: PathBuf,
    pub error: anyhow::Error,
}

/// A name the catalog serves, and where it lives.
#[derive(Debug, Clone)]
pub struct Entry<T> {
    /// The name clients see (prefix included).
    pub name: String,
    /// Index of the plugin in [`Catalog::plugins`].
    pub plugin: usize,
    pub item: T,
}

/// What a completion request refers to.
#[derive(Debug, Clone)]
pub enum CompletionTarget {
    Prompt(String),
    ResourceTemplate(String),
}

pub struct Catalog {
    plugins: Vec<Arc<Plugin>>,
    tools: Vec<Entry<ToolInfo>>,
    prompts: Vec<Entry<prompts::Prompt>>,
    templates: Vec<Entry<resources::ResourceTemplate>>,
}

/// Expands directories into their `.wasm` files (sorted) and keeps files as given.
pub fn discover(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<LoadProblem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        if path.is_dir() {
            match std::fs::read_dir(path) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|e| e == "wasm") && p.is_file())
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => problems.push(LoadProblem {
                    path: path.clone(),
                    error: anyhow!("cannot read plugin directory {}: {e}", path.display()),
                }),
            }
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            problems.push(LoadProblem {
                path: path.clone(),
                error: anyhow!("plugin path {} does not exist", path.display()),
            });
        }
    }
    (files, problems)
}

impl Catalog {
    /// Loads every plugin under `paths`, compiling in parallel. A plugin that fails is
    /// reported in the problems and the others load.
    pub async fn load(
        engine: &Engine,
        paths: &[PathBuf],
        overrides: &PluginOverrides,
        limits: Limits,
    ) -> (Catalog, Vec<LoadProblem>) {
        let (files, mut problems) = discover(paths);
        let linkers = match Linkers::new(engine) {
            Ok(linkers) => linkers,
            Err(error) => {
                problems.push(LoadProblem { path: PathBuf::new(), error });
                return (Catalog::empty(), problems);
            }
        };
        let mut plugins = Vec::new();
        for (path, loaded) in load_files(engine, &linkers, &files, overrides, limits).await {
            match loaded {
                Ok(plugin) => plugins.push(Arc::new(plugin)),
                Err(error) => problems.push(LoadProblem { path, error }),
            }
        }
        let (catalog, collisions) = Catalog::assemble(plugins);
        problems.extend(collisions);
        (catalog, problems)
    }

    /// One catalog of `plugins`, in order; a plugin whose name or names collide with an
    /// earlier one is left out and reported.
    pub fn assemble(plugins: Vec<Arc<Plugin>>) -> (Catalog, Vec<LoadProblem>) {
        let mut catalog = Catalog::empty();
        let mut problems = Vec::new();
        for plugin in plugins {
            let path = plugin.path.clone();
            if let Err(error) = catalog.add(plugin) {
                problems.push(LoadProblem { path, error });
            }
        }
        catalog.sort();
        (catalog, problems)
    }

    /// Whether some plugin has directories the operator wants narrowed to the client's roots.
    pub fn narrows_to_client_roots(&self) -> bool {
        self.plugins.iter().any(|p| p.policy.dirs.iter().any(|d| d.within_client_roots))
    }

    fn empty() -> Self {
        Catalog { plugins: Vec::new(), tools: Vec::new(), prompts: Vec::new(), templates: Vec::new() }
    }

    /// Adds a plugin unless its name or one of its prefixed names is taken already.
    fn add(&mut self, plugin: Arc<Plugin>) -> Result<()> {
        let index = self.plugins.len();
        if let Some(other) = self.plugins.iter().find(|p| p.name == plugin.name) {
            return Err(anyhow!(
                "plugin `{}` ({}) has the same name as plugin `{}` ({}); rename one of the files",
                plugin.name,
                plugin.path.display(),
                other.name,
                other.path.display()
            ));
        }
        let tools: Vec<Entry<ToolInfo>> = plugin
            .tools
            .iter()
            .map(|t| Entry { name: format!("{}{}", plugin.prefix, t.descriptor.name), plugin: index, item: t.clone() })
            .collect();
        let prompts: Vec<Entry<prompts::Prompt>> = plugin
            .prompts
            .iter()
            .map(|p| Entry { name: format!("{}{}", plugin.prefix, p.name), plugin: index, item: p.clone() })
            .collect();
        let templates: Vec<Entry<resources::ResourceTemplate>> = plugin
            .templates
            .iter()
            .map(|t| Entry { name: format!("{}{}", plugin.prefix, t.name), plugin: index, item: t.clone() })
            .collect();
        self.check_unique("tool", &plugin, &self.tools, &tools)?;
        self.check_unique("prompt", &plugin, &self.prompts, &prompts)?;
        self.check_unique("resource template", &plugin, &self.templates, &templates)?;
        tracing::info!(
            plugin = %plugin.name,
            path = %plugin.path.display(),
            tools = tools.len(),
            prompts = prompts.len(),
            templates = templates.len(),
            resources = plugin.exports.resources.is_some(),
            "loaded plugin"
        );
        self.tools.extend(tools);
        self.prompts.extend(prompts);
        self.templates.extend(templates);
        self.plugins.push(plugin);
        Ok(())
    }

    fn check_unique<T>(&self, what: &str, plugin: &Plugin, existing: &[Entry<T>], new: &[Entry<T>]) -> Result<()> {
        let mut seen: BTreeMap<&str, &Plugin> =
            existing.iter().map(|e| (e.name.as_str(), &*self.plugins[e.plugin])).collect();
        for entry in new {
            if let Some(other) = seen.insert(&entry.name, plugin) {
                return Err(anyhow!(
                    "{what} `{}` of plugin `{}` ({}) collides with the {what} of that name from plugin `{}` ({})",
                    entry.name,
                    plugin.name,
                    plugin.path.display(),
                    other.name,
                    other.path.display()
                ));
            }
        }
        Ok(())
    }

    fn sort(&mut self) {
        self.tools.sort_by(|a, b| a.name.cmp(&b.name));
        self.prompts.sort_by(|a, b| a.name.cmp(&b.name));
        self.templates.sort_by(|a, b| a.name.cmp(&b.name));
    }

    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// Tools, sorted by name.
    pub fn tools(&self) -> &[Entry<ToolInfo>] {
        &self.tools
    }

    /// Prompts, sorted by name.
    pub fn prompts(&self) -> &[Entry<prompts::Prompt>] {
        &self.prompts
    }

    /// Resource templates, sorted by name.
    pub fn templates(&self) -> &[Entry<resources::ResourceTemplate>] {
        &self.templates
    }

    pub fn has_resources(&self) -> bool {
        self.plugins.iter().any(|p| p.exports.resources.is_some())
    }

    pub fn has_completion(&self) -> bool {
        self.plugins.iter().any(|p| p.exports.completion.is_some())
    }

    pub fn tool(&self, name: &str) -> Option<&Entry<ToolInfo>> {
        self.tools.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.tools[i])
    }

    pub fn prompt(&self, name: &str) -> Option<&Entry<prompts::Prompt>> {
        self.prompts.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.prompts[i])
    }

    /// Calls a tool. `None` if no tool has that name.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: String,
        scope: CallScope,
    ) -> Option<Result<tools::CallResult, CallError>> {
        let entry = self.tool(name)?;
        let plugin = self.plugins[entry.plugin].clone();
        let local = entry.item.descriptor.name.clone();
        let size = |r: &Result<tools::CallResult, tools::ToolError>| r.as_ref().map_or(0, call_result_size);
        let result = match plugin.exports.tools.clone() {
            Some(indices) => {
                plugin
                    .run(scope, size, move |store, instance| {
                        Box::pin(async move {
                            indices.load(&mut *store, &instance)?.call_call_tool(&mut *store, &local, &arguments).await
                        })
                    })
                    .await
            }
            None => {
                let function = plugin.plain.iter().find(|(name, _)| *name == local)?.1.clone();
                plugin
                    .run(scope, size, move |store, instance| {
                        Box::pin(async move { crate::plain::call(store, &instance, &function, &arguments).await })
                    })
                    .await
            }
        };
        let name = plugin.name.clone();
        Some(result.and_then(|r| {
            r.map_err(|e| match e {
                tools::ToolError::UnknownTool(message) => {
                    CallError::NotFound { plugin: name, what: "tool", name: message }
                }
                tools::ToolError::InvalidArguments(message) => CallError::InvalidArguments { plugin: name, message },
                tools::ToolError::Failed(message) => CallError::Failed { plugin: name, message },
            })
        }))
    }

    /// Every plugin's current resources, listed concurrently, in plugin order. A plugin that
    /// fails is logged and left out, so one bad plugin does not hide the others' resources;
    /// only if every plugin fails is the first failure returned.
    pub async fn list_resources(&self, scope: &CallScope) -> Result<Vec<(usize, resources::Resource)>, CallError> {
        let listings = self.plugins.iter().enumerate().filter_map(|(index, plugin)| {
            let indices = plugin.exports.resources.clone()?;
            let scope = scope.clone();
            Some(async move {
                let listed = plugin
                    .run(
                        scope,
                        |r: &Vec<resources::Resource>| {
                            r.iter().map(|r| BLOCK_OVERHEAD + r.uri.len() + r.name.len()).sum()
                        },
                        move |store, instance| {
                            Box::pin(async move {
                                indices.load(&mut *store, &instance)?.call_list_resources(&mut *store).await
                            })
                        },
                    )
                    .await;
                (index, listed)
            })
        });
        let mut all = Vec::new();
        let mut first_error = None;
        let mut answered = false;
        for (index, listed) in futures::future::join_all(listings).await {
            match listed {
                Ok(resources) => {
                    answered = true;
                    all.extend(resources.into_iter().map(|r| (index, r)));
                }
                Err(error) => {
                    tracing::warn!("resources/list: {error}");
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) if !answered => Err(error),
            _ => Ok(all),
        }
    }

    /// Reads a resource: plugins with a template that could match `uri` are asked first, then
    /// the other resource plugins; the first that knows the URI answers. A plugin that fails
    /// does not stop the search; its error is returned if no plugin knows the URI.
    pub async fn read_resource(
        &self,
        uri: &str,
        scope: &CallScope,
    ) -> Result<Vec<resources::ResourceContents>, CallError> {
        let mut candidates: Vec<usize> =
            self.templates.iter().filter(|t| template_may_match(&t.item.uri_template, uri)).map(|t| t.plugin).collect();
        candidates.dedup();
        for (index, plugin) in self.plugins.iter().enumerate() {
            if plugin.exports.resources.is_some() && !candidates.contains(&index) {
                candidates.push(index);
            }
        }
        let mut first_error = None;
        for index in candidates {
            let plugin = &self.plugins[index];
            let Some(indices) = plugin.exports.resources.clone() else { continue };
            let owned_uri = uri.to_owned();
            let result = plugin
                .run(
                    scope.clone(),
                    |r: &Result<Vec<types::ResourceContents>, resources::ResourceError>| {
                        r.as_ref().map_or(0, |c| contents_size(c))
                    },
                    move |store, instance| {
                        Box::pin(async move {
                            indices.load(&mut *store, &instance)?.call_read_resource(&mut *store, &owned_uri).await
                        })
                    },
                )
                .await;
            match result {
                Ok(Ok(contents)) => return Ok(contents),
                Ok(Err(resources::ResourceError::NotFound(_))) => continue,
                Ok(Err(resources::ResourceError::Failed(message))) => {
                    first_error.get_or_insert(CallError::Failed { plugin: plugin.name.clone(), message });
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        Err(first_error.unwrap_or_else(|| CallError::UnknownResource { uri: uri.to_owned() }))
    }

    /// Gets a prompt. `None` if no prompt has that name.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Vec<(String, String)>,
        scope: CallScope,
    ) -> Option<Result<prompts::PromptResult, CallError>> {
        let entry = self.prompt(name)?;
        let plugin = self.plugins[entry.plugin].clone();
        let local = entry.item.name.clone();
        let indices = plugin.exports.prompts.clone()?;
        let result = plugin
            .run(
                scope,
                |r: &Result<prompts::PromptResult, prompts::PromptError>| {
                    r.as_ref().map_or(0, |p| p.messages.iter().map(|m| content_size(&m.content)).sum())
                },
                move |store, instance| {
                    Box::pin(async move {
                        indices.load(&mut *store, &instance)?.call_get_prompt(&mut *store, &local, &arguments).await
                    })
                },
            )
            .await;
        let plugin_name = plugin.name.clone();
        Some(result.and_then(|r| {
            r.map_err(|e| match e {
                prompts::PromptError::UnknownPrompt(message) => {
                    CallError::NotFound { plugin: plugin_name, what: "prompt", name: message }
                }
                prompts::PromptError::InvalidArguments(message) => {
                    CallError::InvalidArguments { plugin: plugin_name, message }
                }
                prompts::PromptError::Failed(message) => CallError::Failed { plugin: plugin_name, message },
            })
        }))
    }

    /// Completes an argument. `None` if the target is unknown; an empty result if its plugin
    /// offers no completion.
    pub async fn complete(
        &self,
        target: CompletionTarget,
        argument: (String, String),
        context: Vec<(String, String)>,
        scope: CallScope,
    ) -> Option<Result<completion::CompletionResult, CallError>> {
        let (plugin_index, reference) = match &target {
            CompletionTarget::Prompt(name) => {
                let entry = self.prompt(name)?;
                (entry.plugin, completion::Reference::Prompt(entry.item.name.clone()))
            }
            CompletionTarget::ResourceTemplate(uri_template) => {
                let entry = self.templates.iter().find(|t| &t.item.uri_template == uri_template)?;
                (entry.plugin, completion::Reference::ResourceTemplate(uri_template.clone()))
            }
        };
        let plugin = self.plugins[plugin_index].clone();
        let Some(indices) = plugin.exports.completion.clone() else {
            return Some(Ok(completion::CompletionResult { values: Vec::new(), total: Some(0), has_more: false }));
        };
        let request = completion::CompletionRequest {
            reference,
            argument_name: argument.0,
            argument_value: argument.1,
            context_arguments: context,
        };
        let result = plugin
            .run(
                scope,
                |r: &Result<completion::CompletionResult, String>| {
                    r.as_ref().map_or(0, |c| c.values.iter().map(String::len).sum())
                },
                move |store, instance| {
                    Box::pin(
                        async move { indices.load(&mut *store, &instance)?.call_complete(&mut *store, &request).await },
                    )
                },
            )
            .await;
        let plugin_name = plugin.name.clone();
        Some(result.and_then(|r| r.map_err(|message| CallError::Failed { plugin: plugin_name, message })))
    }
}

/// Compiles and loads `files` in parallel (compilation on blocking threads, each file under the
/// settings the config gives its plugin name); one result per file, in order.
pub async fn load_files(
    engine: &Engine,
    linkers: &Linkers,
    files: &[PathBuf],
    overrides: &PluginOverrides,
    limits: Limits,
) -> Vec<(PathBuf, Result<Plugin>)> {
    let mut tasks = Vec::new();
    for file in files.iter().cloned() {
        let engine = engine.clone();
        let linkers = linkers.clone();
        let name = plugin::plugin_name(&file);
        let setting = overrides.get(&name).cloned().unwrap_or_default();
        let prefix = setting.prefix.clone().unwrap_or_else(|| format!("{name}."));
        tasks.push(tokio::spawn(async move {
            let compile_path = file.clone();
            let component = tokio::task::spawn_blocking(move || plugin::compile(&engine, &compile_path))
                .await
                .map_err(|e| anyhow!("compiling {} panicked: {e}", file.display()))
                .and_then(|r| r);
            let limits = setting.limits(limits);
            let loaded = match component {
                Ok(component) => {
                    let policy = Arc::new(setting.policy.clone());
                    plugin::load(&linkers, component, &file, name.into(), prefix, limits, policy)
                        .await
                        .and_then(|plugin| select_tools(plugin, &setting))
                        .map(|mut plugin| {
                            plugin.slots =
                                setting.max_concurrency.map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1))));
                            plugin
                        })
                }
                Err(e) => Err(e),
            };
            (file, loaded)
        }));
    }
    let mut results = Vec::new();
    for (task, file) in tasks.into_iter().zip(files) {
        results.push(match task.await {
            Ok(result) => result,
            Err(e) => (file.clone(), Err(anyhow!("plugin loader task failed: {e}"))),
        });
    }
    results
}

/// Keeps the tools the operator's config selects; naming a tool the plugin lacks is an error,
/// so that a typo cannot silently leave a tool served that was meant to be excluded.
fn select_tools(mut plugin: Plugin, setting: &PluginOverride) -> Result<Plugin> {
    let offered: Vec<String> = plugin.tools.iter().map(|t| t.descriptor.name.clone()).collect();
    let named = setting.tools.iter().flatten().chain(&setting.exclude_tools);
    if let Some(unknown) = named.into_iter().find(|name| !offered.contains(name)) {
        return Err(anyhow!(
            "the config's [plugin.{}] names tool `{unknown}`, which plugin `{}` ({}) does not offer; it offers: {}",
            plugin.name,
            plugin.name,
            plugin.path.display(),
            offered.join(", ")
        ));
    }
    plugin.tools.retain(|tool| {
        let name = &tool.descriptor.name;
        setting.tools.as_ref().is_none_or(|keep| keep.contains(name)) && !setting.exclude_tools.contains(name)
    });
    Ok(plugin)
}

fn resource_size(contents: &types::ResourceContents) -> usize {
    contents.uri.len()
        + match &contents.body {
            types::ResourceBody::Text(text) => text.len(),
            types::ResourceBody::Blob(bytes) => bytes.len(),
        }
}

fn contents_size(contents: &[types::ResourceContents]) -> usize {
    contents.iter().map(resource_size).sum()
}

/// What a block costs beyond its payload on the wire (type, field names, framing), so that a
/// flood of empty blocks counts against the output limit too.
const BLOCK_OVERHEAD: usize = 64;

fn content_size(block: &types::ContentBlock) -> usize {
    BLOCK_OVERHEAD
        + match block {
            types::ContentBlock::Text(t) => t.text.len(),
            types::ContentBlock::Image(m) | types::ContentBlock::Audio(m) => m.data.len(),
            types::ContentBlock::Embedded(e) => resource_size(&e.contents),
            types::ContentBlock::ResourceLink(l) => l.uri.len() + l.name.len(),
        }
}

fn call_result_size(result: &tools::CallResult) -> usize {
    result.content.iter().map(content_size).sum::<usize>() + result.structured_content.as_ref().map_or(0, String::len)
}

/// A cheap pre-filter: the URI starts with the template's text before its first expression.
fn template_may_match(template: &str, uri: &str) -> bool {
    let literal = template.split('{').next().unwrap_or(template);
    uri.starts_with(literal)
}

/// Loads one file for `mcpbox inspect` under `policy`. Returns the plugin, loaded with stubs
/// for what `policy` does not grant so that it can always be described, and why it would not
/// load under `policy` itself, if it would not.
pub async fn load_one(
    engine: &Engine,
    path: &Path,
    limits: Limits,
    policy: Policy,
) -> Result<(Plugin, Option<String>)> {
    let linkers = Linkers::new(engine)?;
    let engine = engine.clone();
    let owned = path.to_owned();
    let component = tokio::task::spawn_blocking(move || plugin::compile(&engine, &owned))
        .await
        .context("compiler task failed")??;
    let name = plugin::plugin_name(path);
    let problem = linkers
        .for_plugin(&component, &name, &policy)
        .and_then(|linker| {
            linker.instantiate_pre(&component).map(drop).map_err(|e| {
                anyhow!("{e:#}; `stub_ungranted = true` in [plugin.{name}] links imports mcpbox does not offer as stubs that trap")
            })
        })
        .err()
        .map(|e| format!("{e:#}"));
    let described = Arc::new(Policy { stub_ungranted: true, ..policy.clone() });
    let mut plugin =
        plugin::load(&linkers, component, path, name.clone().into(), format!("{name}."), limits, described).await?;
    plugin.policy = Arc::new(policy);
    Ok((plugin, problem))
}
