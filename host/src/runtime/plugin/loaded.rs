//! A loaded plugin: its compiled, linked component, what it offers, and the operator's grants
//! and limits for it. `Plugin::invoke` runs one `Invocation` of its exports in a fresh
//! sandbox, once a concurrency slot is free, and holds the output limit over the result.

use std::path::PathBuf;
use std::sync::Arc;

use tracing::Instrument;
use wasmtime::component::InstancePre;

use super::exports::Exports;
use crate::runtime::engine::bindings::{prompts, resources, tools};
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::policy::Policy;
use crate::runtime::grants::requested::RequestedPolicy;
use crate::runtime::grants::{principal_dirs, roots};
use crate::runtime::plugin::invoke::Invocation;
use crate::runtime::sandbox::budget::{Emission, SHARED_OUTPUT_BYTES, take_shared};
use crate::runtime::sandbox::{CallError, CallScope, HostState, Prepared, run_call};

/// A compiled, linked plugin and what it offers.
pub struct Plugin {
    /// The plugin's name (from its file name), used in logs and errors.
    pub name: Arc<str>,
    /// Prepended to its tool, template and prompt names: `name.` unless configured.
    pub prefix: String,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// A digest of the file's bytes: what hot reload compares to tell a changed plugin from
    /// the same one loaded again.
    pub fingerprint: u64,
    /// `sha256:` and the hex SHA-256 of the component's bytes: what the audit names it by.
    pub digest: Arc<str>,
    pub(crate) pre: InstancePre<HostState>,
    /// The `mcpbox:plugin` interfaces it exports.
    pub exports: Exports,
    /// Its tools (after the operator's selection).
    pub tools: Vec<ToolInfo>,
    /// Its resource templates.
    pub templates: Vec<resources::ResourceTemplate>,
    /// Its prompts.
    pub prompts: Vec<prompts::Prompt>,
    /// The limits every call of this plugin runs under.
    pub limits: Limits,
    /// At most this many calls of the plugin run at once; the others wait (within their
    /// time limit) for a slot.
    pub slots: Option<Arc<tokio::sync::Semaphore>>,
    /// What the operator grants it (directories, network, environment).
    pub policy: Arc<Policy>,
    /// What it asks for in its own metadata, if anything (never granted by itself).
    pub requested: Option<RequestedPolicy>,
    /// Which of its tools may run as tasks (the operator's `[plugin.NAME.tasks]`).
    pub tasks: Option<crate::runtime::grants::plugin_config::TaskPolicy>,
    /// Its resource templates the operator gives their URIs where another plugin's template
    /// could match them too (`[plugin.NAME] owns`; never the plugin's own word).
    pub owns: Vec<String>,
    /// Its tools whose every call needs the person's yes (`[plugin.NAME] approve`).
    pub approve: crate::runtime::grants::approve::Approve,
    /// Whether what it serves is pinned (`[plugin.NAME] pin`).
    pub pin: bool,
    /// What it says beyond its descriptors (WIT 0.1.3 `metadata`): `_meta`, icons, its
    /// instructions and skills, its apps.
    pub metadata: Arc<super::metadata::PluginMetadata>,
    /// For a plain component (exported functions, no `mcpbox:plugin` world): the function
    /// behind each tool, by the tool's local name.
    pub(crate) plain: Vec<(String, crate::runtime::plugin::plain::PlainFunction)>,
    /// Its instances made ahead of calls (`None`: each call instantiates its own).
    pub(crate) prepared: Option<Arc<Prepared>>,
}

impl Plugin {
    /// Runs `invocation` in a fresh instance of this plugin under its limits and policy, once
    /// a slot is free. The result is charged to the budget that everything the call emitted
    /// while it ran was charged to, then takes its share of the output all calls may hold.
    pub(crate) async fn invoke<I: Invocation>(&self, scope: CallScope, invocation: I) -> Result<I::Output, CallError> {
        self.invoke_sized(scope, invocation).await.map(|(output, _)| output)
    }

    /// [`Plugin::invoke`], with the output's size as charged (its JSON on the wire), for the
    /// metrics that count it without measuring it again.
    pub(crate) async fn invoke_sized<I: Invocation>(
        &self,
        scope: CallScope,
        invocation: I,
    ) -> Result<(I::Output, usize), CallError> {
        // The guest call's span, a child of the request's (mcp/call/observe.rs): its limits, and
        // what it took of them.
        let span = tracing::info_span!(
            "guest call",
            "otel.name" = %format_args!("guest {}", self.name),
            "mcpbox.plugin" = %self.name,
            "mcpbox.guest.time_limit_ms" = scope.timeout.unwrap_or(self.limits.timeout).as_millis() as i64,
            "mcpbox.guest.memory_limit_bytes" = self.limits.memory_bytes as i64,
            "mcpbox.guest.memory_peak_bytes" = tracing::field::Empty,
            "mcpbox.guest.output_bytes" = tracing::field::Empty,
            "mcpbox.guest.duration_ms" = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
        );
        let started = std::time::Instant::now();
        let result = self.invoke_in_span(scope, invocation, &span).instrument(span.clone()).await;
        span.record("mcpbox.guest.duration_ms", started.elapsed().as_secs_f64() * 1000.0);
        if let Err(error) = &result {
            span.record("error.type", error.kind());
        }
        result
    }

