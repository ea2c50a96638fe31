//! Tools: what a tool function may return ([`IntoCallResult`], [`Json`]), and [`Tool`], its
//! descriptor (schemas generated from Rust types, given, or taken from another server's list)
//! with the function that runs it.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::exports::mcpbox::plugin::tools;
use crate::{CallResult, Content, Error, ToolAnnotations};

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

pub(crate) type ToolHandler = Box<dyn Fn(&str) -> Result<CallResult, Error> + Send + Sync>;

/// A schema, generated only when the host asks for the tool list: the host instantiates the
/// plugin for every call, and most calls never list.
enum SchemaSource {
    Generated(fn() -> serde_json::Value),
    Given(serde_json::Value),
}

/// One tool: its description and the function that runs it.
pub struct Tool {
    pub(crate) descriptor: tools::Tool,
    input_schema: SchemaSource,
    output_schema: fn() -> Option<serde_json::Value>,
    /// Another server's `tools/list`, to list this tool exactly as it does ([`Tool::listed_in`]).
    listing: Option<fn() -> String>,
    pub(crate) handler: ToolHandler,
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
            output_schema: R::output_schema,
            listing: None,
            handler: Box::new(handler),
        }
    }

    /// The descriptor the host lists, schemas included.
    pub(crate) fn describe(&self) -> tools::Tool {
        let input = match &self.input_schema {
            SchemaSource::Generated(generate) => generate(),
            SchemaSource::Given(schema) => schema.clone(),
        };
        let mut descriptor = tools::Tool {
            input_schema: input.to_string(),
            output_schema: (self.output_schema)().map(|schema| schema.to_string()),
            ..self.descriptor.clone()
        };
        if let Some(listing) = self.listing {
            let listing: serde_json::Value = serde_json::from_str(&listing()).unwrap_or_default();
            let tools = listing.as_array().map(Vec::as_slice).unwrap_or_default();
            if let Some(listed) = tools.iter().find(|t| t["name"] == descriptor.name.as_str()) {
                apply_listed(&mut descriptor, listed);
            }
        }
        descriptor
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

    /// Lists the tool exactly as another server's `tools/list` lists the tool of the same name
    /// (description, title, input and output schemas, annotations), for a plugin that stands in
    /// for that server. `listing` returns that list as JSON (`[{"name", "description",
    /// "inputSchema", ...}]`, for example `include_str!` of a saved `tools/list`); it runs only
    /// when the host lists the tools (once, when the plugin loads), not on every call. Fields
    /// the entry lacks keep what the tool has.
    ///
    /// ```
    /// use mcpbox_sdk::prelude::*;
    ///
    /// fn listing() -> String {
    ///     r#"[{"name": "echo", "description": "Echoes its input",
    ///          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ///          "annotations": {"readOnlyHint": true}}]"#
    ///         .to_owned()
    /// }
    ///
    /// let tool = Tool::new("echo", "", |args: serde_json::Value| Ok(args["text"].to_string())).listed_in(listing);
    /// # let _ = tool;
    /// ```
    pub fn listed_in(mut self, listing: fn() -> String) -> Self {
        self.listing = Some(listing);
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

/// Takes what a `tools/list` entry says over `descriptor`.
fn apply_listed(descriptor: &mut tools::Tool, listed: &serde_json::Value) {
    let text = |key: &str| listed.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    if let Some(description) = text("description") {
        descriptor.description = Some(description);
    }
    if let Some(title) = text("title") {
        descriptor.title = Some(title);
    }
    if let Some(schema) = listed.get("inputSchema").filter(|s| s.is_object()) {
        descriptor.input_schema = schema.to_string();
    }
    if let Some(schema) = listed.get("outputSchema").filter(|s| s.is_object()) {
        descriptor.output_schema = Some(schema.to_string());
    }
    if let Some(hints) = listed.get("annotations").filter(|a| a.is_object()) {
        let hint = |key: &str| hints.get(key).and_then(|v| v.as_bool());
        descriptor.annotations = Some(ToolAnnotations {
            title: hints.get("title").and_then(|v| v.as_str()).map(str::to_owned),
            read_only_hint: hint("readOnlyHint"),
            destructive_hint: hint("destructiveHint"),
            idempotent_hint: hint("idempotentHint"),
            open_world_hint: hint("openWorldHint"),
        });
    }
}
