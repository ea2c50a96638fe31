//! Plugin (WIT) values to MCP wire values. Each conversion builds the JSON the MCP schema
//! describes and lets rmcp's serde types check it, so our output follows the schema rather
//! than rmcp's constructors of the day.

#![expect(deprecated, reason = "logging stays served to the clients that use it")]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, LoggingLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, ServerCapabilities, Tool,
};
use serde_json::{Map, Value, json};

use super::era::Dialect;
use crate::runtime::Catalog;
use crate::runtime::engine::bindings::{completion, prompts, resources, tools, types};
use crate::runtime::grants::meta::APP_MIME_TYPE;
use crate::runtime::plugin::ToolInfo;
use crate::runtime::plugin::metadata::ItemMeta;

/// The MCP Apps extension's identifier.
pub(crate) const APPS_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// 2026-07-28 `resultType` of a finished request (basic §Result types); rmcp drops it for
/// clients of older versions.
const COMPLETE: &str = "complete";

fn from_json<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(format!("cannot encode {what}: {e}"), None))
}

fn insert_opt<T: Into<Value>>(map: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value.into());
    }
}

fn role(role: &types::Role) -> &'static str {
    match role {
        types::Role::User => "user",
        types::Role::Assistant => "assistant",
    }
}

fn annotations(annotations: &Option<types::Annotations>) -> Option<Value> {
    let a = annotations.as_ref()?;
    let mut map = Map::new();
    insert_opt(&mut map, "audience", a.audience.as_ref().map(|list| list.iter().map(role).collect::<Vec<_>>()));
    insert_opt(&mut map, "priority", a.priority);
    insert_opt(&mut map, "lastModified", a.last_modified.clone());
    Some(Value::Object(map))
}

pub(crate) fn resource_contents(contents: &types::ResourceContents) -> Value {
    let mut map = Map::new();
    map.insert("uri".into(), contents.uri.clone().into());
    insert_opt(&mut map, "mimeType", contents.mime_type.clone());
    match &contents.body {
        types::ResourceBody::Text(text) => map.insert("text".into(), text.clone().into()),
        types::ResourceBody::Blob(bytes) => map.insert("blob".into(), BASE64.encode(bytes).into()),
    };
    Value::Object(map)
}

fn content_block(block: &types::ContentBlock, dialect: Dialect) -> Value {
    let (mut map, notes) = match block {
        types::ContentBlock::Text(t) => {
            let mut map = Map::new();
            map.insert("type".into(), "text".into());
            map.insert("text".into(), t.text.clone().into());
            (map, &t.annotations)
        }
        types::ContentBlock::Image(m) => (media("image", m), &m.annotations),
        types::ContentBlock::Audio(m) if dialect.audio => (media("audio", m), &m.annotations),
        types::ContentBlock::Audio(m) => {
            return json!({ "type": "text", "text": format!("[{} bytes of {} audio omitted: this client predates audio content]", m.data.len(), m.mime_type) });
        }
        types::ContentBlock::Embedded(e) => {
            let mut map = Map::new();
            map.insert("type".into(), "resource".into());
            map.insert("resource".into(), resource_contents(&e.contents));
            (map, &e.annotations)
        }
        types::ContentBlock::ResourceLink(link) if !dialect.resource_links => {
            return json!({ "type": "text", "text": format!("resource: {} ({})", link.uri, link.name) });
        }
        types::ContentBlock::ResourceLink(link) => {
            let mut map = Map::new();
            map.insert("type".into(), "resource_link".into());
            map.insert("uri".into(), link.uri.clone().into());
            map.insert("name".into(), link.name.clone().into());
            insert_opt(&mut map, "title", link.title.clone());
            insert_opt(&mut map, "description", link.description.clone());
            insert_opt(&mut map, "mimeType", link.mime_type.clone());
            insert_opt(&mut map, "size", link.size);
            (map, &link.annotations)
        }
    };
    insert_opt(&mut map, "annotations", annotations(notes));
    Value::Object(map)
}

fn media(kind: &str, m: &types::MediaContent) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), kind.into());
    map.insert("data".into(), BASE64.encode(&m.data).into());
    map.insert("mimeType".into(), m.mime_type.clone().into());
    map
}

