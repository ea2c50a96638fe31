//! One generic way into a plugin's exports. Each request the catalog routes to a plugin is an
//! [`Invocation`]: which export it calls with which arguments, and how big its answer is for
//! the output budget. [`Plugin::invoke`](crate::runtime::plugin::Plugin::invoke) does the rest
//! (a slot, a fresh sandbox, the limits) the same way for all of them.

use wasmtime::Store;
use wasmtime::component::Instance;

use crate::runtime::engine::bindings::{completion, prompts, resources, tools, types};
use crate::runtime::grants::meta::UI_SCHEME;
use crate::runtime::plugin::Exports;
use crate::runtime::plugin::metadata::{MAX_APPS, Said};
use crate::runtime::plugin::plain::{self, PlainFunction};
use crate::runtime::sandbox::budget::wire_len;
use crate::runtime::sandbox::{CallFuture, HostState};

/// A call of one export of a plugin in a fresh instance.
pub(crate) trait Invocation: Send + 'static {
    /// What the guest returns.
    type Output: serde::Serialize + Send + 'static;
    /// Calls the export in `instance`.
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output>;
    /// What the output counts against the call's output limit: the JSON it becomes, every
    /// field and every error message included.
    fn size(output: &Self::Output) -> usize {
        wire_len(output)
    }
}

/// The handles of an export the caller checked for, or an error naming it.
fn exported<T>(indices: Option<T>, interface: &str) -> wasmtime::Result<T> {
    indices.ok_or_else(|| wasmtime::format_err!("the plugin does not export {interface}"))
}

/// `tools.call-tool` with the plugin's own tool name.
pub(crate) struct CallTool {
    pub(crate) name: String,
    pub(crate) arguments: String,
}

impl Invocation for CallTool {
    type Output = Result<tools::CallResult, tools::ToolError>;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            let guest = exported(exports.tools, "tools")?.load(&mut *store, &instance)?;
            guest.call_call_tool(&mut *store, &self.name, &self.arguments).await
        })
    }
}

/// An exported function of a plain component, as a tool.
pub(crate) struct CallPlain {
    pub(crate) function: PlainFunction,
    pub(crate) arguments: String,
}

impl Invocation for CallPlain {
    type Output = Result<tools::CallResult, tools::ToolError>;
    fn call(self, _: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move { plain::call(store, &instance, &self.function, &self.arguments).await })
    }
}

/// `resources.list-resources`.
pub(crate) struct ListResources;

impl Invocation for ListResources {
    type Output = Vec<resources::Resource>;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            exported(exports.resources, "resources")?
                .load(&mut *store, &instance)?
                .call_list_resources(&mut *store)
                .await
        })
    }
}

/// `resources.read-resource`.
pub(crate) struct ReadResource {
    pub(crate) uri: String,
}

impl Invocation for ReadResource {
    type Output = Result<Vec<types::ResourceContents>, resources::ResourceError>;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            let guest = exported(exports.resources, "resources")?.load(&mut *store, &instance)?;
            guest.call_read_resource(&mut *store, &self.uri).await
        })
    }
}

/// `prompts.get-prompt` with the plugin's own prompt name.
pub(crate) struct GetPrompt {
    pub(crate) name: String,
    pub(crate) arguments: Vec<(String, String)>,
}

impl Invocation for GetPrompt {
    type Output = Result<prompts::PromptResult, prompts::PromptError>;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            let guest = exported(exports.prompts, "prompts")?.load(&mut *store, &instance)?;
            guest.call_get_prompt(&mut *store, &self.name, &self.arguments).await
        })
    }
}

/// `completion.complete`.
pub(crate) struct Complete(pub(crate) completion::CompletionRequest);

impl Invocation for Complete {
    type Output = Result<completion::CompletionResult, String>;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            exported(exports.completion, "completion")?
                .load(&mut *store, &instance)?
                .call_complete(&mut *store, &self.0)
                .await
        })
    }
}

/// What a plugin describes at load time.
#[derive(serde::Serialize)]
pub(crate) struct Described {
    pub(crate) tools: Vec<tools::Tool>,
    pub(crate) templates: Vec<resources::ResourceTemplate>,
    pub(crate) prompts: Vec<prompts::Prompt>,
    /// What its `metadata` export said (since 0.1.3), with the resources it lists.
    pub(crate) said: Option<Said>,
}

/// `list-tools`, `list-resource-templates` and `list-prompts` of whichever it exports.
pub(crate) struct Describe;

impl Invocation for Describe {
    type Output = Described;
    fn call(self, exports: Exports, store: &mut Store<HostState>, instance: Instance) -> CallFuture<'_, Self::Output> {
        Box::pin(async move {
            let tools = match &exports.tools {
                Some(indices) => indices.load(&mut *store, &instance)?.call_list_tools(&mut *store).await?,
                None => Vec::new(),
            };
            let templates = match &exports.resources {
                Some(indices) => {
                    indices.load(&mut *store, &instance)?.call_list_resource_templates(&mut *store).await?
                }
                None => Vec::new(),
            };
            let prompts = match &exports.prompts {
                Some(indices) => indices.load(&mut *store, &instance)?.call_list_prompts(&mut *store).await?,
                None => Vec::new(),
            };
            let said = match &exports.metadata {
                Some(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    let items = guest.call_describe_items(&mut *store).await?;
                    let instructions = guest.call_instructions(&mut *store).await?;
                    let skills = guest.call_skills(&mut *store).await?;
                    // Its apps (ui:// resources) are among what it lists; their HTML is read
                    // now, to be pinned, and every later read must serve the same.
                    let (listed, app_bodies) = match &exports.resources {
                        Some(indices) => {
                            let guest = indices.load(&mut *store, &instance)?;
                            let listed = guest.call_list_resources(&mut *store).await?;
                            let mut bodies = Vec::new();
                            for resource in listed.iter().filter(|r| r.uri.starts_with(UI_SCHEME)).take(MAX_APPS) {
                                let read = guest.call_read_resource(&mut *store, &resource.uri).await?;
                                bodies.push((resource.uri.clone(), read));
                            }
                            (listed, bodies)
                        }
                        None => (Vec::new(), Vec::new()),
                    };
                    Some(Said { items, instructions, skills, listed, app_bodies })
                }
                None => None,
            };
            Ok(Described { tools, templates, prompts, said })
        })
    }
    fn size(_: &Self::Output) -> usize {
        // Descriptors are checked by name and schema at load, not against a call's output.
        0
    }
}
