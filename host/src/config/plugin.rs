//! `[plugin.NAME]` sections into the runtime's [`PluginConfig`]: names, tool selection, limits
//! (checked, naming file, line and key), environment, directories and the network allow-list.

use std::sync::Arc;

use anyhow::{Context, Result, anyhow};

use super::file::{ConfigFile, FilePlugin, FilePluginDir, FileTasks};
use super::problems::Problems;
use super::problems::spanned_limit;
use crate::runtime::grants::limits;
use crate::runtime::grants::plugin_config::{PluginConfig, PluginConfigs, TaskPolicy, ToolTasks};
use crate::runtime::grants::policy::{HostPattern, NetworkPolicy, PluginDir, Policy};
use crate::runtime::grants::roots::AllowedDir;

/// Every `[plugin.NAME]` section of `file` (in name order, so problems come in a stable
/// order); each problem is kept in `problems`.
pub(crate) fn plugin_configs(file: &ConfigFile, problems: &mut Problems) -> PluginConfigs {
    let mut sections: Vec<_> = file.config.plugin.iter().collect();
    sections.sort_by_key(|(name, _)| name.as_str());
    sections.into_iter().map(|(name, section)| (name.clone(), plugin_config(file, name, section, problems))).collect()
}

fn plugin_config(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> PluginConfig {
    let key = |key: &str| format!("[plugin.{name}] {key}");
    let timeout = spanned_limit(file, &section.timeout_ms, &key("timeout_ms"), limits::timeout_from_ms);
    let memory = spanned_limit(file, &section.memory_mib, &key("memory_mib"), limits::memory_from_mib);
    let output = spanned_limit(file, &section.max_output_mib, &key("max_output_mib"), limits::output_from_mib);
    let prepared = spanned_limit(file, &section.prepared, &key("prepared"), limits::prepared_count);
    PluginConfig {
        policy: policy(file, name, section, problems),
        prefix: section.prefix.clone(),
        tools: section.tools.clone(),
        exclude_tools: section.exclude_tools.clone().unwrap_or_default(),
        timeout: problems.take(timeout).flatten(),
        memory_bytes: problems.take(memory).flatten(),
        output_bytes: problems.take(output).flatten(),
        max_concurrency: section.max_concurrency,
        prepared: problems.take(prepared).flatten(),
        tasks: section.tasks.as_ref().map(|tasks| task_policy(file, name, tasks, problems)),
        owns: section.owns.clone().unwrap_or_default(),
    }
}

/// `[plugin.NAME.tasks.TOOL]` sections; `after_ms = 0` makes every call a task at once.
fn task_policy(
    file: &ConfigFile,
    name: &str,
    tasks: &std::collections::BTreeMap<String, FileTasks>,
    problems: &mut Problems,
) -> TaskPolicy {
    let tools = tasks.iter().map(|(tool, section)| {
        let key = format!("[plugin.{name}.tasks.{tool}] after_ms");
        let after = spanned_limit(file, &section.after_ms, &key, |ms| {
            if ms == 0 { Ok(std::time::Duration::ZERO) } else { limits::timeout_from_ms(ms) }
        });
        (tool.clone(), ToolTasks { required: section.required, after: problems.take(after).flatten() })
    });
    TaskPolicy { tools: tools.collect() }
}

/// What the section grants: directories, network, environment, stubs.
fn policy(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> Policy {
    Policy {
        shared_roots: section.roots.unwrap_or(true),
        dirs: section.dirs.iter().filter_map(|dir| problems.take(plugin_dir(file, name, dir))).collect(),
        network: problems.take(network(file, name, section)).flatten(),
        env: env(file, name, section, problems).into(),
        stub_ungranted: section.stub_ungranted.unwrap_or(false),
        host_paths: section.host_paths.unwrap_or(false),
        caller: section.caller.unwrap_or(false),
    }
}

/// `env` with its values, then `env_from_host` with mcpbox's own values (each must be set).
fn env(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = section.env.clone().unwrap_or_default().into_iter().collect();
    for variable in section.env_from_host.iter().flatten() {
        let value = std::env::var(variable.get_ref()).map_err(|_| {
            let at = file.at(variable.span());
            anyhow!("{at}: [plugin.{name}] env_from_host names `{}`, which is not set for mcpbox", variable.get_ref())
        });
        if let Some(value) = problems.take(value) {
            env.push((variable.get_ref().clone(), value));
        }
    }
    env
}

/// The placeholder that makes a directory per principal: the last component of its path.
const PER_PRINCIPAL: &str = "{sub}";

fn plugin_dir(file: &ConfigFile, name: &str, dir: &FilePluginDir) -> Result<PluginDir> {
    let at = || format!("{}: in [[plugin.{name}.dirs]] path", file.at(dir.path.span()));
    let mut path = file.resolve(dir.path.get_ref());
    // `.../{sub}`: the base, and under it a directory per principal (docs/authorization.md).
    let per_principal = path.file_name().is_some_and(|last| last == PER_PRINCIPAL);
    if per_principal {
        path.pop();
        if dir.within_client_roots {
            return Err(anyhow!(
                "{}: a per-principal directory ({PER_PRINCIPAL}) is never narrowed to client roots; drop within_client_roots",
                at()
            ));
        }
    }
    if path.to_string_lossy().contains(PER_PRINCIPAL) {
        return Err(anyhow!("{}: {PER_PRINCIPAL} may only be the path's last component", at()));
    }
    if dir.create {
        std::fs::create_dir_all(&path).with_context(|| format!("{}: cannot create {}", at(), path.display()))?;
    }
    let mut allowed = AllowedDir::new(&path, dir.name.clone(), dir.writable).with_context(at)?;
    allowed.per_principal = per_principal;
    Ok(PluginDir { dir: allowed, within_client_roots: dir.within_client_roots })
}

fn network(file: &ConfigFile, name: &str, section: &FilePlugin) -> Result<Option<Arc<NetworkPolicy>>> {
    let Some(entries) = &section.network else {
        if section.allow_private_network.is_some() {
            return Err(anyhow!(
                "{}: [plugin.{name}] allow_private_network needs a `network` allow-list",
                file.path.display()
            ));
        }
        return Ok(None);
    };
    let mut allow = Vec::new();
    for entry in entries {
        let pattern: HostPattern = entry
            .get_ref()
            .parse()
            .with_context(|| format!("{}: in [plugin.{name}] network", file.at(entry.span())))?;
        allow.push(pattern);
    }
    Ok(Some(Arc::new(NetworkPolicy { allow, allow_private: section.allow_private_network.unwrap_or(false) })))
}
