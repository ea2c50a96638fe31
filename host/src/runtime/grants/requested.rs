//! What a plugin asks for in its own metadata: a `mcpbox-policy` custom section in the
//! component, or a `<plugin>.policy.toml` file next to it. Shown by `mcpbox inspect` beside the
//! grants; never granted by itself.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};

/// The grants a plugin asks for, from its own metadata: a `mcpbox-policy` custom section in the
/// component, or a `<plugin>.policy.toml` file next to it. Informational: only the operator's
/// config grants anything.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedPolicy {
    /// Why the plugin needs what it asks for, for the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Hosts it wants to reach, in allow-list syntax (`https://api.example.com`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// Environment variables it reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// `"none"`, `"read-only"` or `"read-write"`: access it wants to the roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<FsAccess>,
    /// The time limit it wants, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The memory limit it wants, in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
/// Access a plugin asks for to the roots.
pub enum FsAccess {
    /// No directories.
    None,
    /// Reading only.
    ReadOnly,
    /// Reading and writing.
    ReadWrite,
}

/// The custom section a component may carry its [`RequestedPolicy`] in (TOML text).
pub const POLICY_SECTION: &str = "mcpbox-policy";

/// Reads the plugin's requested policy: the custom section of `bytes`, else the sidecar file
/// `<stem>.policy.toml` next to `path`. `Ok(None)` if it has neither.
pub fn read_requested(path: &Path, bytes: &[u8]) -> Result<Option<RequestedPolicy>> {
    let parse = |origin: &str, text: &str| -> Result<RequestedPolicy> {
        toml::from_str(text).map_err(|e| anyhow!("{origin}: invalid requested policy: {}", e.message().trim_end()))
    };
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        // A malformed binary is reported by the compiler with a better message.
        let Ok(payload) = payload else { break };
        if let wasmparser::Payload::CustomSection(section) = payload
            && section.name() == POLICY_SECTION
        {
            let text = std::str::from_utf8(section.data())
                .with_context(|| format!("{}: the {POLICY_SECTION} section is not UTF-8", path.display()))?;
            return parse(&format!("{} (section {POLICY_SECTION})", path.display()), text).map(Some);
        }
    }
    let sidecar = path.with_extension("policy.toml");
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => parse(&sidecar.display().to_string(), &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", sidecar.display())),
    }
}
