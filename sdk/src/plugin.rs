use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;

use crate::bindings::exports::mcpbox::plugin::{completion, metadata, prompts, resources, tools};
use crate::tool::Tool;
use crate::uri_template::UriTemplate;
use crate::{CallResult, CompletionRequest, Content, PromptResult, ResourceContents};

/// Arguments of a tool that takes none: its schema is the empty object schema.
#[derive(Debug, Default, serde::Deserialize)]
pub struct NoArgs {}

impl JsonSchema for NoArgs {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoArgs".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object", "properties": {} })
    }
}

/// A failure inside a tool, resource read or prompt. Any error type converts into it with `?`,
/// so `std::fs::read(path)?` just works; the message reaches the model as a tool result with
/// `isError: true`.
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// fn read_note(path: &str) -> Result<String, Error> {
///     if path.contains("..") {
///         return Err(Error::invalid_arguments("`path` must stay inside the notes folder"));
///     }
///     Ok(std::fs::read_to_string(path)?)
/// }
/// # let _ = read_note;
/// ```
pub struct Error {
    kind: ErrorKind,
    message: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ErrorKind {
    Failed,
    InvalidArguments,
    NotFound,
    UnknownTool,
}

impl Error {
    /// The operation failed; the message says why.
    pub fn failed(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Failed, message: message.into() }
    }

    /// The arguments were wrong (beyond what the schema already checks).
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::InvalidArguments, message: message.into() }
    }

    /// This tool does not exist (any more), for a plugin whose tools come and go: the host
    /// answers the call with a JSON-RPC invalid-params error instead of a tool result (tools
    /// only; elsewhere it is a failure).
    pub fn unknown_tool(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::UnknownTool, message: message.into() }
    }

    /// The resource does not exist (resource reads only).
    pub fn not_found(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::NotFound, message: message.into() }
    }

    /// The error's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

// `Error` deliberately does not implement `Display`, so that this blanket conversion does not
// overlap with `From<T> for T` (the same trick as `anyhow::Error`).
impl<E: fmt::Display> From<E> for Error {
    fn from(error: E) -> Self {
        Error::failed(error.to_string())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// A concrete resource.
pub type Resource = resources::Resource;
/// A family of resources described by a URI template.
pub type ResourceTemplate = resources::ResourceTemplate;

impl resources::Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: &str, name: &str) -> Self {
        resources::Resource {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
        }
    }
    /// Sets the description.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: &str) -> Self {
        self.mime_type = Some(mime_type.to_owned());
        self
    }
}

impl resources::ResourceTemplate {
    /// A template such as `file:///{path}` called `name`.
    pub fn new(uri_template: &str, name: &str) -> Self {
        resources::ResourceTemplate {
            uri_template: uri_template.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
        }
    }
    /// Sets the description.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: &str) -> Self {
        self.mime_type = Some(mime_type.to_owned());
        self
    }
}

/// The variables a URI matched in a resource template, e.g. `id` in `test://item/{id}`.
pub type TemplateVars = BTreeMap<String, String>;

pub(crate) type Reader = Box<dyn Fn(&str) -> Result<Vec<ResourceContents>, Error> + Send + Sync>;
pub(crate) type TemplateReader = Box<dyn Fn(&str, &TemplateVars) -> Result<Vec<ResourceContents>, Error> + Send + Sync>;
type Lister = Box<dyn Fn() -> Vec<Resource> + Send + Sync>;

/// The arguments of a prompt request.
#[derive(Debug, Default)]
pub struct PromptArgs(pub(crate) BTreeMap<String, String>);

