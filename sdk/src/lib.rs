//! Write mcpbox plugins in plain Rust.
//!
//! A plugin is a `cdylib` crate built for `wasm32-wasip2`; the build output is a WebAssembly
//! component that mcpbox serves as MCP tools, resources and prompts, every call in a fresh
//! sandbox. Declare tools, prompts and resources as annotated functions ([`tools!`],
//! [`prompts!`], [`resources!`]), gather them in a [`Plugin`], and export it with
//! [`export_plugin!`]:
//!
//! ```
//! use mcpbox_sdk::prelude::*;
//!
//! /// Arguments of `greet`; the doc comments become the schema's descriptions.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! mcpbox_sdk::tools! {
//!     /// Greets someone by name.
//!     fn greet(args: Greet) -> Result<String, Error> {
//!         Ok(format!("Hello, {}!", args.name))
//!     }
//! }
//!
//! mcpbox_sdk::resources! {
//!     /// What this plugin is.
//!     #[resource("hello://about")]
//!     fn about() -> Result<String, Error> {
//!         Ok("A greeter.".into())
//!     }
//! }
//!
//! fn plugin() -> Plugin {
//!     Plugin::new().add(greet::tool()).add(about::resource())
//! }
//!
//! mcpbox_sdk::export_plugin!(plugin);
//! # fn main() {}
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2` (after `rustup target add
//! wasm32-wasip2`) and serve `target/wasm32-wasip2/release/<crate>.wasm` with `mcpbox serve`.
//! `mcpbox new NAME` creates such a crate. The builder methods of [`Plugin`] ([`Plugin::tool`],
//! [`Plugin::resource`], [`Plugin::dynamic_resources`], [`Plugin::resource_template`],
//! [`Plugin::prompt`], [`Plugin::completion`]) do the same by hand and more; [`host`] holds
//! what a running call can ask of mcpbox (logging, progress, cancellation, granted
//! directories, sampling, elicitation).

#![warn(missing_docs)]

mod arguments;
mod described;
mod macros;
mod plugin;
mod tool;
mod typed;
mod uri_template;

pub use described::{APP_MIME_TYPE, Subject};
#[doc(hidden)]
pub use macros::{__doc_text, __policy_bytes};
pub use plugin::*;
pub use schemars;
pub use serde;
pub use serde_json;
pub use tool::*;
pub use typed::*;

/// Bindings generated from the `mcpbox:plugin` WIT package. Most plugins never need them
/// directly; the SDK's types are aliases of these.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "described-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "mcpbox_sdk::bindings",
    });
}

pub use bindings::exports::mcpbox::plugin::completion::{CompletionRequest, CompletionResult, Reference};
pub use bindings::exports::mcpbox::plugin::metadata::Icon;
pub use bindings::exports::mcpbox::plugin::prompts::{PromptMessage, PromptResult};
pub use bindings::exports::mcpbox::plugin::tools::{CallResult, ToolAnnotations};
pub use bindings::mcpbox::plugin::host::{GrantedDir, Principal};
pub use bindings::mcpbox::plugin::types::{
    Annotations, ContentBlock as Content, LogLevel, ResourceBody, ResourceContents, Role,
};

/// Everything a typical plugin needs, in one `use`.
pub mod prelude {
    pub use crate::content::{audio, blob_resource, image, link, text, text_resource};
    pub use crate::{
        CallResult, Content, Error, Json, LogLevel, NoArgs, Plugin, Prompt, PromptArgs, PromptResult, Resource,
        ResourceContents, ResourceTemplate, Role, TemplateVars, Tool,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}

/// Constructors for content blocks.
///
/// ```
/// use mcpbox_sdk::content::{image, link, text};
///
/// let blocks = vec![text("Here is the chart:"), image(vec![0x89, b'P', b'N', b'G'], "image/png"), link("file:///roots/data/chart.png", "chart.png")];
/// # let _ = blocks;
/// ```
pub mod content {
    use crate::bindings::mcpbox::plugin::types::{EmbeddedResource, MediaContent, ResourceLink, TextContent};
    use crate::{Content, ResourceBody, ResourceContents};

    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text(TextContent { text: text.into(), annotations: None })
    }

