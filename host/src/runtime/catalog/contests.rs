//! Names and URIs two plugins claim. What one plugin would get only by loading first (its file
//! name sorting earlier, or it being there before the other arrived by hot reload or `mcpbox
//! update`) goes to neither: a plugin name held by several files serves none of them; a tool,
//! prompt or template name two plugins serve is served by neither; and resource templates of
//! two plugins that could match one URI are served by neither, unless the operator gives their
//! URIs to one (`[plugin.NAME] owns = ["TEMPLATE"]`, the operator's config only). Everything
//! else of those plugins serves. Every contest is named in the log (and by `mcpbox check`); a
//! template that collides with several others is named a catch-all.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use anyhow::anyhow;

use super::entry::{Entry, LoadProblem};
use super::ownership;
use crate::runtime::engine::bindings::{prompts, resources};
use crate::runtime::plugin::{Plugin, ToolInfo};

/// Something of a plugin's that is withheld because another plugin claims it too.
#[derive(Debug, Clone)]
pub struct Contest {
    /// The plugin whose item is withheld.
    pub plugin: Arc<str>,
    /// `tool`, `prompt`, `resource template name` or `resource template`.
    pub kind: &'static str,
    /// The name (prefix included) or URI template withheld.
    pub item: String,
    /// Who else claims it: each plugin and its own item.
    pub rivals: Vec<(Arc<str>, String)>,
    /// The rivals the operator gave these URIs to (`[plugin.NAME] owns`): withheld by
    /// decision, not a problem.
    pub settled_by: Vec<(Arc<str>, String)>,
    /// The operator gave these URIs to this plugin too (and to a rival): a split word.
    pub owned_too: bool,
    /// The name is in this plugin's namespace (its prefix and a dot): another plugin's claim
    /// on it is withheld from that other plugin alone.
    pub namespace_of: Option<Arc<str>>,
}

impl Contest {
    /// Whether the operator still has to settle it (`mcpbox check` fails on it).
    pub fn is_open(&self) -> bool {
        self.settled_by.is_empty() || self.owned_too
    }
}

impl fmt::Display for Contest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, item, plugin) = (self.kind, &self.item, &self.plugin);
        let named = |rivals: &[(Arc<str>, String)]| {
            rivals.iter().map(|(p, i)| format!("`{i}` of plugin `{p}`")).collect::<Vec<_>>().join(", ")
        };
        let rivals = named(&self.rivals);
        if let Some(owner) = &self.namespace_of {
            return write!(
                f,
                "{kind} `{item}` of plugin `{plugin}` is in the namespace of plugin `{owner}` ({rivals}): not served \
                 (a name's part before its first dot is its plugin's); give plugin `{plugin}` a prefix of its own \
                 ([plugin.NAME] prefix)"
            );
        }
        if self.owned_too {
            return write!(
                f,
                "resource template `{item}` of plugin `{plugin}` and {} can match the same URIs, and the config gives \
                 them to both ([plugin.NAME] owns): none of them is served; give them to one",
                named(&self.settled_by)
            );
        }
        if !self.settled_by.is_empty() {
            return write!(
                f,
                "{kind} `{item}` of plugin `{plugin}` is not served: the config gives the URIs it could match to {} \
                 ([plugin.NAME] owns)",
                named(&self.settled_by)
            );
        }
        match self.kind {
            "resource template" => {
                let catch_all = if self.rivals.len() > 1 {
                    format!(
                        "is a catch-all: it can match the URIs of {} templates of other plugins,",
                        self.rivals.len()
                    )
                } else {
                    "can match the same URIs as".to_owned()
                };
                write!(
                    f,
                    "resource template `{item}` of plugin `{plugin}` {catch_all} {rivals}: a URI has one owner, so none \
                     of them is served; give the URIs to one with [plugin.NAME] owns = [\"TEMPLATE\"], or change a template"
                )
            }
            _ => write!(
                f,
                "{kind} `{item}` of plugin `{plugin}` is also served by {rivals}: neither serves it (one name, one \
                 owner); give one of the plugins another prefix ([plugin.NAME] prefix)"
            ),
        }
    }
}

