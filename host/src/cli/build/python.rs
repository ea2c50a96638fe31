//! `mcpbox build` for Python servers: the toolchain (componentize-py, pinned, in a venv of
//! mcpbox's cache: `~/.cache/mcpbox/build/py-HASH`, or `MCPBOX_BUILD_TOOLS`), the compatibility
//! layer (`sdk/compat/python`, carried inside the binary with the Python helper module and
//! mcpbox's WIT) written beside it, and the driver (`build.py`) run by the machine's Python.
//! pip installs wheels only, each requirement by name (`hygiene.py`), and cannot run a setup.py
//! or build backend (`pipguard.py`): no code of the server or its dependencies runs on this
//! machine; the driver and the tools run in the build's own environment (`environment.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::driver::{BuildRequest, driver_report};

/// componentize-py's version: the CPython it embeds (3.14) is the one the layer and the
/// dependencies' wheels are chosen for.
const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";

/// The compatibility layer, as this binary carries it (paths under the toolchain's `compat/`).
const LAYER: &[(&str, &str)] = &[
    ("build.py", include_str!("../../../../sdk/compat/python/build.py")),
    ("hygiene.py", include_str!("../../../../sdk/compat/python/hygiene.py")),
    ("pipguard.py", include_str!("../../../../sdk/compat/python/pipguard.py")),
    ("layer/fastmcp/__init__.py", include_str!("../../../../sdk/compat/python/layer/fastmcp/__init__.py")),
    ("layer/fastmcp/exceptions.py", include_str!("../../../../sdk/compat/python/layer/fastmcp/exceptions.py")),
    ("layer/mcp/__init__.py", include_str!("../../../../sdk/compat/python/layer/mcp/__init__.py")),
    ("layer/mcp/server/__init__.py", include_str!("../../../../sdk/compat/python/layer/mcp/server/__init__.py")),
    (
        "layer/mcp/server/fastmcp/__init__.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/fastmcp/__init__.py"),
    ),
    (
        "layer/mcp/server/fastmcp/exceptions.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/fastmcp/exceptions.py"),
    ),
    (
        "layer/mcp/server/fastmcp/server.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/fastmcp/server.py"),
    ),
    (
        "layer/mcp/server/fastmcp/utilities/__init__.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/fastmcp/utilities/__init__.py"),
    ),
    (
        "layer/mcp/server/fastmcp/utilities/types.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/fastmcp/utilities/types.py"),
    ),
    (
        "layer/mcp/server/lowlevel/__init__.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/lowlevel/__init__.py"),
    ),
    (
        "layer/mcp/server/lowlevel/server.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/lowlevel/server.py"),
    ),
    (
        "layer/mcp/server/mcpserver/__init__.py",
        include_str!("../../../../sdk/compat/python/layer/mcp/server/mcpserver/__init__.py"),
    ),
    ("layer/mcp/server/models.py", include_str!("../../../../sdk/compat/python/layer/mcp/server/models.py")),
    ("layer/mcp/server/stdio.py", include_str!("../../../../sdk/compat/python/layer/mcp/server/stdio.py")),
    ("layer/mcp/shared/__init__.py", include_str!("../../../../sdk/compat/python/layer/mcp/shared/__init__.py")),
    ("layer/mcp/shared/exceptions.py", include_str!("../../../../sdk/compat/python/layer/mcp/shared/exceptions.py")),
    ("layer/mcp/types.py", include_str!("../../../../sdk/compat/python/layer/mcp/types.py")),
    ("layer/mcpbox_compat/__init__.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/__init__.py")),
    ("layer/mcpbox_compat/bridge.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/bridge.py")),
    ("layer/mcpbox_compat/host.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/host.py")),
    ("layer/mcpbox_compat/loop.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/loop.py")),
    ("layer/mcpbox_compat/schema.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/schema.py")),
    ("layer/mcpbox_compat/served.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/served.py")),
    ("layer/mcpbox_compat/server.py", include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/server.py")),
    (
        "layer/mcpbox_compat/ssl_standin.py",
        include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/ssl_standin.py"),
    ),
    (
        "layer/mcpbox_compat/transports.py",
        include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/transports.py"),
    ),
    (
        "layer/mcpbox_compat/wasi_http.py",
        include_str!("../../../../sdk/compat/python/layer/mcpbox_compat/wasi_http.py"),
    ),
    ("layer/pydantic/__init__.py", include_str!("../../../../sdk/compat/python/layer/pydantic/__init__.py")),
    ("scan.py", include_str!("../../../../sdk/compat/python/scan.py")),
    ("wit/deps/cli.wit", include_str!("../../../../sdk/compat/python/wit/deps/cli.wit")),
    ("wit/deps/clocks.wit", include_str!("../../../../sdk/compat/python/wit/deps/clocks.wit")),
    ("wit/deps/filesystem.wit", include_str!("../../../../sdk/compat/python/wit/deps/filesystem.wit")),
    ("wit/deps/http.wit", include_str!("../../../../sdk/compat/python/wit/deps/http.wit")),
    ("wit/deps/io.wit", include_str!("../../../../sdk/compat/python/wit/deps/io.wit")),
    ("wit/deps/random.wit", include_str!("../../../../sdk/compat/python/wit/deps/random.wit")),
    ("wit/deps/sockets.wit", include_str!("../../../../sdk/compat/python/wit/deps/sockets.wit")),
    ("layer/mcpbox.py", include_str!("../../../../sdk/python/mcpbox.py")),
    ("wit/plugin.wit", include_str!("../../../../wit/plugin.wit")),
];

