//! What every language's build shares: the request, and the report its driver writes.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

/// What `mcpbox build` was asked.
pub(crate) struct BuildRequest {
    pub(crate) source: String,
    pub(crate) out: Option<PathBuf>,
    pub(crate) node: Option<PathBuf>,
    pub(crate) python: Option<PathBuf>,
    pub(crate) keep_work: bool,
    /// Directories outside the project it may take from (`--include`).
    pub(crate) include: Vec<PathBuf>,
    /// The npm registry (`--registry`), pip's index and wheel source (`--index-url`,
    /// `--find-links`): only what the user passed, never the builder's settings.
    pub(crate) registry: Option<String>,
    pub(crate) index_url: Option<String>,
    pub(crate) find_links: Option<String>,
}

/// The report a language's driver wrote, or one saying that it failed before writing any.
pub(crate) fn driver_report(report_path: &Path, source: &str, status: std::process::ExitStatus) -> Value {
    std::fs::read_to_string(report_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| json!({ "source": source, "error": format!("the build driver failed ({status})") }))
}

/// What `program --version` prints, or an error saying that `needs` (the build's requirement,
/// e.g. "Node.js 20 or newer (`node` on PATH, or --node PATH)") cannot be run.
pub(crate) fn version_of(program: &Path, needs: &str) -> Result<String> {
    // (Without the builder's NODE_OPTIONS: a `--require` there would run code of theirs.)
    let output = Command::new(program)
        .arg("--version")
        .env_remove("NODE_OPTIONS")
        .output()
        .map_err(|e| anyhow!("mcpbox build needs {needs}: cannot run {}: {e}", program.display()))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Every file under `root` (but `__pycache__`), relative to it: what a layer carried in the
/// binary must match.
#[cfg(test)]
pub(crate) fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "__pycache__") {
                    pending.push(path);
                }
            } else {
                found.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}
