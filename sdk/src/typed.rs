//! Prompts and resources declared from typed functions (what `prompts!` and `resources!`
//! expand to), and [`Plugin::add`](crate::Plugin::add)'s [`Offering`].

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::plugin::{PromptArgs, PromptHandler, Reader, TemplateReader};
use crate::tool::object_schema;
use crate::uri_template::UriTemplate;
use crate::{
    Content, Error, Plugin, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate, TemplateVars, Tool,
};

/// What a prompt function may return: the text of one user message, a content block, or a
/// whole [`PromptResult`].
pub trait IntoPromptResult {
    /// Converts into the messages sent to the client.
    fn into_prompt_result(self) -> PromptResult;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> PromptResult {
        self
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::user(crate::content::text(self))
    }
}

impl IntoPromptResult for Content {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::user(self)
    }
}

impl Prompt {
    /// A prompt whose arguments are the fields of `A` (strings, or `Option<String>` for
    /// optional ones; doc comments become their descriptions), and the function that produces
    /// its messages. [`prompts!`](crate::prompts) declares these from annotated functions.
    pub fn typed<A, R, F>(name: &str, description: &str, f: F) -> TypedPrompt
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoPromptResult,
        F: Fn(A) -> Result<R, Error> + Send + Sync + 'static,
    {
        let schema = object_schema::<A>();
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(|name| name.as_str()).collect();
        let mut prompt = Prompt::new(name, description);
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            let description = property["description"].as_str().unwrap_or_default();
            prompt = prompt.argument(field, description, required.contains(&field.as_str()));
        }
        let get = move |args: &PromptArgs| {
            let object: serde_json::Map<String, serde_json::Value> =
                args.0.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
            let args: A =
                crate::arguments::from_value(serde_json::Value::Object(object)).map_err(Error::invalid_arguments)?;
            Ok(f(args)?.into_prompt_result())
        };
        TypedPrompt { prompt, get: Box::new(get) }
    }
}

/// A prompt with the function that produces its messages, ready for [`Plugin::add`].
pub struct TypedPrompt {
    prompt: Prompt,
    get: PromptHandler,
}

impl TypedPrompt {
    /// A human-friendly title.
    pub fn title(mut self, title: &str) -> Self {
        self.prompt.descriptor.title = Some(title.to_owned());
        self
    }
}

/// What a resource function may return: text (sent with the resource's MIME type), bytes (a
/// blob), or the contents themselves.
pub trait IntoResourceContents {
    /// Converts into the contents of the resource at `uri`.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let body = crate::ResourceBody::Text(self);
        vec![ResourceContents { uri: uri.to_owned(), mime_type: mime_type.map(str::to_owned), body }]
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let body = crate::ResourceBody::Blob(self);
        vec![ResourceContents { uri: uri.to_owned(), mime_type: mime_type.map(str::to_owned), body }]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// A resource, or a resource template, with the function that reads it, ready for
/// [`Plugin::add`]. [`resources!`](crate::resources) declares these from annotated functions.
pub struct TypedResource {
    kind: TypedResourceKind,
}

enum TypedResourceKind {
    Fixed(Resource, Reader),
    Template(ResourceTemplate, TemplateReader),
}

impl TypedResource {
    /// The resource at `uri`, read by `f`.
    pub fn fixed<R, F>(uri: &str, name: &str, description: &str, mime_type: &str, f: F) -> Self
    where
        R: IntoResourceContents,
        F: Fn() -> Result<R, Error> + Send + Sync + 'static,
    {
        let resource = Resource::new(uri, name).description(description).mime_type(mime_type);
        let mime = mime_type.to_owned();
        let read = move |uri: &str| Ok(f()?.into_contents(uri, Some(&mime)));
        TypedResource { kind: TypedResourceKind::Fixed(resource, Box::new(read)) }
    }

