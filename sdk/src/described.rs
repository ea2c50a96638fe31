//! What a plugin says beyond its descriptors (WIT 0.1.3, the `described-plugin` world the SDK
//! builds): `_meta` and icons for its items, MCP Apps, instructions and skills. The host asks
//! once at load, checks it against the plugin's grants and pins it.

use crate::bindings::exports::mcpbox::plugin::metadata;
use crate::{Icon, Plugin, Resource, ResourceContents};

/// What a piece of metadata is about: a tool, a prompt, a resource or a resource template.
pub use crate::bindings::exports::mcpbox::plugin::metadata::Subject;

/// The MIME type of an MCP App's HTML.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

impl Plugin {
    /// Gives an item `_meta` (a JSON object) and icons (WIT 0.1.3): the host checks both at load
    /// and serves them with the item's descriptor.
    /// Given twice for one item (an [`app`](Self::app) and more), the `_meta` objects merge and
    /// the icons add up.
    pub fn metadata(mut self, subject: Subject, meta: Option<serde_json::Value>, mut icons: Vec<Icon>) -> Self {
        let key = |s: &Subject| match s {
            Subject::Tool(n) => (0, n.clone()),
            Subject::Prompt(n) => (1, n.clone()),
            Subject::Resource(n) => (2, n.clone()),
            Subject::ResourceTemplate(n) => (3, n.clone()),
        };
        let Some(item) = self.items.iter_mut().find(|item| key(&item.subject) == key(&subject)) else {
            self.items.push(metadata::ItemMetadata { subject, meta: meta.map(|m| m.to_string()), icons });
            return self;
        };
        if let Some(serde_json::Value::Object(extra)) = meta {
            let mut merged: serde_json::Map<String, serde_json::Value> =
                item.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default();
            merged.extend(extra);
            item.meta = Some(serde_json::Value::Object(merged).to_string());
        }
        item.icons.append(&mut icons);
        self
    }

    /// Adds to the server's instructions (what a client shows its model about this server).
    pub fn instructions(mut self, text: &str) -> Self {
        self.instructions = Some(text.to_owned());
        self
    }

    /// Ships a skill file: `path` is `<skill>/<path in the skill>`, e.g. `charts/SKILL.md`;
    /// the host serves it at `skill://<plugin>/<path>` with its digest.
    pub fn skill_file(mut self, path: &str, contents: impl Into<Vec<u8>>) -> Self {
        self.skill_files.push(metadata::SkillFile { path: path.to_owned(), contents: contents.into() });
        self
    }

    /// Ships an MCP App: the HTML at `uri` (a `ui://` URI), served as `text/html;profile=mcp-app`,
    /// linked to the tool `tool` (its `_meta.ui.resourceUri`), with the resource's `_meta.ui`
    /// (`csp`, `permissions`, `prefersBorder`; the host checks them against the plugin's
    /// grants). The HTML is built into the component, e.g. `include_str!("app.html")`.
    pub fn app(mut self, tool: &str, uri: &str, html: &'static str, ui: serde_json::Value) -> Self {
        let resource = Resource::new(uri, tool).mime_type(APP_MIME_TYPE);
        let contents_meta = serde_json::json!({ "ui": ui });
        self = self.resource(resource, move |uri| {
            let _ = crate::host::contents_meta(uri, &contents_meta);
            Ok(vec![ResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(APP_MIME_TYPE.to_owned()),
                body: crate::ResourceBody::Text(html.to_owned()),
            }])
        });
        let meta = serde_json::json!({ "ui": { "resourceUri": uri } });
        self.metadata(Subject::Tool(tool.to_owned()), Some(meta), Vec::new())
    }
}
