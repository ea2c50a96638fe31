//! `mcpbox check`: one row per plugin file (loaded or not), as a plain-text table.

use crate::catalog::{Catalog, LoadProblem};
use crate::plugin::Plugin;

/// One plugin file and what became of it.
#[derive(Debug)]
pub struct Row {
    pub plugin: String,
    pub file: String,
    pub tools: String,
    pub resources: String,
    pub prompts: String,
    pub grants: String,
    pub problem: String,
}

/// What the policy grants a plugin, in a few words: directories (the shared roots, given as
/// `shared`, and its own), network hosts, environment variable names.
fn grants(plugin: &Plugin, shared: &str) -> String {
    let policy = &plugin.policy;
    let mut parts = Vec::new();
    if policy.shared_roots && !shared.is_empty() {
        parts.push(shared.to_owned());
    }
    for dir in &policy.dirs {
        parts.push(format!(
            "{} ({}{})",
            dir.dir.path.display(),
            if dir.dir.writable { "rw" } else { "ro" },
            if dir.within_client_roots { ", within client roots" } else { "" }
        ));
    }
    match &policy.network {
        Some(network) => {
            let hosts: Vec<String> = network.allow.iter().map(ToString::to_string).collect();
            parts.push(format!("net {}{}", hosts.join(" "), if network.allow_private { " (private ok)" } else { "" }));
        }
        None if policy.stub_ungranted => parts.push("net stub (refuses)".into()),
        None => {}
    }
    if !policy.env.is_empty() {
        let names: Vec<&str> = policy.env.iter().map(|(name, _)| name.as_str()).collect();
        parts.push(format!("env {}", names.join(" ")));
    }
    if parts.is_empty() { "none".into() } else { parts.join("; ") }
}

/// The rows of the table; `shared` describes the shared roots ("" if there are none).
pub fn rows(catalog: &Catalog, problems: &[LoadProblem], shared: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = catalog
        .plugins()
        .iter()
        .map(|p| Row {
            plugin: p.name.to_string(),
            file: p.path.display().to_string(),
            tools: p.tools.len().to_string(),
            resources: match (p.exports.resources.is_some(), p.templates.len()) {
                (false, _) => "-".into(),
                (true, 0) => "yes".into(),
                (true, n) => format!("yes, {n} template{}", if n == 1 { "" } else { "s" }),
            },
            prompts: p.prompts.len().to_string(),
            grants: grants(p, shared),
            problem: "-".into(),
        })
        .collect();
    for problem in problems {
        rows.push(Row {
            plugin: crate::plugin::plugin_name(&problem.path),
            file: problem.path.display().to_string(),
            tools: "-".into(),
            resources: "-".into(),
            prompts: "-".into(),
            grants: "-".into(),
            problem: format!("{:#}", problem.error).replace('\n', " "),
        });
    }
    rows.sort_by(|a, b| a.file.cmp(&b.file));
    rows
}

pub fn render(rows: &[Row]) -> String {
    let header = ["plugin", "file", "tools", "resources", "prompts", "grants", "problems"];
    let cells: Vec<[&str; 7]> = rows
        .iter()
        .map(|r| [&*r.plugin, &*r.file, &*r.tools, &*r.resources, &*r.prompts, &*r.grants, &*r.problem])
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    // The last column is free-form and not padded.
    let line = |row: &[&str; 7]| {
        let mut out = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i == 6 {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header);
    for row in &cells {
        out.push_str(&line(row));
    }
    out
}
