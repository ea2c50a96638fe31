//! `mcpbox build SOURCE [-o OUT.wasm]`: an existing MCP server, unmodified, made a plugin.
//!
//! SOURCE is a file (`index.js`, `index.ts`, `server.py`), a project directory,
//! `npm:NAME@VERSION` or `pypi:NAME==VERSION`. The language's driver (`sdk/compat/js/build.mjs`,
//! run by Node from the toolchain in `toolchain.rs`; `sdk/compat/python/build.py`, run by
//! Python from the toolchain in `python.rs`) installs the dependencies without running any of
//! their scripts or build scripts, lays the
//! compatibility layer under the code, bundles, scans and componentizes; mcpbox then loads the
//! component in its own sandbox to list what it serves (a server that does not start there
//! fails the build: no plugin that fails at its first call), and writes the compatibility
//! report (`report.rs`) beside it as `OUT.compat.json`.
//!
//! `driver.rs` holds what every language's build shares (the request, the driver's report),
//! `environment.rs` the environment the build's programs get (their own, never the builder's),
//! `paths.rs` where a build works and the check that its component names no place of the build
//! machine.

mod driver;
mod environment;
mod paths;
mod python;
mod report;
mod toolchain;

pub(crate) use driver::BuildRequest;
use driver::driver_report;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::config::{ServeArgs, Settings};
use crate::runtime::PluginConfig;
use crate::runtime::engine::compile::Compiler;
use crate::runtime::grants::policy::Policy;

/// The value each environment variable the code reads has while the build lists what the
/// server serves (its module runs then, in the sandbox): a server that exits without its
/// token still lists its tools. Never a value of this machine.
const PLACEHOLDER: &str = "mcpbox-build-placeholder";

/// Builds, reports, and fails with the report's reason if no plugin was made.
pub(crate) async fn run(request: BuildRequest) -> Result<()> {
    let language = language_of(&request.source)?;
    let out = match &request.out {
        Some(out) => out.clone(),
        None => PathBuf::from(format!("{}.wasm", default_name(&request.source))),
    };
    let out = std::path::absolute(&out).with_context(|| format!("bad output path {}", out.display()))?;
    let name = crate::runtime::plugin_name(&out);
    let report_path = out.with_extension("compat.json");
    let work = paths::work_dir()?;
    let started = std::time::Instant::now();
    let (status, mut report) = match language {
        Language::JavaScript => javascript(&request, work.path(), &out, &report_path)?,
        Language::Python => python::build(&request, work.path(), &out, &report_path)?,
    };
    if status && let Err(found) = paths::no_builder_paths(&out, work.path()) {
        // Nothing of the build machine in a component: it goes, the report says why.
        let _ = std::fs::remove_file(&out);
        report["error"] = json!(format!("{found:#}"));
    }
    if request.keep_work {
        let kept = work.keep();
        eprintln!("the build directory is kept: {}", kept.display());
    }
    if !status || report.get("error").is_some() {
        std::fs::write(&report_path, serde_json::to_string_pretty(&report)?)?;
        print!("{}", report::render(&name, &report));
        let why = report["error"].as_str().unwrap_or("the build failed").to_owned();
        bail!("{}: {why} (report: {})", request.source, report_path.display());
    }
    eprintln!("step 6/6: loading the plugin in mcpbox's sandbox to list what it serves");
    let offer = match offer(&out, &name, &report).await {
        Ok(offer) => offer,
        Err(why) => {
            // No plugin that fails at its first call: the component goes, the report stays.
            let _ = std::fs::remove_file(&out);
            report["error"] = json!(format!("the built server does not start in the sandbox: {why:#}"));
            std::fs::write(&report_path, serde_json::to_string_pretty(&report)?)?;
            print!("{}", report::render(&name, &report));
            bail!("{}: the built server does not start in the sandbox: {why:#}", request.source);
        }
    };
    report::complete(&mut report, &name, offer);
    report["build_seconds"] = json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    std::fs::write(&report_path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("cannot write {}", report_path.display()))?;
    print!("{}", report::render(&name, &report));
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!("built {} ({:.1} MB) and {}", out.display(), size as f64 / 1e6, report_path.display());
    Ok(())
}

enum Language {
    JavaScript,
    Python,
}

fn language_of(source: &str) -> Result<Language> {
    if source.starts_with("npm:") {
        return Ok(Language::JavaScript);
    }
    if source.starts_with("pypi:") {
        return Ok(Language::Python);
    }
    let path = Path::new(source);
    if path.is_dir() {
        if path.join("package.json").exists() {
            return Ok(Language::JavaScript);
        }
        if ["pyproject.toml", "requirements.txt", "server.py", "main.py", "__main__.py"]
            .iter()
            .any(|file| path.join(file).exists())
        {
            return Ok(Language::Python);
        }
        bail!("{source}: no package.json, pyproject.toml or server.py in this directory: which server is it?");
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("js" | "mjs" | "cjs" | "ts" | "mts" | "cts") => Ok(Language::JavaScript),
        Some("py") => Ok(Language::Python),
        _ if !path.exists() => {
            bail!("{source} does not exist (a file, a directory, npm:NAME@VERSION or pypi:NAME==VERSION)")
        }
        _ => bail!(
            "{source}: not a JavaScript, TypeScript or Python file, a project directory, npm:NAME@VERSION or \
             pypi:NAME==VERSION"
        ),
    }
}