/// Plugins whose names are unique; each one whose name another file has too is a problem
/// (served by none of them).
pub(super) fn unique_names(plugins: Vec<Arc<Plugin>>) -> (Vec<Arc<Plugin>>, Vec<LoadProblem>) {
    let mut by_name: BTreeMap<Arc<str>, Vec<Arc<Plugin>>> = BTreeMap::new();
    for plugin in &plugins {
        by_name.entry(plugin.name.clone()).or_default().push(plugin.clone());
    }
    let mut problems = Vec::new();
    let unique = plugins
        .into_iter()
        .filter(|plugin| {
            let namesakes = &by_name[&plugin.name];
            if namesakes.len() == 1 || crate::switched_off!("catalog.contested-served-by-neither") {
                return true;
            }
            let others: Vec<String> = namesakes
                .iter()
                .filter(|other| !Arc::ptr_eq(other, plugin))
                .map(|other| other.path.display().to_string())
                .collect();
            problems.push(LoadProblem {
                path: plugin.path.clone(),
                error: anyhow!(
                    "plugin `{}` ({}) has the same name as {}: none of them is served; rename the files",
                    plugin.name,
                    plugin.path.display(),
                    others.join(", ")
                ),
            });
            false
        })
        .collect();
    (unique, problems)
}

/// The names, as (kind, name) per entry, served by more than one plugin: withheld from all.
fn contested_names<T>(kind: &'static str, plugins: &[Arc<Plugin>], entries: &mut Vec<Entry<T>>) -> Vec<Contest> {
    let mut claims: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for entry in entries.iter() {
        claims.entry(entry.name.clone()).or_default().push(entry.plugin);
    }
    let mut contests = Vec::new();
    entries.retain(|entry| {
        let claimants = &claims[&entry.name];
        if claimants.iter().all(|&p| p == entry.plugin) || crate::switched_off!("catalog.contested-served-by-neither") {
            return true;
        }
        let rivals = claimants
            .iter()
            .filter(|&&p| p != entry.plugin)
            .map(|&p| (plugins[p].name.clone(), entry.name.clone()))
            .collect();
        contests.push(Contest {
            plugin: plugins[entry.plugin].name.clone(),
            kind,
            item: entry.name.clone(),
            rivals,
            settled_by: Vec::new(),
            owned_too: false,
            namespace_of: None,
        });
        false
    });
    contests
}

/// The names a plugin serves inside another plugin's namespace (its non-empty prefix, `time.`
/// by default): a plugin served without a prefix (or with a shorter one) naming a tool
/// `time.exfil` would pass for the `time` plugin's, to clients and to `may_call =
/// ["time.*"]`. Withheld from the squatter only; the namespace's own plugin keeps serving. A
/// plugin whose own prefix the operator put inside another's (`time.x.` beside `time.`) is
/// the operator's choice, not a squat.
fn namespace_squats<T>(kind: &'static str, plugins: &[Arc<Plugin>], entries: &mut Vec<Entry<T>>) -> Vec<Contest> {
    if crate::switched_off!("catalog.namespaces-owned") {
        return Vec::new();
    }
    let mut contests = Vec::new();
    entries.retain(|entry| {
        let own = &plugins[entry.plugin];
        let owner = plugins.iter().enumerate().find(|(index, other)| {
            *index != entry.plugin
                && !other.prefix.is_empty()
                && !own.prefix.starts_with(&*other.prefix)
                && entry.name.starts_with(&*other.prefix)
        });
        let Some((_, owner)) = owner else { return true };
        contests.push(Contest {
            plugin: own.name.clone(),
            kind,
            item: entry.name.clone(),
            rivals: vec![(owner.name.clone(), format!("{}*", owner.prefix))],
            settled_by: Vec::new(),
            owned_too: false,
            namespace_of: Some(owner.name.clone()),
        });
        false
    });
    contests
}

