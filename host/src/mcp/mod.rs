//! The protocol layer: the only module that touches rmcp. One async method per MCP request
//! (as in rmcp's `ServerHandler`), each turning the request into a catalog call and the answer
//! into MCP types. Both eras are served: the legacy `initialize` handshake (2024-11-05 to
//! 2025-11-25) and stateless 2026-07-28, where each request carries its version in `_meta`.

// Logging (and roots) are deprecated by MCP 2026-07-28 (SEP-2577) but still functional, and
// legacy clients rely on them.
#![allow(deprecated, reason = "logging and roots stay served to the clients that use them")]

mod client;
mod convert;
mod cursor;
pub mod http;
pub mod stdio;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, Reference, ResourceUpdatedNotificationParam, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSendError,
};
use serde_json::json;
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::catalog::{Catalog, CompletionTarget};
use crate::roots::{self, AllowedDir, ClientRoot, Grant};
use crate::sandbox::{CallError, CallScope, ClientRequests};
use client::{PeerClient, ReplayClient, forward_events};
use convert::Dialect;

/// How long a call waits for the client's first `roots/list` answer before it runs with no
/// directories (deny by default: we never fall back to wider grants).
const ROOTS_WAIT: Duration = Duration::from_secs(10);
/// The key of the `roots/list` question in a multi round-trip request.
const ROOTS_QUESTION: &str = "roots";
/// List results of static things (tools, prompts, templates) may be cached this long by
/// 2026-07-28 clients (caching, SEP-2549); resources depend on the caller's roots.
const STATIC_LIST_TTL_MS: u64 = 60_000;

/// What is shared by every connection: the plugins (swapped whole on hot reload) and the
/// operator's grants.
pub struct Shared {
    snapshot: RwLock<Arc<Snapshot>>,
    pub allowed: Vec<AllowedDir>,
    pub operator_grants: Arc<[Grant]>,
    pub page_size: usize,
    /// Plugins are watched: list changes are declared (`listChanged`) and announced.
    pub watching: bool,
    changes: broadcast::Sender<Change>,
}

/// The plugins served at one moment, with their lists converted once (list requests only
/// slice these). A request works on the snapshot it started with; calls already running when
/// a new one is swapped in finish on the old plugins.
pub struct Snapshot {
    pub catalog: Catalog,
    tools: Vec<rmcp::model::Tool>,
    prompts: Vec<rmcp::model::Prompt>,
    templates: Vec<rmcp::model::ResourceTemplate>,
    /// Whether the client's roots can narrow anything (shared roots, or plugin directories the
    /// operator wants within them); if not, 2026-07-28 requests don't ask for them.
    narrowable: bool,
}

impl Snapshot {
    fn new(catalog: Catalog, allowed: &[AllowedDir]) -> anyhow::Result<Snapshot> {
        let tools = catalog.tools().iter().map(|e| convert::tool(&e.name, &e.item)).collect::<Result<_, _>>()?;
        let prompts = catalog.prompts().iter().map(|e| convert::prompt(&e.name, &e.item)).collect::<Result<_, _>>()?;
        let templates = catalog
            .templates()
            .iter()
            .map(|e| convert::resource_template(&e.name, &e.item))
            .collect::<Result<_, _>>()?;
        let narrowable = !allowed.is_empty() || catalog.narrows_to_client_roots();
        Ok(Snapshot { catalog, tools, prompts, templates, narrowable })
    }

    /// The plugins whose resources a `resources/list` would ask, by identity.
    fn resource_sources(&self) -> Vec<*const crate::plugin::Plugin> {
        self.catalog.plugins().iter().filter(|p| p.exports.resources.is_some()).map(Arc::as_ptr).collect()
    }
}

/// A change clients may be told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Tools,
    Prompts,
    Resources,
    /// A plugin said the resource at this URI changed.
    ResourceUpdated(String),
}

impl Shared {
    pub fn new(
        catalog: Catalog,
        allowed: Vec<AllowedDir>,
        page_size: usize,
        watching: bool,
    ) -> anyhow::Result<Arc<Self>> {
        let snapshot = Snapshot::new(catalog, &allowed)?;
        let operator_grants = roots::operator_grants(&allowed).into();
        Ok(Arc::new(Shared {
            snapshot: RwLock::new(Arc::new(snapshot)),
            allowed,
            operator_grants,
            page_size: page_size.max(1),
            watching,
            changes: broadcast::channel(64).0,
        }))
    }