impl PromptArgs {
    /// The argument `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// A prompt template.
pub struct Prompt {
    pub(crate) descriptor: prompts::Prompt,
}

impl Prompt {
    /// A prompt called `name`.
    pub fn new(name: &str, description: &str) -> Self {
        Prompt {
            descriptor: prompts::Prompt {
                name: name.to_owned(),
                title: None,
                description: Some(description.to_owned()),
                arguments: Vec::new(),
            },
        }
    }
    /// Adds an argument; the SDK rejects a request that lacks a required one.
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Self {
        self.descriptor.arguments.push(prompts::PromptArgument {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            required,
        });
        self
    }
}

impl PromptResult {
    /// A prompt result of one user message.
    pub fn user(content: Content) -> Self {
        PromptResult { description: None, messages: vec![crate::PromptMessage { role: crate::Role::User, content }] }
    }
    /// A prompt result of several user messages.
    pub fn user_messages(contents: Vec<Content>) -> Self {
        let messages =
            contents.into_iter().map(|content| crate::PromptMessage { role: crate::Role::User, content }).collect();
        PromptResult { description: None, messages }
    }
}

pub(crate) type PromptHandler = Box<dyn Fn(&PromptArgs) -> Result<PromptResult, Error> + Send + Sync>;

type Completer = Box<dyn Fn(&CompletionRequest) -> Vec<String> + Send + Sync>;

/// Everything a plugin offers. Build it in a function and export it with
/// [`export_plugin!`](crate::export_plugin); the host instantiates the plugin afresh for every
/// call, so the function runs once per call and should be cheap.
///
/// The macros ([`tools!`](crate::tools), [`prompts!`](crate::prompts),
/// [`resources!`](crate::resources)) cover most plugins; the builder methods do the same with
/// closures, and more (resources listed afresh on every request, completion):
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// fn plugin() -> Plugin {
///     Plugin::new()
///         .tool(Tool::new("shout", "Upper-cases a text", |args: NoArgs| Ok("HELLO")))
///         .resource(Resource::new("notes://today", "today").mime_type("text/plain"), |uri| {
///             Ok(vec![ResourceContents {
///                 uri: uri.to_owned(),
///                 mime_type: Some("text/plain".into()),
///                 body: mcpbox_sdk::ResourceBody::Text("nothing planned".into()),
///             }])
///         })
///         .resource_template(ResourceTemplate::new("notes://day/{date}", "day"), |uri, vars| {
///             Err(Error::not_found(format!("no note for {}", vars["date"])))
///         })
///         .dynamic_resources(
///             || vec![Resource::new("notes://inbox", "inbox")],
///             |uri| Err(Error::not_found(format!("{uri} is empty"))),
///         )
///         .prompt(Prompt::new("plan", "Plans a day").argument("date", "Which day", true), |args| {
///             Ok(PromptResult::user(mcpbox_sdk::content::text(format!("Plan {}", args.get("date").unwrap_or("today")))))
///         })
///         .completion(|request| vec!["2026-11-22".into(), "2026-11-23".into()])
/// }
/// # fn main() { let _ = plugin(); }
/// ```
#[derive(Default)]
pub struct Plugin {
    tools: Vec<Tool>,
    pub(crate) resources: Vec<(Resource, Reader)>,
    dynamic: Option<(Lister, Reader)>,
    pub(crate) templates: Vec<(ResourceTemplate, UriTemplate, TemplateReader)>,
    pub(crate) prompts: Vec<(Prompt, PromptHandler)>,
    completer: Option<Completer>,
    /// `_meta` and icons by item, instructions, skill files (WIT 0.1.3; `described.rs`).
    pub(crate) items: Vec<metadata::ItemMetadata>,
    pub(crate) instructions: Option<String>,
    pub(crate) skill_files: Vec<metadata::SkillFile>,
}

impl Plugin {
    /// An empty plugin.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds what a [`tools!`](crate::tools), [`prompts!`](crate::prompts) or
    /// [`resources!`](crate::resources) declaration made: `Plugin::new().add(greet::tool())`.
    #[allow(clippy::should_implement_trait, reason = "a builder step, not `std::ops::Add`")]
    pub fn add(self, offering: impl crate::Offering) -> Self {
        offering.add_to(self)
    }

    /// Adds a fixed resource and the function that reads it.
    pub fn resource(
        mut self,
        resource: Resource,
        read: impl Fn(&str) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static,
    ) -> Self {
        self.resources.push((resource, Box::new(read)));
        self
    }

    /// Adds resources that are listed afresh on every `resources/list` (for example files in
    /// the granted directories), and the function that reads any of them.
    pub fn dynamic_resources(
        mut self,
        list: impl Fn() -> Vec<Resource> + Send + Sync + 'static,
        read: impl Fn(&str) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static,
    ) -> Self {
        self.dynamic = Some((Box::new(list), Box::new(read)));
        self
    }

    /// Adds a resource template and the function that reads URIs matching it. Variables match
    /// any text up to the next literal part of the template; the last one matches the rest.
    pub fn resource_template(
        mut self,
        template: ResourceTemplate,
        read: impl Fn(&str, &TemplateVars) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static,
    ) -> Self {
        let parsed = UriTemplate::parse(&template.uri_template);
        self.templates.push((template, parsed, Box::new(read)));
        self
    }

    /// Adds a prompt and the function that produces its messages.
    pub fn prompt(
        mut self,
        prompt: Prompt,
        get: impl Fn(&PromptArgs) -> Result<PromptResult, Error> + Send + Sync + 'static,
    ) -> Self {
        self.prompts.push((prompt, Box::new(get)));
        self
    }

