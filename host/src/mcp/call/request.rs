//! [`Call`]: one request that runs a plugin, made once where the handler takes the request
//! (`Call::begin`) and handed, by reference, to every step after it: the run (`running.rs`),
//! the steps before the plugin starts (`steps.rs` and the checks), the scope (`scope.rs`), a
//! task (`tasks/call.rs`), and, as [`Call::inner`], each call a composing tool's code makes
//! (`compose.rs`). What a step needs is a field here, in its signature; rmcp's request
//! extensions keep only what the transport put there for rmcp (the HTTP request's parts, the
//! principal the guard found).

use std::sync::Arc;
use std::time::Instant;

use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::audited::{AuditCall, Subject};
use crate::access::{Kind, Principal};
use crate::mcp::session::Session;
use crate::mcp::wire::era::Era;
use crate::runtime::Catalog;
use crate::runtime::effects::record::EffectLog;
use crate::runtime::sandbox::MetaSink;

/// One request that runs a plugin (`tools/call`, `resources/read`, `prompts/get`; quietly, a
/// `resources/list` or `completion/complete`), or a call of a tool that a composing tool's code
/// makes within one.
#[derive(Clone)]
pub(crate) struct Call {
    /// rmcp's request: its id, peer, cancellation, `_meta`, and what the transport put in its
    /// extensions.
    pub(crate) context: RequestContext<RoleServer>,
    /// The catalog the request is served from, taken once: its steps check what its plugin
    /// runs, even if a reload swaps another in meanwhile.
    pub(crate) catalog: Arc<Catalog>,
    /// The era the request speaks (`wire/era.rs`).
    pub(crate) era: Era,
    /// Who it acts for, when the server authenticates principals.
    pub(crate) principal: Option<Arc<Principal>>,
    /// The plugin that serves what it names, if any, for its span and audit line.
    pub(crate) plugin: Option<Arc<str>>,
    /// Its audit line's head and the record of its effects, when the audit is kept.
    pub(crate) audit: Option<Arc<AuditCall>>,
    /// The request's method (`tools/call`, `resources/read`, `prompts/get`, or a quiet one's),
    /// for its span.
    pub(crate) method: &'static str,
    /// What it names: a tool, a prompt or a resource.
    pub(crate) kind: Kind,
    /// The tool's or prompt's name, or the resource's URI.
    pub(crate) name: String,
    /// Where its guest's `_meta` for its result and contents goes (WIT 0.1.3); none for a
    /// quiet request ([`Call::quiet`]), whose answer carries none.
    pub(crate) meta: Option<Arc<MetaSink>>,
    /// The tools it stands inside, the client's call first (a composer's inner calls may call
    /// none of them again: a cycle); empty for a read or a prompt.
    pub(crate) chain: Vec<String>,
    /// When it began.
    pub(crate) begun: Instant,
}

impl Call {
    /// The `method` request `context` that names the `kind` `name` (with `arguments`, for the
    /// audit), begun: its catalog taken, its principal and plugin found, its audit line's head
    /// made (before its work, where the audit is kept).
    pub(crate) fn begin(
        session: &Session,
        context: RequestContext<RoleServer>,
        method: &'static str,
        (kind, name): (Kind, &str),
        arguments: Option<&Value>,
    ) -> Call {
        let catalog = session.state.catalog();
        let principal = session.principal(&context);
        let plugin = plugin_of(&catalog, kind, name);
        let subject = Subject { method, target: name, plugin: plugin.as_deref(), arguments };
        let audit = session.audit_call(&subject, &context, &catalog);
        let chain = if kind == Kind::Tool { vec![name.to_owned()] } else { Vec::new() };
        Call {
            era: Era::of(&context),
            context,
            catalog,
            principal,
            plugin,
            audit,
            method,
            kind,
            name: name.to_owned(),
            meta: Some(Arc::default()),
            chain,
            begun: Instant::now(),
        }
    }

    /// A request that runs plugins outside a call of its own (a resource listing, a
    /// completion), begun: its audit line, which [`Call::end_quietly`] writes only if its
    /// plugins did something beyond their sandbox (every effect accounted for, without a line
    /// per listing), names no plugin and no arguments.
    pub(crate) fn quiet(
        session: &Session,
        context: &RequestContext<RoleServer>,
        method: &'static str,
        (kind, name): (Kind, &str),
    ) -> Call {
        let catalog = session.state.catalog();
        let subject = Subject { method, target: name, plugin: None, arguments: None };
        let audit = session.audit_call(&subject, context, &catalog);
        Call {
            era: Era::of(context),
            context: context.clone(),
            principal: session.principal(context),
            catalog,
            plugin: None,
            audit,
            method,
            kind,
            name: name.to_owned(),
            meta: None,
            chain: Vec::new(),
            begun: Instant::now(),
        }
    }

    /// The call of the tool `name` this call's guest makes (WIT 0.1.4 `host.call-tool`), served
    /// from `catalog` (the server's current one: a long call, or one that went on as a task,
    /// makes each inner call on what is served when it makes it, not on what was served when it
    /// began): the same request, principal and record of effects; `_meta` of its own; `name`
    /// on the chain. Its `plugin` and `begun` stay the calling call's.
    pub(crate) fn inner(&self, name: &str, catalog: Arc<Catalog>) -> Call {
        let mut chain = self.chain.clone();
        chain.push(name.to_owned());
        let (kind, name) = (Kind::Tool, name.to_owned());
        Call { method: "tools/call", kind, name, catalog, meta: Some(Arc::default()), chain, ..self.clone() }
    }

    /// Writes the line of a quiet request ([`Call::quiet`]) if its plugins had effects. Such
    /// requests are not refused when the audit is down: the writer logs and counts the line it
    /// lost.
    pub(crate) async fn end_quietly(&self) {
        if let Some(audit) = &self.audit {
            audit.if_effects(self.begun).await;
        }
    }

    /// The record of the call's effects, when the audit is kept.
    pub(crate) fn effects(&self) -> Option<Arc<EffectLog>> {
        self.audit.as_ref().map(|audit| audit.log.clone())
    }
}

/// The plugin that serves the `kind` `name` in `catalog`, if any.
fn plugin_of(catalog: &Catalog, kind: Kind, name: &str) -> Option<Arc<str>> {
    let index = match kind {
        Kind::Tool => catalog.tool(name).map(|entry| entry.plugin),
        Kind::Prompt => catalog.prompt(name).map(|entry| entry.plugin),
        Kind::Resource => catalog.resource_owner(name),
    }?;
    catalog.plugins().get(index).map(|plugin| plugin.name.clone())
}
