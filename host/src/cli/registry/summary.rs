//! What an operator should see of a registry plugin before serving it: its tools, prompts and
//! the grants it asks for, as `mcpbox add` prints them and `mcpbox update` compares them.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::config::Settings;
use crate::runtime::catalog::{self, Pins};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::grants::requested::{FsAccess, RequestedPolicy};
use crate::runtime::plugin_name;

/// One version of a plugin, as far as its users and its operator care.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Summary {
    pub tools: Vec<String>,
    pub prompts: Vec<String>,
    /// The grants it asks for, one `(what, value)` row each; the rows are always the same, in
    /// the same order, so that two versions compare row by row.
    pub requested: Vec<(&'static str, String)>,
    /// Its definitions that differ from their pins, rendered (when asked against pins).
    pub unpinned: Vec<String>,
}

impl Summary {
    /// Loads the plugin at `file` (compiling it into the cache, which serving then finds) under
    /// the config's grants for it.
    pub(super) async fn of(
        compiler: &Compiler,
        settings: &Settings,
        file: &Path,
        pins: Option<&Pins>,
    ) -> Result<Summary> {
        let config = settings.plugin_configs.get(&plugin_name(file)).cloned().unwrap_or_default();
        let limits = config.limits(settings.limits);
        let (plugin, _) = catalog::load_one(compiler, file, limits, config.policy).await?;
        let prefixed = |name: &str| format!("{}{name}", plugin.prefix);
        Ok(Summary {
            tools: plugin.tools.iter().map(|tool| prefixed(&tool.descriptor.name)).collect(),
            prompts: plugin.prompts.iter().map(|prompt| prefixed(&prompt.name)).collect(),
            requested: requested_rows(plugin.requested.as_ref()),
            unpinned: pins
                .map(|pins| pins.pending(&plugin).iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
        })
    }

    /// The summary as indented lines.
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "  tools: {}", list(&self.tools));
        if !self.prompts.is_empty() {
            let _ = writeln!(out, "  prompts: {}", list(&self.prompts));
        }
        let asked: Vec<_> = self.requested.iter().filter(|(_, value)| value != "-").collect();
        if asked.is_empty() {
            let _ = writeln!(out, "  requests: nothing beyond the defaults");
        } else {
            let _ = writeln!(out, "  requests (only your config grants them):");
            for (what, value) in asked {
                let _ = writeln!(out, "    {what}: {value}");
            }
        }
        out
    }

    /// What changed from `before` to `self`, as indented lines (empty if nothing did).
    pub(super) fn changes_from(&self, before: &Summary) -> String {
        let mut out = String::new();
        for (what, old, new) in [("tools", &before.tools, &self.tools), ("prompts", &before.prompts, &self.prompts)] {
            let added: Vec<&String> = new.iter().filter(|name| !old.contains(name)).collect();
            let removed: Vec<&String> = old.iter().filter(|name| !new.contains(name)).collect();
            if !added.is_empty() || !removed.is_empty() {
                let signed = added.iter().map(|n| format!("+{n}")).chain(removed.iter().map(|n| format!("-{n}")));
                let _ = writeln!(out, "  {what}: {}", signed.collect::<Vec<_>>().join(", "));
            }
        }
        for ((what, old), (_, new)) in before.requested.iter().zip(&self.requested) {
            if old != new {
                let _ = writeln!(out, "  requests {what}: {old} → {new}");
            }
        }
        out
    }
}

/// The requested policy as rows (`-` where it asks for nothing).
fn requested_rows(requested: Option<&RequestedPolicy>) -> Vec<(&'static str, String)> {
    let requested = requested.cloned().unwrap_or_default();
    let or_dash = |values: &[String]| if values.is_empty() { "-".to_owned() } else { values.join(", ") };
    vec![
        ("network", or_dash(&requested.network)),
        ("env", or_dash(&requested.env)),
        (
            "filesystem",
            match requested.filesystem {
                None => "-".to_owned(),
                Some(FsAccess::None) => "none".to_owned(),
                Some(FsAccess::ReadOnly) => "read-only".to_owned(),
                Some(FsAccess::ReadWrite) => "read-write".to_owned(),
            },
        ),
        ("timeout", requested.timeout_ms.map_or("-".to_owned(), |ms| format!("{ms} ms"))),
        ("memory", requested.memory_mib.map_or("-".to_owned(), |mib| format!("{mib} MiB"))),
        ("reason", requested.reason.unwrap_or_else(|| "-".to_owned())),
    ]
}

fn list(names: &[String]) -> String {
    if names.is_empty() { "-".to_owned() } else { names.join(", ") }
}
