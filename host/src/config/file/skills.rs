//! `[[skills]]` (docs/skills.md), a table of the config file.

use std::path::PathBuf;

use serde::Deserialize;

/// One `[[skills]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileSkills {
    /// A directory of skills, or one skill's directory (relative to the config).
    pub(crate) path: PathBuf,
    /// Path segments every skill of the directory is served under (`"acme/billing"`).
    pub(crate) prefix: Option<String>,
}
