//! The layering rules, checked on the source:
//!
//! - this file: dependencies between layers point down only (`cli` → `mcp` → `access` →
//!   `config` → `fleet` → `runtime`, and `registry` apart), and only `mcp` touches rmcp; a
//!   module that names a layer above it fails, with the file and the line;
//! - `rooms.rs`: inside the runtime, each room imports only from the rooms below it;
//! - `circles.rs`: no room (a folder) imports from a room that imports from it back, over the
//!   import graph of `imports.rs` (every path resolved to the file that defines the item), from
//!   the text `reading.rs` reads; the files of one folder, and a child and its parent, may use
//!   each other;
//! - `map.rs`: `docs/architecture.md` names only paths and `Type::method`s that exist, and every
//!   folder's `mod.rs` names each of its modules in its doc.

mod circles;
mod imports;
mod map;
mod reading;
mod rooms;

use std::path::Path;

/// The layers `telemetry` and `failpoint.rs` serve and may not name.
const EVERY_LAYER: &[&str] = &[
    "crate::mcp",
    "crate::access",
    "crate::config",
    "crate::cli",
    "crate::registry",
    "crate::runtime",
    "crate::fleet",
    "crate::audit",
];

/// What code under each layer may not name: the layers above it (and, below `mcp`, rmcp).
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "runtime",
        &["rmcp", "crate::mcp", "crate::access", "crate::config", "crate::cli", "crate::registry", "crate::audit"],
    ),
    (
        "registry",
        &["rmcp", "crate::mcp", "crate::access", "crate::config", "crate::cli", "crate::runtime", "crate::audit"],
    ),
    (
        "fleet",
        &["rmcp", "crate::mcp", "crate::access", "crate::config", "crate::cli", "crate::registry", "crate::audit"],
    ),
    ("config", &["rmcp", "crate::mcp", "crate::access", "crate::cli"]),
    // The audit: written by the protocol layer, configured by `config`; knows neither.
    ("audit", &["rmcp", "crate::mcp", "crate::access", "crate::config", "crate::cli", "crate::fleet"]),
    // Access control: called by the protocol layer, naming none of the protocol's types.
    ("access", &["rmcp", "crate::mcp", "crate::cli"]),
    ("mcp", &["crate::cli"]),
    // Every layer counts and traces through it: it may use none of them (its log filter names
    // rmcp's target, a string, so rmcp is not listed).
    ("telemetry", EVERY_LAYER),
    // Every layer's protections carry its switches: it may use none of them, nor telemetry.
    ("failpoint", EVERY_LAYER),
    ("failpoint", &["crate::telemetry"]),
];

/// Whether `code` names `item` as a path or identifier (`rmcp` but not `mcpbox_rmcp_x`;
/// `crate::mcp` but not `crate::mcp_like`).
fn names(code: &str, item: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(item).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + item.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[test]
fn dependencies_point_down_only() {
    let sources = circles::sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut violations = Vec::new();
    for (layer, forbidden) in FORBIDDEN {
        // A layer is a folder, or a single file (`failpoint.rs`).
        let (folder, single) = (format!("{layer}/"), format!("{layer}.rs"));
        let files: Vec<_> = sources.iter().filter(|s| s.path.starts_with(&folder) || s.path == single).collect();
        assert!(!files.is_empty(), "no files under src/{layer}");
        for file in files {
            for (number, line) in file.text.lines().enumerate() {
                // Comments may speak of other layers; code may not use them.
                let code = line.split("//").next().unwrap_or_default();
                for item in forbidden.iter().filter(|item| names(code, item)) {
                    violations.push(format!("src/{}:{}: {layer} names `{item}`", file.path, number + 1));
                }
            }
        }
    }
    assert!(violations.is_empty(), "layering violated:\n{}", violations.join("\n"));
}

#[test]
fn the_check_finds_what_it_looks_for() {
    assert!(names("use rmcp::model::Tool;", "rmcp"));
    assert!(names("let x = crate::mcp::Session::new(s);", "crate::mcp"));
    assert!(!names("use crate::mcpbox_thing;", "crate::mcp"));
    assert!(!names("let rmcp_like = 1;", "rmcp"));
}