/// The tool `info` served as `name`, with the `annotations` the host vouches for.
pub(crate) fn tool(
    name: &str,
    info: &ToolInfo,
    annotations: &tools::ToolAnnotations,
    extra: Option<&ItemMeta>,
) -> Result<Tool, McpError> {
    let d = &info.descriptor;
    let mut map = Map::new();
    map.insert("name".into(), name.into());
    insert_opt(&mut map, "title", d.title.clone());
    insert_opt(&mut map, "description", d.description.clone());
    map.insert("inputSchema".into(), Value::Object(info.input_schema.clone()));
    insert_opt(&mut map, "outputSchema", info.output_schema.clone().map(Value::Object));
    {
        let a = annotations;
        let mut hints = Map::new();
        insert_opt(&mut hints, "title", a.title.clone());
        insert_opt(&mut hints, "readOnlyHint", a.read_only_hint);
        insert_opt(&mut hints, "destructiveHint", a.destructive_hint);
        insert_opt(&mut hints, "idempotentHint", a.idempotent_hint);
        insert_opt(&mut hints, "openWorldHint", a.open_world_hint);
        map.insert("annotations".into(), Value::Object(hints));
    }
    if let Some(extra) = extra {
        extra.apply(&mut map);
    }
    from_json("tool", Value::Object(map))
}

pub(crate) fn call_result(result: tools::CallResult, dialect: Dialect) -> Result<CallToolResult, McpError> {
    let mut content: Vec<Value> = result.content.iter().map(|b| content_block(b, dialect)).collect();
    let mut map = Map::new();
    if let Some(text) = result.structured_content
        && dialect.resource_links
    {
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            McpError::internal_error(format!("tool returned structured content that is not JSON: {e}"), None)
        })?;
        if value.is_object()
            || dialect.any_structured_content
            || crate::switched_off!("descriptors.legacy-structured-object")
        {
            map.insert("structuredContent".into(), value);
        } else if content.is_empty() {
            // Up to 2025-11-25 `structuredContent` is an object (schema.json): a legacy client
            // gets another value as its JSON text, as a tool that returns structured content
            // SHOULD also send it (2025-06-18 server/tools §Structured content).
            content.push(json!({ "type": "text", "text": text }));
        }
    }
    map.insert("content".into(), content.into());
    map.insert("isError".into(), result.is_error.into());
    map.insert("resultType".into(), COMPLETE.into());
    from_json("tool result", Value::Object(map))
}

pub(crate) fn resource(r: &resources::Resource, extra: Option<&ItemMeta>) -> Result<Resource, McpError> {
    let mut map = Map::new();
    map.insert("uri".into(), r.uri.clone().into());
    map.insert("name".into(), r.name.clone().into());
    insert_opt(&mut map, "title", r.title.clone());
    insert_opt(&mut map, "description", r.description.clone());
    insert_opt(&mut map, "mimeType", r.mime_type.clone());
    insert_opt(&mut map, "size", r.size);
    insert_opt(&mut map, "annotations", annotations(&r.annotations));
    if let Some(extra) = extra {
        extra.apply(&mut map);
    }
    from_json("resource", Value::Object(map))
}

pub(crate) fn resource_template(
    name: &str,
    t: &resources::ResourceTemplate,
    extra: Option<&ItemMeta>,
) -> Result<ResourceTemplate, McpError> {
    let mut map = Map::new();
    map.insert("uriTemplate".into(), t.uri_template.clone().into());
    map.insert("name".into(), name.into());
    insert_opt(&mut map, "title", t.title.clone());
    insert_opt(&mut map, "description", t.description.clone());
    insert_opt(&mut map, "mimeType", t.mime_type.clone());
    insert_opt(&mut map, "annotations", annotations(&t.annotations));
    if let Some(extra) = extra {
        extra.apply(&mut map);
    }
    from_json("resource template", Value::Object(map))
}

pub(crate) fn read_result(contents: &[types::ResourceContents]) -> Result<ReadResourceResult, McpError> {
    read_result_with(contents, |_| None)
}

/// A read's result, each contents with the `_meta` `meta` gives for its URI (WIT 0.1.3's
/// `contents-meta`, checked when the guest set it).
pub(crate) fn read_result_with(
    contents: &[types::ResourceContents],
    meta: impl Fn(&str) -> Option<Map<String, Value>>,
) -> Result<ReadResourceResult, McpError> {
    let contents: Vec<Value> = contents
        .iter()
        .map(|c| {
            let mut value = resource_contents(c);
            if let (Some(meta), Value::Object(map)) = (meta(&c.uri), &mut value) {
                map.insert("_meta".into(), Value::Object(meta));
            }
            value
        })
        .collect();
    from_json("resource contents", json!({ "contents": contents, "resultType": COMPLETE }))
}

