//! What a plugin says beyond its descriptors (WIT 0.1.3's optional `metadata` export), asked
//! once at load and checked like the descriptors, since it reaches clients, models and (for
//! MCP Apps) the user's browser: `_meta` and icons only for items the plugin serves, bounded,
//! no reserved keys, app domains and permissions within its grants (`runtime/grants/meta.rs`);
//! a tool's app (`ui.resourceUri`) one of the plugin's own `ui://` resources, served as
//! `text/html;profile=mcp-app`; its instructions bounded; its skills complete and within the
//! extension's limits. Anything else refuses the plugin, naming the item.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value, json};

use super::descriptors::MAX_DESCRIPTOR_BYTES;
use crate::runtime::engine::bindings::{metadata, resources, types};
use crate::runtime::grants::meta::{
    APP_MIME_TYPE, MAX_ICON_SRC_BYTES, MAX_ICONS, MetaPlace, MetaReach, UI_SCHEME, check_meta, icon_allowed,
};
use crate::runtime::grants::policy::Policy;
use crate::runtime::skills::{Found, held_skills};

/// The longest instructions a plugin may give (they go into every model context).
pub const MAX_INSTRUCTIONS_BYTES: usize = 8 << 10;
/// The most skill files one plugin may ship, all skills together.
const MAX_SKILL_FILES: usize = 1024;
/// The most apps (`ui://` resources) one plugin may serve, and the most bytes of HTML each.
pub(crate) const MAX_APPS: usize = 64;
const MAX_APP_BYTES: usize = 16 << 20;

/// `_meta` and icons of one item.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemMeta {
    pub meta: Option<Map<String, Value>>,
    /// Each an MCP `Icon` as JSON.
    pub icons: Vec<Value>,
}

impl ItemMeta {
    /// Adds `_meta` and `icons` to an item's JSON object.
    pub fn apply(&self, item: &mut Map<String, Value>) {
        if let Some(meta) = &self.meta {
            item.insert("_meta".into(), Value::Object(meta.clone()));
        }
        if !self.icons.is_empty() {
            item.insert("icons".into(), Value::Array(self.icons.clone()));
        }
    }
}

/// What a plugin said beyond its descriptors, checked.
#[derive(Debug, Default)]
pub struct PluginMetadata {
    /// By the plugin's own tool name.
    pub tools: BTreeMap<String, ItemMeta>,
    /// By the plugin's own prompt name.
    pub prompts: BTreeMap<String, ItemMeta>,
    /// By URI template.
    pub templates: BTreeMap<String, ItemMeta>,
    /// By URI (applied to the resources it lists).
    pub resources: BTreeMap<String, ItemMeta>,
    pub instructions: Option<String>,
    /// Its skills, served at `skill://<plugin>/<skill>/...`.
    pub(crate) skills: Found,
    /// Its `ui://` resources (MCP Apps) as it listed them at load, each with the digest
    /// (`sha256:` hex) of the HTML it served then: every later read must serve the same bytes.
    pub apps: BTreeMap<String, String>,
}

/// What the `metadata` export answered, and the resources the plugin listed at load.
#[derive(Default, serde::Serialize)]
pub(crate) struct Said {
    pub(crate) items: Vec<metadata::ItemMetadata>,
    pub(crate) instructions: Option<String>,
    pub(crate) skills: Vec<metadata::SkillFile>,
    pub(crate) listed: Vec<resources::Resource>,
    /// What reading each `ui://` resource returned at load.
    pub(crate) app_bodies: Vec<(String, Result<Vec<types::ResourceContents>, resources::ResourceError>)>,
}

/// The names a plugin's descriptors give, to check subjects against.
pub(crate) struct Served<'a> {
    pub(crate) tools: BTreeSet<&'a str>,
    pub(crate) prompts: BTreeSet<&'a str>,
    pub(crate) templates: BTreeSet<&'a str>,
}

