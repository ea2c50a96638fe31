//! One MCP connection (for stdio: the process) and its `ServerHandler`: one short method per
//! MCP request, each turning the request into a catalog call in the request's scope
//! (`scope.rs`) and the answer into MCP types (`convert.rs`); failures are mapped in
//! `errors.rs`, era differences decided in `era.rs`.

#![expect(deprecated, reason = "logging and roots stay served to the clients that use them")]

use std::sync::PoisonError;

use serde_json::Value;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, ReadResourceResponse, Reference, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};

use super::notify::{Notifier, pump};
use super::search;
use crate::access::Kind;
use crate::mcp::call::request::Call;
use crate::mcp::session::Session;
use crate::mcp::skills;
use crate::mcp::wire::convert;
use crate::mcp::wire::errors::request_error;

use crate::mcp::call::tasks;
use crate::runtime::CompletionTarget;

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("mcpbox", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("mcpbox: sandboxed WebAssembly MCP plugins".to_owned());
        let catalog = self.state.catalog();
        let mut capabilities = match self.state.lists(&catalog) {
            Ok(lists) => lists.capabilities.clone(),
            Err(_) => convert::capabilities(&catalog, self.state.watching),
        };
        skills::declare(&mut capabilities, self.state.skills.configured());
        let config = ServerConfig::new(capabilities)
            .with_server_info(implementation)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        match self.instructions() {
            Some(instructions) => config.with_instructions(instructions),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if self.state.tool_search {
            return Ok(ListToolsResult::with_all_items(search::host_tools()));
        }
        self.tools_page(request, &context).await
    }

    /// The tool `name` as listed, for rmcp's Streamable HTTP transport to check the call's
    /// `Mcp-Param-*` headers against its `x-mcp-header` parameters (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.state.tool_search
            && let Some(tool) = search::host_tools().into_iter().find(|tool| tool.name == name)
        {
            return Some(tool);
        }
        let lists = self.state.lists(&self.state.catalog()).ok()?;
        // In the catalog's order: sorted by name.
        let at = lists.tools.binary_search_by(|tool| tool.name.as_ref().cmp(name)).ok()?;
        Some(lists.tools[at].clone())
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Tool search: a search answers here; `call_tool` becomes the call of the tool it names.
        if self.state.tool_search {
            match request.name.as_ref() {
                search::SEARCH_TOOL => return self.search_tools(&request, &context).map(CallToolResponse::from),
                search::CALL_TOOL => request = self.unwrap_call_tool(request)?,
                _ => {}
            }
        }
        let arguments = self.state.audit.as_ref().map(|_| Value::Object(request.arguments.clone().unwrap_or_default()));
        let call = Call::begin(self, context, "tools/call", (Kind::Tool, request.name.as_ref()), arguments.as_ref());
        call.traced(self.run_tool(&call, request)).await
    }

    /// `tasks/get` (extensions/tasks §Task Polling); rmcp checks the request declared the
    /// extension first.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.state.tasks.get(request, tasks::Tasks::principal(self.principal(&context).as_deref())).await
    }

    /// `tasks/update` (extensions/tasks §Task Update Requests).
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.update(request, tasks::Tasks::principal(self.principal(&context).as_deref())).await
    }

    /// `tasks/cancel` (extensions/tasks §Task Cancellation).
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.cancel(request, tasks::Tasks::principal(self.principal(&context).as_deref())).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.resources_page(request, &context).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        self.skills_page(request, &context)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        self.skill_entry(request, &context)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.directory_page(request, &context)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.templates_page(request, &context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let call = Call::begin(self, context, "resources/read", (Kind::Resource, &request.uri), None);
        call.traced(self.run_read(&call, request)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.prompts_page(request, &context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = self.state.audit.as_ref().map(|_| serde_json::to_value(&request.arguments).unwrap_or_default());
        let call = Call::begin(self, context, "prompts/get", (Kind::Prompt, request.name.as_ref()), arguments.as_ref());
        call.traced(self.run_prompt(&call, request)).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let (target, kind, name) = match &request.r#ref {
            Reference::Prompt(p) => (CompletionTarget::Prompt(p.name.clone()), Kind::Prompt, &p.name),
            Reference::Resource(r) => (CompletionTarget::ResourceTemplate(r.uri.clone()), Kind::Resource, &r.uri),
            _ => return Err(McpError::invalid_params("unsupported completion reference type", None)),
        };
        // One catalog for the whole request (the call's): admitted and completed by the same
        // plugins.
        let call = Call::quiet(self, &context, "completion/complete", (kind, name));
        // Admission's own listing, where it needs one, keeps a quiet line of its own, written
        // whatever the verdict; the completion's is for what completing did.
        let _pass = self.admit(&Call { audit: None, ..call.clone() }).await?;
        let context_arguments = request.context.and_then(|c| c.arguments).map(|a| a.into_iter().collect());
        let argument = (request.argument.name, request.argument.value);
        let catalog = &call.catalog;
        let completed = self
            .with_scope(&call, None, |scope| {
                catalog.complete(target, argument, context_arguments.unwrap_or_default(), scope)
            })
            .await;
        call.end_quietly().await;
        let completed =
            completed?.map_err(|_| McpError::internal_error("completion/complete cannot ask the client", None))?;
        convert::completion_result(&completed.map_err(request_error)?)
    }

    /// 2026-07-28 `subscriptions/listen` (basic/patterns/subscriptions): everything asked for
    /// is offered to rmcp, which keeps what the capabilities declare (list changes while
    /// plugins are watched, resource subscriptions) and acknowledges it.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // The stream hears every change from now on, before rmcp acknowledges it: a change made
        // right after the acknowledgment is not lost while `listen` starts.
        self.listening.subscribe_early(self.state.live().subscribe());
        Some(requested.clone())
    }

    /// One `subscriptions/listen` stream: hot-reload list changes and resource updates, until
    /// the client cancels it or the server stops, when it ends gracefully: rmcp answers the
    /// request with its completion result carrying `io.modelcontextprotocol/subscriptionId`
    /// (2026-07-28 basic/patterns/subscriptions §Graceful Closure).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let changes = self.listening.take().unwrap_or_else(|| self.state.live().subscribe());
        tokio::select! {
            () = context.cancelled() => {}
            () = self.state.health.listens_ended() => {}
            () = pump(changes, Notifier::Stream(context.sink())) => {}
        }
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).remove(&request.uri);
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.log_level.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.level);
        Ok(())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        // A client that declares roots gets no directory until it has said which: calls that
        // race ahead of its `roots/list` answer wait for it instead of seeing every grant.
        if request.capabilities.roots.is_some() {
            self.roots.declared();
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.state.watching {
            let (changes, subscriptions, peer) =
                (self.state.live().subscribe(), self.subscriptions.clone(), context.peer.clone());
            tokio::spawn(async move {
                pump(changes, Notifier::Session { peer: &peer, subscriptions: &subscriptions }).await
            });
        }
        // Legacy roots (2025-06-18 client/roots): the server asks once the session is up.
        self.refresh_roots(context);
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(context);
    }
}

impl Session {
    /// Asks the client for its roots in the background; calls wait for the answer. Only a
    /// legacy session that declared roots is asked (2025-06-18 client/roots): 2026-07-28
    /// removed server-to-client requests and `notifications/roots/list_changed` with them, and
    /// a stateless client that still sends it never initialized, so it is ignored.
    fn refresh_roots(&self, context: NotificationContext<RoleServer>) {
        if context.peer.peer_info().is_none_or(|info| info.capabilities.roots.is_none()) {
            tracing::debug!("not asking for roots: not a legacy session that declared them");
            return;
        }
        let session = self.clone();
        tokio::spawn(async move { session.roots.refresh(context.peer, &session.state.allowed).await });
    }
}
