use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::exports::mcpbox::plugin::{completion, prompts, resources, tools};
use crate::uri_template::UriTemplate;
use crate::{CallResult, CompletionRequest, Content, PromptResult, ResourceContents, ToolAnnotations};

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

/// What a tool function may return: a [`CallResult`], text, or [`Json`] for structured output.
pub trait IntoCallResult {
    /// The JSON schema of the structured content this type produces, if any.
    fn output_schema() -> Option<serde_json::Value> {
        None
    }
    /// Converts into the result sent to the client.
    fn into_call_result(self) -> Result<CallResult, Error>;
}

impl IntoCallResult for CallResult {
    fn into_call_result(self) -> Result<CallResult, Error> {
        Ok(self)
    }
}

impl IntoCallResult for String {
    fn into_call_result(self) -> Result<CallResult, Error> {
        Ok(CallResult::text(self))
    }
}

impl IntoCallResult for &str {
    fn into_call_result(self) -> Result<CallResult, Error> {
        Ok(CallResult::text(self))
    }
}

impl IntoCallResult for Vec<Content> {
    fn into_call_result(self) -> Result<CallResult, Error> {
        Ok(CallResult { content: self, structured_content: None, is_error: false })
    }
}

/// Structured output: the value goes out as `structuredContent` (and as JSON text for older
/// clients), and the tool advertises the type's schema as its `outputSchema`.
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Weather {
///     celsius: f64,
/// }
///
/// let tool = Tool::new("weather", "Today's weather", |_: NoArgs| Ok(Json(Weather { celsius: 21.5 })));
/// # let _ = tool;
/// ```
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoCallResult for Json<T> {
    fn output_schema() -> Option<serde_json::Value> {
        Some(object_schema::<T>())
    }
    fn into_call_result(self) -> Result<CallResult, Error> {
        let value = serde_json::to_value(&self.0)?;
        Ok(CallResult {
            content: vec![crate::content::text(value.to_string())],
            structured_content: Some(value.to_string()),
            is_error: false,
        })
    }
}

impl CallResult {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallResult { content: vec![crate::content::text(text)], structured_content: None, is_error: false }
    }

    /// A result made of these blocks.
    pub fn new(content: Vec<Content>) -> Self {
        CallResult { content, structured_content: None, is_error: false }
    }

    /// A failed result the model should see (`isError: true`).
    pub fn error(message: impl Into<String>) -> Self {
        CallResult { content: vec![crate::content::text(message)], structured_content: None, is_error: true }
    }
}

pub(crate) fn object_schema<T: JsonSchema>() -> serde_json::Value {
    // Nested types inline rather than as `$ref`s into `$defs`: not every MCP client resolves
    // references, and a model reads an inlined schema more easily (recursive types keep refs).
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or_default();
    // MCP requires object schemas for tool input; a unit struct yields `"type": "null"`.
    if let Some(map) = schema.as_object_mut()
        && map.get("type").and_then(|t| t.as_str()) != Some("object")
        && !map.contains_key("properties")
    {
        map.insert("type".into(), "object".into());
    }
    schema
}

type ToolHandler = Box<dyn Fn(&str) -> Result<CallResult, Error> + Send + Sync>;

/// A schema, generated only when the host asks for the tool list: the host instantiates the
/// plugin for every call, and most calls never list.
enum SchemaSource {
    Generated(fn() -> serde_json::Value),
    Given(serde_json::Value),
}

/// A tool's output schema: the one its result type generates, or one given.
enum OutputSchema {
    Generated(fn() -> Option<serde_json::Value>),
    Given(serde_json::Value),
}

/// One tool: its description and the function that runs it.
pub struct Tool {
    descriptor: tools::Tool,
    input_schema: SchemaSource,
    output_schema: OutputSchema,
    handler: ToolHandler,
}