/// Checks what plugin `name` said under `policy`.
pub(crate) fn check(name: &str, said: Said, served: &Served<'_>, policy: &Policy) -> Result<PluginMetadata> {
    let reach = MetaReach { network: policy.network.as_deref(), permissions: &policy.ui_permissions };
    let mut checked = PluginMetadata::default();
    for resource in &said.listed {
        if resource.uri.starts_with(UI_SCHEME) {
            if resource.mime_type.as_deref() != Some(APP_MIME_TYPE) {
                bail!(
                    "resource `{}` is a ui:// resource (MCP Apps) but its MIME type is {:?}, not {APP_MIME_TYPE}",
                    resource.uri,
                    resource.mime_type.as_deref().unwrap_or("none")
                );
            }
            let body = said
                .app_bodies
                .iter()
                .find(|(uri, _)| *uri == resource.uri)
                .map(|(_, read)| app_html(&resource.uri, read))
                .transpose()?
                .ok_or_else(|| anyhow!("app `{}` could not be read at load (over {MAX_APPS} apps?)", resource.uri))?;
            checked.apps.insert(resource.uri.clone(), app_digest(body));
        }
    }
    let mut total = 0usize;
    for item in said.items {
        let (place, of, map) = match &item.subject {
            metadata::Subject::Tool(tool) if served.tools.contains(tool.as_str()) => {
                (MetaPlace::Tool, format!("tool `{tool}`"), &mut checked.tools)
            }
            metadata::Subject::Prompt(prompt) if served.prompts.contains(prompt.as_str()) => {
                (MetaPlace::Other, format!("prompt `{prompt}`"), &mut checked.prompts)
            }
            metadata::Subject::ResourceTemplate(template) if served.templates.contains(template.as_str()) => {
                (MetaPlace::Other, format!("resource template `{template}`"), &mut checked.templates)
            }
            metadata::Subject::Resource(uri) => {
                (MetaPlace::Resource, format!("resource `{uri}`"), &mut checked.resources)
            }
            metadata::Subject::Tool(n) => bail!("metadata names tool `{n}`, which the plugin does not serve"),
            metadata::Subject::Prompt(n) => bail!("metadata names prompt `{n}`, which the plugin does not serve"),
            metadata::Subject::ResourceTemplate(n) => {
                bail!("metadata names resource template `{n}`, which the plugin does not serve")
            }
        };
        let key = match item.subject {
            metadata::Subject::Tool(key)
            | metadata::Subject::Prompt(key)
            | metadata::Subject::ResourceTemplate(key)
            | metadata::Subject::Resource(key) => key,
        };
        if map.contains_key(&key) {
            bail!("metadata names {of} twice");
        }
        let meta = item.meta.as_deref().map(|text| check_meta(text, place, reach)).transpose();
        let meta = meta.map_err(|why| anyhow!("the _meta of {of}: {why}"))?;
        if let Some(uri) = meta.as_ref().and_then(|m| m.get("ui")).and_then(|ui| ui.get("resourceUri")) {
            let uri = uri.as_str().unwrap_or_default();
            if !checked.apps.contains_key(uri) {
                bail!(
                    "{of} links the app `{uri}`, which is not one of this plugin's ui:// resources (list it in list-resources)"
                );
            }
        }
        if item.icons.len() > MAX_ICONS {
            bail!("{of} has {} icons; the limit is {MAX_ICONS}", item.icons.len());
        }
        let icons = item.icons.iter().map(|icon| check_icon(&of, icon, policy)).collect::<Result<Vec<_>>>()?;
        total += meta.as_ref().map_or(0, |m| Value::Object(m.clone()).to_string().len());
        total += icons.iter().map(|i| i.to_string().len()).sum::<usize>();
        if total > MAX_DESCRIPTOR_BYTES {
            bail!("its metadata is over {MAX_DESCRIPTOR_BYTES} bytes in all");
        }
        map.insert(key, ItemMeta { meta, icons });
    }
    if let Some(text) = said.instructions.filter(|text| !text.trim().is_empty()) {
        if text.len() > MAX_INSTRUCTIONS_BYTES {
            bail!("its instructions are {} bytes; the limit is {MAX_INSTRUCTIONS_BYTES}", text.len());
        }
        if let Some(c) = text.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
            bail!("its instructions contain the control character U+{:04X}", u32::from(c));
        }
        checked.instructions = Some(text);
    }
    if said.skills.len() > MAX_SKILL_FILES {
        bail!("it ships {} skill files; the limit is {MAX_SKILL_FILES}", said.skills.len());
    }
    let files = said.skills.into_iter().map(|f| (f.path, Arc::<[u8]>::from(f.contents))).collect();
    checked.skills = held_skills(name, files).map_err(|why| anyhow!("its skills: {why}"))?;
    Ok(checked)
}