/// The plugin's name from the source: the package's last segment, the file's stem.
fn default_name(source: &str) -> String {
    let base = match source.strip_prefix("npm:") {
        None if source.starts_with("pypi:") => {
            let spec = &source["pypi:".len()..];
            spec.split(['=', '<', '>', '!', '~', '[', ' ']).next().unwrap_or(spec).to_owned()
        }
        Some(spec) => {
            let without_version = match spec.rfind('@') {
                Some(0) | None => spec,
                Some(at) => &spec[..at],
            };
            without_version.rsplit('/').next().unwrap_or(without_version).to_owned()
        }
        None => {
            let path = Path::new(source);
            let path = if path.is_dir() {
                std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
            } else {
                path.to_owned()
            };
            path.file_stem().and_then(|s| s.to_str()).unwrap_or("server").to_owned()
        }
    };
    let name: String = base.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if name.is_empty() { "server".to_owned() } else { name }
}

/// Runs the JavaScript driver; `(made a component, its report)`.
fn javascript(request: &BuildRequest, work: &Path, out: &Path, report_path: &Path) -> Result<(bool, Value)> {
    let node = request.node.clone().unwrap_or_else(|| PathBuf::from("node"));
    let version = driver::version_of(&node, "Node.js 20 or newer (`node` on PATH, or --node PATH)")?;
    let major: u32 = version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    if major < 20 {
        bail!("mcpbox build needs Node.js 20 or newer; {} is {version}", node.display());
    }
    // The node behind a version manager's shim, found with the builder's environment, before
    // the build's own (environment.rs) leaves the shim nothing to go by.
    let node = environment::real_program(&node, &["-p", "process.execPath"]);
    let tools = toolchain::javascript(&node, request.registry.as_deref())?;
    let wit = work.join("plugin.wit");
    std::fs::write(&wit, toolchain::WIT)?;
    let source = match request.source.strip_prefix("npm:") {
        Some(_) => request.source.clone(),
        None => std::path::absolute(&request.source)?.display().to_string(),
    };
    let mut driver = Command::new(&node);
    driver
        .arg(tools.join("compat").join("build.mjs"))
        .args(["--source", &source])
        .arg("--work")
        .arg(work)
        .arg("--out")
        .arg(out)
        .arg("--report")
        .arg(report_path)
        .arg("--wit")
        .arg(&wit)
        // Where a lone file's walk up to its package.json stops (never the home directory).
        .args(std::env::var_os("HOME").map(|home| [OsString::from("--home"), home]).into_iter().flatten());
    for dir in &request.include {
        driver.arg("--include").arg(std::path::absolute(dir)?);
    }
    // The protections of a build (SECURITY.md), off only in the test suite's build.
    driver
        .args(crate::switched_off!("build.no-install-scripts").then_some("--run-install-scripts"))
        .args(crate::switched_off!("build.no-build-environment").then_some("--with-build-environment"))
        .args(crate::switched_off!("build.project-files-only").then_some("--follow-links"))
        .args(crate::switched_off!("build.imports-inside").then_some("--allow-outside-imports"))
        .args(crate::switched_off!("build.dependencies-from-registry").then_some("--any-dependency"))
        .args(crate::switched_off!("build.no-builder-paths").then_some("--keep-builder-paths"))
        .current_dir(work);
    let npm = toolchain::npm_beside(&node);
    environment::isolate(&mut driver, &[&node, &npm], work)?;
    environment::npm_settings(&mut driver, work, request.registry.as_deref());
    let status = driver.status().with_context(|| format!("cannot run {}", node.display()))?;
    Ok((status.success(), driver_report(report_path, &request.source, status)))
}

/// What the built plugin serves, listed by mcpbox loading it as `serve` would (with a
/// placeholder for each environment variable the code reads).
async fn offer(out: &Path, name: &str, report: &Value) -> Result<Value> {
    let cache_dir = std::env::var_os("MCPBOX_CACHE_DIR").map(PathBuf::from);
    let args = ServeArgs { paths: vec![out.to_owned()], cache_dir, ..Default::default() };
    let settings = Settings::from_args(&args)?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let env: Vec<(String, String)> = report["environment"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?.to_owned(), PLACEHOLDER.to_owned())))
        .collect();
    // No network while listing: a server that uses fetch gets the stub that refuses requests.
    let describe = |env: Vec<(String, String)>| {
        let policy = Policy { env: Arc::from(env), stub_ungranted: true, ..Policy::default() };
        let config = PluginConfig { policy, ..PluginConfig::default() };
        super::inspect::describe(&compiler, out, settings.limits, Some(config))
    };
    // A placeholder is not every variable's kind of value (`int(os.environ["PORT"])`): a server
    // that fails with them is listed again with none.
    let with_placeholders = !env.is_empty();
    let description = match describe(env).await {
        Err(_) if with_placeholders => describe(Vec::new()).await?,
        other => other?,
    };
    let description = serde_json::to_value(&description)?;
    if let Some(problem) = description["loadProblem"].as_str() {
        bail!("{problem}");
    }
    let own = |value: &str| value.strip_prefix(&format!("{name}.")).unwrap_or(value).to_owned();
    let names = |key: &str, field: &str, strip: bool| -> Vec<String> {
        description[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| item[field].as_str().map(|v| if strip { own(v) } else { v.to_owned() }))
            .collect()
    };
    Ok(json!({
        "tools": names("tools", "name", true),
        "resources": names("resources", "uri", false),
        "resource_templates": names("resourceTemplates", "uriTemplate", false),
        "prompts": names("prompts", "name", true),
    }))
}
