//! The entitlements and limits of one server applied to a principal: what it may list and use,
//! and whether a call of its may start now. Answers are verdicts; the protocol layer words them
//! (`mcp/call/checks/admission.rs`: JSON-RPC errors; `mcp/transport/precheck.rs`: HTTP challenges).

use std::sync::Arc;

use super::entitlements::{self, Item, Kind, Verdict};
use super::limits::{self, LimitRefusal, Running};

use super::principal::Principal;
use crate::config::OAuthOptions;
use crate::runtime::Catalog;

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

    /// Whether `principal` may use the `kind` `name` of `catalog`, where an MCP App is part of
    /// its tool (extensions/apps: the client reads a tool's `ui.resourceUri` to show its
    /// result): a principal who may use a tool may read the app it links, though no resource
    /// rule names it. Nothing else is widened: the app's plugin serves both.
    pub(crate) fn verdict_in(&self, principal: &Principal, catalog: &Catalog, kind: Kind, name: &str) -> Verdict {
        let verdict = self.verdict(principal, item(catalog, kind, name));
        if kind != Kind::Resource || verdict == Verdict::Allowed {
            return verdict;
        }
        match app_tool(catalog, name) {
            Some(tool) if self.verdict(principal, item(catalog, Kind::Tool, tool)) == Verdict::Allowed => {
                Verdict::Allowed
            }
            _ => verdict,
        }
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

/// The tool (its served name) whose MCP App is at `uri`: a tool of the plugin that owns `uri`
/// whose `_meta.ui.resourceUri` names it.
pub(crate) fn app_tool<'a>(catalog: &'a Catalog, uri: &str) -> Option<&'a str> {
    let owner = catalog.resource_owner(uri)?;
    let metadata = &catalog.plugins().get(owner)?.metadata;
    let links = |local: &str| {
        let meta = metadata.tools.get(local).and_then(|item| item.meta.as_ref());
        meta.and_then(|m| m.get("ui")).and_then(|ui| ui.get("resourceUri")).and_then(|u| u.as_str()) == Some(uri)
    };
    catalog.tools().iter().find(|e| e.plugin == owner && links(&e.item.descriptor.name)).map(|e| e.name.as_str())
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

/// Words for a refusal: the challenge's `error_description` and the JSON-RPC message.
pub(crate) fn refusal_description(item: Item<'_>, scope: Option<&str>) -> String {
    let (noun, name) = (item.kind.noun(), item.name);
    match scope {
        Some(scope) => format!("insufficient_scope: the {noun} `{name}` needs the scope `{scope}`"),
        None => format!("insufficient_scope: this token is not entitled to the {noun} `{name}`"),
    }
}