    /// Sets the function that completes prompt and template arguments.
    pub fn completion(mut self, complete: impl Fn(&CompletionRequest) -> Vec<String> + Send + Sync + 'static) -> Self {
        self.completer = Some(Box::new(complete));
        self
    }
}

/// The glue between the generated bindings and a [`Plugin`]; used by [`export_plugin!`].
#[doc(hidden)]
pub mod __rt {
    use super::*;

    pub fn list_tools(plugin: &Plugin) -> Vec<tools::Tool> {
        plugin.tools.iter().map(Tool::describe).collect()
    }

    pub fn call_tool(plugin: &Plugin, name: &str, arguments: &str) -> Result<CallResult, tools::ToolError> {
        let Some(tool) = plugin.tools.iter().find(|t| t.descriptor.name == name) else {
            return Err(tools::ToolError::UnknownTool(format!("no tool named `{name}`")));
        };
        (tool.handler)(arguments).map_err(|e| match e.kind {
            ErrorKind::InvalidArguments => tools::ToolError::InvalidArguments(e.message),
            ErrorKind::Failed | ErrorKind::NotFound => tools::ToolError::Failed(e.message),
            ErrorKind::UnknownTool => tools::ToolError::UnknownTool(e.message),
        })
    }

    pub fn list_resources(plugin: &Plugin) -> Vec<Resource> {
        let mut all: Vec<Resource> = plugin.resources.iter().map(|(r, _)| r.clone()).collect();
        if let Some((list, _)) = &plugin.dynamic {
            all.extend(list());
        }
        all
    }

    pub fn list_resource_templates(plugin: &Plugin) -> Vec<ResourceTemplate> {
        plugin.templates.iter().map(|(t, _, _)| t.clone()).collect()
    }

    pub fn read_resource(plugin: &Plugin, uri: &str) -> Result<Vec<ResourceContents>, resources::ResourceError> {
        let result = if let Some((_, read)) = plugin.resources.iter().find(|(r, _)| r.uri == uri) {
            read(uri)
        } else if let Some((_, vars, read)) =
            plugin.templates.iter().find_map(|(_, t, read)| t.matches(uri).map(|vars| ((), vars, read)))
        {
            read(uri, &vars)
        } else if let Some((_, read)) = &plugin.dynamic {
            read(uri)
        } else {
            Err(Error::not_found(format!("no resource at {uri}")))
        };
        result.map_err(|e| match e.kind {
            ErrorKind::NotFound => resources::ResourceError::NotFound(e.message),
            _ => resources::ResourceError::Failed(e.message),
        })
    }

    pub fn list_prompts(plugin: &Plugin) -> Vec<prompts::Prompt> {
        plugin.prompts.iter().map(|(p, _)| p.descriptor.clone()).collect()
    }

    pub fn get_prompt(
        plugin: &Plugin,
        name: &str,
        arguments: Vec<(String, String)>,
    ) -> Result<PromptResult, prompts::PromptError> {
        let Some((prompt, get)) = plugin.prompts.iter().find(|(p, _)| p.descriptor.name == name) else {
            return Err(prompts::PromptError::UnknownPrompt(format!("no prompt named `{name}`")));
        };
        let args = PromptArgs(arguments.into_iter().collect());
        if let Some(missing) = prompt.descriptor.arguments.iter().find(|a| a.required && args.get(&a.name).is_none()) {
            return Err(prompts::PromptError::InvalidArguments(format!(
                "missing required argument `{}`",
                missing.name
            )));
        }
        get(&args).map_err(|e| match e.kind {
            ErrorKind::InvalidArguments => prompts::PromptError::InvalidArguments(e.message),
            _ => prompts::PromptError::Failed(e.message),
        })
    }

    pub fn describe_items(plugin: &Plugin) -> Vec<metadata::ItemMetadata> {
        plugin.items.clone()
    }

    pub fn instructions(plugin: &Plugin) -> Option<String> {
        plugin.instructions.clone()
    }

    pub fn skills(plugin: &Plugin) -> Vec<metadata::SkillFile> {
        plugin.skill_files.clone()
    }

    pub fn complete(plugin: &Plugin, request: CompletionRequest) -> Result<completion::CompletionResult, String> {
        let mut values = plugin.completer.as_ref().map(|c| c(&request)).unwrap_or_default();
        let total = values.len();
        values.truncate(100);
        Ok(completion::CompletionResult { has_more: total > values.len(), total: Some(total as u32), values })
    }
}
