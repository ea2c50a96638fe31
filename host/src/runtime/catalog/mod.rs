//! All loaded plugins as one server: prefixed names, collision checks, deterministic lists,
//! and routing of calls to the plugin that serves them. This is the runtime's API for the
//! protocol layer, and it knows nothing of MCP's wire types.
//!
//! - [`discover`](discover()): which files are plugins;
//! - `loader`: compiling and loading them in parallel under their configs;
//! - `dispatch`: the calls (`call_tool`, `read_resource`, ...), routed by name or URI;
//! - `ownership`: which plugin owns a resource URI (reads and update announcements).

mod discover;
mod dispatch;
mod loader;
mod ownership;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};

pub use discover::discover;
pub(crate) use discover::is_plugin_file;
pub use dispatch::CompletionTarget;
pub(crate) use loader::{load_files, load_one};
pub use ownership::OwnedUris;

use crate::runtime::bindings::{prompts, resources};
use crate::runtime::plugin::{Plugin, ToolInfo};
use crate::runtime::plugin_config::ToolTasks;

/// A plugin that failed to load, and why.
#[derive(Debug)]
pub struct LoadProblem {
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// Why, naming the plugin where it is known.
    pub error: anyhow::Error,
}

/// A name the catalog serves, and where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<T> {
    /// The name clients see (prefix included).
    pub name: String,
    /// Index of the plugin in [`Catalog::plugins`].
    pub plugin: usize,
    /// What the plugin says about it.
    pub item: T,
}

/// The plugins served at one moment, with their names merged and sorted.
#[derive(Default)]
pub struct Catalog {
    plugins: Vec<Arc<Plugin>>,
    tools: Vec<Entry<ToolInfo>>,
    prompts: Vec<Entry<prompts::Prompt>>,
    templates: Vec<Entry<resources::ResourceTemplate>>,
    /// Who owns which resource URI (see `ownership`); shared with calls, which check the URIs
    /// their guest announces.
    owners: Arc<ownership::Owners>,
}

impl Catalog {
    /// One catalog of `plugins`, in order; a plugin whose name or names collide with an
    /// earlier one is left out and reported.
    pub fn assemble(plugins: Vec<Arc<Plugin>>) -> (Catalog, Vec<LoadProblem>) {
        let mut catalog = Catalog::default();
        let mut problems = Vec::new();
        for plugin in plugins {
            let path = plugin.path.clone();
            if let Err(error) = catalog.add(plugin) {
                problems.push(LoadProblem { path, error });
            }
        }
        catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.prompts.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.templates.sort_by(|a, b| a.name.cmp(&b.name));
        let templates = catalog.templates.iter().map(|t| (t.item.uri_template.clone(), t.plugin)).collect();
        catalog.owners = Arc::new(ownership::Owners::new(templates));
        (catalog, problems)
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
        let entry = |name: &str| format!("{}{name}", plugin.prefix);
        let tools: Vec<_> = plugin
            .tools
            .iter()
            .map(|t| Entry { name: entry(&t.descriptor.name), plugin: index, item: t.clone() })
            .collect();
        let prompts: Vec<_> =
            plugin.prompts.iter().map(|p| Entry { name: entry(&p.name), plugin: index, item: p.clone() }).collect();
        let templates: Vec<_> =
            plugin.templates.iter().map(|t| Entry { name: entry(&t.name), plugin: index, item: t.clone() }).collect();
        self.check_unique("tool", &plugin, &self.tools, &tools)?;
        self.check_unique("prompt", &plugin, &self.prompts, &prompts)?;
        self.check_unique("resource template", &plugin, &self.templates, &templates)?;
        if !crate::switched_off!("catalog.templates-apart") {
            self.check_templates_apart(&plugin, &templates)?;
        }
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

    /// Refuses templates that could match a URI another plugin's template matches: a URI has
    /// one owner, whatever the order the files load in.
    fn check_templates_apart(&self, plugin: &Plugin, new: &[Entry<resources::ResourceTemplate>]) -> Result<()> {
        for entry in new {
            let template = &entry.item.uri_template;
            let taken = self.templates.iter().find(|e| ownership::templates_overlap(&e.item.uri_template, template));
            if let Some(other) = taken {
                let owner = &self.plugins[other.plugin];
                return Err(anyhow!(
                    "resource template `{template}` of plugin `{}` ({}) can match the same URIs as `{}` of plugin `{}` \
                     ({}): a URI has one owner; change one of the templates, or serve one of the plugins",
                    plugin.name,
                    plugin.path.display(),
                    other.item.uri_template,
                    owner.name,
                    owner.path.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether some plugin has directories the operator wants narrowed to the client's roots.
    pub fn narrows_to_client_roots(&self) -> bool {
        self.plugins.iter().any(|p| p.policy.dirs.iter().any(|d| d.within_client_roots))
    }

    /// The plugins, in load order.
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

    /// Whether some plugin exports resources.
    pub fn has_resources(&self) -> bool {
        self.plugins.iter().any(|p| p.exports.resources.is_some())
    }

    /// Whether some plugin exports completion.
    pub fn has_completion(&self) -> bool {
        self.plugins.iter().any(|p| p.exports.completion.is_some())
    }

    /// The plugins that list resources, as (name, fingerprint): what a `resources/list` asks.
    pub(crate) fn resource_sources(&self) -> Vec<(&str, u64)> {
        self.plugins.iter().filter(|p| p.exports.resources.is_some()).map(|p| (&*p.name, p.fingerprint)).collect()
    }

    /// The tool served as `name`.
    pub fn tool(&self, name: &str) -> Option<&Entry<ToolInfo>> {
        self.tools.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.tools[i])
    }

    /// How the tool served as `name` may run as a task, and its plugin; `None` if it may not.
    pub(crate) fn task_policy(&self, name: &str) -> Option<(ToolTasks, &Arc<Plugin>)> {
        let entry = self.tool(name)?;
        let plugin = self.plugins.get(entry.plugin)?;
        Some((plugin.tasks.as_ref()?.for_tool(&entry.item.descriptor.name)?, plugin))
    }

    /// The plugin known to own resource `uri` (by its templates, or its listing), if any.
    pub(crate) fn resource_owner(&self, uri: &str) -> Option<usize> {
        self.owners.owner_of(uri)
    }

    /// The prompt served as `name`.
    pub fn prompt(&self, name: &str) -> Option<&Entry<prompts::Prompt>> {
        self.prompts.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.prompts[i])
    }
}