    /// An image from its raw bytes, e.g. `image(png_bytes, "image/png")`.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: &str) -> Content {
        Content::Image(MediaContent { data: data.into(), mime_type: mime_type.to_owned(), annotations: None })
    }

    /// An audio clip from its raw bytes, e.g. `audio(wav_bytes, "audio/wav")`.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: &str) -> Content {
        Content::Audio(MediaContent { data: data.into(), mime_type: mime_type.to_owned(), annotations: None })
    }

    /// An embedded text resource.
    pub fn text_resource(uri: &str, mime_type: &str, text: impl Into<String>) -> Content {
        Content::Embedded(EmbeddedResource {
            contents: ResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime_type.to_owned()),
                body: ResourceBody::Text(text.into()),
            },
            annotations: None,
        })
    }

    /// An embedded binary resource.
    pub fn blob_resource(uri: &str, mime_type: &str, data: impl Into<Vec<u8>>) -> Content {
        Content::Embedded(EmbeddedResource {
            contents: ResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime_type.to_owned()),
                body: ResourceBody::Blob(data.into()),
            },
            annotations: None,
        })
    }

    /// A link to a resource the client can read later.
    pub fn link(uri: &str, name: &str) -> Content {
        Content::ResourceLink(ResourceLink {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
        })
    }
}

/// Services of the host: logging, progress, cancellation, the granted directories, and
/// questions to the client's model or user. They exist only inside a running call (in a
/// component), so this example is compiled but not run:
///
/// ```no_run
/// use mcpbox_sdk::host;
///
/// fn count_files() -> usize {
///     let mut total = 0;
///     for dir in host::granted_dirs() {
///         if host::is_cancelled() {
///             break;
///         }
///         total += std::fs::read_dir(&dir.guest_path).map(|entries| entries.count()).unwrap_or(0);
///         host::progress(total as f64, None, Some(&dir.name));
///     }
///     host::info(&format!("counted {total} files"));
///     total
/// }
/// # let _ = count_files;
/// ```
pub mod host {
    use crate::bindings::mcpbox::plugin::host as imports;
    use crate::{GrantedDir, LogLevel};

    /// Logs a message to the client (if it asked for this level) and to the host's log.
    pub fn log(level: LogLevel, message: &str) {
        let data = serde_json::Value::String(message.to_owned()).to_string();
        imports::log(level, None, &data);
    }

    /// Logs structured data under a logger name.
    pub fn log_json(level: LogLevel, logger: &str, data: &serde_json::Value) {
        imports::log(level, Some(logger), &data.to_string());
    }

    /// Logs at `info`.
    pub fn info(message: &str) {
        log(LogLevel::Info, message);
    }

    /// Logs at `debug`.
    pub fn debug(message: &str) {
        log(LogLevel::Debug, message);
    }

    /// Logs at `warning`.
    pub fn warn(message: &str) {
        log(LogLevel::Warning, message);
    }

