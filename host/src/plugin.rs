//! Loading one plugin: compile the component once, link it, find which `mcpbox:plugin`
//! interfaces it exports, and read its descriptors from the component itself (one instance at
//! load time). Calls later instantiate the kept `InstancePre` afresh.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, InstancePre, Linker, types::ComponentItem};

use crate::bindings::{self, completion, export_names, prompts, resources, tools};
use crate::policy::{Policy, RequestedPolicy};
use crate::roots;
use crate::sandbox::{CallError, CallFuture, CallScope, HostState, Limits, run_call};

/// Longest name of a tool, prompt or template, prefix included.
pub const MAX_NAME_LEN: usize = 128;

/// A compiled, linked plugin and what it offers.
pub struct Plugin {
    /// The plugin's name (from its file name), used in logs and errors.
    pub name: Arc<str>,
    /// Prepended to its tool, template and prompt names: `name.` unless configured.
    pub prefix: String,
    pub path: PathBuf,
    pub pre: InstancePre<HostState>,
    pub exports: Exports,
    pub tools: Vec<ToolInfo>,
    pub templates: Vec<resources::ResourceTemplate>,
    pub prompts: Vec<prompts::Prompt>,
    /// The limits every call of this plugin runs under.
    pub limits: Limits,
    /// At most this many calls of the plugin run at once; the others wait (within their
    /// time limit) for a slot.
    pub slots: Option<Arc<tokio::sync::Semaphore>>,
    /// What the operator grants it (directories, network, environment).
    pub policy: Arc<Policy>,
    /// What it asks for in its own metadata, if anything (never granted by itself).
    pub requested: Option<RequestedPolicy>,
    /// For a plain component (exported functions, no `mcpbox:plugin` world): the function
    /// behind each tool, by the tool's local name.
    pub plain: Vec<(String, crate::plain::PlainFunction)>,
}

impl Plugin {
    /// Runs `work` in a fresh instance of this plugin under its limits and policy, once a slot
    /// is free. `size` measures the result for the output limit, which it shares with the
    /// call's log and progress messages.
    pub async fn run<R: Send>(
        &self,
        mut scope: CallScope,
        size: impl FnOnce(&R) -> usize,
        work: impl for<'a> FnOnce(&'a mut wasmtime::Store<HostState>, wasmtime::component::Instance) -> CallFuture<'a, R>
        + Send,
    ) -> Result<R, CallError> {
        let _slot = match &self.slots {
            Some(slots) => {
                let wait = tokio::time::timeout(self.limits.timeout, slots.clone().acquire_owned());
                tokio::select! {
                    permit = wait => match permit {
                        Ok(Ok(permit)) => Some(permit),
                        _ => return Err(CallError::Busy { plugin: self.name.clone(), waited: self.limits.timeout }),
                    },
                    () = scope.cancel.cancelled() => return Err(CallError::Cancelled { plugin: self.name.clone() }),
                }
            }
            None => None,
        };
        scope.grants = self.grants(&scope);
        let (value, event_bytes) = run_call(&self.name, &self.pre, self.limits, &self.policy, scope, work).await?;
        let total = size(&value).saturating_add(event_bytes);
        if total > self.limits.output_bytes {
            return Err(CallError::OutputTooLarge {
                plugin: self.name.clone(),
                size: total,
                limit: self.limits.output_bytes,
            });
        }
        Ok(value)
    }

    /// The directories this plugin's call sees: the shared roots the session grants (if the
    /// operator lets this plugin see them), then its own directories, narrowed to the client's
    /// roots where the operator said so.
    fn grants(&self, scope: &CallScope) -> Arc<[roots::Grant]> {
        let policy = &self.policy;
        if policy.dirs.is_empty() {
            return if policy.shared_roots { scope.grants.clone() } else { Arc::from([]) };
        }
        let shared: &[roots::Grant] = if policy.shared_roots { &scope.grants } else { &[] };
        roots::plugin_grants(shared, &policy.dirs, scope.client_roots.as_deref()).into()
    }
}

