//! `[plugin.NAME]` sections into the runtime's [`PluginConfig`]: names, tool selection, limits
//! (checked, naming file, line and key), environment, directories, the network allow-list and
//! the credentials set on requests to its origins (each within the allow-list).

use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use toml::Spanned;

use super::file::{ConfigFile, FileApprove, FileCredential, FilePlugin, FilePluginDir, FileTasks};
use super::problems::Problems;
use super::problems::spanned_limit;
use super::secrets::Secrets;
use crate::runtime::grants::approve::Approve;
use crate::runtime::grants::credentials::{Credential, Origin, Placement, Template};
use crate::runtime::grants::limits;
use crate::runtime::grants::may_call::MayCall;
use crate::runtime::grants::plugin_config::{PluginConfig, PluginConfigs, TaskPolicy, ToolTasks};
use crate::runtime::grants::policy::{HostPattern, NetworkPolicy, PluginDir, Policy};
use crate::runtime::grants::roots::AllowedDir;
use crate::runtime::grants::routes::Routes;

/// Every `[plugin.NAME]` section of `file` (in name order, so problems come in a stable
/// order); each problem is kept in `problems`.
pub(crate) fn plugin_configs(file: &ConfigFile, secrets: &Secrets, problems: &mut Problems) -> PluginConfigs {
    let routes = Arc::new(problems.take(super::routes::routes(file)).unwrap_or_default());
    let mut sections: Vec<_> = file.config.plugin.iter().collect();
    sections.sort_by_key(|(name, _)| name.as_str());
    sections
        .into_iter()
        .map(|(name, section)| (name.clone(), plugin_config(file, name, section, secrets, &routes, problems)))
        .collect()
}

fn plugin_config(
    file: &ConfigFile,
    name: &str,
    section: &FilePlugin,
    secrets: &Secrets,
    routes: &Arc<Routes>,
    problems: &mut Problems,
) -> PluginConfig {
    let key = |key: &str| format!("[plugin.{name}] {key}");
    let timeout = spanned_limit(file, &section.timeout_ms, &key("timeout_ms"), limits::timeout_from_ms);
    let memory = spanned_limit(file, &section.memory_mib, &key("memory_mib"), limits::memory_from_mib);
    let output = spanned_limit(file, &section.max_output_mib, &key("max_output_mib"), limits::output_from_mib);
    let write = spanned_limit(file, &section.max_write_mib, &key("max_write_mib"), limits::write_from_mib);
    let prepared = spanned_limit(file, &section.prepared, &key("prepared"), limits::prepared_count);
    PluginConfig {
        policy: policy(file, name, section, secrets, routes, problems),
        prefix: section.prefix.clone(),
        tools: section.tools.clone(),
        exclude_tools: section.exclude_tools.clone().unwrap_or_default(),
        timeout: problems.take(timeout).flatten(),
        memory_bytes: problems.take(memory).flatten(),
        output_bytes: problems.take(output).flatten(),
        write_bytes: problems.take(write).flatten(),
        max_concurrency: section.max_concurrency,
        prepared: problems.take(prepared).flatten(),
        tasks: section.tasks.as_ref().map(|tasks| task_policy(file, name, tasks, problems)),
        owns: section.owns.clone().unwrap_or_default(),
        approve: approve(file, name, section, problems),
        pin: section.pin.unwrap_or(true),
    }
}

