//! Loading one plugin: compile the component, link it under its policy, find which
//! `mcpbox:plugin` interfaces it exports (or its plain functions), and read its descriptors
//! from the component itself (one instance at load time), checking every name.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use sha2::Digest as _;
use wasmtime::component::InstancePre;

use super::descriptors::{MAX_NAME_LEN, valid_name};
use crate::runtime::engine::bindings::{completion, export_names, metadata, prompts, resources, tools};
use crate::runtime::engine::compile::Compiled;
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::policy::Policy;
use crate::runtime::plugin::invoke::{Describe, Described, Invocation};
use crate::runtime::plugin::metadata::{PluginMetadata, Said, Served, check as check_metadata};
use crate::runtime::plugin::plain::{self, PlainFunction};
use crate::runtime::plugin::{Exports, OutputCheck, Plugin, ToolInfo};
use crate::runtime::sandbox::linker::Linkers;
use crate::runtime::sandbox::{CallScope, HostState, run_call};

/// Describing a plugin should only return constants: it gets at most this long.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The plugin name a file gets: its stem, with characters outside `[A-Za-z0-9_-]` replaced.
pub fn plugin_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if name.is_empty() { "plugin".to_owned() } else { name }
}

/// What a plugin is loaded as: its name and prefix, and the operator's limits and grants.
pub(crate) struct LoadAs {
    pub(crate) name: Arc<str>,
    pub(crate) prefix: String,
    pub(crate) limits: Limits,
    pub(crate) policy: Arc<Policy>,
}

/// What a plugin offers, as described by its component.
struct Offered {
    tools: Vec<tools::Tool>,
    templates: Vec<resources::ResourceTemplate>,
    prompts: Vec<prompts::Prompt>,
    plain: Vec<(String, PlainFunction)>,
    said: Option<Said>,
}

/// Links, inspects and describes the compiled plugin from `path` as `load_as`.
pub(crate) async fn load(linkers: &Linkers, compiled: Compiled, path: &Path, load_as: LoadAs) -> Result<Plugin> {
    let Compiled { component, bytes } = compiled;
    let LoadAs { name, prefix, limits, policy } = load_as;
    let at = || format!("plugin `{name}` ({})", path.display());
    let linker = linkers.for_plugin(&component, &name, &policy).with_context(|| format!("{}", path.display()))?;
    let pre = linker.instantiate_pre(&component).map_err(|e| {
        anyhow!(
            "plugin `{name}` ({}) cannot be linked: {e:#}; mcpbox offers WASI 0.2 (p2), wasi:http (with a network \
             grant) and mcpbox:plugin/host@0.1.4 (and 0.1.0 to 0.1.3); `stub_ungranted = true` in [plugin.{name}] links other imports as \
             stubs that trap when called",
            path.display()
        )
    })?;
    let requested =
        crate::runtime::grants::requested::read_requested(path, &bytes).with_context(|| format!("plugin `{name}`"))?;
    let exports = find_exports(&pre).with_context(at)?;
    let offered = if exports.any() {
        describe(&name, &pre, &exports, limits, &policy).await.with_context(|| format!("cannot describe {}", at()))?
    } else {
        plain_tools(&name, path, &pre, &bytes)?
    };
    if !crate::switched_off!("descriptors.bounded") {
        crate::runtime::plugin::descriptors::check(&offered.tools, &offered.templates, &offered.prompts)
            .with_context(at)?;
    }
    if !crate::switched_off!("descriptors.names-unique") {
        crate::runtime::plugin::descriptors::unique(&offered.tools, &offered.templates, &offered.prompts)
            .with_context(at)?;
    }
    let tool_names: Vec<String> = offered.tools.iter().map(|t| t.name.clone()).collect();
    let tools =
        offered.tools.into_iter().map(|tool| check_tool(&prefix, tool)).collect::<Result<Vec<_>>>().with_context(at)?;
    for prompt in &offered.prompts {
        check_name(&prefix, "prompt", &prompt.name).with_context(at)?;
    }
    for template in &offered.templates {
        check_name(&prefix, "resource template", &template.name).with_context(at)?;
    }
    let served = Served {
        tools: tool_names.iter().map(String::as_str).collect(),
        prompts: offered.prompts.iter().map(|p| p.name.as_str()).collect(),
        templates: offered.templates.iter().map(|t| t.uri_template.as_str()).collect(),
    };
    let metadata = match offered.said {
        Some(said) if !crate::switched_off!("metadata.checked") => {
            check_metadata(&name, said, &served, &policy).with_context(at)?
        }
        _ => PluginMetadata::default(),
    };
    Ok(Plugin {
        name,
        prefix,
        path: path.to_owned(),
        fingerprint: fingerprint(&bytes),
        digest: Arc::from(format!("sha256:{}", crate::hex::hex(&sha2::Sha256::digest(&bytes)))),
        pre,
        exports,
        tools,
        templates: offered.templates,
        prompts: offered.prompts,
        limits,
        slots: None,
        policy,
        requested,
        tasks: None,
        owns: Vec::new(),
        approve: Default::default(),
        pin: true,
        plain: offered.plain,
        prepared: None,
        metadata: Arc::new(metadata),
    })
}

/// A digest of a plugin file, to tell a changed file from the same bytes written again.
fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// Asks a fresh instance for the plugin's tools, resource templates and prompts, under a short
/// deadline. It sees the environment the operator configured for it (a plugin may describe
/// itself by its configuration), and nothing else: no directories, no network.
async fn describe(
    name: &Arc<str>,
    pre: &InstancePre<HostState>,
    exports: &Exports,
    limits: Limits,
    policy: &Policy,
) -> Result<Offered> {
    let policy = Policy { env: policy.env.clone(), args: policy.args.clone(), ..Policy::default() };
    let limits = Limits { timeout: limits.timeout.min(DESCRIBE_TIMEOUT), ..limits };
    let exports = exports.clone();
    let (Described { tools, templates, prompts, said }, _) =
        run_call(name, pre, limits, &policy, CallScope::default(), None, move |store, instance| {
            Describe.call(exports, store, instance)
        })
        .await?;
    Ok(Offered { tools, templates, prompts, plain: Vec::new(), said })
}

/// Not our world: perhaps a plain component, its exported functions the tools.
fn plain_tools(name: &str, path: &Path, pre: &InstancePre<HostState>, bytes: &[u8]) -> Result<Offered> {
    let docs = plain::FunctionDocs::from_component(bytes);
    let (functions, skipped) = plain::discover(pre.engine(), pre.component(), &docs);
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
    Ok(Offered { tools, templates: Vec::new(), prompts: Vec::new(), plain, said: None })
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
        metadata: has(export_names::METADATA).then(|| metadata::GuestIndices::new(pre)).transpose()?,
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
    let output_check = match &output_schema {
        Some(schema) => Some(OutputCheck(Arc::new(
            jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
                .map_err(|e| anyhow!("output schema of tool `{}` is not a valid JSON Schema: {e}", descriptor.name))?,
        ))),
        None => None,
    };
    Ok(ToolInfo { descriptor, input_schema, output_schema, output_check })
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