/// Handles to the interfaces the plugin exports; `None` for those it doesn't.
#[derive(Clone, Default)]
pub struct Exports {
    pub tools: Option<tools::GuestIndices>,
    pub resources: Option<resources::GuestIndices>,
    pub prompts: Option<prompts::GuestIndices>,
    pub completion: Option<completion::GuestIndices>,
}

/// A tool with its schemas parsed.
#[derive(Debug, Clone)]
pub struct ToolInfo {
    pub descriptor: tools::Tool,
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    pub output_schema: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The linkers plugins are linked with: WASI 0.2 (its sockets denied per call) and the
/// `mcpbox:plugin/host` imports; plus `wasi:http` for plugins with a network grant or the
/// denying stub.
#[derive(Clone)]
pub struct Linkers {
    pub base: Arc<Linker<HostState>>,
    pub with_http: Arc<Linker<HostState>>,
}

impl Linkers {
    pub fn new(engine: &Engine) -> Result<Linkers> {
        let mut base = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut base).map_err(anyhow::Error::from).context("cannot link WASI")?;
        bindings::Plugin::add_to_linker::<HostState, HasSelf<HostState>>(&mut base, |state| state)
            .map_err(anyhow::Error::from)
            .context("cannot link the mcpbox host interface")?;
        let mut with_http = base.clone();
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut with_http)
            .map_err(anyhow::Error::from)
            .context("cannot link wasi:http")?;
        Ok(Linkers { base: Arc::new(base), with_http: Arc::new(with_http) })
    }

    /// The linker for `component` under `policy`, or why it may not load: it imports
    /// `wasi:http` without a network grant, or an interface mcpbox does not offer (unless the
    /// operator chose stubs for what it was not granted).
    pub fn for_plugin(&self, component: &Component, name: &str, policy: &Policy) -> Result<Arc<Linker<HostState>>> {
        let engine = component.engine();
        let imports: Vec<String> =
            component.component_type().imports(engine).map(|(import, _)| import.to_owned()).collect();
        let http_import = imports.iter().find(|i| i.starts_with("wasi:http/"));
        if let Some(import) = http_import
            && policy.network.is_none()
            && !policy.stub_ungranted
        {
            bail!(
                "plugin `{name}` imports `{import}` but has no network grant: allow the hosts it may reach with \
                 `[plugin.{name}] network = [\"https://api.example.com\"]` in the config, or set \
                 `stub_ungranted = true` there to link a stub that refuses every request"
            );
        }
        let linker = if http_import.is_some() { &self.with_http } else { &self.base };
        if !policy.stub_ungranted {
            return Ok(linker.clone());
        }
        let mut stubbed = Linker::clone(linker);
        define_trapping_stubs(&mut stubbed, component, name)?;
        Ok(Arc::new(stubbed))
    }
}

