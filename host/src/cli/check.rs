//! `mcpbox check`: validate the config and every plugin without serving; one row per plugin
//! file or registry reference (loaded or not), as a plain-text table, and a non-zero exit if anything is wrong.

use anyhow::Result;

use std::path::PathBuf;

use super::grants::{Granted, Style};
use super::progress::Transfers;
use super::registry;
use crate::config::{ServeArgs, Settings};
use crate::registry::OciRef;
use crate::runtime::catalog::{FirstUse, Pins, is_plugin_file};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::plugin::Plugin;
use crate::runtime::{Catalog, LoadProblem, plugin_name};

/// `mcpbox check`.
pub(crate) async fn run(args: ServeArgs) -> Result<()> {
    let mut settings = Settings::from_args(&args)?;
    // Registry plugins are checked as serving would take them: pinned, pulled and verified.
    let pulled = registry::resolve_into(&mut settings, &Transfers::new()).await?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let pins = Pins::open(settings.pins.clone())?;
    let configs = &settings.plugin_configs;
    let (catalog, mut problems) =
        Catalog::load(&compiler, &settings.plugin_paths, configs, settings.limits, &pins, FirstUse::Report).await;
    problems
        .extend(pulled.failed.into_iter().map(|u| LoadProblem { path: PathBuf::from(u.reference), error: u.error }));
    let shared = settings
        .roots
        .iter()
        .map(|r| format!("{}{}", r.path.display(), if r.writable { " (rw)" } else { " (ro)" }))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = rows(&catalog, &problems, &shared);
    print!("{}", render(&rows));
    print_withheld(&catalog, &pins);
    let contested = rows.iter().filter(|r| r.contested).count();
    if problems.is_empty() && contested == 0 && !rows.is_empty() {
        println!("\nok: {} plugins, {} tools", catalog.plugins().len(), catalog.tools().len());
        Ok(())
    } else if rows.is_empty() {
        anyhow::bail!("no plugin to check: give plugin paths or a config that lists some")
    } else {
        anyhow::bail!("{} of {} plugins have problems", problems.len() + contested, rows.len())
    }
}

/// Every withheld definition with its diff, and how to accept it.
fn print_withheld(catalog: &Catalog, pins: &Pins) {
    let withheld = catalog.withheld();
    if withheld.is_empty() {
        return;
    }
    let file = pins.path().map_or_else(|| "memory".to_owned(), |p| p.display().to_string());
    println!("\nwithheld: {} definitions differ from their pins in {file}", withheld.len());
    for item in withheld {
        print!("\n{item}");
    }
    let mut plugins: Vec<&str> = withheld.iter().map(|w| w.plugin.as_str()).collect();
    plugins.dedup();
    println!("\nserve them with `mcpbox accept {}` (same config and paths)", plugins.join(" "));
}

/// One plugin file and what became of it.
#[derive(Debug)]
struct Row {
    plugin: String,
    file: String,
    tools: String,
    resources: String,
    prompts: String,
    grants: String,
    problem: String,
    /// Loaded, but something it claims another plugin claims too, unsettled.
    contested: bool,
}

/// The rows of the table; `shared` describes the shared roots ("" if there are none).
fn rows(catalog: &Catalog, problems: &[LoadProblem], shared: &str) -> Vec<Row> {
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
            grants: Granted::new(&p.policy, p.limits, None, p.tasks.as_ref(), true)
                .with_callees(callees(catalog, p, shared))
                .summary(shared),
            problem: "-".into(),
            contested: false,
        })
        .collect();
    // What another plugin claims too: withheld, and a problem until the operator settles it.
    for (row, plugin) in rows.iter_mut().zip(catalog.plugins()) {
        let withheld: Vec<_> = catalog.contests().iter().filter(|c| c.plugin == plugin.name).collect();
        row.contested = withheld.iter().any(|c| c.is_open());
        let mut said: Vec<String> = withheld.iter().map(ToString::to_string).collect();
        let changed: Vec<String> = catalog
            .withheld()
            .iter()
            .filter(|w| *w.plugin == *plugin.name)
            .map(|w| format!("{} `{}`", w.kind, w.name))
            .collect();
        if !changed.is_empty() {
            // Withheld until accepted: a problem, like a contest, until the operator decides.
            row.contested = true;
            said.push(format!("withheld, changed since pinned: {} (diff below)", changed.join(", ")));
        }
        if !said.is_empty() {
            row.problem = said.join("; ");
        }
    }
    for problem in problems {
        rows.push(Row {
            // A path that is no plugin file (a missing folder) names no plugin.
            plugin: match problem.path.to_str().map(OciRef::parse) {
                Some(Ok(reference)) => reference.plugin_name(),
                _ if is_plugin_file(&problem.path) => plugin_name(&problem.path),
                _ => "-".into(),
            },
            file: problem.path.display().to_string(),
            tools: "-".into(),
            resources: "-".into(),
            prompts: "-".into(),
            grants: "-".into(),
            problem: format!("{:#}", problem.error).replace('\n', " "),
            contested: false,
        });
    }
    rows.sort_by(|a, b| a.file.cmp(&b.file));
    rows
}

/// What the plugins whose tools `plugin` may call are granted, `name: grants` each: a
/// composer's reach in data is its own and theirs (SECURITY.md, "Other tools").
fn callees(catalog: &Catalog, plugin: &Plugin, shared: &str) -> Vec<String> {
    let mut called: Vec<usize> = catalog
        .tools()
        .iter()
        .filter(|entry| plugin.policy.may_call.allows(&entry.name, &catalog.plugins()[entry.plugin].prefix))
        .map(|entry| entry.plugin)
        .collect();
    called.sort_unstable();
    called.dedup();
    called
        .into_iter()
        .filter_map(|index| catalog.plugins().get(index))
        .filter(|callee| callee.name != plugin.name)
        .map(|callee| {
            let granted = Granted::new(&callee.policy, callee.limits, None, None, true);
            let mut parts = granted.filesystem(shared, Style::Short);
            parts.extend(granted.network(Style::Short).map(|network| format!("net {network}")));
            let grants = if parts.is_empty() { "none".to_owned() } else { parts.join(", ") };
            format!("{}: {grants}", callee.name)
        })
        .collect()
}

fn render(rows: &[Row]) -> String {
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