    /// Reports progress of the current call; sent only if the client asked for progress.
    pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) {
        imports::progress(progress, total, message);
    }

    /// True once the client cancelled the current call; stop early when it is.
    pub fn is_cancelled() -> bool {
        imports::cancelled()
    }

    /// The directories granted to this call, mounted at their `guest_path`.
    pub fn granted_dirs() -> Vec<GrantedDir> {
        imports::granted_dirs()
    }

    /// Who this call is made for (`issuer`, `subject`, `scopes` of the client's access token),
    /// if the operator lets this plugin know (`[plugin.NAME] caller = true`) and the server
    /// authorizes its clients with OAuth; `None` otherwise.
    pub fn caller() -> Option<crate::Principal> {
        imports::caller()
    }

    /// Sets the `_meta` of this call's result (a tool's or a prompt's; since WIT 0.1.3). Keys
    /// under a prefix MCP reserves are refused; it counts against the output limit.
    pub fn result_meta(meta: &serde_json::Value) -> Result<(), String> {
        imports::result_meta(&meta.to_string())
    }

    /// Sets the `_meta` of the contents at `uri` this read returns (since WIT 0.1.3), e.g. an
    /// MCP App's `{"ui": {"csp": {...}}}`, which must stay within the plugin's grants.
    pub fn contents_meta(uri: &str, meta: &serde_json::Value) -> Result<(), String> {
        imports::contents_meta(uri, &meta.to_string())
    }

    /// Tells subscribed clients that the resource at `uri` (one this plugin serves) changed.
    pub fn resource_updated(uri: &str) {
        imports::resource_updated(uri);
    }

    /// Asks the client's model (MCP `sampling/createMessage`); `request` holds that request's
    /// params (`messages`, `maxTokens`, ...), the result is the client's result.
    pub fn sample(request: &serde_json::Value) -> Result<serde_json::Value, crate::Error> {
        let result = imports::sample(&request.to_string()).map_err(crate::Error::failed)?;
        Ok(serde_json::from_str(&result)?)
    }

    /// Asks the model for text: one user message, at most `max_tokens`; returns the text of
    /// the answer.
    pub fn sample_text(prompt: &str, max_tokens: u32) -> Result<String, crate::Error> {
        let result = sample(&serde_json::json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": max_tokens,
        }))?;
        Ok(result["content"]["text"].as_str().unwrap_or_default().to_owned())
    }

    /// Asks the user for input matching `requested_schema` (MCP `elicitation/create`); the
    /// result holds `action` (accept, decline, cancel) and, when accepted, `content`.
    pub fn elicit(message: &str, requested_schema: &serde_json::Value) -> Result<serde_json::Value, crate::Error> {
        let request = serde_json::json!({ "message": message, "requestedSchema": requested_schema });
        let result = imports::elicit(&request.to_string()).map_err(crate::Error::failed)?;
        Ok(serde_json::from_str(&result)?)
    }

    pub use imports::ClientMethod;

    /// One question for [`ask`]: what to ask, under which key.
    #[derive(Debug, Clone)]
    pub struct Question {
        key: Option<String>,
        method: ClientMethod,
        params: serde_json::Value,
    }

    impl Question {
        /// Asks the user for input matching `requested_schema` (MCP `elicitation/create`).
        pub fn elicit(message: &str, requested_schema: &serde_json::Value) -> Question {
            let params = serde_json::json!({ "message": message, "requestedSchema": requested_schema });
            Question { key: None, method: ClientMethod::Elicit, params }
        }

        /// Asks the client's model (MCP `sampling/createMessage`) with these params.
        pub fn sample(request: &serde_json::Value) -> Question {
            Question { key: None, method: ClientMethod::Sample, params: request.clone() }
        }

        /// Asks the model for text: one user message, at most `max_tokens`.
        pub fn sample_text(prompt: &str, max_tokens: u32) -> Question {
            Question::sample(&serde_json::json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                "maxTokens": max_tokens,
            }))
        }

        /// Asks for the client's roots (MCP `roots/list`). They are the client's word only:
        /// the directories the call may open are still [`granted_dirs`].
        pub fn list_roots() -> Question {
            Question { key: None, method: ClientMethod::ListRoots, params: serde_json::json!({}) }
        }

        /// The key the question and its answer travel under in a 2026-07-28 request: 1 to 64
        /// characters of `[A-Za-z0-9_.-]`, unique in the call. Without one, the host numbers
        /// the questions (`elicitation-0`, `sampling-1`, ...).
        pub fn key(mut self, key: &str) -> Question {
            self.key = Some(key.to_owned());
            self
        }
    }

    /// Asks the client several questions at once and returns one answer per question, in
    /// order (each the client's result, or why there is none). A 2026-07-28 client gets every
    /// unanswered question in one round; the call then runs again with the answers, so do
    /// what must happen once after asking, or keep a state with [`save_state`].
    pub fn ask(questions: &[Question]) -> Result<Vec<Result<serde_json::Value, crate::Error>>, crate::Error> {
        let questions: Vec<imports::Question> = questions
            .iter()
            .map(|q| imports::Question { key: q.key.clone(), method: q.method, params: q.params.to_string() })
            .collect();
        let answers = imports::ask(&questions).map_err(crate::Error::failed)?;
        Ok(answers
            .into_iter()
            .map(|answer| {
                let answer = answer.map_err(crate::Error::failed)?;
                Ok(serde_json::from_str(&answer)?)
            })
            .collect())
    }

    /// Asks one question (see [`ask`]).
    pub fn ask_one(question: Question) -> Result<serde_json::Value, crate::Error> {
        ask(&[question])?.pop().unwrap_or_else(|| Err(crate::Error::failed("the client gave no answer")))
    }

    /// Whether the client can answer `method` (it declared the capability). A 2026-07-28
    /// request that did not fails the call when asked, so check when you can do without.
    pub fn can_ask(method: ClientMethod) -> bool {
        imports::can_ask(method)
    }

    /// Keeps `state` (at most 64 KiB) for the next round of a 2026-07-28 request: the host
    /// seals it into the request's `requestState`, and the retry's [`saved_state`] returns it.
    pub fn save_state(state: &[u8]) -> Result<(), crate::Error> {
        imports::save_state(state).map_err(crate::Error::failed)
    }

    /// The state the previous round of this request kept; `None` in the first round and in
    /// legacy sessions.
    pub fn saved_state() -> Option<Vec<u8>> {
        imports::saved_state()
    }

    /// Goes on with this call as a task (the 2026-07-28 tasks extension), with `status` as its
    /// status message: the client gets the task's id now and polls it, the call runs on under
    /// the task deadline, and later questions wait for the client's `tasks/update`. Refused
    /// with the reason where the operator did not allow tasks for this tool or the request
    /// cannot receive one; the call then simply goes on as it was.
    pub fn detach(status: Option<&str>) -> Result<(), crate::Error> {
        imports::detach(status).map_err(crate::Error::failed)
    }

    /// A served tool this call may call (since WIT 0.1.4).
    pub use imports::CallableTool;

    /// The tools this call may call with [`call_tool`] (since WIT 0.1.4): those the operator
    /// lists in `[plugin.NAME] may_call` that the caller may use and a model may call.
    pub fn callable_tools() -> Vec<CallableTool> {
        imports::callable_tools()
    }

    /// Calls another served tool through the host (since WIT 0.1.4), as the client would call
    /// it for the same principal, and returns its MCP `CallToolResult` as JSON (a tool that
    /// failed returns `{"isError": true, ...}`). `Err` is the host's refusal: a tool not in
    /// `[plugin.NAME] may_call`, not the caller's to use, unknown, a cycle, or too many calls.
    /// The callee runs with its own grants, never this plugin's.
    ///
    /// ```no_run
    /// let result = mcpbox_sdk::host::call_tool("textstats.stats", &serde_json::json!({ "text": "a b a" }))?;
    /// let words = &result["structuredContent"]["words"];
    /// # Ok::<(), mcpbox_sdk::Error>(())
    /// ```
    pub fn call_tool(name: &str, arguments: &serde_json::Value) -> Result<serde_json::Value, crate::Error> {
        let result = imports::call_tool(name, &arguments.to_string()).map_err(crate::Error::failed)?;
        serde_json::from_str(&result)
            .map_err(|e| crate::Error::failed(format!("the host sent a result that is not JSON: {e}")))
    }
}
