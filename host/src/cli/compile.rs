//! `mcpbox compile`: fills the compile cache for every plugin the arguments or config name, in
//! parallel, with a progress bar on a terminal (plain lines otherwise).

use std::time::Instant;

use anyhow::{Context, Result};

use super::progress::{self, Transfers};
use super::registry;
use crate::config::{ServeArgs, Settings};
use crate::runtime::catalog;
use crate::runtime::engine::compile::Compiler;

/// `mcpbox compile`.
pub(crate) async fn run(args: ServeArgs) -> Result<()> {
    let mut settings = Settings::from_args(&args)?;
    let Some(cache) = settings.engine.cache_dir.clone() else {
        anyhow::bail!(
            "compiling ahead of time fills the compile cache, which is off (--no-cache or [cache] enabled = false)"
        );
    };
    // Registry plugins are compiled as serving takes them: pinned, pulled and verified.
    let pulled = registry::resolve_into(&mut settings, &Transfers::new()).await?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let (files, problems) = catalog::discover(&settings.plugin_paths);
    for problem in &problems {
        eprintln!("mcpbox: {:#}", problem.error);
    }
    for unresolved in &pulled.failed {
        eprintln!("mcpbox: {}: {:#}", unresolved.reference, unresolved.error);
    }
    if files.is_empty() {
        anyhow::bail!("no plugin to compile: give plugin paths or a config that lists some");
    }
    let started = Instant::now();
    let total = files.len();
    let mut tasks = tokio::task::JoinSet::new();
    for file in files {
        let compiler = compiler.clone();
        tasks.spawn_blocking(move || {
            let began = Instant::now();
            let result = compiler.compile(&file);
            (file, result.map(|_| began.elapsed()))
        });
    }
    let bar = progress::steps(total as u64);
    if let Some(bar) = &bar {
        bar.set_prefix("compiling");
    }
    let (mut done, mut failed) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        let (file, result) = joined.context("a compile task failed")?;
        done += 1;
        match (&bar, result) {
            (Some(bar), Ok(took)) => {
                bar.set_message(format!("{} ({} ms)", file.display(), took.as_millis()));
                bar.inc(1);
            }
            (None, Ok(took)) => eprintln!("[{done}/{total}] compiled {} in {} ms", file.display(), took.as_millis()),
            (bar, Err(error)) => {
                failed += 1;
                let line = format!("mcpbox: {error:#}");
                match bar {
                    Some(bar) => {
                        bar.println(line);
                        bar.inc(1);
                    }
                    None => eprintln!("{line}"),
                }
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    eprintln!(
        "compiled {} of {total} plugins in {} ms into {}",
        total - failed,
        started.elapsed().as_millis(),
        cache.display()
    );
    let failed = failed + problems.len() + pulled.failed.len();
    if failed > 0 {
        anyhow::bail!("{failed} plugins could not be compiled");
    }
    Ok(())
}