pub(crate) fn prompt(name: &str, p: &prompts::Prompt, extra: Option<&ItemMeta>) -> Result<Prompt, McpError> {
    let arguments: Vec<Value> = p
        .arguments
        .iter()
        .map(|a| {
            let mut map = Map::new();
            map.insert("name".into(), a.name.clone().into());
            insert_opt(&mut map, "title", a.title.clone());
            insert_opt(&mut map, "description", a.description.clone());
            map.insert("required".into(), a.required.into());
            Value::Object(map)
        })
        .collect();
    let mut map = Map::new();
    map.insert("name".into(), name.into());
    insert_opt(&mut map, "title", p.title.clone());
    insert_opt(&mut map, "description", p.description.clone());
    map.insert("arguments".into(), arguments.into());
    if let Some(extra) = extra {
        extra.apply(&mut map);
    }
    from_json("prompt", Value::Object(map))
}

pub(crate) fn prompt_result(result: &prompts::PromptResult, dialect: Dialect) -> Result<GetPromptResult, McpError> {
    let messages: Vec<Value> = result
        .messages
        .iter()
        .map(|m| json!({ "role": role(&m.role), "content": content_block(&m.content, dialect) }))
        .collect();
    let mut map = Map::new();
    insert_opt(&mut map, "description", result.description.clone());
    map.insert("messages".into(), messages.into());
    map.insert("resultType".into(), COMPLETE.into());
    from_json("prompt result", Value::Object(map))
}

/// Prompt arguments as the plugin takes them: strings (MCP sends strings; anything else is
/// passed as its JSON text).
pub(crate) fn prompt_arguments(arguments: Map<String, Value>) -> Vec<(String, String)> {
    arguments
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => (name, text),
            other => (name, other.to_string()),
        })
        .collect()
}

pub(crate) fn completion_result(result: &completion::CompletionResult) -> Result<CompleteResult, McpError> {
    let values: Vec<&String> = result.values.iter().take(100).collect();
    let mut completion = Map::new();
    completion.insert("values".into(), json!(values));
    insert_opt(&mut completion, "total", result.total);
    completion.insert("hasMore".into(), (result.has_more || result.values.len() > 100).into());
    from_json("completion", json!({ "completion": completion, "resultType": COMPLETE }))
}

pub(crate) fn log_level(level: &types::LogLevel) -> LoggingLevel {
    use types::LogLevel as L;
    match level {
        L::Debug => LoggingLevel::Debug,
        L::Info => LoggingLevel::Info,
        L::Notice => LoggingLevel::Notice,
        L::Warning => LoggingLevel::Warning,
        L::Error => LoggingLevel::Error,
        L::Critical => LoggingLevel::Critical,
        L::Alert => LoggingLevel::Alert,
        L::Emergency => LoggingLevel::Emergency,
    }
}

/// RFC 5424 order, least severe first (rmcp's enum has no ordering).
pub(crate) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// What the server offers. While plugins are watched, any of them may appear later, so every
/// list is declared, with `listChanged`; otherwise only what the plugins offer now.
pub(crate) fn capabilities(catalog: &Catalog, watching: bool) -> ServerCapabilities {
    let mut caps = Map::new();
    let list = if watching { json!({ "listChanged": true }) } else { json!({}) };
    caps.insert("tools".into(), list.clone());
    caps.insert("logging".into(), json!({}));
    if watching || catalog.has_resources() {
        let mut resources = list.clone();
        resources["subscribe"] = json!(true);
        caps.insert("resources".into(), resources);
    }
    if watching || !catalog.prompts().is_empty() {
        caps.insert("prompts".into(), list);
    }
    if watching || catalog.has_completion() {
        caps.insert("completions".into(), json!({}));
    }
    // The tasks extension (extensions/tasks §Capability Negotiation): rmcp serves
    // `tasks/get`, `tasks/update` and `tasks/cancel` only where it is declared. Whether a call
    // becomes a task is the operator's per-tool policy (`[plugin.NAME.tasks]`).
    let mut extensions = json!({ (rmcp::model::TASKS_EXTENSION_ID): {} });
    // MCP Apps (extensions/apps §Client<>Server Capability Negotiation): declared when some
    // plugin serves an app; the same tools are listed for every client either way.
    if catalog.plugins().iter().any(|p| !p.metadata.apps.is_empty()) {
        extensions[APPS_EXTENSION_ID] = json!({ "mimeTypes": [APP_MIME_TYPE] });
    }
    caps.insert("extensions".into(), extensions);
    serde_json::from_value(Value::Object(caps)).unwrap_or_default()
}