/// The HTML an app's read returned: one contents of its own URI, as the MIME type MCP Apps
/// requires, bounded.
fn app_html<'a>(
    uri: &str,
    read: &'a Result<Vec<types::ResourceContents>, resources::ResourceError>,
) -> Result<&'a types::ResourceBody> {
    let contents = match read {
        Ok(contents) => contents,
        Err(e) => bail!("app `{uri}` could not be read at load: {e:?}"),
    };
    let [only] = contents.as_slice() else {
        bail!("app `{uri}` returned {} contents at load, not one", contents.len());
    };
    if only.uri != uri || only.mime_type.as_deref() != Some(APP_MIME_TYPE) {
        bail!("app `{uri}` did not return its own URI as {APP_MIME_TYPE} at load");
    }
    let len = match &only.body {
        types::ResourceBody::Text(text) => text.len(),
        types::ResourceBody::Blob(bytes) => bytes.len(),
    };
    if len > MAX_APP_BYTES {
        bail!("app `{uri}` is {len} bytes; the limit is {MAX_APP_BYTES}");
    }
    Ok(&only.body)
}

/// `sha256:` and the hex digest of an app's HTML bytes.
pub fn app_digest(body: &types::ResourceBody) -> String {
    use sha2::Digest as _;
    let bytes = match body {
        types::ResourceBody::Text(text) => text.as_bytes(),
        types::ResourceBody::Blob(bytes) => bytes.as_slice(),
    };
    format!("sha256:{}", crate::hex::hex(&sha2::Sha256::digest(bytes)))
}

/// An icon as MCP's `Icon`, or why it may not be served.
fn check_icon(of: &str, icon: &metadata::Icon, policy: &Policy) -> Result<Value> {
    if icon.src.len() > MAX_ICON_SRC_BYTES {
        bail!("an icon of {of} is {} bytes; the limit is {MAX_ICON_SRC_BYTES}", icon.src.len());
    }
    if !icon_allowed(&icon.src, policy.network.as_deref()) {
        let shown: String = icon.src.chars().take(80).collect();
        bail!("an icon of {of} (`{shown}`) is neither a data: URI nor an https URL on a host its network grant allows");
    }
    let texts = icon.sizes.iter().chain(&icon.mime_type).chain(&icon.theme);
    if texts.clone().any(|t| t.len() > 64 || t.chars().any(char::is_control)) {
        bail!("an icon of {of} has a size, MIME type or theme over 64 bytes or with control characters");
    }
    if icon.theme.as_deref().is_some_and(|t| t != "light" && t != "dark") {
        bail!("an icon of {of} has a theme other than \"light\" or \"dark\"");
    }
    let mut value = json!({ "src": icon.src });
    if let Some(mime) = &icon.mime_type {
        value["mimeType"] = mime.clone().into();
    }
    if !icon.sizes.is_empty() {
        value["sizes"] = icon.sizes.clone().into();
    }
    if let Some(theme) = &icon.theme {
        value["theme"] = theme.clone().into();
    }
    Ok(value)
}