    /// The plugins served now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Serves `catalog` from now on and tells clients which lists changed.
    pub fn replace(&self, catalog: Catalog) -> anyhow::Result<()> {
        let new = Arc::new(Snapshot::new(catalog, &self.allowed)?);
        let old = std::mem::replace(&mut *self.snapshot.write().unwrap_or_else(PoisonError::into_inner), new.clone());
        let mut changes = Vec::new();
        if old.tools != new.tools {
            changes.push(Change::Tools);
        }
        if old.prompts != new.prompts {
            changes.push(Change::Prompts);
        }
        if old.templates != new.templates || old.resource_sources() != new.resource_sources() {
            changes.push(Change::Resources);
        }
        tracing::info!(tools = new.tools.len(), prompts = new.prompts.len(), ?changes, "now serving");
        for change in changes {
            let _ = self.changes.send(change);
        }
        Ok(())
    }

    /// Announces that a plugin changed the resource at `uri`.
    pub fn resource_updated(&self, uri: String) {
        let _ = self.changes.send(Change::ResourceUpdated(uri));
    }

    fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

/// The client's roots as far as we know them.
#[derive(Debug, Clone)]
enum RootsState {
    /// The client did not declare the roots capability: the operator's grants apply.
    NotDeclared,
    /// Asked, no answer yet.
    Pending,
    /// The shared grants from the client's roots, and the roots themselves (canonical).
    Known(Arc<[Grant]>, Arc<[PathBuf]>),
}

/// The directories of one request: the shared grants and the client's roots if it told them.
type FsView = (Arc<[Grant]>, Option<Arc<[PathBuf]>>);

/// One connection (for stdio: the process).
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    roots: Arc<watch::Sender<RootsState>>,
    /// Resource URIs this session subscribed to (legacy `resources/subscribe`).
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
    /// What a guest's `resource-updated` calls (made once, shared by every call's scope).
    resource_updated: Arc<dyn Fn(String) + Send + Sync>,
}