/// The toolchain directory, installed if it is not yet: `build.py` lives in `compat/` there,
/// componentize-py in `venv/bin/`.
fn toolchain(python: &Path) -> Result<PathBuf> {
    let (dir, _lock) = match super::toolchain::prepared("py", &[COMPONENTIZE_PY], LAYER)? {
        super::toolchain::Prepared::Complete(dir) => return Ok(dir),
        super::toolchain::Prepared::Empty(dir, lock) => (dir, lock),
    };
    let venv = dir.join("venv");
    let componentize = venv.join("bin").join("componentize-py");
    if !componentize.exists() && preinstalled().is_none() {
        eprintln!("installing the Python build toolchain ({COMPONENTIZE_PY}) into {} (once)", dir.display());
        // The build's own environment for the installers too (an index only as pip's default).
        let scratch = tempfile::Builder::new().prefix("mcpbox-toolchain-").tempdir()?;
        let mut make_venv = Command::new(python);
        make_venv.args(["-m", "venv"]).arg(&venv);
        super::environment::isolate(&mut make_venv, &[python], scratch.path())?;
        let status = make_venv.status().with_context(|| format!("cannot run {}", python.display()))?;
        if !status.success() {
            bail!(
                "{} -m venv failed ({status}): mcpbox build needs Python's venv (Debian: python3-venv)",
                python.display()
            );
        }
        let mut install = Command::new(venv.join("bin").join("pip"));
        install.args(["install", "--quiet", "--disable-pip-version-check", "--only-binary=:all:", COMPONENTIZE_PY]);
        super::environment::isolate(&mut install, &[python], scratch.path())?;
        super::environment::pip_settings(&mut install);
        let status = install.status().context("cannot run the toolchain's pip")?;
        if !status.success() {
            bail!("installing {COMPONENTIZE_PY} with pip failed ({status})");
        }
    }
    super::toolchain::complete(&dir, LAYER)?;
    Ok(dir)
}

