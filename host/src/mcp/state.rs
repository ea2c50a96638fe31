//! What every connection shares: the live catalog, the operator's directories, and the list
//! results converted to MCP types once per catalog (list requests only slice them).

use crate::audit::AuditSink;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::ErrorData as McpError;
use rmcp::model::{Prompt, ResourceTemplate, ServerCapabilities, Tool};
use serde_json::Value;

use crate::access::{Access, Principal, Vault};
use crate::config::Settings;
use crate::fleet::Fleet;
use crate::mcp::call::checks::approved::Approvals;
use crate::mcp::call::rounds::request_state::StateKeys;
use crate::mcp::call::tasks::Tasks;
use crate::mcp::server::health::Health;
use crate::mcp::wire::convert;
use crate::runtime::catalog::DefinitionKind;
use crate::runtime::grants::credentials::LinkedAccounts;
use crate::runtime::grants::roots::{self, AllowedDir, Grant};
use crate::runtime::grants::vouched::{Reach, vouch};
use crate::runtime::plugin::metadata::ItemMeta;
use crate::runtime::{Catalog, Change, LiveCatalog, LiveSkills};

/// What each plugin reaches, by index: its own grants, and for one that may call other tools
/// (`may_call`) the union with what those tools' plugins reach, through any chain of calls.
pub(crate) fn composed_reach(catalog: &Catalog, shared_writable: bool) -> Vec<Reach> {
    let plugins = catalog.plugins();
    let own: Vec<Reach> = plugins.iter().map(|plugin| Reach::of(&plugin.policy, shared_writable)).collect();
    // Which plugins each one may call, by the served names its patterns match.
    let callees: Vec<Vec<usize>> = plugins
        .iter()
        .map(|plugin| {
            let mut called: Vec<usize> = catalog
                .tools()
                .iter()
                .filter(|entry| plugin.policy.may_call.allows(&entry.name, &plugins[entry.plugin].prefix))
                .map(|entry| entry.plugin)
                .collect();
            called.sort_unstable();
            called.dedup();
            called
        })
        .collect();
    let mut reach = own;
    // A chain is at most as long as there are plugins.
    for _ in 0..plugins.len() {
        let next: Vec<Reach> = reach
            .iter()
            .zip(&callees)
            .map(|(own, called)| own.with_callees(called.iter().map(|&c| reach[c])))
            .collect();
        if next == reach {
            break;
        }
        reach = next;
    }
    reach
}

/// The static lists of one catalog as MCP types.
pub(crate) struct Lists {
    /// What `initialize` and `server/discover` announce (asked for on every stateless request).
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// The tools some of whose parameters are bound to `Mcp-Param-*` headers (`x-mcp-header`,
    /// SEP-2243): their calls' headers are rmcp's to check.
    header_bound: BTreeSet<String>,
}

impl Lists {
    /// `shared_writable`: some shared root is writable (what the host vouches for depends on it).
    fn of(catalog: &Catalog, watching: bool, shared_writable: bool) -> Result<Lists, McpError> {
        let reach = composed_reach(catalog, shared_writable);
        let mut tools: Vec<Tool> = catalog
            .tools()
            .iter()
            .map(|e| {
                let plugin = &catalog.plugins()[e.plugin];
                let (annotations, replaced) = vouch(e.item.descriptor.annotations.as_ref(), reach[e.plugin]);
                if !replaced.is_empty() {
                    tracing::info!(
                        plugin = %plugin.name,
                        tool = %e.name,
                        "the host's annotations replace the plugin's claims, from its grants: {}",
                        replaced.join(", ")
                    );
                }
                let extra = plugin.metadata.tools.get(&e.item.descriptor.name);
                let extra = without_withheld_app(catalog, &plugin.name, extra);
                convert::tool(&e.name, &e.item, &annotations, extra.as_ref())
            })
            .collect::<Result<_, _>>()?;
        // An app-only tool whose app is withheld serves nobody until it is accepted.
        tools.retain_mut(|tool| !app_only_without_app(tool));
        Ok(Lists {
            capabilities: convert::capabilities(catalog, watching),
            header_bound: tools
                .iter()
                .filter(|tool| names_key(&tool.input_schema, "x-mcp-header"))
                .map(|tool| tool.name.to_string())
                .collect(),
            tools,
            prompts: catalog
                .prompts()
                .iter()
                .map(|e| {
                    convert::prompt(&e.name, &e.item, catalog.plugins()[e.plugin].metadata.prompts.get(&e.item.name))
                })
                .collect::<Result<_, _>>()?,
            templates: catalog
                .templates()
                .iter()
                .map(|e| {
                    let extra = catalog.plugins()[e.plugin].metadata.templates.get(&e.item.uri_template);
                    convert::resource_template(&e.name, &e.item, extra)
                })
                .collect::<Result<_, _>>()?,
        })
    }
}

