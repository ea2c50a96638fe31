//! `mcpbox serve` (the default command): load the plugins, watch them, and serve them over
//! stdio, Streamable HTTP, or both, until the input ends or a signal arrives.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::registry;
use crate::config::{ServeArgs, Settings};
use crate::fleet::Fleet;
use crate::mcp::StateKeys;
use crate::mcp::transport::{http, stdio};
use crate::mcp::{McpState, Session};
use crate::registry::Unwatched;
use crate::runtime::catalog::reload::Reloader;
use crate::runtime::catalog::{FirstUse, Pins};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::{Catalog, LiveCatalog};

/// What a person who runs mcpbox on a terminal without plugins reads (a client never sees it:
/// it starts mcpbox with pipes).
const GUIDE: &str = "\
mcpbox is an MCP server: an MCP client (Claude Desktop, an IDE, an agent) starts it and talks
to it over stdin and stdout. Run by hand with no plugins, it serves nothing. Try:

  mcpbox serve PLUGINS... --root DIR   serve plugins (.wasm files or folders), DIR granted read-only
  mcpbox serve PLUGINS... --http       the same over HTTP on 127.0.0.1:8080
  mcpbox new NAME [--lang python|js]   create a plugin project
  mcpbox inspect FILE.wasm             what a plugin offers and needs
  mcpbox --help                        every command and flag

Serving stdio now anyway; press Ctrl-D to stop.";

/// `mcpbox serve`.
pub(crate) async fn run(args: ServeArgs) -> Result<()> {
    if args.paths.is_empty() && args.config.is_none() && std::io::stdin().is_terminal() {
        eprintln!("{GUIDE}");
    }
    let mut settings = Settings::from_args(&args)?;
    // Before the plugins load: a scrape during a slow start sees it.
    if let Some(address) = args.metrics {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen for metrics on {address} (--metrics)"))?;
        tracing::info!("metrics at http://{}/metrics", listener.local_addr().unwrap_or(address));
        tokio::spawn(crate::telemetry::metrics::serve(listener));
    }
    let local_paths = settings.plugin_paths.clone();
    let pulled = registry::resolve_into(&mut settings, &Unwatched).await?;
    for unresolved in &pulled.failed {
        tracing::error!("failed to load plugin {}: {:#}", unresolved.reference, unresolved.error);
    }
    // Rotated secret files are read again for as long as mcpbox serves.
    let _secrets_watch = settings.secrets.watch()?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    tracing::info!(
        "instance memory: {} ({})",
        if settings.engine.copy_on_write { "copy-on-write" } else { "copied" },
        settings.copy_on_write_reason
    );
    let pins = Arc::new(Pins::open(settings.pins.clone())?);
    let (live, failed) = load(&compiler, &settings, &pins).await;
    let failed = failed + pulled.failed.len();
    let watching = settings.watch && !settings.plugin_paths.is_empty();
    let following_lock = settings.watch && !settings.plugin_refs.is_empty();
    let state_keys = StateKeys::load(settings.request_state_keys.as_deref(), settings.request_state_ttl)?;
    let fleet = match &settings.store {
        Some(store) => Some(Fleet::connect(store, &settings.replica, live.clone()).await?),
        None => None,
    };
    let state = McpState::new(live.clone(), &settings, watching, state_keys, fleet, failed)?;
    if watching || following_lock {
        let pulled_files = pulled.files.iter().map(|(_, file)| file.clone()).collect();
        let reloader = Reloader::new(
            compiler.clone(),
            local_paths,
            pulled_files,
            settings.plugin_configs.clone(),
            settings.limits,
            live,
            pins,
        )?;
        if following_lock {
            registry::follow_lock(&settings, pulled.files, reloader.pulled_files())?;
        }
        reloader.spawn()?;
    }
    let audit = state.audit.clone();
    let served = serve_transports(state, &settings).await;
    // The audit's last checkpoint, so that a clean stop leaves no line unsigned.
    if let Some(audit) = audit {
        audit.close().await;
    }
    served
}

/// Loads the plugins, reporting each that fails by name; the others serve. Also says how
/// many failed (readiness waits for none).
async fn load(compiler: &Compiler, settings: &Settings, pins: &Pins) -> (Arc<LiveCatalog>, usize) {
    let started = Instant::now();
    let configs = &settings.plugin_configs;
    let (catalog, problems) =
        Catalog::load(compiler, &settings.plugin_paths, configs, settings.limits, pins, FirstUse::Pin).await;
    for problem in &problems {
        tracing::error!("failed to load plugin {}: {:#}", problem.path.display(), problem.error);
    }
    tracing::info!(
        plugins = catalog.plugins().len(),
        failed = problems.len(),
        tools = catalog.tools().len(),
        withheld = catalog.withheld().len(),
        pins = ?pins.path(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        roots = ?settings.roots.iter().map(|r| r.path.display().to_string()).collect::<Vec<_>>(),
        "plugins loaded"
    );
    if catalog.plugins().is_empty() {
        tracing::warn!("no plugin loaded: the server offers nothing");
    }
    (LiveCatalog::new(catalog), problems.len())
}

/// Serves stdio and/or HTTP; the end of stdin ends the process unless HTTP serves too.
async fn serve_transports(state: Arc<McpState>, settings: &Settings) -> Result<()> {
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    tokio::spawn(ignore_file_size_signal());
    let http = settings.http.clone().map(|options| {
        let (state, shutdown) = (state.clone(), shutdown.clone());
        tokio::spawn(async move { http::serve(state, options, shutdown, |_| {}).await })
    });
    if settings.stdio {
        let session = Session::for_connection(state);
        tokio::select! {
            result = stdio::serve(session, std::io::stdin(), std::io::stdout(), settings.max_message_bytes) => {
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

/// Takes SIGXFSZ, whose default action ends the process: under a file-size limit (`ulimit
/// -f`) a write past it fails with `EFBIG` instead (the audit refuses calls; a plugin's write
/// gets the error), rather than a plugin's write, or the audit's, ending the host.
async fn ignore_file_size_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    /// SIGXFSZ on Linux.
    const SIGXFSZ: i32 = 25;
    if let Ok(mut received) = signal(SignalKind::from_raw(SIGXFSZ)) {
        while received.recv().await.is_some() {
            tracing::debug!("a write passed the file-size limit (SIGXFSZ)");
        }
    }
}

/// Cancels `token` on SIGINT or SIGTERM, for a graceful shutdown.
async fn cancel_on_signal(token: CancellationToken) {
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
