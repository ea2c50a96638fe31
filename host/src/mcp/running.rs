//! The requests that run a plugin (`tools/call`, `resources/read`, `prompts/get`), as handled
//! inside their spans (`observe.rs`, entered from `handler.rs`): the steps before a plugin starts
//! (`call/steps.rs`), the rounds of a 2026-07-28 request, then the catalog call in the
//! request's scope, and the answer with the `_meta` the guest set (WIT 0.1.3).

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, MetaObject,
    ReadResourceRequestParams, ReadResourceResponse,
};
use rmcp::service::{RequestContext, RoleServer};

use super::call::{Caller, call_outcome};
use super::compose::CalledTool;
use super::convert;
use super::era::Era;
use super::errors::request_error;
use super::request_state::Round;
use super::session::Session;
use super::skills;
use super::tasks;
use crate::access::Kind;
use crate::runtime::sandbox::MetaSink;
use crate::runtime::sandbox::budget::OutputHold;

/// The requests that run a plugin, as handled inside their spans (`observe.rs`).
impl Session {
    /// `tools/call`, step by step.
    pub(crate) async fn run_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Where the guest's `_meta` for its result goes, and the tool its inner calls may not
        // call again (a cycle; `compose.rs`).
        let meta = Arc::new(MetaSink::default());
        context.extensions.insert(meta.clone());
        let name = request.name.to_string();
        context.extensions.insert(CalledTool(name.clone()));
        let catalog = self.state.catalog();
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let mut round =
            Round::of(&context, "tools/call", &name, &arguments, request.request_state, request.input_responses);
        // Known, admitted, linked, approved (`call/steps.rs`): the same steps as a tool's call.
        let ready =
            match self.tool_call_steps(Caller::Client, &context, &catalog, &name, &arguments, round.as_mut()).await {
                Ok(ready) => ready,
                Err(stop) => return stop.answer(),
            };
        // A task, where the operator lets the tool be one and the request declared tasks.
        if let Some(tool) = tasks::task_for(&context, &catalog, &name)? {
            ready.ran(self);
            return self.call_tool_as_task(name, arguments, round, tool, context).await;
        }
        // The run, in the request's scope; the result's share of the output all calls may hold
        // is kept until it is converted.
        let hold = OutputHold::default();
        let called =
            self.with_scope(&context, round, |scope| catalog.call_tool(&name, arguments, scope.holding(&hold)));
        match called.await? {
            Err(questions) => Ok(CallToolResponse::InputRequired(questions)),
            Ok(outcome) => {
                ready.ran(self);
                call_outcome(&name, outcome, Era::of(&context).dialect(), &meta).map(CallToolResponse::from)
            }
        }
    }

    pub(crate) async fn run_read(
        &self,
        request: ReadResourceRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let meta = Arc::new(MetaSink::default());
        context.extensions.insert(meta.clone());
        if request.uri.starts_with(skills::SKILL_SCHEME) {
            return Ok(ReadResourceResponse::from(self.read_skill_file(&request.uri, &context)?));
        }
        let catalog = self.state.catalog();
        let uri = request.uri;
        let _pass = self.admit(&context, &catalog, Kind::Resource, &uri).await?;
        let round = Round::of(&context, "resources/read", &uri, &(), request.request_state, request.input_responses);
        let hold = OutputHold::default();
        let held = &hold;
        let reading = &catalog;
        let read =
            self.with_scope(
                &context,
                round,
                |scope| async move { reading.read_resource(&uri, &scope.holding(held)).await },
            );
        match read.await? {
            Err(questions) => Ok(ReadResourceResponse::InputRequired(questions)),
            Ok(read) => {
                let contents = read.map_err(request_error)?;
                // Checked against the catalog that served the read: one swapped in meanwhile (a
                // reload) has not seen the listing that made the plugin the URI's owner.
                super::apps::check_app_contents(&catalog, &contents)?;
                Ok(ReadResourceResponse::from(convert::read_result_with(&contents, |uri| meta.take_contents(uri))?))
            }
        }
    }

    pub(crate) async fn run_prompt(
        &self,
        request: GetPromptRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let meta = Arc::new(MetaSink::default());
        context.extensions.insert(meta.clone());
        let catalog = self.state.catalog();
        let name = request.name;
        let _pass = self.admit(&context, &catalog, Kind::Prompt, &name).await?;
        let raw_arguments = request.arguments.unwrap_or_default();
        let round =
            Round::of(&context, "prompts/get", &name, &raw_arguments, request.request_state, request.input_responses);
        let arguments = convert::prompt_arguments(raw_arguments);
        let hold = OutputHold::default();
        let got = self.with_scope(&context, round, |scope| catalog.get_prompt(&name, arguments, scope.holding(&hold)));
        match got.await? {
            Err(questions) => Ok(GetPromptResponse::InputRequired(questions)),
            Ok(got) => {
                let result = got.map_err(request_error)?;
                let mut result = convert::prompt_result(&result, Era::of(&context).dialect())?;
                result.meta = meta.take_result().map(MetaObject);
                Ok(GetPromptResponse::from(result))
            }
        }
    }
}
