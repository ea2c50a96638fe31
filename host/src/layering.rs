//! The layering rule, checked on the source: dependencies point down only
//! (`cli` → `mcp` → `config` → `fleet` → `runtime`, and `registry` apart), and only `mcp`
//! touches rmcp. A module that imports
//! from a layer above it fails this test, naming the file and the line.

use std::path::{Path, PathBuf};

/// What code under each layer may not name: the layers above it (and, below `mcp`, rmcp).
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("runtime", &["rmcp", "crate::mcp", "crate::config", "crate::cli", "crate::registry"]),
    ("registry", &["rmcp", "crate::mcp", "crate::config", "crate::cli", "crate::runtime"]),
    ("fleet", &["rmcp", "crate::mcp", "crate::config", "crate::cli", "crate::registry"]),
    ("config", &["rmcp", "crate::mcp", "crate::cli"]),
    ("mcp", &["crate::cli"]),
    // Every layer counts and traces through it: it may use none of them (its log filter names
    // rmcp's target, a string, so rmcp is not listed).
    ("telemetry", &["crate::mcp", "crate::config", "crate::cli", "crate::registry", "crate::runtime", "crate::fleet"]),
    // Every layer's protections carry its switches: it may use none of them.
    (
        "failpoint",
        &[
            "crate::mcp",
            "crate::config",
            "crate::cli",
            "crate::registry",
            "crate::runtime",
            "crate::fleet",
            "crate::telemetry",
        ],
    ),
];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, forbidden) in FORBIDDEN {
        let mut files = Vec::new();
        // A layer is a folder, or a single file (`failpoint.rs`).
        let single = src.join(format!("{layer}.rs"));
        if single.is_file() {
            files.push(single);
        } else {
            rust_files(&src.join(layer), &mut files);
        }
        assert!(!files.is_empty(), "no files under src/{layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                // Comments may speak of other layers; code may not use them.
                let code = line.split("//").next().unwrap_or_default();
                for item in forbidden.iter().filter(|item| names(code, item)) {
                    violations.push(format!("{}:{}: {layer} names `{item}`", file.display(), number + 1));
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