impl Tool {
    /// A tool named `name` that deserializes its arguments into `A` and runs `f`. The input
    /// schema is generated from `A` (doc comments become descriptions); arguments that do not
    /// fit come back to the model as an error result.
    pub fn new<A, R, F>(name: &str, description: &str, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoCallResult,
        F: Fn(A) -> Result<R, Error> + Send + Sync + 'static,
    {
        let descriptor = tools::Tool {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            input_schema: String::new(),
            output_schema: None,
            annotations: None,
        };
        let handler = move |arguments: &str| {
            let arguments = if arguments.trim().is_empty() { "{}" } else { arguments };
            let args: A = crate::arguments::from_json(arguments).map_err(Error::invalid_arguments)?;
            f(args)?.into_call_result()
        };
        Tool {
            descriptor,
            input_schema: SchemaSource::Generated(object_schema::<A>),
            output_schema: OutputSchema::Generated(R::output_schema),
            handler: Box::new(handler),
        }
    }

    /// The descriptor the host lists, schemas included.
    fn describe(&self) -> tools::Tool {
        let input = match &self.input_schema {
            SchemaSource::Generated(generate) => generate(),
            SchemaSource::Given(schema) => schema.clone(),
        };
        tools::Tool {
            input_schema: input.to_string(),
            output_schema: match &self.output_schema {
                OutputSchema::Generated(generate) => generate().map(|schema| schema.to_string()),
                OutputSchema::Given(schema) => Some(schema.to_string()),
            },
            ..self.descriptor.clone()
        }
    }

    /// A human-friendly title.
    pub fn title(mut self, title: &str) -> Self {
        self.descriptor.title = Some(title.to_owned());
        self
    }

    /// Replaces the generated input schema (a JSON object schema).
    pub fn input_schema(mut self, schema: serde_json::Value) -> Self {
        self.input_schema = SchemaSource::Given(schema);
        self
    }

    /// Replaces the output schema (a JSON object schema), for a tool that builds its
    /// [`CallResult`]'s structured content itself, e.g. to match another server's shapes.
    pub fn output_schema(mut self, schema: serde_json::Value) -> Self {
        self.output_schema = OutputSchema::Given(schema);
        self
    }

    /// Takes the description, title, schemas and annotations from a tool as MCP's `tools/list`
    /// shows it (`{"name", "description", "inputSchema", "outputSchema", "annotations"}`), for
    /// a plugin that stands in for another server and must list exactly what it lists. Absent
    /// fields keep what the tool has.
    ///
    /// ```
    /// use mcpbox_sdk::prelude::*;
    ///
    /// let listed = json!({
    ///     "name": "echo",
    ///     "description": "Echoes its input",
    ///     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ///     "annotations": {"readOnlyHint": true},
    /// });
    /// let tool = Tool::new("echo", "", |args: serde_json::Value| Ok(args["text"].to_string())).listed_as(&listed);
    /// # let _ = tool;
    /// ```
    pub fn listed_as(mut self, listed: &serde_json::Value) -> Self {
        let text = |key: &str| listed.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        if let Some(description) = text("description") {
            self.descriptor.description = Some(description);
        }
        if let Some(title) = text("title") {
            self.descriptor.title = Some(title);
        }
        if let Some(schema) = listed.get("inputSchema").filter(|s| s.is_object()) {
            self.input_schema = SchemaSource::Given(schema.clone());
        }
        if let Some(schema) = listed.get("outputSchema").filter(|s| s.is_object()) {
            self.output_schema = OutputSchema::Given(schema.clone());
        }
        if let Some(hints) = listed.get("annotations").filter(|a| a.is_object()) {
            let hint = |key: &str| hints.get(key).and_then(|v| v.as_bool());
            self.descriptor.annotations = Some(ToolAnnotations {
                title: hints.get("title").and_then(|v| v.as_str()).map(str::to_owned),
                read_only_hint: hint("readOnlyHint"),
                destructive_hint: hint("destructiveHint"),
                idempotent_hint: hint("idempotentHint"),
                open_world_hint: hint("openWorldHint"),
            });
        }
        self
    }

    /// Behaviour hints for the client.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.descriptor.annotations = Some(annotations);
        self
    }

    /// Marks the tool as read-only (it changes nothing).
    pub fn read_only(self) -> Self {
        self.annotations(ToolAnnotations {
            title: None,
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        })
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

    pub fn complete(plugin: &Plugin, request: CompletionRequest) -> Result<completion::CompletionResult, String> {
        let mut values = plugin.completer.as_ref().map(|c| c(&request)).unwrap_or_default();
        let total = values.len();
        values.truncate(100);
        Ok(completion::CompletionResult { has_more: total > values.len(), total: Some(total as u32), values })
    }
}
