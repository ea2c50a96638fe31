//! Routing requests to the plugin that serves them, by name (tools, prompts, completion
//! targets) or by URI (resources), and naming the plugin in every error. Unknown names are a
//! [`CallError`] (`UnknownTool`, ...) like any other failure, so "unknown" has one shape.

use super::Catalog;
use crate::runtime::bindings::{completion, prompts, resources, tools, types};
use crate::runtime::invoke::{CallPlain, CallTool, Complete, GetPrompt, ListResources, ReadResource};
use crate::runtime::sandbox::{CallError, CallScope};

/// What a completion request refers to.
#[derive(Debug, Clone)]
pub enum CompletionTarget {
    /// A prompt, by its served name.
    Prompt(String),
    /// A resource template, by its URI template.
    ResourceTemplate(String),
}

impl Catalog {
    /// Calls the tool served as `name`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: String,
        scope: CallScope,
    ) -> Result<tools::CallResult, CallError> {
        let entry = self.tool(name).ok_or_else(|| CallError::UnknownTool { name: name.to_owned() })?;
        let plugin = &self.plugins[entry.plugin];
        let local = entry.item.descriptor.name.clone();
        let result = match plugin.plain.iter().find(|(tool, _)| *tool == local) {
            Some((_, function)) => plugin.invoke(scope, CallPlain { function: function.clone(), arguments }).await,
            None => plugin.invoke(scope, CallTool { name: local, arguments }).await,
        }?;
        let plugin = plugin.name.clone();
        result.map_err(|e| match e {
            tools::ToolError::UnknownTool(message) => CallError::NotFound { plugin, what: "tool", name: message },
            tools::ToolError::InvalidArguments(message) => CallError::InvalidArguments { plugin, message },
            tools::ToolError::Failed(message) => CallError::Failed { plugin, message },
        })
    }

    /// Every plugin's current resources, listed concurrently, in plugin order. A plugin that
    /// fails is logged and left out, so one bad plugin does not hide the others' resources;
    /// only if every plugin fails is the first failure returned.
    pub async fn list_resources(&self, scope: &CallScope) -> Result<Vec<(usize, resources::Resource)>, CallError> {
        let listings =
            self.plugins.iter().enumerate().filter(|(_, p)| p.exports.resources.is_some()).map(|(index, plugin)| {
                let scope = scope.clone();
                async move { (index, plugin.invoke(scope, ListResources).await) }
            });
        let mut all = Vec::new();
        let mut first_error = None;
        let mut answered = false;
        for (index, listed) in futures::future::join_all(listings).await {
            match listed {
                Ok(resources) => {
                    answered = true;
                    all.extend(resources.into_iter().map(|r| (index, r)));
                }
                Err(error) => {
                    tracing::warn!("resources/list: {error}");
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) if !answered => Err(error),
            _ => Ok(all),
        }
    }

    /// Reads a resource: plugins with a template that could match `uri` are asked first, then
    /// the other resource plugins; the first that knows the URI answers. A plugin that fails
    /// does not stop the search; its error is returned if no plugin knows the URI.
    pub async fn read_resource(&self, uri: &str, scope: &CallScope) -> Result<Vec<types::ResourceContents>, CallError> {
        let mut candidates: Vec<usize> =
            self.templates.iter().filter(|t| template_may_match(&t.item.uri_template, uri)).map(|t| t.plugin).collect();
        candidates.dedup();
        for (index, plugin) in self.plugins.iter().enumerate() {
            if plugin.exports.resources.is_some() && !candidates.contains(&index) {
                candidates.push(index);
            }
        }
        let mut first_error = None;
        for index in candidates {
            let plugin = &self.plugins[index];
            match plugin.invoke(scope.clone(), ReadResource { uri: uri.to_owned() }).await {
                Ok(Ok(contents)) => return Ok(contents),
                Ok(Err(resources::ResourceError::NotFound(_))) => continue,
                Ok(Err(resources::ResourceError::Failed(message))) => {
                    first_error.get_or_insert(CallError::Failed { plugin: plugin.name.clone(), message });
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        Err(first_error.unwrap_or_else(|| CallError::UnknownResource { uri: uri.to_owned() }))
    }

    /// Gets the prompt served as `name`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Vec<(String, String)>,
        scope: CallScope,
    ) -> Result<prompts::PromptResult, CallError> {
        let entry = self.prompt(name).ok_or_else(|| CallError::UnknownPrompt { name: name.to_owned() })?;
        let plugin = &self.plugins[entry.plugin];
        let result = plugin.invoke(scope, GetPrompt { name: entry.item.name.clone(), arguments }).await?;
        let plugin = plugin.name.clone();
        result.map_err(|e| match e {
            prompts::PromptError::UnknownPrompt(message) => {
                CallError::NotFound { plugin, what: "prompt", name: message }
            }
            prompts::PromptError::InvalidArguments(message) => CallError::InvalidArguments { plugin, message },
            prompts::PromptError::Failed(message) => CallError::Failed { plugin, message },
        })
    }

    /// Completes an argument of `target`; an empty result if its plugin offers no completion.
    pub async fn complete(
        &self,
        target: CompletionTarget,
        argument: (String, String),
        context: Vec<(String, String)>,
        scope: CallScope,
    ) -> Result<completion::CompletionResult, CallError> {
        let (plugin_index, reference) = match &target {
            CompletionTarget::Prompt(name) => {
                let entry = self.prompt(name).ok_or(CallError::UnknownCompletionTarget)?;
                (entry.plugin, completion::Reference::Prompt(entry.item.name.clone()))
            }
            CompletionTarget::ResourceTemplate(uri_template) => {
                let entry = self
                    .templates
                    .iter()
                    .find(|t| &t.item.uri_template == uri_template)
                    .ok_or(CallError::UnknownCompletionTarget)?;
                (entry.plugin, completion::Reference::ResourceTemplate(uri_template.clone()))
            }
        };
        let plugin = &self.plugins[plugin_index];
        if plugin.exports.completion.is_none() {
            return Ok(completion::CompletionResult { values: Vec::new(), total: Some(0), has_more: false });
        }
        let request = completion::CompletionRequest {
            reference,
            argument_name: argument.0,
            argument_value: argument.1,
            context_arguments: context,
        };
        let result = plugin.invoke(scope, Complete(request)).await?;
        result.map_err(|message| CallError::Failed { plugin: plugin.name.clone(), message })
    }
}

/// A cheap pre-filter: the URI starts with the template's text before its first expression.
fn template_may_match(template: &str, uri: &str) -> bool {
    let literal = template.split('{').next().unwrap_or(template);
    uri.starts_with(literal)
}
