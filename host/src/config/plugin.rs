//! `[plugin.NAME]` sections into the runtime's [`PluginConfig`]: names, tool selection, limits
//! (checked, naming file, line and key), environment, directories and the network allow-list.

use std::sync::Arc;

use anyhow::{Context, Result, anyhow};

use super::file::{ConfigFile, FilePlugin, FilePluginDir};
use super::spanned_limit;
use crate::runtime::limits;
use crate::runtime::plugin_config::{PluginConfig, PluginConfigs};
use crate::runtime::policy::{HostPattern, NetworkPolicy, PluginDir, Policy};
use crate::runtime::roots::AllowedDir;

/// Every `[plugin.NAME]` section of `file`.
pub(crate) fn plugin_configs(file: &ConfigFile) -> Result<PluginConfigs> {
    let mut configs = PluginConfigs::new();
    for (name, section) in &file.config.plugin {
        configs.insert(name.clone(), plugin_config(file, name, section)?);
    }
    Ok(configs)
}

fn plugin_config(file: &ConfigFile, name: &str, section: &FilePlugin) -> Result<PluginConfig> {
    let key = |key: &str| format!("[plugin.{name}] {key}");
    Ok(PluginConfig {
        policy: policy(file, name, section)?,
        prefix: section.prefix.clone(),
        tools: section.tools.clone(),
        exclude_tools: section.exclude_tools.clone().unwrap_or_default(),
        timeout: spanned_limit(file, &section.timeout_ms, &key("timeout_ms"), limits::timeout_from_ms)?,
        memory_bytes: spanned_limit(file, &section.memory_mib, &key("memory_mib"), limits::memory_from_mib)?,
        output_bytes: spanned_limit(file, &section.max_output_mib, &key("max_output_mib"), limits::output_from_mib)?,
        max_concurrency: section.max_concurrency,
    })
}

/// What the section grants: directories, network, environment, stubs.
fn policy(file: &ConfigFile, name: &str, section: &FilePlugin) -> Result<Policy> {
    Ok(Policy {
        shared_roots: section.roots.unwrap_or(true),
        dirs: section.dirs.iter().map(|dir| plugin_dir(file, name, dir)).collect::<Result<_>>()?,
        network: network(file, name, section)?,
        env: env(name, section)?.into(),
        stub_ungranted: section.stub_ungranted.unwrap_or(false),
    })
}

/// `env` with its values, then `env_from_host` with mcpbox's own values (each must be set).
fn env(name: &str, section: &FilePlugin) -> Result<Vec<(String, String)>> {
    let mut env: Vec<(String, String)> = section.env.clone().unwrap_or_default().into_iter().collect();
    for variable in section.env_from_host.iter().flatten() {
        let value = std::env::var(variable)
            .map_err(|_| anyhow!("[plugin.{name}] env_from_host names `{variable}`, which is not set for mcpbox"))?;
        env.push((variable.clone(), value));
    }
    Ok(env)
}

fn plugin_dir(file: &ConfigFile, name: &str, dir: &FilePluginDir) -> Result<PluginDir> {
    let path = file.resolve(dir.path.get_ref());
    let allowed = AllowedDir::new(&path, dir.name.clone(), dir.writable)
        .with_context(|| format!("{}: in [[plugin.{name}.dirs]] path", file.at(dir.path.span())))?;
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