/// Links every imported interface mcpbox does not offer (anything but `wasi:*` and
/// `mcpbox:plugin/*`, which the linker already has in some compatible version) as functions
/// that trap with a message naming the import. (wasmtime's `define_unknown_imports_as_traps`
/// would also stub WASI interfaces of a newer minor version than ours, which the linker
/// satisfies by semver, and break their resource types.)
fn define_trapping_stubs(linker: &mut Linker<HostState>, component: &Component, plugin: &str) -> Result<()> {
    struct Stubbed;
    let engine = component.engine();
    for (import, item) in component.component_type().imports(engine) {
        if import.starts_with("wasi:") || import.starts_with("mcpbox:plugin/") {
            continue;
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else { continue };
        let mut stubs = linker.instance(import).map_err(anyhow::Error::from)?;
        for (export, item) in instance.exports(engine) {
            match item.ty {
                ComponentItem::ComponentFunc(_) => {
                    let message =
                        format!("plugin `{plugin}` called `{import}#{export}`, which mcpbox does not offer (a stub)");
                    stubs
                        .func_new(export, move |_, _, _, _| Err(wasmtime::Error::msg(message.clone())))
                        .map_err(anyhow::Error::from)?;
                }
                ComponentItem::Resource(_) => {
                    stubs
                        .resource(export, wasmtime::component::ResourceType::host::<Stubbed>(), |_, _| Ok(()))
                        .map_err(anyhow::Error::from)?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The plugin name a file gets: its stem, with characters outside `[A-Za-z0-9_-]` replaced.
pub fn plugin_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if name.is_empty() { "plugin".to_owned() } else { name }
}

/// Whether `name` may be an MCP tool, prompt or template name here.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Compiles `path` (blocking: call from a blocking thread).
pub fn compile(engine: &Engine, path: &Path) -> Result<Component> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[4..8] == [1, 0, 0, 0] {
        bail!(
            "{} is a core WebAssembly module, not a component: build it for wasm32-wasip2 (or wrap it with `wasm-tools component new`)",
            path.display()
        );
    }
    Component::new(engine, &bytes)
        .map_err(|e| anyhow!("{} is not a valid WebAssembly component: {e:#}", path.display()))
}

/// Links, inspects and describes a compiled plugin under `policy`.
pub async fn load(
    linkers: &Linkers,
    component: Component,
    path: &Path,
    name: Arc<str>,
    prefix: String,
    limits: Limits,
    policy: Arc<Policy>,
) -> Result<Plugin> {
    let linker = linkers.for_plugin(&component, &name, &policy).with_context(|| format!("{}", path.display()))?;
    let pre = linker.instantiate_pre(&component).map_err(|e| {
        anyhow!(
            "plugin `{name}` ({}) cannot be linked: {e:#}; mcpbox offers WASI 0.2 (p2), wasi:http (with a network \
             grant) and mcpbox:plugin/host@0.1.0; `stub_ungranted = true` in [plugin.{name}] links other imports as \
             stubs that trap when called",
            path.display()
        )
    })?;
    let bytes = std::fs::read(path).with_context(|| format!("plugin `{name}`: cannot read {}", path.display()))?;
    let requested = crate::policy::read_requested(path, &bytes).with_context(|| format!("plugin `{name}`"))?;
    let exports = find_exports(&pre).with_context(|| format!("plugin `{name}` ({})", path.display()))?;
    let (tools, templates, prompts, plain) = if exports.tools.is_some()
        || exports.resources.is_some()
        || exports.prompts.is_some()
    {
        let (tools, templates, prompts) = describe(&name, &pre, &exports, limits)
            .await
            .with_context(|| format!("cannot describe plugin `{name}` ({})", path.display()))?;
        (tools, templates, prompts, Vec::new())
    } else {
        // Not our world: perhaps a plain component, its exported functions the tools.
        let docs = crate::plain::FunctionDocs::from_component(&bytes);
        let (functions, skipped) = crate::plain::discover(pre.engine(), pre.component(), &docs);
        for reason in &skipped {
            tracing::warn!(plugin = %name, "not served as a tool: {reason}");
        }
        if functions.is_empty() {
            bail!(
                "plugin `{name}` ({}) exports none of {}, {}, {} and no plain functions: is it built against the mcpbox:plugin WIT package?",
                path.display(),
                export_names::TOOLS,
                export_names::RESOURCES,
                export_names::PROMPTS
            );
        }
        let (plain, tools) = functions.into_iter().map(|(f, d)| ((d.name.clone(), f), d)).unzip();
        (tools, Vec::new(), Vec::new(), plain)
    };

    let tools = tools
        .into_iter()
        .map(|tool| check_tool(&prefix, tool))
        .collect::<Result<Vec<_>>>()
        .with_context(|| format!("plugin `{name}` ({})", path.display()))?;
    for prompt in &prompts {
        check_name(&prefix, "prompt", &prompt.name).with_context(|| format!("plugin `{name}` ({})", path.display()))?;
    }
    for template in &templates {
        check_name(&prefix, "resource template", &template.name)
            .with_context(|| format!("plugin `{name}` ({})", path.display()))?;
    }
    Ok(Plugin {
        name,
        prefix,
        path: path.to_owned(),
        pre,
        exports,
        tools,
        templates,
        prompts,
        limits,
        slots: None,
        policy,
        requested,
        plain,
    })
}

/// Asks a fresh instance for the plugin's tools, resource templates and prompts, under a short
/// deadline: describing should only return constants.
async fn describe(
    name: &Arc<str>,
    pre: &InstancePre<HostState>,
    exports: &Exports,
    limits: Limits,
) -> Result<(Vec<tools::Tool>, Vec<resources::ResourceTemplate>, Vec<prompts::Prompt>)> {
    let describe_limits = Limits { timeout: limits.timeout.min(Duration::from_secs(10)), ..limits };
    let described = exports.clone();
    let ((tools, templates, prompts), _) =
        run_call(name, pre, describe_limits, &Policy::default(), CallScope::default(), move |store, instance| {
            Box::pin(async move {
                let tools = match &described.tools {
                    Some(indices) => indices.load(&mut *store, &instance)?.call_list_tools(&mut *store).await?,
                    None => Vec::new(),
                };
                let templates = match &described.resources {
                    Some(indices) => {
                        indices.load(&mut *store, &instance)?.call_list_resource_templates(&mut *store).await?
                    }
                    None => Vec::new(),
                };
                let prompts = match &described.prompts {
                    Some(indices) => indices.load(&mut *store, &instance)?.call_list_prompts(&mut *store).await?,
                    None => Vec::new(),
                };
                Ok((tools, templates, prompts))
            })
        })
        .await?;
    Ok((tools, templates, prompts))
}

fn find_exports(pre: &InstancePre<HostState>) -> Result<Exports> {
    let component = pre.component();
    let has = |name: &str| component.get_export_index(None, name).is_some();
    // An export that is present but does not match our WIT (another version, other
    // signatures) is an error, not an absence: the author meant to provide it.
    Ok(Exports {
        tools: has(export_names::TOOLS).then(|| tools::GuestIndices::new(pre)).transpose()?,
        resources: has(export_names::RESOURCES).then(|| resources::GuestIndices::new(pre)).transpose()?,
        prompts: has(export_names::PROMPTS).then(|| prompts::GuestIndices::new(pre)).transpose()?,
        completion: has(export_names::COMPLETION).then(|| completion::GuestIndices::new(pre)).transpose()?,
    })
}

fn check_name(prefix: &str, what: &str, name: &str) -> Result<()> {
    let full = format!("{prefix}{name}");
    if !valid_name(&full) {
        bail!("{what} name `{full}` is invalid: use 1 to {MAX_NAME_LEN} characters of [A-Za-z0-9_.-], prefix included");
    }
    Ok(())
}

fn parse_schema(what: &str, tool: &str, text: &str) -> Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => bail!("{what} of tool `{tool}` is not a JSON object"),
        Err(e) => bail!("{what} of tool `{tool}` is not valid JSON: {e}"),
    }
}

fn check_tool(prefix: &str, descriptor: tools::Tool) -> Result<ToolInfo> {
    check_name(prefix, "tool", &descriptor.name)?;
    let input_schema = parse_schema("input schema", &descriptor.name, &descriptor.input_schema)?;
    if input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        bail!("input schema of tool `{}` must have \"type\": \"object\"", descriptor.name);
    }
    let output_schema = descriptor
        .output_schema
        .as_deref()
        .map(|text| parse_schema("output schema", &descriptor.name, text))
        .transpose()?;
    Ok(ToolInfo { descriptor, input_schema, output_schema })
}

/// What a component imports and exports, for `mcpbox inspect`.
pub fn interface_names(engine: &Engine, component: &Component) -> (Vec<String>, Vec<String>) {
    let ty = component.component_type();
    let imports = ty.imports(engine).map(|(name, _)| name.to_owned()).collect();
    let exports = ty
        .exports(engine)
        .map(|(name, item)| match item.ty {
            ComponentItem::ComponentInstance(_) => name.to_owned(),
            _ => format!("{name} (not an interface)"),
        })
        .collect();
    (imports, exports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(plugin_name(Path::new("/x/my plugin.v2.wasm")), "my_plugin_v2");
        assert!(valid_name("fs.read_file"));
        assert!(!valid_name("fs/read"));
        assert!(!valid_name(&"a".repeat(129)));
    }
}
