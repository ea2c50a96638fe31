//! The requests that run a plugin (`tools/call`, `resources/read`, `prompts/get`), each begun as
//! a [`Call`] by `server/handler.rs` and handled inside its span (`observe.rs`): the steps
//! before a plugin starts (`steps.rs`), the rounds of a 2026-07-28 request, then the catalog
//! call in the request's scope, and the answer with the `_meta` the guest set (WIT 0.1.3).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, MetaObject,
    ReadResourceRequestParams, ReadResourceResponse,
};

use super::request::Call;
use super::tasks;
use super::{Caller, call_outcome};
use crate::mcp::call::rounds::request_state::Round;
use crate::mcp::session::Session;
use crate::mcp::skills;
use crate::mcp::wire::convert;
use crate::mcp::wire::errors::request_error;
use crate::runtime::sandbox::budget::OutputHold;

/// The requests that run a plugin, as handled inside their spans (`observe.rs`).
impl Session {
    /// `tools/call`, step by step.
    pub(crate) async fn run_tool(
        &self,
        call: &Call,
        request: CallToolRequestParams,
    ) -> Result<CallToolResponse, McpError> {
        let (name, catalog, meta) = (&call.name, &call.catalog, call.meta.clone().unwrap_or_default());
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let mut round =
            Round::of(&call.context, "tools/call", name, &arguments, request.request_state, request.input_responses);
        // Known, admitted, linked, approved (`call/steps.rs`): the same steps as a tool's call.
        let ready = match self.tool_call_steps(Caller::Client, call, &arguments, round.as_mut()).await {
            Ok(ready) => ready,
            Err(stop) => return stop.answer(),
        };
        // A task, where the operator lets the tool be one and the request declared tasks.
        if let Some(tool) = tasks::task_for(call)? {
            ready.ran(self);
            return self.call_tool_as_task(call, arguments, round, tool).await;
        }
        // The run, in the request's scope; the result's share of the output all calls may hold
        // is kept until it is converted.
        let hold = OutputHold::default();
        let called = self.with_scope(call, round, |scope| catalog.call_tool(name, arguments, scope.holding(&hold)));
        match called.await? {
            Err(questions) => Ok(CallToolResponse::InputRequired(questions)),
            Ok(outcome) => {
                ready.ran(self);
                call_outcome(name, outcome, call.era.dialect(), &meta).map(CallToolResponse::from)
            }
        }
    }

    pub(crate) async fn run_read(
        &self,
        call: &Call,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri.starts_with(skills::SKILL_SCHEME) {
            return Ok(ReadResourceResponse::from(self.read_skill_file(&request.uri, &call.context)?));
        }
        let (catalog, meta) = (&call.catalog, call.meta.clone().unwrap_or_default());
        let uri = request.uri;
        let _pass = self.admit(call).await?;
        let round =
            Round::of(&call.context, "resources/read", &uri, &(), request.request_state, request.input_responses);
        let hold = OutputHold::default();
        let held = &hold;
        let read = self
            .with_scope(call, round, |scope| async move { catalog.read_resource(&uri, &scope.holding(held)).await });
        match read.await? {
            Err(questions) => Ok(ReadResourceResponse::InputRequired(questions)),
            Ok(read) => {
                let contents = read.map_err(request_error)?;
                // Checked against the catalog that served the read: one swapped in meanwhile (a
                // reload) has not seen the listing that made the plugin the URI's owner.
                super::apps::check_app_contents(catalog, &contents)?;
                Ok(ReadResourceResponse::from(convert::read_result_with(&contents, |uri| meta.take_contents(uri))?))
            }
        }
    }

    pub(crate) async fn run_prompt(
        &self,
        call: &Call,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResponse, McpError> {
        let (name, catalog, meta) = (&call.name, &call.catalog, call.meta.clone().unwrap_or_default());
        let _pass = self.admit(call).await?;
        let raw_arguments = request.arguments.unwrap_or_default();
        let round = Round::of(
            &call.context,
            "prompts/get",
            name,
            &raw_arguments,
            request.request_state,
            request.input_responses,
        );
        let arguments = convert::prompt_arguments(raw_arguments);
        let hold = OutputHold::default();
        let got = self.with_scope(call, round, |scope| catalog.get_prompt(name, arguments, scope.holding(&hold)));
        match got.await? {
            Err(questions) => Ok(GetPromptResponse::InputRequired(questions)),
            Ok(got) => {
                let result = got.map_err(request_error)?;
                let mut result = convert::prompt_result(&result, call.era.dialect())?;
                result.meta = meta.take_result().map(MetaObject);
                Ok(GetPromptResponse::from(result))
            }
        }
    }
}