    async fn invoke_in_span<I: Invocation>(
        &self,
        mut scope: CallScope,
        invocation: I,
        span: &tracing::Span,
    ) -> Result<(I::Output, usize), CallError> {
        let _slot = match self.slots.as_ref().filter(|_| !crate::switched_off!("plugin.concurrency-slots")) {
            Some(slots) => {
                let wait = tokio::time::timeout(self.limits.timeout, slots.clone().acquire_owned());
                tokio::select! {
                    permit = wait => match permit {
                        Ok(Ok(permit)) => Some(permit),
                        _ => return Err(CallError::Busy { plugin: self.name.clone(), waited: self.limits.timeout }),
                    },
                    () = scope.cancel.cancelled() => return Err(CallError::Cancelled { plugin: self.name.clone() }),
                }
            }
            None => None,
        };
        scope.grants = self.grants(&scope)?;
        if !self.policy.caller && !crate::switched_off!("plugin.caller-only-if-allowed") {
            scope.caller = None;
        }
        let hold = scope.output_hold.clone();
        let exports = self.exports.clone();
        // `_refill` makes the next instance ahead when this call ends (or now, see `take`).
        let (ready, _refill) = self.prepared.as_ref().map(Prepared::take).unzip();
        let ready = ready.flatten();
        if ready.is_some() {
            tracing::debug!(plugin = %self.name, "the call runs in an instance made ahead of it");
        }
        let (value, mut budget) =
            run_call(&self.name, &self.pre, self.limits, &self.policy, scope, ready, move |store, instance| {
                invocation.call(exports, store, instance)
            })
            .await?;
        // The result joins what the call emitted while it ran, in the same budget.
        let size = I::size(&value);
        let charged = budget.charge(Emission::Result, size);
        span.record("mcpbox.guest.output_bytes", budget.used() as i64);
        if charged.is_err() && !crate::switched_off!("output.result-limit") {
            return Err(CallError::OutputTooLarge {
                plugin: self.name.clone(),
                size: budget.used(),
                limit: budget.limit(),
            });
        }
        let Some(share) = take_shared(size) else {
            return Err(CallError::OutputBusy { plugin: self.name.clone(), size, limit: SHARED_OUTPUT_BYTES });
        };
        if let Some(hold) = hold {
            hold.keep(share);
        }
        Ok((value, size))
    }

    /// The directories this plugin's call sees: the shared roots the session grants (if the
    /// operator lets this plugin see them), then its own directories, narrowed to the client's
    /// roots where the operator said so.
    fn grants(&self, scope: &CallScope) -> Result<Arc<[roots::Grant]>, CallError> {
        let policy = &self.policy;
        let grants: Arc<[roots::Grant]> = if policy.dirs.is_empty() {
            if policy.shared_roots { scope.grants.clone() } else { Arc::from([]) }
        } else {
            let shared: &[roots::Grant] = if policy.shared_roots { &scope.grants } else { &[] };
            let grants = roots::plugin_grants(shared, &policy.dirs, scope.client_roots.as_deref());
            // Each per-principal base becomes the call's principal's own directory, or goes.
            principal_dirs::resolve(&grants, scope.principal_dir.as_deref())
                .map_err(|e| CallError::Failed { plugin: self.name.clone(), message: format!("{e:#}") })?
                .into()
        };
        Ok(if policy.host_paths { roots::at_host_paths(&grants).into() } else { grants })
    }

    /// What it lists as resources in `scope` (for `mcpbox inspect`; the catalog lists every
    /// plugin's at once).
    pub(crate) async fn list_resources(&self, scope: CallScope) -> Result<Vec<resources::Resource>, CallError> {
        self.invoke(scope, crate::runtime::plugin::invoke::ListResources).await
    }

    /// Keeps up to `count` instances made ahead of its calls, from its first call on (see
    /// [`Prepared`]); 0 turns them off.
    pub(crate) fn prepare(&mut self, count: usize) {
        self.prepared = (count > 0)
            .then(|| Prepared::new(self.name.clone(), self.pre.clone(), self.limits, self.policy.clone(), count));
    }

    /// The component, for `mcpbox inspect`.
    pub(crate) fn component(&self) -> &wasmtime::component::Component {
        self.pre.component()
    }
}

/// A tool with its schemas parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// What the plugin said, with the plugin's own name.
    pub descriptor: tools::Tool,
    /// The input schema, a JSON object with `"type": "object"`.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    /// The output schema, if the tool declares one.
    pub output_schema: Option<serde_json::Map<String, serde_json::Value>>,
    /// The output schema compiled, to check each result's structured content.
    pub(crate) output_check: Option<OutputCheck>,
}

/// A compiled output schema. Two are equal when their schemas are (which `ToolInfo` compares
/// beside it), so it never makes a reloaded tool look changed.
#[derive(Clone)]
pub(crate) struct OutputCheck(pub(crate) Arc<jsonschema::Validator>);

impl PartialEq for OutputCheck {
    fn eq(&self, _: &OutputCheck) -> bool {
        true
    }
}

impl std::fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputCheck")
    }
}

impl ToolInfo {
    /// Why `result` breaks the tool's output schema, if it does (MCP 2025-06-18 server/tools
    /// §Output schema: a tool that declares one MUST return conforming structured content).
    /// Error results are the tool's message to the model and are not checked.
    pub(crate) fn output_problem(&self, result: &tools::CallResult) -> Option<String> {
        let check = self.output_check.as_ref()?;
        if result.is_error || crate::switched_off!("descriptors.output-schema") {
            return None;
        }
        let Some(text) = &result.structured_content else {
            return Some("declares an output schema but returned no structured content".to_owned());
        };
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => return Some(format!("returned structured content that is not JSON: {e}")),
        };
        let problem = check.0.iter_errors(&value).next()?;
        let at = problem.instance_path().to_string();
        let at = if at.is_empty() { String::new() } else { format!(" at `{at}`") };
        Some(format!("returned structured content that does not match its output schema{at}: {problem}"))
    }
}