/// Withholds what two plugins claim from `tools`, `prompts` and `templates` (entries of
/// `plugins` by index); returns the contests and the URI templates withheld (a URI only they
/// match has no owner, whoever lists it).
pub(super) fn settle(
    plugins: &[Arc<Plugin>],
    tools: &mut Vec<Entry<ToolInfo>>,
    prompts: &mut Vec<Entry<prompts::Prompt>>,
    templates: &mut Vec<Entry<resources::ResourceTemplate>>,
) -> (Vec<Contest>, Vec<String>) {
    let mut contests = namespace_squats("tool", plugins, tools);
    contests.extend(namespace_squats("prompt", plugins, prompts));
    contests.extend(namespace_squats("resource template name", plugins, templates));
    contests.extend(contested_names("tool", plugins, tools));
    contests.extend(contested_names("prompt", plugins, prompts));
    contests.extend(contested_names("resource template name", plugins, templates));
    let withheld: Vec<String> = contests
        .iter()
        .filter(|c| c.kind == "resource template name")
        .flat_map(|c| {
            let plugin = plugins.iter().position(|p| p.name == c.plugin);
            templates_named(plugins, plugin, &c.item)
        })
        .collect();

    // URI templates: each against the others' it could share a URI with.
    let owned =
        |entry: &Entry<resources::ResourceTemplate>| plugins[entry.plugin].owns.contains(&entry.item.uri_template);
    let mut kept = Vec::new();
    let mut withheld_templates = withheld;
    for entry in templates.iter() {
        let rivals: Vec<&Entry<resources::ResourceTemplate>> = templates
            .iter()
            .filter(|other| {
                other.plugin != entry.plugin
                    && ownership::templates_overlap(&other.item.uri_template, &entry.item.uri_template)
            })
            .collect();
        let owning_rivals: Vec<&&Entry<_>> = rivals.iter().filter(|rival| owned(rival)).collect();
        let served = rivals.is_empty()
            || (owned(entry) && owning_rivals.is_empty())
            || crate::switched_off!("catalog.contested-served-by-neither");
        if served {
            kept.push(entry.clone());
            continue;
        }
        // Given to rivals by the operator; if this one was given its URIs too, the operator's
        // word is split, and neither serves.
        let named = |entry: &Entry<resources::ResourceTemplate>| {
            (plugins[entry.plugin].name.clone(), entry.item.uri_template.clone())
        };
        withheld_templates.push(entry.item.uri_template.clone());
        contests.push(Contest {
            plugin: plugins[entry.plugin].name.clone(),
            kind: "resource template",
            item: entry.item.uri_template.clone(),
            rivals: rivals.iter().map(|r| named(r)).collect(),
            settled_by: owning_rivals.iter().map(|r| named(r)).collect(),
            owned_too: owned(entry),
            namespace_of: None,
        });
    }
    *templates = kept;
    (contests, withheld_templates)
}

/// The URI template of the plugin at `plugin` whose name (prefix included) is `name`.
fn templates_named(plugins: &[Arc<Plugin>], plugin: Option<usize>, name: &str) -> Vec<String> {
    let Some(plugin) = plugin.and_then(|p| plugins.get(p)) else { return Vec::new() };
    plugin
        .templates
        .iter()
        .filter(|t| format!("{}{}", plugin.prefix, t.name) == name)
        .map(|t| t.uri_template.clone())
        .collect()
}

/// Warnings for `[plugin.NAME] owns` entries that name no template of the plugin.
pub(super) fn unknown_owns(plugins: &[Arc<Plugin>]) -> Vec<String> {
    plugins
        .iter()
        .flat_map(|plugin| {
            plugin.owns.iter().filter(|owned| !plugin.templates.iter().any(|t| &t.uri_template == *owned)).map(
                move |owned| {
                    format!(
                        "[plugin.{}] owns `{owned}`, which plugin `{}` ({}) does not declare as a resource template",
                        plugin.name,
                        plugin.name,
                        plugin.path.display()
                    )
                },
            )
        })
        .collect()
}