impl McpServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        let announcer = shared.clone();
        McpServer {
            shared,
            log_level: Arc::new(Mutex::new(None)),
            roots: Arc::new(watch::channel(RootsState::NotDeclared).0),
            subscriptions: Arc::default(),
            resource_updated: Arc::new(move |uri| announcer.resource_updated(uri)),
        }
    }

    fn is_modern(context: &RequestContext<RoleServer>) -> bool {
        context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
    }

    fn dialect(context: &RequestContext<RoleServer>) -> Dialect {
        Dialect::for_version(context.protocol_version().as_ref().map(|v| v.as_str()))
    }

    /// The directories a request may use: the client's roots (inside the operator's
    /// allowance) when it declared roots, otherwise the operator's grants.
    async fn grants(&self) -> FsView {
        let mut watcher = self.roots.subscribe();
        let wait = watcher.wait_for(|state| !matches!(state, RootsState::Pending));
        match tokio::time::timeout(ROOTS_WAIT, wait).await {
            Ok(Ok(state)) => match &*state {
                RootsState::Known(grants, roots) => (grants.clone(), Some(roots.clone())),
                _ => (self.shared.operator_grants.clone(), None),
            },
            _ => {
                tracing::warn!(
                    "the client declared roots but has not answered roots/list; running with no directories"
                );
                (Arc::from([]), Some(Arc::from([])))
            }
        }
    }

    /// The level at or above which guest logs reach this request's client, if any.
    fn request_log_level(&self, context: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        if Self::is_modern(context) {
            // 2026-07-28 logging §Per-request log level: only when the request asks.
            return context.meta.log_level();
        }
        // Legacy sessions: `logging/setLevel`, else info and above.
        Some(self.log_level.lock().unwrap_or_else(PoisonError::into_inner).unwrap_or(LoggingLevel::Info))
    }

    /// Runs `call` with a scope whose guest events become this request's progress and log
    /// notifications. They are forwarded beside the call in the same task (no spawn on the
    /// hot path) and all sent before `call`'s output is returned, so they precede the response.
    ///
    /// For a 2026-07-28 request, whatever the legacy era would ask the client in a request of
    /// its own (roots, sampling, elicitation) is asked by multi round-trip instead (basic
    /// §Multi round-trip requests): the call ends with an `InputRequiredResult` listing the
    /// questions, and the client repeats it with `answers`, whereupon the guest runs again
    /// and gets them. `answers` is `None` for methods that cannot return `InputRequiredResult`.
    async fn with_scope<T, F: Future<Output = T>>(
        &self,
        context: &RequestContext<RoleServer>,
        answers: Option<&InputResponses>,
        call: impl FnOnce(CallScope) -> F,
    ) -> Result<T, InputRequiredResult> {
        let mut replay = None;
        let ((grants, client_roots), client): (FsView, Arc<dyn ClientRequests>) = if Self::is_modern(context) {
            let capabilities = context.meta.client_capabilities();
            // Roots can only narrow the operator's directories: with none, there is nothing to ask.
            let asks_roots =
                self.shared.snapshot().narrowable && capabilities.as_ref().is_some_and(|c| c.roots.is_some());
            let grants = match answers {
                Some(answers) if asks_roots => self.modern_roots(answers)?,
                _ => (self.shared.operator_grants.clone(), None),
            };
            let client = Arc::new(ReplayClient {
                answers: answers.cloned(),
                capabilities,
                asked: AtomicUsize::new(0),
                questions: Mutex::default(),
            });
            replay = Some(client.clone());
            (grants, client)
        } else {
            (self.grants().await, Arc::new(PeerClient { peer: context.peer.clone() }))
        };
        let cancel: CancellationToken = context.ct.clone();
        let resource_updated = Some(self.resource_updated.clone());
        let progress_token = context.meta.get_progress_token();
        let log_level = self.request_log_level(context);
        let output = if progress_token.is_none() && log_level.is_none() {
            call(CallScope { grants, client_roots, cancel, events: None, client: Some(client), resource_updated }).await
        } else {
            let (sender, receiver) = mpsc::unbounded_channel();
            let forward = forward_events(receiver, context.peer.clone(), progress_token, log_level);
            // The sender lives in the scope, which the call drops when it ends; that ends `forward`.
            let scope = CallScope {
                grants,
                client_roots,
                cancel,
                events: Some(sender),
                client: Some(client),
                resource_updated,
            };
            tokio::join!(call(scope), forward).0
        };
        if let Some(replay) = replay {
            let questions = std::mem::take(&mut *replay.questions.lock().unwrap_or_else(PoisonError::into_inner));
            if !questions.is_empty() {
                return Err(InputRequiredResult::from_input_requests(questions));
            }
        }
        Ok(output)
    }

    /// The grants of a 2026-07-28 request whose client declares roots: from its answer to
    /// `roots/list`, or the question if it has not answered yet.
    fn modern_roots(&self, answers: &InputResponses) -> Result<FsView, InputRequiredResult> {
        let Some(answer) = answers.get(ROOTS_QUESTION) else {
            let question = serde_json::from_value(json!({ "method": "roots/list" })).map(InputRequest::ListRoots);
            let question = question.expect("roots/list is a valid request");
            return Err(InputRequiredResult::from_input_requests(InputRequests::from([(
                ROOTS_QUESTION.to_owned(),
                question,
            )])));
        };
        let roots: Vec<ClientRoot> = answer["roots"]
            .as_array()
            .map(|roots| {
                roots
                    .iter()
                    .filter_map(|r| {
                        Some(ClientRoot {
                            uri: r["uri"].as_str()?.to_owned(),
                            name: r["name"].as_str().map(str::to_owned),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (grants, refused) = roots::client_grants(&self.shared.allowed, &roots);
        for reason in refused {
            tracing::warn!("refused {reason}");
        }
        Ok((grants.into(), Some(roots::canonical_client_roots(&roots).0.into())))
    }

    async fn refresh_roots(&self, peer: Peer<RoleServer>) {
        self.roots.send_replace(RootsState::Pending);
        let (grants, paths): (Arc<[Grant]>, Arc<[PathBuf]>) = match peer.list_roots().await {
            Ok(result) => {
                let client_roots: Vec<ClientRoot> =
                    result.roots.into_iter().map(|r| ClientRoot { uri: r.uri, name: r.name }).collect();
                let (grants, refused) = roots::client_grants(&self.shared.allowed, &client_roots);
                for reason in refused {
                    tracing::warn!("refused {reason}");
                }
                tracing::info!(granted = ?grants.iter().map(|g| &g.guest_path).collect::<Vec<_>>(), "client roots");
                (grants.into(), roots::canonical_client_roots(&client_roots).0.into())
            }
            Err(e) => {
                tracing::warn!("roots/list failed: {e}; running with no directories");
                (Arc::from([]), Arc::from([]))
            }
        };
        self.roots.send_replace(RootsState::Known(grants, paths));
    }
}

fn page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    params: &Option<PaginatedRequestParams>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let after = params.as_ref().and_then(|p| p.cursor.as_deref()).map(cursor::decode).transpose()?;
    let start = match &after {
        Some(last) => items.partition_point(|item| key(item) <= last.as_str()),
        None => 0,
    };
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| cursor::encode(key(&items[end - 1])));
    Ok((items[start..end].to_vec(), next))
}

/// One page of a static list (tools, prompts, templates) as its rmcp result type, with the
/// 2026-07-28 caching hints for modern clients.
macro_rules! static_page {
    ($result:ty, $items:expr, $key:expr, $request:expr, $context:expr, $size:expr) => {{
        let (items, next) = page($items, $key, &$request, $size)?;
        let mut result = <$result>::with_all_items(items);
        result.next_cursor = next;
        if Self::is_modern(&$context) {
            result = result.with_ttl_ms(STATIC_LIST_TTL_MS).with_cache_scope(CacheScope::Public);
        }
        Ok(result)
    }};
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("mcpbox", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("mcpbox: sandboxed WebAssembly MCP plugins".to_owned());
        ServerConfig::new(convert::capabilities(&self.shared.snapshot().catalog, self.shared.watching))
            .with_server_info(implementation)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let snapshot = self.shared.snapshot();
        static_page!(ListToolsResult, &snapshot.tools, |t| &t.name, request, context, self.shared.page_size)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let snapshot = self.shared.snapshot();
        if snapshot.catalog.tool(&name).is_none() {
            return Err(McpError::invalid_params(format!("unknown tool `{name}`"), None));
        }
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let dialect = Self::dialect(&context);
        let answers = request.input_responses.clone().unwrap_or_default();
        let outcome = match self
            .with_scope(&context, Some(&answers), |scope| snapshot.catalog.call_tool(&name, arguments, scope))
            .await
        {
            Ok(outcome) => outcome,
            Err(questions) => return Ok(CallToolResponse::InputRequired(questions)),
        };
        let result = match outcome {
            Some(Ok(result)) => convert::call_result(result, dialect)?,
            Some(Err(CallError::MissingCapability { capability, .. })) => {
                return Err(convert::missing_capability(capability));
            }
            Some(Err(error @ CallError::NotFound { .. })) => {
                return Err(McpError::invalid_params(error.to_string(), None));
            }
            Some(Err(error)) => {
                tracing::warn!(tool = %name, "{error}");
                convert::error_result(&error)
            }
            None => return Err(McpError::invalid_params(format!("unknown tool `{name}`"), None)),
        };
        Ok(CallToolResponse::from(result))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let snapshot = self.shared.snapshot();
        let listed = self
            .with_scope(&context, None, |scope| async move { snapshot.catalog.list_resources(&scope).await })
            .await
            .map_err(|_| McpError::internal_error("resources/list cannot ask the client", None))?;
        let mut all = listed.map_err(convert::call_error)?.into_iter().map(|(_, r)| r).collect::<Vec<_>>();
        all.sort_by(|a, b| a.uri.cmp(&b.uri));
        all.dedup_by(|a, b| a.uri == b.uri);
        let (resources, next) = page(&all, |r| &r.uri, &request, self.shared.page_size)?;
        let resources = resources.iter().map(convert::resource).collect::<Result<Vec<_>, _>>()?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        if Self::is_modern(&context) {
            result = result.with_ttl_ms(0).with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let snapshot = self.shared.snapshot();
        static_page!(
            ListResourceTemplatesResult,
            &snapshot.templates,
            |t| &t.name,
            request,
            context,
            self.shared.page_size
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let answers = request.input_responses.clone().unwrap_or_default();
        let uri = request.uri.clone();
        let snapshot = self.shared.snapshot();
        let read =
            match self
                .with_scope(&context, Some(&answers), |scope| async move {
                    snapshot.catalog.read_resource(&uri, &scope).await
                })
                .await
            {
                Ok(read) => read,
                Err(questions) => return Ok(ReadResourceResponse::InputRequired(questions)),
            };
        let contents = read.map_err(convert::call_error)?;
        Ok(ReadResourceResponse::from(convert::read_result(&contents)?))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let snapshot = self.shared.snapshot();
        static_page!(ListPromptsResult, &snapshot.prompts, |p| &p.name, request, context, self.shared.page_size)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let name = request.name.clone();
        let snapshot = self.shared.snapshot();
        let arguments: Vec<(String, String)> = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                (
                    k,
                    match v {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    },
                )
            })
            .collect();
        let dialect = Self::dialect(&context);
        let answers = request.input_responses.clone().unwrap_or_default();
        let outcome = match self
            .with_scope(&context, Some(&answers), |scope| snapshot.catalog.get_prompt(&name, arguments, scope))
            .await
        {
            Ok(outcome) => outcome,
            Err(questions) => return Ok(GetPromptResponse::InputRequired(questions)),
        };
        match outcome {
            None => Err(McpError::invalid_params(format!("unknown prompt `{name}`"), None)),
            Some(Err(error)) => Err(convert::call_error(error)),
            Some(Ok(result)) => Ok(GetPromptResponse::from(convert::prompt_result(&result, dialect)?)),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let target = match &request.r#ref {
            Reference::Prompt(p) => CompletionTarget::Prompt(p.name.clone()),
            Reference::Resource(r) => CompletionTarget::ResourceTemplate(r.uri.clone()),
            _ => return Err(McpError::invalid_params("unsupported completion reference type", None)),
        };
        let context_arguments: Vec<(String, String)> = request
            .context
            .as_ref()
            .and_then(|c| c.arguments.clone())
            .map(|args| args.into_iter().collect())
            .unwrap_or_default();
        let argument = (request.argument.name.clone(), request.argument.value.clone());
        let snapshot = self.shared.snapshot();
        let outcome = self
            .with_scope(&context, None, |scope| snapshot.catalog.complete(target, argument, context_arguments, scope))
            .await
            .map_err(|_| McpError::internal_error("completion/complete cannot ask the client", None))?;
        match outcome {
            None => Err(McpError::invalid_params(
                "completion reference names no prompt or resource template of this server",
                None,
            )),
            Some(Err(error)) => Err(convert::call_error(error)),
            Some(Ok(result)) => convert::completion_result(&result),
        }
    }

    /// 2026-07-28 `subscriptions/listen` (basic/patterns/subscriptions): everything asked for
    /// is offered to rmcp, which keeps what the capabilities declare (list changes while
    /// plugins are watched, resource subscriptions) and acknowledges it.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    /// One `subscriptions/listen` stream: hot-reload list changes and resource updates, until
    /// the client cancels it. rmcp's sink drops what the accepted filter excludes.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.shared.subscribe_changes();
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let sink = context.sink();
            let sent = match change {
                Ok(Change::Tools) => sink.notify_tool_list_changed().await,
                Ok(Change::Prompts) => sink.notify_prompt_list_changed().await,
                Ok(Change::Resources) => sink.notify_resource_list_changed().await,
                Ok(Change::ResourceUpdated(uri)) => {
                    let subscribed = sink.accepted().resource_subscriptions.as_ref().is_some_and(|u| u.contains(&uri));
                    if !subscribed {
                        continue;
                    }
                    sink.notify_resource_updated(uri).await
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            if let Err(SubscriptionSendError::SubscriptionClosed) = sent {
                return Ok(());
            }
        }
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
            self.roots.send_replace(RootsState::Pending);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.shared.watching {
            tokio::spawn(announce_changes(
                self.shared.subscribe_changes(),
                context.peer.clone(),
                self.subscriptions.clone(),
            ));
        }
        // Legacy roots (2025-06-18 client/roots): the server asks once the session is up.
        let declared = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if declared {
            let server = self.clone();
            tokio::spawn(async move { server.refresh_roots(context.peer).await });
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        let server = self.clone();
        tokio::spawn(async move { server.refresh_roots(context.peer).await });
    }
}

/// Tells one legacy session about hot-reload list changes (`notifications/*/list_changed`) and
/// about updates of the resources it subscribed to, until the session is gone.
async fn announce_changes(
    mut changes: broadcast::Receiver<Change>,
    peer: Peer<RoleServer>,
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
) {
    loop {
        let sent = match changes.recv().await {
            Ok(Change::Tools) => peer.notify_tool_list_changed().await,
            Ok(Change::Prompts) => peer.notify_prompt_list_changed().await,
            Ok(Change::Resources) => peer.notify_resource_list_changed().await,
            Ok(Change::ResourceUpdated(uri)) => {
                if !subscriptions.lock().unwrap_or_else(PoisonError::into_inner).contains(&uri) {
                    continue;
                }
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await
            }
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if sent.is_err() {
            return;
        }
    }
}
