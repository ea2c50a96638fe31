//! The catalog as assembled: every loaded plugin's names, prefixed and settled (what two
//! plugins claim goes to neither unless the operator says), in a deterministic order.

use std::sync::Arc;

use super::contests::{self, Contest};
use super::entry::{Entry, LoadProblem};
use super::pins::{DefinitionKind, FirstUse, Pins, Withheld};
use crate::runtime::engine::bindings::{prompts, resources};
use crate::runtime::grants::plugin_config::ToolTasks;
use crate::runtime::plugin::{Plugin, ToolInfo};

/// The plugins served at one moment, with their names merged and sorted.
#[derive(Default)]
pub struct Catalog {
    pub(super) plugins: Vec<Arc<Plugin>>,
    pub(super) tools: Vec<Entry<ToolInfo>>,
    pub(super) prompts: Vec<Entry<prompts::Prompt>>,
    pub(super) templates: Vec<Entry<resources::ResourceTemplate>>,
    /// Who owns which resource URI (see `ownership`); shared with calls, which check the URIs
    /// their guest announces.
    pub(super) owners: Arc<super::ownership::Owners>,
    /// What two plugins claimed, withheld from both (see `contests`).
    pub(super) contests: Vec<Contest>,
    /// Definitions that changed since they were pinned, withheld until accepted (`pins`).
    pub(super) withheld: Vec<Withheld>,
}

impl Catalog {
    /// One catalog of `plugins`, whatever their order: plugins that share a name are left out
    /// and reported; what two plugins claim (a name, URIs) is withheld from both and logged
    /// (see `contests`), unless the operator gave the URIs to one.
    ///
    /// Each plugin's definitions are settled against `pins` first: one that changed since it
    /// was pinned is withheld (and logged with its diff), a plugin refused for having no pins
    /// is reported.
    pub fn assemble(plugins: Vec<Arc<Plugin>>, pins: &Pins, first_use: FirstUse) -> (Catalog, Vec<LoadProblem>) {
        let (plugins, mut problems) = contests::unique_names(plugins);
        let settled = pins.settle(&plugins, first_use);
        for withheld in &settled.withheld {
            tracing::warn!(
                plugin = %withheld.plugin,
                "withheld until accepted (`mcpbox accept {}`): {withheld}",
                withheld.plugin
            );
        }
        let refused: Vec<_> = settled.refused.iter().map(|p| p.path.clone()).collect();
        problems.extend(settled.refused);
        let mut catalog = Catalog { withheld: settled.withheld, ..Catalog::default() };
        for plugin in plugins.into_iter().filter(|p| !refused.contains(&p.path)) {
            catalog.add(plugin);
        }
        let (contests, withheld) =
            contests::settle(&catalog.plugins, &mut catalog.tools, &mut catalog.prompts, &mut catalog.templates);
        for contest in &contests {
            match contest.is_open() {
                true => tracing::warn!("{contest}"),
                false => tracing::info!("{contest}"),
            }
        }
        for unknown in contests::unknown_owns(&catalog.plugins) {
            tracing::warn!("{unknown}");
        }
        catalog.contests = contests;
        catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.prompts.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.templates.sort_by(|a, b| a.name.cmp(&b.name));
        let templates = catalog.templates.iter().map(|t| (t.item.uri_template.clone(), t.plugin)).collect();
        catalog.owners = Arc::new(super::ownership::Owners::new(templates, withheld));
        (catalog, problems)
    }

    /// Adds a plugin with its prefixed names (what two plugins claim is settled once all are in).
    fn add(&mut self, plugin: Arc<Plugin>) {
        let index = self.plugins.len();
        let entry = |name: &str| format!("{}{name}", plugin.prefix);
        let served = |kind: DefinitionKind, name: &str| {
            !self.withheld.iter().any(|w| w.kind == kind && w.name == name && *w.plugin == *plugin.name)
        };
        let tools: Vec<_> = plugin
            .tools
            .iter()
            .filter(|t| served(DefinitionKind::Tool, &t.descriptor.name))
            .map(|t| Entry { name: entry(&t.descriptor.name), plugin: index, item: t.clone() })
            .collect();
        let prompts: Vec<_> = plugin
            .prompts
            .iter()
            .filter(|p| served(DefinitionKind::Prompt, &p.name))
            .map(|p| Entry { name: entry(&p.name), plugin: index, item: p.clone() })
            .collect();
        let templates: Vec<_> = plugin
            .templates
            .iter()
            .filter(|t| served(DefinitionKind::Template, &t.name))
            .map(|t| Entry { name: entry(&t.name), plugin: index, item: t.clone() })
            .collect();
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
    }

    /// What two plugins claimed, withheld from both (or given to one by the operator).
    pub fn contests(&self) -> &[Contest] {
        &self.contests
    }

    /// Definitions withheld because they changed since they were pinned.
    pub fn withheld(&self) -> &[Withheld] {
        &self.withheld
    }

    /// Whether `plugin`'s definition `name` of `kind` is withheld until accepted.
    pub(crate) fn withholds(&self, plugin: &str, kind: DefinitionKind, name: &str) -> bool {
        self.withheld.iter().any(|w| w.kind == kind && w.name == name && w.plugin == plugin)
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

    /// The plugin that serves the tool `name`.
    pub(crate) fn tool_plugin(&self, name: &str) -> Option<&Arc<Plugin>> {
        self.plugins.get(self.tool(name)?.plugin)
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
