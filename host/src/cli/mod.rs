//! The command line: `mcpbox [serve] | check | compile | inspect | new | build | pull | add |
//! update | publish | sign | keygen | unlink | accept | audit`. Each command is a file that
//! parses nothing itself: it takes the merged `Settings` (or its own arguments) and drives the
//! runtime and the protocol layer. `build/` and `registry/` are folders (a command with its
//! steps; the registry's commands); `grants` renders what the operator grants a plugin (for
//! `check` and `inspect`), `progress` reports long commands' steps on stderr.

mod accept;
mod audit;
mod build;
mod check;
mod compile;
mod grants;
mod inspect;
mod new;
mod progress;
mod registry;
mod serve;
mod unlink;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::config::ServeArgs;
use crate::runtime::engine::EngineOptions;
use crate::telemetry::LogFormat;

/// Serve MCP tools, resources and prompts from sandboxed WebAssembly components.
#[derive(Parser)]
#[command(version = crate::failpoint::VERSION, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
    /// How log lines are written on stderr: `text`, or `json` (one object a line, with the
    /// request's fields, and a line per finished request).
    #[arg(long, global = true, value_enum, default_value = "text", env = "MCPBOX_LOG_FORMAT")]
    log_format: LogFormat,
    /// Send traces (a span per request, a child span per guest call) over OTLP/HTTP to this
    /// collector (its base URL, `http://HOST:4318`); off unless given.
    #[arg(long, global = true, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verify the chain of PATH and the files rotated from it (PATH.1, PATH.2, ...).
    Verify {
        /// The audit file.
        path: PathBuf,
        /// The public key of `[audit] key` (`mcpbox keygen`'s NAME.pub): checks every checkpoint.
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
    },
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
        lang: new::Lang,
        /// Rust only: the mcpbox SDK to depend on [default: a copy of the SDK this mcpbox carries,
        /// written to `mcpbox-sdk/` in the project].
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
    },
    /// Make a plugin of an existing MCP server, unmodified: a JavaScript or TypeScript server
    /// written with the official SDK (a file, a project directory or `npm:NAME@VERSION`), or a
    /// Python server written with the MCP Python SDK's FastMCP or fastmcp (a file, a project
    /// directory or `pypi:NAME==VERSION`).
    /// Prints a compatibility report (also written as OUT.compat.json) with the config that
    /// grants what the code needs; fails, listing why, for a server that cannot run sandboxed.
    Build {
        /// `server.js`, `index.ts`, `server.py`, a project directory, `npm:NAME@VERSION` or
        /// `pypi:NAME==VERSION`.
        source: String,
        /// The component to write [default: NAME.wasm in the current directory].
        #[arg(short = 'o', long = "out", value_name = "OUT.wasm")]
        out: Option<PathBuf>,
        /// The Node.js (20 or newer) that runs the build [default: `node` on PATH].
        #[arg(long, value_name = "PATH")]
        node: Option<PathBuf>,
        /// The Python (3.11 or newer, with venv and pip) that runs a Python build [default:
        /// `python3` on PATH]; the server runs on the CPython the component carries.
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        /// Keep the build directory (the bundle, the installed packages) and print where.
        #[arg(long)]
        keep_work: bool,
        /// A directory outside the project that the project's links, `file:` dependencies and
        /// imports may point into (a monorepo's shared code); repeatable. Nothing outside the
        /// project is taken otherwise.
        #[arg(long, value_name = "DIR")]
        include: Vec<PathBuf>,
        /// The npm registry to install from [default: npm's, https://registry.npmjs.org/]; the
        /// builder's own npm settings are never read.
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
        /// The Python package index to install from [default: pip's, https://pypi.org/simple];
        /// the builder's own pip settings are never read.
        #[arg(long, value_name = "URL")]
        index_url: Option<String>,
        /// A directory or page of wheels pip may also install from.
        #[arg(long, value_name = "DIR|URL")]
        find_links: Option<String>,
    },
    /// Internal: compile one plugin file, its bytes on stdin, into the compile cache with these
    /// engine settings (the child process of a bounded compilation, runtime/engine/compile.rs).
    #[command(name = "__compile", hide = true)]
    CompileChild {
        /// The plugin file.
        file: PathBuf,
        /// The compile cache directory.
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// The engine's pooling allocator is on.
        #[arg(long)]
        pooling: bool,
        /// The largest memory limit of any plugin.
        #[arg(long)]
        max_memory_bytes: usize,
        /// Instances map their memory copy-on-write.
        #[arg(long)]
        copy_on_write: bool,
        /// How many bytes of the file come on stdin.
        #[arg(long)]
        bytes: usize,
    },
    /// Accept what plugins' tools, prompts and templates say now: pin their definitions, so
    /// that those withheld because they changed serve (`mcpbox accept NAME... --config FILE`,
    /// or with the plugin paths `serve` is given; no name: every plugin).
    Accept(Box<ServeArgs>),
    /// Pin and fetch every `oci://` plugin of the config (into `mcpbox.lock` and the store),
    /// verifying signatures, so that serving needs no registry afterwards.
    Pull(Box<ServeArgs>),
    /// Add a registry plugin to the config and pin it in the lock, once it is pulled and may
    /// serve under the config's trust; prints its tools and the grants it asks for.
    Add {
        /// The plugin: `oci://REGISTRY/REPO:TAG` (or `@sha256:DIGEST`).
        reference: String,
        /// The config to add it to (created if missing) [default: ./mcpbox.toml].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Trust this publisher key for this plugin (written under `[trust.plugin.NAME] keys`;
        /// repeatable).
        #[arg(long = "trust-key", value_name = "FILE")]
        trust_keys: Vec<PathBuf>,
        /// Serve it although unsigned (written under `[trust] unsigned`).
        #[arg(long)]
        allow_unsigned: bool,
        /// Reach this registry over plain HTTP (written under `[registries] insecure`).
        #[arg(long = "insecure-registry", value_name = "HOST")]
        insecure: Vec<String>,
    },
    /// Resolve the config's tags again and move the lock: shows, per plugin, the digest, the
    /// tools and the requested grants before and after. A running server follows the lock.
    Update {
        /// Only this plugin (its name or its reference as written) [default: all].
        name: Option<String>,
        /// The config [default: ./mcpbox.toml].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Reach this registry over plain HTTP (registries on this machine always may be).
        #[arg(long = "insecure-registry", value_name = "HOST")]
        insecure: Vec<String>,
    },
    /// Push a component to a registry as a Wasm OCI artifact; prints the digest to sign.
    Publish {
        /// The `.wasm` component.
        file: PathBuf,
        /// Where to push it: `oci://REGISTRY/REPO:TAG`.
        reference: String,
        /// A description, kept as the artifact's `org.opencontainers.image.description`.
        #[arg(long)]
        description: Option<String>,
        /// Reach this registry over plain HTTP (registries on this machine always may be).
        #[arg(long = "insecure-registry", value_name = "HOST")]
        insecure: Vec<String>,
    },
    /// Sign a published component (cosign's signature format, attached in the registry).
    Sign {
        /// The component: `oci://REGISTRY/REPO@sha256:DIGEST`.
        reference: String,
        /// The private key: PEM PKCS#8 ECDSA P-256 (`mcpbox keygen`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Reach this registry over plain HTTP (registries on this machine always may be).
        #[arg(long = "insecure-registry", value_name = "HOST")]
        insecure: Vec<String>,
    },
    /// Check an audit file (`--audit`): its hash chain, and with the public key its signed
    /// checkpoints; names the first line altered, removed or moved.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Make a signing key pair: NAME.key (private) and NAME.pub (for operators' [trust] keys).
    Keygen {
        /// The path of the pair, without extension.
        name: PathBuf,
    },
    /// Unlink a user's accounts from the token vault of a fleet (`[store]`): their next call
    /// asks them to link again. (A user unlinks with `DELETE /link` and their own token.)
    Unlink {
        /// The arguments the fleet serves with (`--config`, `--http`, `--store`...).
        #[command(flatten)]
        serve: Box<ServeArgs>,
        /// The user's issuer (`iss` of their access tokens).
        #[arg(long)]
        issuer: String,
        /// The user's subject (`sub`).
        #[arg(long)]
        subject: String,
        /// Only the account at this `[oauth_clients.NAME]` [default: all].
        #[arg(long)]
        client: Option<String>,
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

/// Runs the command line and returns the process's exit code. stdout carries the protocol
/// (or a command's output) only; every log line goes to stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The compile child's logs go through its parent; it exports nothing itself.
    let otlp =
        if matches!(cli.command, Some(Command::CompileChild { .. })) { None } else { cli.otlp_endpoint.as_deref() };
    let telemetry = match crate::telemetry::init(cli.log_format, otlp) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("mcpbox: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(feature = "failpoints")]
    if let Err(e) = crate::failpoint::check_allowed() {
        eprintln!("mcpbox: {e}");
        telemetry.shutdown();
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcpbox: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli));
    // Don't wait for guests that ignore cancellation: the process is done.
    runtime.shutdown_background();
    telemetry.shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpbox: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Serve(args)) => serve::run(*args).await,
        None => serve::run(cli.serve).await,
        Some(Command::Inspect { file, json, config }) => inspect::run(file, json, config).await,
        Some(Command::Check(args)) => check::run(*args).await,
        Some(Command::Accept(args)) => accept::run(*args).await,
        Some(Command::Compile(args)) => compile::run(*args).await,
        Some(Command::Pull(args)) => registry::pull(*args).await,
        Some(Command::Add { reference, config, trust_keys, allow_unsigned, insecure }) => {
            registry::add(registry::AddRequest { reference, config, trust_keys, allow_unsigned, insecure }).await
        }
        Some(Command::Update { name, config, insecure }) => registry::update(name, config, insecure).await,
        Some(Command::Publish { file, reference, description, insecure }) => {
            registry::publish(&file, &reference, description, &insecure).await
        }
        Some(Command::Sign { reference, key, insecure }) => registry::sign(&reference, &key, &insecure).await,
        Some(Command::Keygen { name }) => registry::keygen(&name),
        Some(Command::Audit { command: AuditCommand::Verify { path, key } }) => audit::verify(&path, key.as_deref()),
        Some(Command::Unlink { serve, issuer, subject, client }) => {
            unlink::run(*serve, &issuer, &subject, client.as_deref()).await
        }
        Some(Command::Build { source, out, node, python, keep_work, include, registry, index_url, find_links }) => {
            let request =
                build::BuildRequest { source, out, node, python, keep_work, include, registry, index_url, find_links };
            build::run(request).await
        }
        Some(Command::New { name, dir, lang, sdk }) => new::create(&name, &dir, lang, sdk.as_deref()),
        Some(Command::CompileChild { file, cache_dir, pooling, max_memory_bytes, copy_on_write, bytes }) => {
            let options = EngineOptions { cache_dir, pooling, max_memory_bytes, copy_on_write };
            crate::runtime::engine::compile::compile_child(&options, &file, bytes)
        }
    }
}