/// `approve = true | false | ["tool", "prefix_*"]`; a name that is empty or has a `*` before
/// its end is refused (it would match nothing the operator meant).
fn approve(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> Approve {
    let Some(spanned) = &section.approve else { return Approve::None };
    match spanned.get_ref() {
        FileApprove::All(true) => Approve::All,
        FileApprove::All(false) => Approve::None,
        FileApprove::Tools(tools) => {
            if let Some(bad) = tools.iter().find(|t| t.is_empty() || t.trim_end_matches('*').contains('*')) {
                problems.take::<()>(Err(anyhow!(
                    "{}: [plugin.{name}] approve: `{bad}` is not a tool name (a `*` may only end one)",
                    file.at(spanned.span())
                )));
            }
            Approve::Tools(tools.clone())
        }
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
fn policy(
    file: &ConfigFile,
    name: &str,
    section: &FilePlugin,
    secrets: &Secrets,
    routes: &Arc<Routes>,
    problems: &mut Problems,
) -> Policy {
    let mut network = problems.take(network(file, name, section, routes)).flatten();
    let credentials: Vec<_> =
        section.credentials.iter().filter_map(|c| problems.take(credential(file, name, c, secrets))).collect();
    match &mut network {
        Some(network) => {
            for credential in &credentials {
                let origin = &credential.origin;
                if network.admits(&origin.scheme, &origin.host, origin.port).is_none() {
                    let entry =
                        section.credentials.iter().find(|c| c.host.get_ref().parse().ok().as_ref() == Some(origin));
                    let at = entry.map_or_else(|| file.path.display().to_string(), |c| file.at(c.host.span()));
                    problems.take::<()>(Err(anyhow!(
                        "{at}: [[plugin.{name}.credentials]] host {origin} is not in the plugin's network allow-list"
                    )));
                }
            }
            Arc::make_mut(network).credentials = credentials.into_iter().map(Arc::new).collect();
        }
        None if !section.credentials.is_empty() => {
            let at = file.at(section.credentials[0].host.span());
            problems.take::<()>(Err(anyhow!(
                "{at}: [[plugin.{name}.credentials]] needs a `network` allow-list holding its host"
            )));
        }
        None => {}
    }
    Policy {
        shared_roots: section.roots.unwrap_or(true),
        dirs: section.dirs.iter().filter_map(|dir| problems.take(plugin_dir(file, name, dir))).collect(),
        network,
        env: env(file, name, section, problems).into(),
        args: section.args.clone().unwrap_or_default().into(),
        stub_ungranted: section.stub_ungranted.unwrap_or(false),
        host_paths: section.host_paths.unwrap_or(false),
        caller: section.caller.unwrap_or(false),
        ui_permissions: ui_permissions(file, name, section, problems),
        may_call: may_call(file, name, section, problems),
    }
}

/// `may_call = ["plugin.tool", "plugin.*"]`: served names, a `*` only at the end.
fn may_call(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> MayCall {
    let Some(spanned) = &section.may_call else { return MayCall::default() };
    let patterns = spanned.get_ref();
    if let Some(bad) = patterns.iter().find(|t| t.is_empty() || t.trim_end_matches('*').contains('*')) {
        problems.take::<()>(Err(anyhow!(
            "{}: [plugin.{name}] may_call: `{bad}` is not a served tool name (a `*` may only end one)",
            file.at(spanned.span())
        )));
    }
    MayCall::new(patterns.clone())
}

/// `ui_permissions`: each one MCP Apps defines.
fn ui_permissions(file: &ConfigFile, name: &str, section: &FilePlugin, problems: &mut Problems) -> Vec<String> {
    use crate::runtime::grants::meta::UI_PERMISSIONS;
    let mut allowed = Vec::new();
    for permission in &section.ui_permissions {
        if UI_PERMISSIONS.contains(&permission.get_ref().as_str()) {
            allowed.push(permission.get_ref().clone());
        } else {
            problems.take::<()>(Err(anyhow!(
                "{}: [plugin.{name}] ui_permissions: `{}` is not one of {}",
                file.at(permission.span()),
                permission.get_ref(),
                UI_PERMISSIONS.join(", ")
            )));
        }
    }
    allowed
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

/// Headers a credential may not set: those wasmtime-wasi-http forbids guests (`Host` among
/// them: the origin is the authority checked), and the body's framing.
fn settable_header(name: &http::HeaderName) -> bool {
    !wasmtime_wasi_http::DEFAULT_FORBIDDEN_HEADERS.contains(name)
        && *name != http::header::CONTENT_LENGTH
        && *name != http::header::CONTENT_ENCODING
}

/// One `[[plugin.NAME.credentials]]` entry, its secrets bound.
fn credential(file: &ConfigFile, name: &str, entry: &FileCredential, secrets: &Secrets) -> Result<Credential> {
    let at =
        |span: std::ops::Range<usize>, key: &str| format!("{}: [[plugin.{name}.credentials]] {key}", file.at(span));
    let origin: Origin = entry.host.get_ref().parse().with_context(|| at(entry.host.span(), "host"))?;
    let template = |text: &Spanned<String>, key: &str| {
        Template::parse(text.get_ref(), |secret| secrets.get(secret)).with_context(|| at(text.span(), key))
    };
    if let Some(client) = &entry.oauth {
        if entry.header.is_some() || entry.query.is_some() || entry.basic_username.is_some() || entry.value.is_some() {
            bail!(
                "{}: `oauth` sets `Authorization: Bearer` itself: drop header, query, basic_username and value",
                at(client.span(), "oauth")
            );
        }
        if !file.config.oauth_clients.contains_key(client.get_ref()) {
            bail!("{}: no [oauth_clients.{}] is configured", at(client.span(), "oauth"), client.get_ref());
        }
        let value = Template::bearer_of_linked(client.get_ref());
        return Ok(Credential { origin, placement: Placement::Header(http::header::AUTHORIZATION), value });
    }
    let value =
        entry.value.as_ref().ok_or_else(|| anyhow!("{}: needs `value` (or `oauth`)", at(entry.host.span(), "host")))?;
    let value = template(value, "value")?;
    let placement = match (&entry.header, &entry.query, &entry.basic_username) {
        (Some(header), None, None) => {
            let parsed =
                http::HeaderName::from_bytes(header.get_ref().as_bytes()).ok().filter(settable_header).ok_or_else(
                    || anyhow!("{}: `{}` cannot be set by a credential", at(header.span(), "header"), header.get_ref()),
                )?;
            Placement::Header(parsed)
        }
        (None, Some(query), None) if !query.get_ref().is_empty() => Placement::Query(query.get_ref().clone()),
        (None, None, Some(username)) => Placement::Basic { username: template(username, "basic_username")? },
        _ => bail!(
            "{}: needs exactly one of `header`, `query` (not empty) and `basic_username`",
            at(entry.host.span(), "host")
        ),
    };
    Ok(Credential { origin, placement, value })
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
    allowed.quota =
        super::quota::dir_quota(file, &format!("[[plugin.{name}.dirs]]"), dir.writable, &dir.max_mib, &dir.max_files)?;
    Ok(PluginDir { dir: allowed, within_client_roots: dir.within_client_roots })
}

fn network(
    file: &ConfigFile,
    name: &str,
    section: &FilePlugin,
    routes: &Arc<Routes>,
) -> Result<Option<Arc<NetworkPolicy>>> {
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
    Ok(Some(Arc::new(NetworkPolicy {
        allow,
        allow_private: section.allow_private_network.unwrap_or(false),
        credentials: Vec::new(),
        routes: routes.clone(),
    })))
}
