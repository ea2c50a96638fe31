//! The list requests (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`): pages of the lists converted once per catalog (`state.rs`), or,
//! for a principal whose entitlements filter them (`admission.rs`), of what it may use; with the
//! 2026-07-28 caching hints.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::access::{Item, Kind, Verdict};
use crate::mcp::call::checks::admission;
use crate::mcp::call::request::Call;
use crate::mcp::session::Session;
use crate::mcp::wire::convert;
use crate::mcp::wire::era::Era;
use crate::mcp::wire::errors::request_error;
use crate::mcp::wire::paging::page;

/// List results of static things (tools, prompts, templates) may be cached this long by
/// 2026-07-28 clients (caching, SEP-2549); resources depend on the caller's roots.
const STATIC_LIST_TTL_MS: u64 = 60_000;

/// One page of a static list as its rmcp result type, with the 2026-07-28 caching hints: a
/// list filtered for the request's principal is its own (`private`).
macro_rules! static_page {
    ($result:ty, $items:expr, $filtered:expr, $key:expr, $request:expr, $context:expr, $size:expr) => {{
        let (items, next) = page($items, $key, &$request, $size)?;
        let mut result = <$result>::with_all_items(items);
        result.next_cursor = next;
        if Era::of(&$context).is_modern() {
            let scope = if $filtered { CacheScope::Private } else { CacheScope::Public };
            result = result.with_ttl_ms(STATIC_LIST_TTL_MS).with_cache_scope(scope);
        }
        Ok(result)
    }};
}

/// A static list's page for the request's principal: all of `$field` of the catalog's lists,
/// or, when the principal's entitlements filter them, those of the catalog's `$field` it may
/// use (named for the entitlements by `$entry_name`).
macro_rules! static_list {
    ($session:expr, $result:ty, $field:ident, $kind:expr, $entry_name:expr, $request:expr, $context:expr) => {{
        let (catalog, size) = ($session.state.catalog(), $session.state.page_size);
        let lists = $session.state.lists(&catalog)?;
        match $session.list_filter($context) {
            None => static_page!($result, &lists.$field, false, |item| &item.name, $request, $context, size),
            Some(filter) => {
                let visible =
                    admission::visible(&filter, &catalog, catalog.$field(), &lists.$field, $kind, $entry_name);
                static_page!($result, &visible, true, |item| &item.name, $request, $context, size)
            }
        }
    }};
}

impl Session {
    /// `tools/list`.
    pub(crate) async fn tools_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        static_list!(self, ListToolsResult, tools, Kind::Tool, |e| &e.name, request, context)
    }

    /// `prompts/list`.
    pub(crate) async fn prompts_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        static_list!(self, ListPromptsResult, prompts, Kind::Prompt, |e| &e.name, request, context)
    }

    /// `resources/templates/list`: templates are entitled by their URI template.
    pub(crate) async fn templates_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        static_list!(
            self,
            ListResourceTemplatesResult,
            templates,
            Kind::Resource,
            |e| &e.item.uri_template,
            request,
            context
        )
    }

    /// `resources/list`: asked of the plugins in the request's scope, never cached as public.
    pub(crate) async fn resources_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        // The plugins the filter names by index are those of the catalog that listed (the
        // request's, taken once).
        let call = Call::quiet(self, context, "resources/list", (Kind::Resource, ""));
        let catalog = call.catalog.clone();
        let listing = &catalog;
        let listed = self.with_scope(&call, None, |scope| async move { listing.list_resources(&scope).await }).await;
        call.end_quietly().await;
        let listed = listed?.map_err(|_| McpError::internal_error("resources/list cannot ask the client", None))?;
        let mut all: Vec<_> = listed.map_err(request_error)?;
        if let Some((principal, access)) = self.list_filter(context) {
            all.retain(|(index, resource)| {
                let plugin = catalog.plugins().get(*index).map(|p| &*p.name);
                access.lists(&principal, Item { kind: Kind::Resource, name: &resource.uri, plugin })
                    || access.verdict_in(&principal, &catalog, Kind::Resource, &resource.uri) == Verdict::Allowed
            });
        }
        // `skill://` is the host's: a plugin's resource there is not listed (nor read).
        let mut all: Vec<_> = all
            .into_iter()
            .map(|(index, r)| (Some(index), r))
            .filter(|(_, r)| !r.uri.starts_with(crate::mcp::skills::SKILL_SCHEME))
            .collect();
        all.extend(self.listed_skill_files(context).into_iter().map(|r| (None, r)));
        all.sort_by(|a, b| a.1.uri.cmp(&b.1.uri));
        all.dedup_by(|a, b| a.1.uri == b.1.uri);
        let (resources, next) = page(&all, |(_, r)| &r.uri, &request, self.state.page_size)?;
        // `_meta` and icons the plugin gave for the URI (WIT 0.1.3), checked at load.
        let extra = |index: &Option<usize>, uri: &str| {
            index.and_then(|i| catalog.plugins().get(i)).and_then(|p| p.metadata.resources.get(uri))
        };
        let resources =
            resources.iter().map(|(index, r)| convert::resource(r, extra(index, &r.uri))).collect::<Result<_, _>>()?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        if Era::of(context).is_modern() {
            result = result.with_ttl_ms(0).with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }
}