impl Lists {
    /// Whether a call of tool `name` carries parameters in `Mcp-Param-*` headers.
    pub(crate) fn binds_headers(&self, name: &str) -> bool {
        self.header_bound.contains(name)
    }
}

/// Whether `key` is a key anywhere in the JSON object `object`.
fn names_key(object: &serde_json::Map<String, Value>, key: &str) -> bool {
    object.iter().any(|(k, v)| k == key || value_names_key(v, key))
}

fn value_names_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(object) => names_key(object, key),
        Value::Array(items) => items.iter().any(|item| value_names_key(item, key)),
        _ => false,
    }
}

/// What is shared by every connection.
pub struct McpState {
    live: Arc<LiveCatalog>,
    /// The directories the operator allows; clients' roots select among them.
    pub(crate) allowed: Vec<AllowedDir>,
    /// Grants of every allowed directory, for clients without roots.
    pub(crate) operator_grants: Arc<[Grant]>,
    pub(crate) page_size: usize,
    /// Plugins are watched: list changes are declared (`listChanged`) and announced.
    pub(crate) watching: bool,
    /// The lists of the catalog they were made for (weak: an old catalog is not kept alive,
    /// and its address cannot be reused while the weak reference exists).
    lists: Mutex<(Weak<Catalog>, Arc<Lists>)>,
    /// Seal and open the `requestState` of multi round-trip requests.
    pub(crate) state_keys: StateKeys,
    /// The tasks of calls that went on as tasks (2026-07-28 tasks extension).
    pub(crate) tasks: Arc<Tasks>,
    /// What authenticated principals may use (`[auth]`); `None`: no principals.
    pub(crate) access: Option<Access>,
    /// Readiness, and the fleet this replica belongs to.
    pub(crate) health: Health,
    /// Each principal's linked accounts (`[oauth_clients]`), if configured.
    pub(crate) vault: Option<Arc<Vault>>,
    /// Principals' approvals "for this session" and the approval answers calls used up.
    pub(crate) approvals: Approvals,
    /// The audit (`--audit`), if kept.
    pub(crate) audit: Option<AuditSink>,
    /// The skills served (`[[skills]]`, and those plugins ship).
    pub(crate) skills: Arc<LiveSkills>,
    /// The operator's `instructions`, if any.
    pub(crate) instructions: Option<String>,
    /// Clients see `search_tools` and `call_tool` instead of every tool (`search.rs`).
    pub(crate) tool_search: bool,
}

/// The skills `catalog`'s plugins ship, served beside the operator's; what changed since it
/// was pinned is withheld until accepted, as definitions are.
fn shipped_skills(catalog: &Catalog) -> crate::runtime::skills::Found {
    catalog
        .plugins()
        .iter()
        .flat_map(|p| p.metadata.skills.iter().map(move |skill| (p, skill)))
        .filter(|(p, (skill, _))| !catalog.withholds(&p.name, DefinitionKind::Skill, &skill.uri))
        .map(|(_, skill)| skill.clone())
        .collect()
}

/// Tells clients the resource list changed whenever the skills do (a skill's files are
/// resources).
fn announce_skill_changes(skills: &LiveSkills, live: &Arc<LiveCatalog>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    let mut changes = skills.subscribe();
    let live = Arc::downgrade(live);
    runtime.spawn(async move {
        while changes.changed().await.is_ok() {
            let Some(live) = live.upgrade() else { return };
            live.announce(Change::Resources);
        }
    });
}

