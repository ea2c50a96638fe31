//! Routing requests to the plugin that serves them, by name (tools, prompts, completion
//! targets) or by URI (resources), and naming the plugin in every error. Unknown names are a
//! [`CallError`] (`UnknownTool`, ...) like any other failure, so "unknown" has one shape.

use std::sync::Arc;

use super::{Catalog, DefinitionKind, OwnedUris};
use crate::runtime::engine::bindings::{completion, prompts, resources, tools, types};
use crate::runtime::plugin::invoke::{CallPlain, CallTool, Complete, GetPrompt, ListResources, ReadResource};
use crate::runtime::sandbox::{CallError, CallScope};
use crate::telemetry::metrics::metrics;

/// What a completion request refers to.
#[derive(Debug, Clone)]
pub enum CompletionTarget {
    /// A prompt, by its served name.
    Prompt(String),
    /// A resource template, by its URI template.
    ResourceTemplate(String),
}

impl Catalog {
    /// `scope` for a call of the plugin at `index`: it may announce updates of the URIs it owns.
    fn scope_for(&self, index: usize, mut scope: CallScope) -> CallScope {
        let owned = OwnedUris::new(self.owners.clone(), index);
        scope.owned_uris = Some(Arc::new(move |uri: &str| owned.contains(uri)));
        scope
    }

    /// Calls the tool served as `name`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: String,
        scope: CallScope,
    ) -> Result<tools::CallResult, CallError> {
        let entry = self.tool(name).ok_or_else(|| CallError::UnknownTool { name: name.to_owned() })?;
        let plugin = &self.plugins[entry.plugin];
        let scope = self.scope_for(entry.plugin, scope);
        let local = entry.item.descriptor.name.clone();
        let started = std::time::Instant::now();
        let result = match plugin.plain.iter().find(|(tool, _)| *tool == local) {
            Some((_, function)) => {
                plugin.invoke_sized(scope, CallPlain { function: function.clone(), arguments }).await
            }
            None => plugin.invoke_sized(scope, CallTool { name: local.clone(), arguments }).await,
        };
        // Counted under the name it is served as: the one clients and dashboards know.
        let (outcome, output_bytes) = match &result {
            Ok((Ok(result), size)) if result.is_error => ("tool_error", *size),
            Ok((Ok(_), size)) => ("ok", *size),
            Ok((Err(_), size)) => ("tool_error", *size),
            Err(error) => (error.kind(), 0),
        };
        metrics().tool_call(&plugin.name, name, outcome, started.elapsed(), output_bytes);
        crate::telemetry::outcome::report(outcome);
        let (result, _) = result?;
        let plugin = plugin.name.clone();
        if let Ok(result) = &result
            && let Some(problem) = entry.item.output_problem(result)
        {
            let message = format!("tool `{local}` {problem}");
            return Err(CallError::BadOutput { plugin, what: "structured content", message });
        }
        result.map_err(|e| match e {
            tools::ToolError::UnknownTool(message) => CallError::NotFound { plugin, what: "tool", name: message },
            tools::ToolError::InvalidArguments(message) => CallError::InvalidArguments { plugin, message },
            tools::ToolError::Failed(message) => CallError::Failed { plugin, message },
        })
    }

    /// Every plugin's current resources, listed concurrently, in plugin order. A plugin that
    /// fails is logged and left out, so one bad plugin does not hide the others' resources;
    /// only if every plugin fails is the first failure returned. A URI another plugin's template
    /// owns, or one two plugins list, is left out with a warning: a URI has one owner.
    pub async fn list_resources(&self, scope: &CallScope) -> Result<Vec<(usize, resources::Resource)>, CallError> {
        let listings =
            self.plugins.iter().enumerate().filter(|(_, p)| p.exports.resources.is_some()).map(|(index, plugin)| {
                let scope = self.scope_for(index, scope.clone());
                async move { (index, plugin.invoke(scope, ListResources).await) }
            });
        let mut all = Vec::new();
        let mut first_error = None;
        let mut answered = false;
        for (index, listed) in futures::future::join_all(listings).await {
            match listed {
                Ok(resources) => {
                    answered = true;
                    for resource in resources {
                        self.owners.note_listing(index, &resource.uri);
                        all.push((index, resource));
                    }
                }
                Err(error) => {
                    tracing::warn!("resources/list: {error}");
                    first_error.get_or_insert(error);
                }
            }
        }
        // The one choke point: a listed URI stays only with its owner. What is left out is said
        // once per plugin and listing (a plugin listing thousands of others' URIs must not
        // write thousands of lines).
        let mut left_out: Vec<(usize, usize, String)> = Vec::new();
        // An app whose HTML changed since it was pinned is withheld: not listed until accepted
        // (as a changed tool is not), its read refused (mcp/call/apps.rs).
        all.retain(|(index, resource)| {
            !self.withholds(&self.plugins[*index].name, DefinitionKind::App, &resource.uri)
                || crate::switched_off!("apps.withheld-not-advertised")
        });
        all.retain(|(index, resource)| {
            let owned = self.owners.owner_of(&resource.uri) == Some(*index);
            if !owned {
                match left_out.iter_mut().find(|(plugin, _, _)| plugin == index) {
                    Some((_, count, _)) => *count += 1,
                    None => left_out.push((*index, 1, resource.uri.clone())),
                }
            }
            owned || crate::switched_off!("catalog.lists-own-uris")
        });
        for (index, count, first) in left_out {
            tracing::warn!(
                plugin = %self.plugins[index].name,
                left_out = count,
                first = %first.chars().take(256).collect::<String>(),
                "left out listed resources the plugin does not own (another plugin's template matches them, \
                 another plugin lists them too, or a contested template matches them)"
            );
        }
        match first_error {
            Some(error) if !answered => Err(error),
            _ => Ok(all),
        }
    }

    /// Reads a resource from the plugin that owns its URI: the one whose template matches it,
    /// or the one that lists it (the plugins are listed first if the catalog has not seen the
    /// URI yet). No other plugin is asked, so none can answer for another's resources.
    pub async fn read_resource(&self, uri: &str, scope: &CallScope) -> Result<Vec<types::ResourceContents>, CallError> {
        let owner = match self.owners.owner_of(uri) {
            Some(owner) => Some(owner),
            None => {
                self.list_resources(scope).await?;
                self.owners.owner_of(uri)
            }
        };
        let Some(index) = owner else { return Err(CallError::UnknownResource { uri: uri.to_owned() }) };
        let plugin = &self.plugins[index];
        let scope = self.scope_for(index, scope.clone());
        match plugin.invoke(scope, ReadResource { uri: uri.to_owned() }).await? {
            Ok(contents) => Ok(contents),
            Err(resources::ResourceError::NotFound(_)) => Err(CallError::UnknownResource { uri: uri.to_owned() }),
            Err(resources::ResourceError::Failed(message)) => {
                Err(CallError::Failed { plugin: plugin.name.clone(), message })
            }
        }
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
        let scope = self.scope_for(entry.plugin, scope);
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
        let scope = self.scope_for(plugin_index, scope);
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
