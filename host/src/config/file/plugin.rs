//! `[plugin.NAME]` and the tables under it (`dirs`, `tasks`, `approve`), and `[approvals]`:
//! one plugin's names, limits and grants as the config file writes them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::FileCredential;

/// `[plugin.NAME]`: one plugin's names, limits and grants.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilePlugin {
    /// Replaces `<name>.` before the plugin's tool, prompt and template names; may be "".
    pub(crate) prefix: Option<String>,
    /// Serve only these of the plugin's tools.
    pub(crate) tools: Option<Vec<String>>,
    /// Never serve these of the plugin's tools.
    pub(crate) exclude_tools: Option<Vec<String>>,
    /// This plugin's limits, replacing those of [limits].
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) memory_mib: Option<Spanned<u64>>,
    pub(crate) max_output_mib: Option<Spanned<u64>>,
    pub(crate) max_write_mib: Option<Spanned<u64>>,
    /// At most this many calls of the plugin at once (default: no limit).
    pub(crate) max_concurrency: Option<usize>,
    /// Instances kept made ahead of its calls (0: none).
    pub(crate) prepared: Option<Spanned<u64>>,
    /// Command-line arguments the plugin sees after its program name (a server built from a
    /// command-line program, `mcpbox build`).
    pub(crate) args: Option<Vec<String>>,
    /// Environment variables the plugin sees, with their values.
    pub(crate) env: Option<BTreeMap<String, String>>,
    /// Environment variables the plugin sees, with the values mcpbox itself was started with.
    pub(crate) env_from_host: Option<Vec<Spanned<String>>>,
    /// Whether it sees the shared roots (`--root`, `[[roots]]`); default true.
    pub(crate) roots: Option<bool>,
    /// Directories of its own.
    #[serde(default)]
    pub(crate) dirs: Vec<FilePluginDir>,
    /// Outgoing HTTP allow-list: `https://api.example.com`, `https://*.example.com:8443`.
    pub(crate) network: Option<Vec<Spanned<String>>>,
    /// Let allowed hosts resolve to loopback, private and link-local addresses too.
    pub(crate) allow_private_network: Option<bool>,
    /// Link imports it was not granted as stubs that deny or trap, instead of refusing to load.
    pub(crate) stub_ungranted: Option<bool>,
    /// Mount its directories at their host paths instead of `/roots/<name>`.
    pub(crate) host_paths: Option<bool>,
    /// Tell it who a call is made for (`host.caller`; default false).
    pub(crate) caller: Option<bool>,
    /// The browser permissions its MCP Apps may ask for (docs/apps.md).
    #[serde(default)]
    pub(crate) ui_permissions: Vec<Spanned<String>>,
    /// The served tools it may call through the host (docs/composition.md).
    pub(crate) may_call: Option<Spanned<Vec<String>>>,
    /// Its resource templates that get their URIs when another plugin's template could match
    /// them too (otherwise neither serves them).
    pub(crate) owns: Option<Vec<String>>,
    /// Which tools may run as tasks (the 2026-07-28 tasks extension): `[plugin.NAME.tasks.TOOL]`,
    /// `TOOL` a tool's own name or `*` for the others.
    pub(crate) tasks: Option<BTreeMap<String, FileTasks>>,
    /// `[[plugin.NAME.credentials]]`: values set on its requests to their origins.
    #[serde(default)]
    pub(crate) credentials: Vec<FileCredential>,
    /// Tools whose every call needs the person's yes (`true`: all of them; names, a trailing
    /// `*` matching any rest).
    pub(crate) approve: Option<Spanned<FileApprove>>,
    /// Pin what its tools, prompts and templates say (default true; false for a development
    /// folder: a changed definition serves at once).
    pub(crate) pin: Option<bool>,
}

/// `[plugin.NAME] approve`: `true`, `false`, or tool names.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum FileApprove {
    All(bool),
    Tools(Vec<String>),
}

/// `[approvals]`: how the person is asked before a call of a tool that needs their yes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileApprovals {
    /// How long a legacy session's question waits for the answer (default 120000).
    pub(crate) timeout_ms: Option<Spanned<u64>>,
}

/// `[plugin.NAME.tasks.TOOL]`: the tool may run as a task, and when it becomes one.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileTasks {
    /// Served only as a task.
    #[serde(default)]
    pub(crate) required: bool,
    /// A call still running after this many milliseconds becomes a task (0: at once); without
    /// it, only the plugin's `detach` makes one.
    pub(crate) after_ms: Option<Spanned<u64>>,
}

/// `[[plugin.NAME.dirs]]`: a directory of one plugin's own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilePluginDir {
    pub(crate) path: Spanned<PathBuf>,
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) writable: bool,
    /// Grant only the parts inside the client's roots, when the client has roots.
    #[serde(default)]
    pub(crate) within_client_roots: bool,
    /// Create the directory (and its parents) at start-up if it is missing: a plugin's own
    /// data directory, such as the `memory` plugin's, on a fresh machine.
    #[serde(default)]
    pub(crate) create: bool,
    /// Write budgets of a writable directory: its tree's size and entries.
    pub(crate) max_mib: Option<Spanned<u64>>,
    pub(crate) max_files: Option<Spanned<u64>>,
}
