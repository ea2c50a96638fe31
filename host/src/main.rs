use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use mcpbox::catalog::Catalog;
use mcpbox::config::{ServeArgs, Settings};
use mcpbox::engine::{EngineOptions, build_engine, default_cache_dir};
use mcpbox::mcp::{McpServer, Shared};
use mcpbox::sandbox::Limits;

/// Serve MCP tools, resources and prompts from sandboxed WebAssembly components.
#[derive(Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve plugins as one MCP server over stdio or HTTP (the default command).
    Serve(Box<ServeArgs>),
    /// Validate the config and every plugin without serving: print a table and exit non-zero
    /// if anything is wrong.
    Check(Box<ServeArgs>),
    /// Compile every plugin into the compile cache ahead of time, in parallel, so that serving
    /// starts fast (a progress line on a terminal).
    Compile(Box<ServeArgs>),
    /// Create a plugin project in Rust, Python or JavaScript, ready to build with one command.
    New {
        /// The plugin's name (a crate name: letters, digits, `-`, `_`).
        name: String,
        /// Where to create it [default: the current directory].
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// The plugin's language.
        #[arg(long, value_enum, default_value = "rust")]
        lang: mcpbox::template::Lang,
        /// Rust only: the mcpbox SDK to depend on [default: the `sdk/` of the mcpbox checkout
        /// this binary was built from].
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
    },
    /// Show what a plugin component exports (tools, resources, prompts) and imports.
    Inspect {
        /// The `.wasm` component.
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Show what this config grants the plugin beside what it requests.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // stdout carries the protocol only; every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MCPBOX_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn")),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcpbox: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Some(Command::Serve(args)) => serve(*args).await,
            None => serve(cli.serve).await,
            Some(Command::Inspect { file, json, config }) => inspect(file, json, config).await,
            Some(Command::Check(args)) => check(*args).await,
            Some(Command::Compile(args)) => compile(*args).await,
            Some(Command::New { name, dir, lang, sdk }) => mcpbox::template::create(&name, &dir, lang, sdk.as_deref()),
        }
    });
    // Don't wait for guests that ignore cancellation: the process is done.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpbox: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<()> {
    let settings = Settings::from_args(&args)?;
    let engine = build_engine(&settings.engine)?;
    tracing::info!(
        "instance memory: {} ({})",
        if settings.engine.copy_on_write { "copy-on-write" } else { "copied" },
        settings.copy_on_write_reason
    );
    let started = std::time::Instant::now();
    let (catalog, problems) = Catalog::load(&engine, &settings.plugin_paths, &settings.plugins, settings.limits).await;
    for problem in &problems {
        tracing::error!("failed to load plugin {}: {:#}", problem.path.display(), problem.error);
    }
    tracing::info!(
        plugins = catalog.plugins().len(),
        failed = problems.len(),
        tools = catalog.tools().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        roots = ?settings.roots.iter().map(|r| r.path.display().to_string()).collect::<Vec<_>>(),
        "plugins loaded"
    );
    if catalog.plugins().is_empty() {
        tracing::warn!("no plugin loaded: the server offers nothing");
    }
    let watching = settings.watch && !settings.plugin_paths.is_empty();
    let reloader_catalog = watching.then(|| catalog.plugins().to_vec());
    let shared =
        Shared::new(catalog, settings.roots, settings.page_size, watching).context("cannot describe the plugins")?;
    if let Some(plugins) = reloader_catalog {
        let reloader = mcpbox::reload::Reloader::new(
            engine.clone(),
            settings.plugin_paths.clone(),
            settings.plugins.clone(),
            settings.limits,
            &plugins,
            shared.clone(),
        )?;
        reloader.spawn()?;
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    let http = settings.http.map(|options| {
        let shared = shared.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move { mcpbox::mcp::http::serve(shared, options, shutdown, |_| {}).await })
    });
    if settings.stdio {
        let stdio = McpServer::new(shared);
        tokio::select! {
            result = mcpbox::mcp::stdio::serve(stdio, std::io::stdin(), std::io::stdout(), settings.max_message_bytes) => {
                result?;
                // With HTTP too, the end of stdin ends only the stdio session.
                if http.is_none() {
                    return Ok(());
                }
            }
            () = shutdown.cancelled() => {
                if http.is_none() {
                    return Ok(());
                }
            }
        }
    }
    if let Some(http) = http {
        http.await.context("http server task failed")??;
    }
    Ok(())
}

/// Cancels `token` on SIGINT or SIGTERM, for a graceful shutdown.
async fn cancel_on_signal(token: tokio_util::sync::CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        tracing::warn!("cannot listen for signals; stop mcpbox by closing its input or killing it");
        return;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("signal received");
    token.cancel();
}

async fn check(args: ServeArgs) -> Result<()> {
    let settings = Settings::from_args(&args)?;
    let engine = build_engine(&settings.engine)?;
    let (catalog, problems) = Catalog::load(&engine, &settings.plugin_paths, &settings.plugins, settings.limits).await;
    let grants = settings
        .roots
        .iter()
        .map(|r| format!("{}{}", r.path.display(), if r.writable { " (rw)" } else { " (ro)" }))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = mcpbox::check::rows(&catalog, &problems, &grants);
    print!("{}", mcpbox::check::render(&rows));
    if problems.is_empty() && !rows.is_empty() {
        println!("\nok: {} plugins, {} tools", catalog.plugins().len(), catalog.tools().len());
        Ok(())
    } else if rows.is_empty() {
        anyhow::bail!("no plugin to check: give plugin paths or a config that lists some")
    } else {
        anyhow::bail!("{} of {} plugins have problems", problems.len(), rows.len())
    }
}

async fn inspect(file: PathBuf, json: bool, config: Option<PathBuf>) -> Result<()> {
    let cache_dir = std::env::var_os("MCPBOX_CACHE_DIR").map(PathBuf::from).or_else(default_cache_dir);
    let engine = build_engine(&EngineOptions { cache_dir, ..Default::default() })?;
    let (limits, setting) = match config {
        Some(config) => {
            let settings = Settings::from_args(&ServeArgs { config: Some(config), ..Default::default() })?;
            let name = mcpbox::plugin::plugin_name(&file);
            (settings.limits, settings.plugins.get(&name).cloned())
        }
        None => (Limits::default(), None),
    };
    let description = mcpbox::inspect::describe(&engine, &file, limits, setting).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&description)?);
    } else {
        print!("{}", mcpbox::inspect::render(&description));
    }
    Ok(())
}

/// `mcpbox compile`: fills the compile cache for every plugin the arguments or config name.
async fn compile(args: ServeArgs) -> Result<()> {
    use std::io::{IsTerminal, Write};
    let settings = Settings::from_args(&args)?;
    let Some(cache) = settings.engine.cache_dir.clone() else {
        anyhow::bail!(
            "compiling ahead of time fills the compile cache, which is off (--no-cache or [cache] enabled = false)"
        );
    };
    let engine = build_engine(&settings.engine)?;
    let (files, problems) = mcpbox::catalog::discover(&settings.plugin_paths);
    for problem in &problems {
        eprintln!("mcpbox: {:#}", problem.error);
    }
    if files.is_empty() {
        anyhow::bail!("no plugin to compile: give plugin paths or a config that lists some");
    }
    let started = std::time::Instant::now();
    let total = files.len();
    let mut tasks = tokio::task::JoinSet::new();
    for file in files {
        let engine = engine.clone();
        tasks.spawn_blocking(move || {
            let began = std::time::Instant::now();
            let result = mcpbox::plugin::compile(&engine, &file);
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
