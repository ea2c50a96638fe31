//! `mcpbox compile`: fills the compile cache for every plugin the arguments or config name, in
//! parallel, with a progress line on a terminal.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::config::{ServeArgs, Settings};
use crate::runtime::catalog;
use crate::runtime::compile::Compiler;

/// `mcpbox compile`.
pub(crate) async fn run(args: ServeArgs) -> Result<()> {
    let settings = Settings::from_args(&args)?;
    let Some(cache) = settings.engine.cache_dir.clone() else {
        anyhow::bail!(
            "compiling ahead of time fills the compile cache, which is off (--no-cache or [cache] enabled = false)"
        );
    };
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let (files, problems) = catalog::discover(&settings.plugin_paths);
    for problem in &problems {
        eprintln!("mcpbox: {:#}", problem.error);
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
    let terminal = std::io::stderr().is_terminal();
    let (mut done, mut failed) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        let (file, result) = joined.context("a compile task failed")?;
        done += 1;
        match result {
            Ok(took) if terminal => {
                let bar = "#".repeat(done * 30 / total);
                eprint!("\r[{bar:<30}] {done}/{total} {} ({} ms)\x1b[K", file.display(), took.as_millis());
                let _ = std::io::stderr().flush();
            }
            Ok(took) => eprintln!("[{done}/{total}] compiled {} in {} ms", file.display(), took.as_millis()),
            Err(error) => {
                failed += 1;
                if terminal {
                    eprintln!();
                }
                eprintln!("mcpbox: {error:#}");
            }
        }
    }
    if terminal {
        eprintln!();
    }
    eprintln!(
        "compiled {} of {total} plugins in {} ms into {}",
        total - failed,
        started.elapsed().as_millis(),
        cache.display()
    );
    if failed > 0 || !problems.is_empty() {
        anyhow::bail!("{} plugins could not be compiled", failed + problems.len());
    }
    Ok(())
}