impl McpState {
    /// Serves `live` as `settings` say; `failed_plugins` of those it was given did not load.
    /// Fails if the current plugins cannot be described in MCP's types.
    pub fn new(
        live: Arc<LiveCatalog>,
        settings: &Settings,
        watching: bool,
        state_keys: StateKeys,
        fleet: Option<Fleet>,
        failed_plugins: usize,
    ) -> anyhow::Result<Arc<McpState>> {
        let catalog = live.current();
        let lists = Lists::of(&catalog, watching, settings.roots.iter().any(|r| r.writable))
            .map_err(|e| anyhow::anyhow!("cannot describe the plugins: {}", e.message))?;
        let allowed = settings.roots.clone();
        let operator_grants = roots::operator_grants(&allowed).into();
        let oauth = settings.http.as_ref().and_then(|http| http.oauth.as_ref());
        let vault = settings.vault.clone().map(|options| Vault::new(options, fleet.clone())).transpose()?;
        let skills = LiveSkills::new(settings.skills.clone());
        skills.set_plugin_skills(shipped_skills(&catalog));
        if settings.watch {
            skills.watch()?;
        }
        announce_skill_changes(&skills, &live);
        let audit = match &settings.audit {
            Some(audit) => Some(AuditSink::open(audit.clone(), &settings.replica)?),
            None => None,
        };
        Ok(Arc::new(McpState {
            live,
            allowed,
            operator_grants,
            page_size: settings.page_size.max(1),
            watching,
            lists: Mutex::new((Arc::downgrade(&catalog), Arc::new(lists))),
            state_keys,
            tasks: Arc::new(Tasks::new(settings.tasks, fleet.as_ref())?),
            access: oauth.map(Access::new),
            health: Health::new(failed_plugins, fleet),
            vault,
            approvals: Approvals::new(settings.approval_timeout, settings.request_state_ttl),
            audit,
            skills,
            instructions: settings.instructions.clone(),
            tool_search: settings.tool_search,
        }))
    }

    /// The linked accounts of `principal`, for its calls' credentials.
    pub(crate) fn linked(&self, principal: Option<&Arc<Principal>>) -> Option<Arc<dyn LinkedAccounts>> {
        Some(self.vault.as_ref()?.linked(principal?))
    }

    /// The catalog served now; a request keeps the one it started with.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.live.current()
    }

    /// The live catalog, for change subscriptions and resource announcements.
    pub(crate) fn live(&self) -> &Arc<LiveCatalog> {
        &self.live
    }

    /// The lists of `catalog`, converted once. Only the catalog served now is cached and
    /// publishes its plugins' skills: a request that began before a reload gets its older
    /// catalog's lists, which stand for nothing else (the cache and the skills flipping back and
    /// forth would tell every client of changes that did not happen).
    pub(crate) fn lists(&self, catalog: &Arc<Catalog>) -> Result<Arc<Lists>, McpError> {
        let mut cached = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
        if Weak::ptr_eq(&cached.0, &Arc::downgrade(catalog)) {
            return Ok(cached.1.clone());
        }
        let lists = Arc::new(Lists::of(catalog, self.watching, self.allowed.iter().any(|r| r.writable))?);
        if Arc::ptr_eq(catalog, &self.catalog()) {
            self.skills.set_plugin_skills(shipped_skills(catalog));
            *cached = (Arc::downgrade(catalog), lists.clone());
        }
        Ok(lists)
    }

    /// Whether the client's roots can narrow anything (shared roots, or plugin directories the
    /// operator wants within them); if not, 2026-07-28 requests don't ask for them.
    pub(crate) fn roots_narrow(&self, catalog: &Catalog) -> bool {
        !self.allowed.is_empty() || catalog.narrows_to_client_roots()
    }
}

/// A tool's `_meta` and icons without its link to an app its plugin serves withheld (the HTML
/// changed since it was pinned): a withheld app is not advertised, as a changed tool is not
/// (it comes back with `mcpbox accept`).
fn without_withheld_app(catalog: &Catalog, plugin: &str, extra: Option<&ItemMeta>) -> Option<ItemMeta> {
    let mut extra = extra?.clone();
    let linked = extra.meta.as_ref().and_then(|m| m.get("ui")).and_then(|ui| ui.get("resourceUri"));
    let withheld =
        linked.and_then(Value::as_str).is_some_and(|uri| catalog.withholds(plugin, DefinitionKind::App, uri));
    if withheld
        && !crate::switched_off!("apps.withheld-not-advertised")
        && let Some(Value::Object(ui)) = extra.meta.as_mut().and_then(|m| m.get_mut("ui"))
    {
        ui.remove("resourceUri");
        // Marked, so that an app-only tool (useless without its app) is left out of the list.
        ui.insert(WITHHELD_APP.into(), Value::Bool(true));
    }
    Some(extra)
}

/// The mark [`without_withheld_app`] leaves on a tool whose app is withheld (removed before
/// the list is served).
const WITHHELD_APP: &str = "mcpbox.withheld-app";

/// Whether `tool` is meant for an app only (`_meta.ui.visibility` without "model") and its app
/// is withheld; the mark is removed from any other tool.
fn app_only_without_app(tool: &mut Tool) -> bool {
    let Some(ui) = tool.meta.as_mut().and_then(|m| m.0.get_mut("ui")).and_then(Value::as_object_mut) else {
        return false;
    };
    if ui.remove(WITHHELD_APP).is_none() {
        return false;
    }
    ui.get("visibility").and_then(Value::as_array).is_some_and(|who| !who.iter().any(|v| v == "model"))
}
