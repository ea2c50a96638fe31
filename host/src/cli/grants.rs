//! What the operator grants one plugin, as one typed value (`mcpbox inspect --json` prints it)
//! and one renderer in words, short for `mcpbox check`'s table and long for `mcpbox inspect`.

use serde::Serialize;

use crate::runtime::Limits;
use crate::runtime::grants::plugin_config::{TaskPolicy, ToolTasks};
use crate::runtime::grants::policy::Policy;

/// What the operator grants one plugin.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Granted {
    /// Whether a config was given (otherwise these are the defaults).
    pub(crate) configured: bool,
    pub(crate) shared_roots: bool,
    pub(crate) dirs: Vec<GrantedDir>,
    pub(crate) network: Option<GrantedNetwork>,
    /// Names only: values may be secrets.
    pub(crate) env: Vec<String>,
    /// The credentials set on its requests: where, and from which secrets, never a value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) credentials: Vec<String>,
    pub(crate) stub_ungranted: bool,
    pub(crate) limits: GrantedLimits,
    /// The tools that may run as tasks, each with when (`[plugin.NAME.tasks.TOOL]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tasks: Vec<String>,
    /// Told who a call is made for (`[plugin.NAME] caller`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) caller: bool,
    /// The served tools it may call through the host (`may_call`), as the operator wrote them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) may_call: Vec<String>,
    /// What the plugins of those tools are granted, `plugin: grants`: its reach in data too,
    /// since their results come back to it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) through_callees: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrantedDir {
    path: String,
    name: Option<String>,
    writable: bool,
    within_client_roots: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrantedNetwork {
    allow: Vec<String>,
    allow_private: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrantedLimits {
    pub(crate) timeout_ms: u128,
    pub(crate) memory_mib: usize,
    pub(crate) max_output_bytes: usize,
    pub(crate) max_concurrency: Option<usize>,
}

/// One tool's task grant in words: `slow_compute (after 2000 ms)`, `job (at once, required)`.
fn task_grant(tool: &str, when: ToolTasks) -> String {
    let start = match when.after {
        Some(after) if after.is_zero() => "at once".to_owned(),
        Some(after) => format!("after {} ms", after.as_millis()),
        None => "when it detaches".to_owned(),
    };
    format!("{tool} ({start}{})", if when.required { ", required" } else { "" })
}

/// How many words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// A table cell (`mcpbox check`).
    Short,
    /// A line of its own (`mcpbox inspect`).
    Long,
}

impl Granted {
    pub(crate) fn new(
        policy: &Policy,
        limits: Limits,
        max_concurrency: Option<usize>,
        tasks: Option<&TaskPolicy>,
        configured: bool,
    ) -> Granted {
        Granted {
            configured,
            shared_roots: policy.shared_roots,
            dirs: policy
                .dirs
                .iter()
                .map(|d| GrantedDir {
                    path: match d.dir.per_principal {
                        true => d.dir.path.join("{sub}").display().to_string(),
                        false => d.dir.path.display().to_string(),
                    },
                    name: d.dir.name.clone(),
                    writable: d.dir.writable,
                    within_client_roots: d.within_client_roots,
                })
                .collect(),
            network: policy.network.as_ref().map(|n| GrantedNetwork {
                allow: n.allow.iter().map(ToString::to_string).collect(),
                allow_private: n.allow_private,
            }),
            env: policy.env.iter().map(|(name, _)| name.clone()).collect(),
            credentials: policy
                .network
                .iter()
                .flat_map(|n| n.credentials.iter().map(|credential| credential.describe()))
                .collect(),
            stub_ungranted: policy.stub_ungranted,
            limits: GrantedLimits {
                timeout_ms: limits.timeout.as_millis(),
                memory_mib: limits.memory_bytes >> 20,
                max_output_bytes: limits.output_bytes,
                max_concurrency,
            },
            tasks: tasks
                .map(|t| t.tools.iter().map(|(tool, when)| task_grant(tool, *when)).collect())
                .unwrap_or_default(),
            caller: policy.caller,
            may_call: policy.may_call.patterns().to_vec(),
            through_callees: Vec::new(),
        }
    }

    /// With what the plugins it may call are granted (`plugin: grants` each).
    pub(crate) fn with_callees(mut self, callees: Vec<String>) -> Granted {
        self.through_callees = callees;
        self
    }

    /// `may call ...` and what it reaches through its callees, if it may call any.
    pub(crate) fn composition(&self) -> Option<String> {
        if self.may_call.is_empty() {
            return None;
        }
        let through = match self.through_callees.as_slice() {
            [] => String::new(),
            callees => format!(", reaching through them {}", callees.join(" | ")),
        };
        Some(format!("may call {}{through}", self.may_call.join(" ")))
    }

    /// The directories: `shared` stands for the shared roots ("" leaves them out), then the
    /// plugin's own.
    pub(crate) fn filesystem(&self, shared: &str, style: Style) -> Vec<String> {
        let mut parts = Vec::new();
        if self.shared_roots && !shared.is_empty() {
            parts.push(shared.to_owned());
        }
        for dir in &self.dirs {
            let access = match (dir.writable, style) {
                (true, Style::Short) => "rw",
                (false, Style::Short) => "ro",
                (true, Style::Long) => "read-write",
                (false, Style::Long) => "read-only",
            };
            let within = if dir.within_client_roots { ", within client roots" } else { "" };
            parts.push(format!("{} ({access}{within})", dir.path));
        }
        parts
    }

    /// The network grant, if any (or the stub that refuses).
    pub(crate) fn network(&self, style: Style) -> Option<String> {
        match (&self.network, style) {
            (Some(n), Style::Short) => {
                Some(format!("{}{}", n.allow.join(" "), if n.allow_private { " (private ok)" } else { "" }))
            }
            (Some(n), Style::Long) => Some(format!(
                "{}{}",
                n.allow.join(", "),
                if n.allow_private { " (private addresses allowed)" } else { "" }
            )),
            (None, Style::Short) if self.stub_ungranted => Some("stub (refuses)".to_owned()),
            (None, Style::Long) if self.stub_ungranted => {
                Some("none (wasi:http linked as a stub that refuses)".to_owned())
            }
            (None, _) => None,
        }
    }

    /// One cell: `shared; dirs; net ...; env ...`, or `none`.
    pub(crate) fn summary(&self, shared: &str) -> String {
        let mut parts = self.filesystem(shared, Style::Short);
        if let Some(network) = self.network(Style::Short) {
            parts.push(format!("net {network}"));
        }
        if !self.env.is_empty() {
            parts.push(format!("env {}", self.env.join(" ")));
        }
        if !self.credentials.is_empty() {
            parts.push(format!("credentials: {}", self.credentials.join(", ")));
        }
        if !self.tasks.is_empty() {
            parts.push(format!("tasks {}", self.tasks.join(", ")));
        }
        if self.caller {
            parts.push("told who calls".to_owned());
        }
        parts.extend(self.composition());
        if parts.is_empty() { "none".into() } else { parts.join("; ") }
    }
}
