//! What the operator's config says about one plugin (`[plugin.NAME]` in `mcpbox.toml`), in
//! the form the loader uses: names, tool selection, limits, concurrency and the [`Policy`].

use std::collections::HashMap;
use std::time::Duration;

use crate::runtime::grants::approve::Approve;
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::policy::Policy;

/// What the operator's config says about one plugin.
#[derive(Debug, Clone)]
pub struct PluginConfig {
    /// Replaces `<name>.` before its tool, prompt and template names.
    pub prefix: Option<String>,
    /// Serve only these tools (by the plugin's own names).
    pub tools: Option<Vec<String>>,
    /// Never serve these tools.
    pub exclude_tools: Vec<String>,
    /// Replaces the global time limit for this plugin.
    pub timeout: Option<Duration>,
    /// Replaces the global memory limit for this plugin.
    pub memory_bytes: Option<usize>,
    /// Replaces the global output limit for this plugin.
    pub output_bytes: Option<usize>,
    /// Replaces the write limit.
    pub write_bytes: Option<u64>,
    /// At most this many calls at once.
    pub max_concurrency: Option<usize>,
    /// Instances made ahead of calls (default [`DEFAULT_PREPARED`](crate::runtime::grants::limits::DEFAULT_PREPARED)).
    pub prepared: Option<usize>,
    /// Directories, network, environment.
    pub policy: Policy,
    /// Which tools may run as tasks (`[plugin.NAME.tasks]`); `None`: none.
    pub tasks: Option<TaskPolicy>,
    /// Its resource templates that own their URIs where another plugin's template could match
    /// them too (`[plugin.NAME] owns`); a contested template is otherwise served by neither.
    pub owns: Vec<String>,
    /// Its tools whose every call needs the person's yes (`[plugin.NAME] approve`).
    pub approve: Approve,
    /// Whether what it serves is pinned (`[plugin.NAME] pin`, default true).
    pub pin: bool,
}

/// How the operator lets a plugin's tools run as tasks (the 2026-07-28 tasks extension), by
/// the plugin's own tool names, `*` for the others: a task outlives the call time limit (up to
/// the task deadline) and the client's connection, so it is granted, never assumed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPolicy {
    /// Tool name (or `*`) to how it may run as a task.
    pub tools: Vec<(String, ToolTasks)>,
}

/// How one tool may run as a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolTasks {
    /// Only as a task: a request that cannot receive one is refused with MCP's
    /// MissingRequiredClientCapability error.
    pub required: bool,
    /// A call still running after this long becomes a task (zero: at once); without it, only
    /// the plugin's `detach` makes one.
    pub after: Option<Duration>,
}

impl TaskPolicy {
    /// How the tool the plugin calls `tool` may run as a task, if at all: its own entry, else
    /// the `*` entry.
    pub fn for_tool(&self, tool: &str) -> Option<ToolTasks> {
        let entry = |name: &str| self.tools.iter().find(|(t, _)| t == name).map(|(_, tasks)| *tasks);
        entry(tool).or_else(|| entry("*")).or_else(|| {
            crate::switched_off!("tasks.operator-grants").then_some(ToolTasks { required: false, after: None })
        })
    }
}

impl Default for PluginConfig {
    fn default() -> Self {
        PluginConfig {
            prefix: None,
            tools: None,
            exclude_tools: Vec::new(),
            timeout: None,
            memory_bytes: None,
            output_bytes: None,
            write_bytes: None,
            max_concurrency: None,
            prepared: None,
            policy: Policy::default(),
            tasks: None,
            owns: Vec::new(),
            approve: Approve::None,
            pin: true,
        }
    }
}

impl PluginConfig {
    /// This plugin's limits: its own where set, else `global`.
    pub fn limits(&self, global: Limits) -> Limits {
        Limits {
            timeout: self.timeout.unwrap_or(global.timeout),
            memory_bytes: self.memory_bytes.unwrap_or(global.memory_bytes),
            output_bytes: self.output_bytes.unwrap_or(global.output_bytes),
            write_bytes: self.write_bytes.unwrap_or(global.write_bytes),
        }
    }

    /// The prefix of the plugin called `name`: configured, or `name.`.
    pub(crate) fn prefix_for(&self, name: &str) -> String {
        self.prefix.clone().unwrap_or_else(|| format!("{name}."))
    }
}

/// Every plugin's config, by plugin name.
pub type PluginConfigs = HashMap<String, PluginConfig>;
