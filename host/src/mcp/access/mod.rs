//! What an authenticated principal may do (docs/authorization.md §Entitlements, §Limits): the
//! operator's entitlements decide which tools, prompts and resources it may list and use, and
//! its limits how much of the server it may take at once. Applied in one place per request:
//! by `handler.rs` for every transport (a JSON-RPC error), and before that, for Streamable
//! HTTP, by `transport/precheck.rs` (the spec's 403 challenge, or 429 with `Retry-After`).
//!
//! - `entitlements.rs`: scopes and claims to plugins and names, the verdict on one item;
//! - `limits.rs`: concurrent calls and calls per minute, per principal.
//!
//! Without `[auth]` there is no principal and nothing here applies: stdio and the static
//! token serve everything to whoever may connect.

mod entitlements;
mod limits;

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use serde_json::json;

pub(crate) use entitlements::{Item, Kind, Verdict};
pub(crate) use limits::{LimitRefusal, Running};

use crate::config::OAuthOptions;
use crate::mcp::auth::Principal;
use crate::runtime::Catalog;

/// The JSON-RPC error of a request the principal's token does not allow (an
/// implementation-defined server error, JSON-RPC 2.0 §5.1); `data` carries RFC 6750's words.
pub(crate) const INSUFFICIENT_SCOPE: ErrorCode = ErrorCode(-32003);
/// The JSON-RPC error of a call over the principal's limits.
pub(crate) const OVER_LIMIT: ErrorCode = ErrorCode(-32004);

/// The entitlements and limits of one server.
pub(crate) struct Access {
    entitlements: entitlements::Entitlements,
    limits: limits::Limits,
}

/// A call admitted under the principal's limits, counted as running while this lives; put
/// into the HTTP request's extensions by the pre-check so that the handler does not count it
/// twice.
#[derive(Clone)]
pub(crate) struct Admitted(
    #[expect(dead_code, reason = "held for its drop: the call's running count")] pub(crate) Arc<Running>,
);

impl Access {
    pub(crate) fn new(options: &OAuthOptions) -> Access {
        Access {
            entitlements: entitlements::Entitlements::new(options.entitlements.clone()),
            limits: limits::Limits::new(options.limits),
        }
    }

    /// Whether lists are filtered per principal (and so may not be cached as public).
    pub(crate) fn filters(&self) -> bool {
        self.entitlements.any()
    }

    /// Whether calls are checked at all (entitlements or limits configured).
    pub(crate) fn checks_calls(&self) -> bool {
        self.entitlements.any() || self.limits.any()
    }

    /// Whether `principal` may use `item`.
    pub(crate) fn verdict(&self, principal: &Principal, item: Item<'_>) -> Verdict {
        self.entitlements.verdict(principal, item)
    }

    /// Whether `principal` sees `item` in lists: only what it may use.
    pub(crate) fn lists(&self, principal: &Principal, item: Item<'_>) -> bool {
        self.verdict(principal, item) == Verdict::Allowed
    }

    /// Counts a call of `principal` as running, or says which limit refuses it; `None` when
    /// no limit is configured.
    pub(crate) fn start_call(&self, principal: &Principal) -> Result<Option<Running>, LimitRefusal> {
        if !self.limits.any() {
            return Ok(None);
        }
        self.limits.start(principal.key()).map(Some).inspect_err(|refusal| {
            let reason = match refusal {
                LimitRefusal::Concurrency { .. } => "concurrent_calls",
                LimitRefusal::Rate { .. } => "calls_per_minute",
            };
            refused_because(reason);
        })
    }
}

/// Counts a request refused to a principal (`mcpbox_principal_refusals_total`): `reason` is
/// `insufficient_scope`, `not_entitled` (answered as unknown), or the limit that refused it.
pub(crate) fn refused_because(reason: &'static str) {
    crate::telemetry::metrics::metrics().principal_refusals.with_label_values(&[reason]).inc();
}

/// The item a request names in `catalog`: a tool or prompt by its name, a resource by its URI
/// (its plugin, if the catalog knows the owner yet).
pub(crate) fn item<'a>(catalog: &'a Catalog, kind: Kind, name: &'a str) -> Item<'a> {
    let plugin = match kind {
        Kind::Tool => catalog.tool(name).map(|e| e.plugin),
        Kind::Prompt => catalog.prompt(name).map(|e| e.plugin),
        Kind::Resource => catalog.resource_owner(name),
    };
    Item { kind, name, plugin: plugin.and_then(|index| catalog.plugins().get(index)).map(|p| &*p.name) }
}

/// The JSON-RPC error of a refused request, naming what and the scope that would allow it.
pub(crate) fn refused(item: Item<'_>, scope: Option<&str>) -> McpError {
    let message = refusal_description(item, scope);
    McpError::new(INSUFFICIENT_SCOPE, message, Some(json!({ "error": "insufficient_scope", "scope": scope })))
}

/// Words for a refusal: the challenge's `error_description` and the JSON-RPC message.
pub(crate) fn refusal_description(item: Item<'_>, scope: Option<&str>) -> String {
    let (noun, name) = (item.kind.noun(), item.name);
    match scope {
        Some(scope) => format!("insufficient_scope: the {noun} `{name}` needs the scope `{scope}`"),
        None => format!("insufficient_scope: this token is not entitled to the {noun} `{name}`"),
    }
}

/// The JSON-RPC error of a call over a limit.
pub(crate) fn over_limit(refusal: &LimitRefusal) -> McpError {
    let which = match refusal {
        LimitRefusal::Concurrency { .. } => "concurrent_calls",
        LimitRefusal::Rate { .. } => "calls_per_minute",
    };
    McpError::new(
        OVER_LIMIT,
        refusal.to_string(),
        Some(json!({ "limit": which, "retryAfterSeconds": refusal.retry_after_seconds() })),
    )
}