    /// The resources matching the URI template `uri_template` (e.g. `notes://{id}`), read by
    /// `f`, which receives the template's variables as the fields of `V`.
    pub fn template<V, R, F>(uri_template: &str, name: &str, description: &str, mime_type: &str, f: F) -> Self
    where
        V: DeserializeOwned,
        R: IntoResourceContents,
        F: Fn(V) -> Result<R, Error> + Send + Sync + 'static,
    {
        let template = ResourceTemplate::new(uri_template, name).description(description).mime_type(mime_type);
        let mime = mime_type.to_owned();
        let read = move |uri: &str, vars: &TemplateVars| {
            let object: serde_json::Map<String, serde_json::Value> =
                vars.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
            let vars: V = crate::arguments::from_value(serde_json::Value::Object(object))
                .map_err(|e| Error::not_found(format!("no resource at {uri}: {e}")))?;
            Ok(f(vars)?.into_contents(uri, Some(&mime)))
        };
        TypedResource { kind: TypedResourceKind::Template(template, Box::new(read)) }
    }
}

/// Something [`Plugin::add`] takes: a [`Tool`], a [`TypedPrompt`] or a [`TypedResource`], as
/// the [`tools!`](crate::tools), [`prompts!`](crate::prompts) and
/// [`resources!`](crate::resources) macros declare them.
pub trait Offering {
    /// Adds this to `plugin`.
    fn add_to(self, plugin: Plugin) -> Plugin;
}

impl Offering for Tool {
    fn add_to(self, plugin: Plugin) -> Plugin {
        plugin.tool(self)
    }
}

impl Offering for TypedPrompt {
    fn add_to(self, mut plugin: Plugin) -> Plugin {
        plugin.prompts.push((self.prompt, self.get));
        plugin
    }
}

impl Offering for TypedResource {
    fn add_to(self, mut plugin: Plugin) -> Plugin {
        match self.kind {
            TypedResourceKind::Fixed(resource, read) => {
                plugin.resources.push((resource, read));
            }
            TypedResourceKind::Template(template, read) => {
                let parsed = UriTemplate::parse(&template.uri_template);
                plugin.templates.push((template, parsed, read));
            }
        }
        plugin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments in an order that is not alphabetical.
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is used")]
    struct Args {
        /// Said first.
        zeta: String,
        alpha: Option<String>,
    }

    #[test]
    fn prompt_arguments_follow_the_fields_in_order_with_their_docs() {
        let typed = Prompt::typed("p", "a prompt", |_: Args| Ok("text".to_owned()));
        let arguments = &typed.prompt.descriptor.arguments;
        let names: Vec<(&str, bool)> = arguments.iter().map(|a| (a.name.as_str(), a.required)).collect();
        assert_eq!(names, [("zeta", true), ("alpha", false)]);
        assert_eq!(arguments[0].description.as_deref(), Some("Said first."));
    }

    #[test]
    fn template_variables_arrive_as_string_fields() {
        #[derive(serde::Deserialize)]
        struct Note {
            id: String,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code, reason = "only deserialized")]
        struct Numbered {
            id: u32,
        }
        let vars = TemplateVars::from([("id".to_owned(), "7".to_owned())]);
        let read = |resource: TypedResource| match resource.kind {
            TypedResourceKind::Template(_, read) => read("n://7", &vars),
            TypedResourceKind::Fixed(..) => panic!("a template"),
        };
        let note = TypedResource::template("n://{id}", "n", "notes", "text/plain", |v: Note| Ok(format!("#{}", v.id)));
        let contents = read(note).unwrap();
        assert!(matches!(&contents[0].body, crate::ResourceBody::Text(text) if text == "#7"));
        // Variables are strings: a numeric field does not match, and the read says why.
        let numbered = TypedResource::template("n://{id}", "n", "notes", "text/plain", |_: Numbered| Ok(String::new()));
        let error = read(numbered).unwrap_err();
        assert!(error.message().starts_with("no resource at n://7: `id`: invalid type: string"), "{error:?}");
    }
}
