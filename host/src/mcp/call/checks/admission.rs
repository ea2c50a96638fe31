//! A request's principal and what it may do, applied in the handler (`access/`): every
//! request that runs a plugin passes [`Session::admit`] (entitlement, then limits), and every
//! list is filtered by [`Session::list_filter`]. The principal comes from the HTTP request the
//! guard authenticated (`transport/guard.rs`), or, for a WebSocket or HTTP+SSE session, from the
//! one that opened it.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::service::{RequestContext, RoleServer};

use crate::access::{self, Access, Admitted, Item, Kind, Principal, Running, Verdict};
use crate::mcp::call::request::Call;
use crate::mcp::session::Session;
use crate::mcp::wire::errors::{over_limit, refused, request_error};
use crate::runtime::{CallError, Catalog};

/// A call admitted by [`Session::admit`]: counted as running until dropped.
pub(crate) struct Pass(#[expect(dead_code, reason = "held for its drop: the call's running count")] Option<Running>);

/// The HTTP request a request context came from, if any.
fn http_parts(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>()
}

impl Session {
    /// The principal the request acts for, if the server authenticates principals.
    pub(crate) fn principal(&self, context: &RequestContext<RoleServer>) -> Option<Arc<Principal>> {
        if let Some(bound) = &self.principal {
            return Some(bound.clone());
        }
        http_parts(context)?.extensions.get::<Arc<Principal>>().cloned()
    }

    /// The principal and the access rules lists are filtered by; `None`: everything is listed.
    pub(crate) fn list_filter(&self, context: &RequestContext<RoleServer>) -> Option<(Arc<Principal>, &Access)> {
        let access = self.state.access.as_ref().filter(|access| access.filters())?;
        Some((self.principal(context)?, access))
    }

    /// Whether `call`'s principal may use the tool, prompt or resource it names, of its
    /// catalog, now: refused (the scope that would allow it named), unknown (hidden from it),
    /// or over its limits.
    pub(crate) async fn admit(&self, call: &Call) -> Result<Pass, McpError> {
        let (context, catalog, kind, name) = (&call.context, &call.catalog, call.kind, call.name.as_str());
        let (Some(access), Some(principal)) = (&self.state.access, call.principal.clone()) else {
            return Ok(Pass(None));
        };
        if kind == Kind::Resource && access.filters() && catalog.resource_owner(name).is_none() {
            // Who owns a URI may be known only from a listing: as the read itself would, list,
            // its effects recorded as the call's, or in a quiet line of their own where the call
            // keeps no record (a completion's admission). The listing's plugins set no `_meta`
            // on the call's answer: that is the called plugin's alone.
            let listing = match call.audit {
                Some(_) => Call { meta: None, ..call.clone() },
                None => Call::quiet(self, context, "resources/list", (Kind::Resource, "")),
            };
            let listed = catalog;
            let _ = self.with_scope(&listing, None, |scope| async move { listed.list_resources(&scope).await }).await;
            if call.audit.is_none() {
                listing.end_quietly().await;
            }
        }
        let item = access::item(catalog, kind, name);
        match access.verdict_in(&principal, catalog, kind, name) {
            Verdict::Allowed => {}
            Verdict::Refused { scope } => {
                access::refused_because("insufficient_scope");
                return Err(refused(item, scope.as_deref()));
            }
            Verdict::Hidden => {
                access::refused_because("not_entitled");
                return Err(unknown(item));
            }
        }
        // Counted once: the HTTP pre-check may have counted it already.
        if http_parts(context).is_some_and(|parts| parts.extensions.get::<Admitted>().is_some()) {
            return Ok(Pass(None));
        }
        access.start_call(&principal).map(Pass).map_err(|refusal| over_limit(&refusal))
    }
}

/// The error a name nobody serves gets.
fn unknown(item: Item<'_>) -> McpError {
    let name = item.name.to_owned();
    request_error(match item.kind {
        Kind::Tool => CallError::UnknownTool { name },
        Kind::Prompt => CallError::UnknownPrompt { name },
        Kind::Resource => CallError::UnknownResource { uri: name },
    })
}

/// The items of a catalog list the principal may see, with their MCP forms: `entries` and
/// `converted` are the same list (the converted one made from the other, in order).
pub(crate) fn visible<'a, E, T: Clone>(
    (principal, access): &(Arc<Principal>, &Access),
    catalog: &'a Catalog,
    entries: &'a [crate::runtime::catalog::Entry<E>],
    converted: &[T],
    kind: Kind,
    name: impl Fn(&'a crate::runtime::catalog::Entry<E>) -> &'a str,
) -> Vec<T> {
    entries
        .iter()
        .zip(converted)
        .filter(|(entry, _)| {
            let plugin = catalog.plugins().get(entry.plugin).map(|p| &*p.name);
            access.lists(principal, Item { kind, name: name(entry), plugin })
        })
        .map(|(_, item)| item.clone())
        .collect()
}