/// A componentize-py of the pinned version already installed (`MCPBOX_COMPONENTIZE_PY`: the
/// test suite's, or a machine without PyPI), used instead of installing one.
fn preinstalled() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("MCPBOX_COMPONENTIZE_PY")?);
    let version = Command::new(&path).arg("--version").output().ok()?;
    let wanted = COMPONENTIZE_PY.replace("==", " ");
    (String::from_utf8_lossy(&version.stdout).trim() == wanted).then_some(path)
}

/// Runs the Python driver; `(made a component, its report)`.
pub(super) fn build(request: &BuildRequest, work: &Path, out: &Path, report_path: &Path) -> Result<(bool, Value)> {
    let python = request.python.clone().unwrap_or_else(|| PathBuf::from("python3"));
    let version = super::driver::version_of(&python, "Python 3.11 or newer (`python3` on PATH, or --python PATH)")?;
    let minor: u32 = version.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0);
    if !version.starts_with("Python 3.") || minor < 11 {
        bail!("mcpbox build needs Python 3.11 or newer; {} is {version}", python.display());
    }
    // The Python behind a version manager's shim (pyenv's needs the builder's HOME), found
    // before the build's own environment (environment.rs) leaves the shim nothing to go by.
    let python = super::environment::real_program(&python, &["-c", "import sys; print(sys.executable)"]);
    let tools = toolchain(&python)?;
    let source = match request.source.strip_prefix("pypi:") {
        Some(_) => request.source.clone(),
        None => std::path::absolute(&request.source)?.display().to_string(),
    };
    let compat = tools.join("compat");
    let componentize = preinstalled().unwrap_or_else(|| tools.join("venv").join("bin").join("componentize-py"));
    let mut driver = Command::new(&python);
    // -E -s: no PYTHON* variable and no user site-packages of the builder's.
    driver
        .args(["-E", "-s"])
        .arg(compat.join("build.py"))
        .args(["--source", &source])
        .arg("--work")
        .arg(work)
        .arg("--out")
        .arg(out)
        .arg("--report")
        .arg(report_path)
        .arg("--componentize")
        .arg(&componentize)
        .arg("--wit")
        .arg(compat.join("wit"));
    for dir in &request.include {
        driver.arg("--include").arg(std::path::absolute(dir)?);
    }
    for (option, value) in [("--index-url", &request.index_url), ("--find-links", &request.find_links)] {
        if let Some(value) = value {
            driver.args([option, value]);
        }
    }
    // The protections of a build (SECURITY.md), off only in the test suite's build.
    driver
        .args(crate::switched_off!("build.no-build-environment").then_some("--with-build-environment"))
        .args(crate::switched_off!("build.project-files-only").then_some("--follow-links"))
        .args(crate::switched_off!("build.requirements-by-name").then_some("--any-requirement"))
        .args(crate::switched_off!("build.no-build-backends").then_some("--with-build-backends"))
        .args(crate::switched_off!("build.no-builder-site").then_some("--with-builder-site"))
        .current_dir(work);
    super::environment::isolate(&mut driver, &[&python, &componentize], work)?;
    super::environment::pip_settings(&mut driver);
    let status = driver.status().with_context(|| format!("cannot run {}", python.display()))?;
    Ok((status.success(), driver_report(report_path, &request.source, status)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of the layer left out of the binary would fail only when a build imports it.
    #[test]
    fn the_binary_carries_every_file_of_the_python_compatibility_layer() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/compat/python");
        let mut on_disk = crate::cli::build::driver::files_under(&root);
        on_disk.push("layer/mcpbox.py".to_owned());
        on_disk.push("wit/plugin.wit".to_owned());
        on_disk.sort();
        let mut carried: Vec<String> = LAYER.iter().map(|(path, _)| (*path).to_owned()).collect();
        carried.sort();
        assert_eq!(carried, on_disk);
        for (path, text) in LAYER.iter().filter(|(path, _)| !path.ends_with("mcpbox.py") && *path != "wit/plugin.wit") {
            assert_eq!(*text, std::fs::read_to_string(root.join(path)).unwrap(), "{path}");
        }
    }
}
