//! The SDK's macros: exporting a plugin, declaring tools, prompts and resources as annotated
//! functions, and the requested-policy section.

/// Exports a plugin built by the function `$build` (a `fn() -> Plugin`) as the component's
/// `mcpbox:plugin` world.
#[macro_export]
macro_rules! export_plugin {
    ($build:path) => {
        struct __McpboxPlugin;

        fn __mcpbox_plugin() -> &'static $crate::Plugin {
            static PLUGIN: ::std::sync::OnceLock<$crate::Plugin> = ::std::sync::OnceLock::new();
            PLUGIN.get_or_init($build)
        }

        impl $crate::bindings::exports::mcpbox::plugin::tools::Guest for __McpboxPlugin {
            fn list_tools() -> ::std::vec::Vec<$crate::bindings::exports::mcpbox::plugin::tools::Tool> {
                $crate::__rt::list_tools(__mcpbox_plugin())
            }
            fn call_tool(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<$crate::CallResult, $crate::bindings::exports::mcpbox::plugin::tools::ToolError> {
                $crate::__rt::call_tool(__mcpbox_plugin(), &name, &arguments)
            }
        }

        impl $crate::bindings::exports::mcpbox::plugin::resources::Guest for __McpboxPlugin {
            fn list_resources() -> ::std::vec::Vec<$crate::Resource> {
                $crate::__rt::list_resources(__mcpbox_plugin())
            }
            fn list_resource_templates() -> ::std::vec::Vec<$crate::ResourceTemplate> {
                $crate::__rt::list_resource_templates(__mcpbox_plugin())
            }
            fn read_resource(
                uri: ::std::string::String,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::ResourceContents>,
                $crate::bindings::exports::mcpbox::plugin::resources::ResourceError,
            > {
                $crate::__rt::read_resource(__mcpbox_plugin(), &uri)
            }
        }

        impl $crate::bindings::exports::mcpbox::plugin::prompts::Guest for __McpboxPlugin {
            fn list_prompts() -> ::std::vec::Vec<$crate::bindings::exports::mcpbox::plugin::prompts::Prompt> {
                $crate::__rt::list_prompts(__mcpbox_plugin())
            }
            fn get_prompt(
                name: ::std::string::String,
                arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<$crate::PromptResult, $crate::bindings::exports::mcpbox::plugin::prompts::PromptError> {
                $crate::__rt::get_prompt(__mcpbox_plugin(), &name, arguments)
            }
        }

        impl $crate::bindings::exports::mcpbox::plugin::metadata::Guest for __McpboxPlugin {
            fn describe_items() -> ::std::vec::Vec<$crate::bindings::exports::mcpbox::plugin::metadata::ItemMetadata> {
                $crate::__rt::describe_items(__mcpbox_plugin())
            }
            fn instructions() -> ::std::option::Option<::std::string::String> {
                $crate::__rt::instructions(__mcpbox_plugin())
            }
            fn skills() -> ::std::vec::Vec<$crate::bindings::exports::mcpbox::plugin::metadata::SkillFile> {
                $crate::__rt::skills(__mcpbox_plugin())
            }
        }

        impl $crate::bindings::exports::mcpbox::plugin::completion::Guest for __McpboxPlugin {
            fn complete(
                request: $crate::CompletionRequest,
            ) -> ::std::result::Result<$crate::CompletionResult, ::std::string::String> {
                $crate::__rt::complete(__mcpbox_plugin(), request)
            }
        }

        $crate::bindings::__export_plugin_world!(__McpboxPlugin with_types_in $crate::bindings);
    };
}

/// Declares the grants the plugin asks the operator for, as TOML, in the component's
/// `mcpbox-policy` custom section. `mcpbox inspect` shows the request beside what the
/// operator's config grants; nothing is granted because a plugin asks.
///
/// ```
/// mcpbox_sdk::requested_policy!(r#"
/// reason = "looks up the weather"
/// network = ["https://api.weather.gov"]
/// env = ["WEATHER_API_KEY"]
/// "#);
/// ```
///
/// Keys: `reason`, `network` (allow-list entries), `env` (variable names), `filesystem`
/// (`"none"`, `"read-only"`, `"read-write"`), `timeout_ms`, `memory_mib`.
#[macro_export]
macro_rules! requested_policy {
    ($toml:literal) => {
        #[unsafe(link_section = "mcpbox-policy")]
        #[used]
        static __MCPBOX_REQUESTED_POLICY: [u8; $toml.len()] = $crate::__policy_bytes::<{ $toml.len() }>($toml);
    };
}

/// The bytes of `text` as an array, for [`requested_policy!`].
#[doc(hidden)]
pub const fn __policy_bytes<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Declares tools as plain annotated functions: the function's name is the tool's name, its doc
/// comment the description, its argument type (`Deserialize + JsonSchema`) the input schema,
/// and its return type the output (`Json<T>` for structured content with an output schema).
/// For each function `f` it also defines `f::tool()`, the [`Tool`](crate::Tool) to add.
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Greet {
///     /// Who to greet.
///     name: String,
/// }
///
/// #[derive(Serialize, JsonSchema)]
/// struct Counts {
///     words: usize,
/// }
///
/// mcpbox_sdk::tools! {
///     /// Greets someone by name.
///     fn greet(args: Greet) -> Result<String, Error> {
///         Ok(format!("Hello, {}!", args.name))
///     }
///
///     /// Counts the words of a name (structured output, with an output schema).
///     fn count(args: Greet) -> Result<Json<Counts>, Error> {
///         Ok(Json(Counts { words: args.name.split_whitespace().count() }))
///     }
/// }
///
/// fn plugin() -> Plugin {
///     Plugin::new().add(greet::tool()).add(count::tool().read_only())
/// }
/// # fn main() { let _ = plugin(); }
/// ```
///
/// Only doc comments may precede each `fn`; annotate further with the builder, for example
/// `greet::tool().read_only()`.
#[macro_export]
macro_rules! tools {
    ($($functions:tt)*) => {
        $crate::__declare_functions!(tool, "tool", $crate::Tool, $crate::Tool::new; $($functions)*);
    };
}

/// What `tools!` and `prompts!` share: each function as written, plus a module of its name
/// with the getter (`tool()`, `prompt()`) that builds the declaration from its name and doc
/// comment.
#[doc(hidden)]
#[macro_export]
macro_rules! __declare_functions {
    ($getter:ident, $kind:literal, $declaration:ty, $constructor:path; $(
        $(#[doc = $doc:literal])*
        $vis:vis fn $name:ident($arg:ident : $argty:ty) -> $ret:ty $body:block
    )*) => {$(
        $(#[doc = $doc])*
        $vis fn $name($arg: $argty) -> $ret $body

        #[doc = concat!("The `", stringify!($name), "` ", $kind, ".")]
        $vis mod $name {
            #[doc = concat!("The ", $kind, ", named after the function and described by its doc comment.")]
            pub fn $getter() -> $declaration {
                $constructor(stringify!($name), &$crate::__doc_text(&[$($doc),*]), super::$name)
            }
        }
    )*};
}

/// Declares prompts as plain annotated functions: the function's name is the prompt's name,
/// its doc comment the description, the fields of its argument type the prompt's arguments
/// (`String` for required ones, `Option<String>` for optional ones, as MCP passes prompt
/// arguments as strings; field doc comments become their descriptions). It returns the text of
/// one user message, a [`Content`](crate::Content) block, or a whole
/// [`PromptResult`](crate::PromptResult). For each function `f` it also defines `f::prompt()`.
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Review {
///     /// The code to review.
///     code: String,
///     /// What to look at first.
///     focus: Option<String>,
/// }
///
/// mcpbox_sdk::prompts! {
///     /// Asks the model to review a piece of code.
///     fn review(args: Review) -> Result<String, Error> {
///         let focus = args.focus.as_deref().unwrap_or("correctness");
///         Ok(format!("Review this code, looking at {focus} first:\n\n{}", args.code))
///     }
/// }
///
/// fn plugin() -> Plugin {
///     Plugin::new().add(review::prompt())
/// }
/// # fn main() { let _ = plugin(); }
/// ```
#[macro_export]
macro_rules! prompts {
    ($($functions:tt)*) => {
        $crate::__declare_functions!(prompt, "prompt", $crate::TypedPrompt, $crate::Prompt::typed; $($functions)*);
    };
}

/// Declares resources as plain annotated functions. `#[resource("scheme://path")]` (optionally
/// `, mime_type = "..."`, default `text/plain`) above a function without arguments makes a
/// resource; a URI template such as `"notes://{id}"` above a function taking one argument
/// makes a resource template, whose variables arrive as the fields of that argument's type
/// (`String`s).
/// The function returns text (`String`), bytes (`Vec<u8>`, a blob) or
/// `Vec<ResourceContents>`; its name is the resource's name, its doc comment the description.
/// For each function `f` it also defines `f::resource()`.
///
/// ```
/// use mcpbox_sdk::prelude::*;
///
/// #[derive(Deserialize)]
/// struct Note {
///     id: String,
/// }
///
/// mcpbox_sdk::resources! {
///     /// What this plugin is.
///     #[resource("hello://about")]
///     fn about() -> Result<String, Error> {
///         Ok("A plugin written with the mcpbox SDK.".into())
///     }
///
///     /// A note, by its id.
///     #[resource("notes://{id}", mime_type = "text/markdown")]
///     fn note(vars: Note) -> Result<String, Error> {
///         if vars.id.is_empty() {
///             return Err(Error::not_found("no such note"));
///         }
///         Ok(format!("# Note {}", vars.id))
///     }
/// }
///
/// fn plugin() -> Plugin {
///     Plugin::new().add(about::resource()).add(note::resource())
/// }
/// # fn main() { let _ = plugin(); }
/// ```
#[macro_export]
macro_rules! resources {
    ($(
        $(#[doc = $doc:literal])*
        #[resource($uri:literal $(, mime_type = $mime:literal)?)]
        $vis:vis fn $name:ident($($arg:ident : $argty:ty)?) -> $ret:ty $body:block
    )*) => {$(
        $(#[doc = $doc])*
        $vis fn $name($($arg: $argty)?) -> $ret $body

        #[doc = concat!("The `", stringify!($name), "` resource.")]
        $vis mod $name {
            /// The resource (or template), named after the function and described by its doc
            /// comment.
            pub fn resource() -> $crate::TypedResource {
                $crate::__typed_resource!(
                    [$($arg)?] $uri,
                    stringify!($name),
                    &$crate::__doc_text(&[$($doc),*]),
                    $crate::__mime_type!($($mime)?),
                    super::$name
                )
            }
        }
    )*};
}

/// A fixed resource for a function without arguments, a template for one with.
#[doc(hidden)]
#[macro_export]
macro_rules! __typed_resource {
    ([] $($rest:expr),*) => {
        $crate::TypedResource::fixed($($rest),*)
    };
    ([$vars:ident] $($rest:expr),*) => {
        $crate::TypedResource::template($($rest),*)
    };
}

/// The MIME type given to `#[resource(..)]`, or text/plain.
#[doc(hidden)]
#[macro_export]
macro_rules! __mime_type {
    () => {
        "text/plain"
    };
    ($mime:literal) => {
        $mime
    };
}

/// A doc comment's lines as one description: trimmed, joined with line breaks.
#[doc(hidden)]
pub fn __doc_text(lines: &[&str]) -> String {
    lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join("\n").trim().to_owned()
}
