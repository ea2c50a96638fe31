//! Loading plugin files into a catalog: compilation on blocking threads in parallel, each file
//! under the config its plugin name has, and the operator's tool selection applied.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::pins::{FirstUse, Pins};
use super::{Catalog, LoadProblem, discover};
use crate::runtime::engine::compile::{Compiled, Compiler};
use crate::runtime::grants::limits::DEFAULT_PREPARED;
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::plugin_config::{PluginConfig, PluginConfigs};
use crate::runtime::grants::policy::Policy;
use crate::runtime::plugin::Plugin;
use crate::runtime::plugin::load::{self, LoadAs, plugin_name};
use crate::runtime::sandbox::linker::Linkers;

impl Catalog {
    /// Loads every plugin under `paths`, compiling in parallel. A plugin that fails is
    /// reported in the problems and the others load.
    pub async fn load(
        compiler: &Compiler,
        paths: &[PathBuf],
        configs: &PluginConfigs,
        limits: Limits,
        pins: &Pins,
        first_use: FirstUse,
    ) -> (Catalog, Vec<LoadProblem>) {
        let (files, mut problems) = discover(paths);
        let linkers = match Linkers::new(compiler.engine()) {
            Ok(linkers) => linkers,
            Err(error) => {
                problems.push(LoadProblem { path: PathBuf::new(), error });
                return (Catalog::default(), problems);
            }
        };
        let mut plugins = Vec::new();
        for (path, loaded) in load_files(compiler, &linkers, &files, configs, limits).await {
            match loaded {
                Ok(plugin) => plugins.push(Arc::new(plugin)),
                Err(error) => {
                    problems.push(LoadProblem { path, error });
                    if crate::switched_off!("catalog.bad-file-alone") {
                        return (Catalog::default(), problems);
                    }
                }
            }
        }
        let (catalog, collisions) = Catalog::assemble(plugins, pins, first_use);
        problems.extend(collisions);
        (catalog, problems)
    }
}

/// Compiles and loads `files` in parallel (compilation on blocking threads, each file under the
/// config its plugin name has); one result per file, in order.
pub(crate) async fn load_files(
    compiler: &Compiler,
    linkers: &Linkers,
    files: &[PathBuf],
    configs: &PluginConfigs,
    limits: Limits,
) -> Vec<(PathBuf, Result<Plugin>)> {
    let mut tasks = Vec::new();
    for file in files.iter().cloned() {
        let compiler = compiler.clone();
        let linkers = linkers.clone();
        let name = plugin_name(&file);
        let config = configs.get(&name).cloned().unwrap_or_default();
        tasks.push(tokio::spawn(async move {
            let loaded = load_file(&compiler, &linkers, &file, name, &config, limits).await;
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

/// Compiles (on a blocking thread) and loads one file as the plugin `name` under `config`.
async fn load_file(
    compiler: &Compiler,
    linkers: &Linkers,
    file: &Path,
    name: String,
    config: &PluginConfig,
    limits: Limits,
) -> Result<Plugin> {
    let compiled = compile_blocking(compiler, file).await?;
    let load_as = LoadAs {
        prefix: config.prefix_for(&name),
        name: name.into(),
        limits: config.limits(limits),
        policy: Arc::new(config.policy.clone()),
    };
    let mut plugin = select_tools(load::load(linkers, compiled, file, load_as).await?, config)?;
    plugin.slots = config.max_concurrency.map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1))));
    plugin.prepare(config.prepared.unwrap_or(DEFAULT_PREPARED));
    plugin.owns.clone_from(&config.owns);
    plugin.pin = config.pin;
    let offered: Vec<&str> = plugin.tools.iter().map(|t| t.descriptor.name.as_str()).collect();
    // A misspelt name would leave the tool it meant unguarded: refused, like `tools`. A pattern
    // matching nothing, or a tool the operator does not serve anyway, is only said.
    let not_served = |name: &str| {
        config.exclude_tools.iter().any(|t| t == name)
            || config.tools.as_ref().is_some_and(|keep| !keep.iter().any(|t| t == name))
    };
    for unmatched in config.approve.unmatched(&offered) {
        if unmatched.ends_with('*') || not_served(unmatched) {
            tracing::warn!(plugin = %plugin.name, "[plugin.{}] approve names `{unmatched}`, which matches no tool it serves", plugin.name);
        } else {
            return Err(anyhow!(
                "the config's [plugin.{}] approve names tool `{unmatched}`, which plugin `{}` ({}) does not offer, so the \
                 tool it meant would run without approval; it offers: {}",
                plugin.name,
                plugin.name,
                plugin.path.display(),
                offered.join(", ")
            ));
        }
    }
    plugin.approve = config.approve.clone();
    if let Some(tasks) = &config.tasks {
        let named = tasks.tools.iter().map(|(tool, _)| tool).filter(|tool| *tool != "*");
        for tool in named.filter(|t| !plugin.tools.iter().any(|i| &i.descriptor.name == *t)) {
            tracing::warn!(plugin = %plugin.name, tool, "[plugin.{}.tasks.{tool}] names a tool the plugin does not serve", plugin.name);
        }
        plugin.tasks = Some(tasks.clone());
    }
    Ok(plugin)
}

async fn compile_blocking(compiler: &Compiler, file: &Path) -> Result<Compiled> {
    let compiler = compiler.clone();
    let owned = file.to_owned();
    tokio::task::spawn_blocking(move || compiler.compile(&owned))
        .await
        .map_err(|e| anyhow!("compiling {} panicked: {e}", file.display()))?
}

/// Keeps the tools the operator's config selects; naming a tool the plugin lacks is an error,
/// so that a typo cannot silently leave a tool served that was meant to be excluded.
fn select_tools(mut plugin: Plugin, config: &PluginConfig) -> Result<Plugin> {
    let offered: Vec<String> = plugin.tools.iter().map(|t| t.descriptor.name.clone()).collect();
    let named = config.tools.iter().flatten().chain(&config.exclude_tools);
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
        config.tools.as_ref().is_none_or(|keep| keep.contains(name)) && !config.exclude_tools.contains(name)
    });
    Ok(plugin)
}

/// Loads one file for `mcpbox inspect` under `policy`. Returns the plugin, loaded with stubs
/// for what `policy` does not grant so that it can always be described, and why it would not
/// load under `policy` itself, if it would not.
pub(crate) async fn load_one(
    compiler: &Compiler,
    path: &Path,
    limits: Limits,
    policy: Policy,
) -> Result<(Plugin, Option<String>)> {
    let linkers = Linkers::new(compiler.engine())?;
    let compiled = compile_blocking(compiler, path).await?;
    let component = &compiled.component;
    let name = plugin_name(path);
    let problem = linkers
        .for_plugin(component, &name, &policy)
        .and_then(|linker| {
            linker.instantiate_pre(component).map(drop).map_err(|e| {
                anyhow!("{e:#}; `stub_ungranted = true` in [plugin.{name}] links imports mcpbox does not offer as stubs that trap")
            })
        })
        .err()
        .map(|e| format!("{e:#}"));
    let described = Arc::new(Policy { stub_ungranted: true, ..policy.clone() });
    let load_as = LoadAs { prefix: format!("{name}."), name: name.into(), limits, policy: described };
    let mut plugin = load::load(&linkers, compiled, path, load_as).await?;
    plugin.policy = Arc::new(policy);
    Ok((plugin, problem))
}
