//! What every language's build shares: the request, and the report its driver writes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// What `mcpbox build` was asked.
pub(crate) struct BuildRequest {
    pub(crate) source: String,
    pub(crate) out: Option<PathBuf>,
    pub(crate) node: Option<PathBuf>,
    pub(crate) python: Option<PathBuf>,
    pub(crate) keep_work: bool,
}

/// The report a language's driver wrote, or one saying that it failed before writing any.
pub(crate) fn driver_report(report_path: &Path, source: &str, status: std::process::ExitStatus) -> Value {
    std::fs::read_to_string(report_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| json!({ "source": source, "error": format!("the build driver failed ({status})") }))
}
