//! The tools that walk directories: `list_directory`, `list_directory_with_sizes`,
//! `directory_tree`, `search_files`, and `get_file_info`. Entries come sorted by the bytes of
//! their names, as Node's `readdir` (libuv's `scandir` with its `strcmp` sort) returns them to
//! the reference; patterns are minimatch globs with
//! `dot: true` (globset, `*` stopping at `/`).

use std::fs;

use globset::{GlobBuilder, GlobMatcher};
use mcpbox_sdk::host::granted_dirs;
use serde_json::{Map, Value, json};

use crate::{Outcome, answer, node, paths, string_arg, strings_arg};

struct Entry {
    name: String,
    is_dir: bool,
}

fn entries(path: &str) -> Result<Vec<Entry>, String> {
    let listing = fs::read_dir(path).map_err(|e| node::error(&e, "scandir", &[path]))?;
    let mut entries: Vec<Entry> = listing
        .filter_map(Result::ok)
        .map(|entry| Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            is_dir: entry.file_type().is_ok_and(|t| t.is_dir()),
        })
        .collect();
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Ok(entries)
}

fn tag(is_dir: bool) -> &'static str {
    if is_dir { "[DIR]" } else { "[FILE]" }
}

pub(crate) fn list_directory(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let lines: Vec<String> = entries(&path)?.iter().map(|e| format!("{} {}", tag(e.is_dir), e.name)).collect();
    answer(lines.join("\n"))
}

pub(crate) fn list_directory_with_sizes(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let by_size = match args.get("sortBy") {
        None => false,
        Some(Value::String(order)) if order == "name" => false,
        Some(Value::String(order)) if order == "size" => true,
        _ => return Err("Invalid arguments: `sortBy` must be \"name\" or \"size\"".into()),
    };
    let mut sized: Vec<(Entry, u64)> = entries(&path)?
        .into_iter()
        .map(|entry| {
            let size = fs::metadata(paths::join(&path, &entry.name)).map_or(0, |m| m.len());
            (entry, size)
        })
        .collect();
    let files = sized.iter().filter(|(e, _)| !e.is_dir).count();
    let dirs = sized.len() - files;
    let total: u64 = sized.iter().filter(|(e, _)| !e.is_dir).map(|(_, size)| size).sum();
    if by_size {
        sized.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    } else {
        sized.sort_by(|a, b| node::locale_compare(&a.0.name, &b.0.name));
    }
    let mut lines: Vec<String> = sized
        .iter()
        .map(|(entry, size)| {
            let size = if entry.is_dir { String::new() } else { node::pad_start(&node::format_size(*size), 10) };
            format!("{} {} {size}", tag(entry.is_dir), node::pad_end(&entry.name, 30))
        })
        .collect();
    lines.push(String::new());
    lines.push(format!("Total: {files} files, {dirs} directories"));
    lines.push(format!("Combined size: {}", node::format_size(total)));
    answer(lines.join("\n"))
}

/// A minimatch pattern (`dot: true`); one that does not compile matches nothing.
fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern).literal_separator(true).backslash_escape(true).build().ok().map(|g| g.compile_matcher())
}

fn matches(pattern: &Option<GlobMatcher>, path: &str) -> bool {
    pattern.as_ref().is_some_and(|p| p.is_match(path))
}

pub(crate) fn directory_tree(args: &Value) -> Outcome {
    let root = string_arg(args, "path")?;
    let excludes: Vec<[Option<GlobMatcher>; 3]> = strings_arg(args, "excludePatterns")?
        .iter()
        .map(|p| {
            // A pattern without `*` excludes that name anywhere, and everything under it.
            if p.contains('*') {
                [glob(p), None, None]
            } else {
                [glob(p), glob(&format!("**/{p}")), glob(&format!("**/{p}/**"))]
            }
        })
        .collect();
    fn build(current: &str, relative: &str, excludes: &[[Option<GlobMatcher>; 3]]) -> Result<Vec<Value>, String> {
        let valid = paths::validate(current)?;
        let mut tree = Vec::new();
        for entry in entries(&valid)? {
            let entry_relative =
                if relative.is_empty() { entry.name.clone() } else { format!("{relative}/{}", entry.name) };
            if excludes.iter().any(|globs| globs.iter().any(|g| matches(g, &entry_relative))) {
                continue;
            }
            let mut node = Map::new();
            node.insert("name".into(), json!(entry.name));
            node.insert("type".into(), json!(if entry.is_dir { "directory" } else { "file" }));
            if entry.is_dir {
                node.insert(
                    "children".into(),
                    Value::Array(build(&paths::join(current, &entry.name), &entry_relative, excludes)?),
                );
            }
            tree.push(Value::Object(node));
        }
        Ok(tree)
    }
    let tree = build(root, "", &excludes)?;
    answer(serde_json::to_string_pretty(&tree).map_err(|e| e.to_string())?)
}

pub(crate) fn search_files(args: &Value) -> Outcome {
    let root = paths::validate(string_arg(args, "path")?)?;
    let pattern = glob(string_arg(args, "pattern")?);
    let excludes: Vec<Option<GlobMatcher>> = strings_arg(args, "excludePatterns")?.iter().map(|p| glob(p)).collect();
    let mut results = Vec::new();
    fn search(
        current: &str,
        relative: &str,
        pattern: &Option<GlobMatcher>,
        excludes: &[Option<GlobMatcher>],
        results: &mut Vec<String>,
    ) {
        let Ok(listing) = entries(current) else { return };
        for entry in listing {
            let full = paths::join(current, &entry.name);
            if paths::validate(&full).is_err() {
                continue;
            }
            let entry_relative =
                if relative.is_empty() { entry.name.clone() } else { format!("{relative}/{}", entry.name) };
            if excludes.iter().any(|g| matches(g, &entry_relative)) {
                continue;
            }
            if matches(pattern, &entry_relative) {
                results.push(full.clone());
            }
            if entry.is_dir {
                search(&full, &entry_relative, pattern, excludes, results);
            }
        }
    }
    search(&root, "", &pattern, &excludes, &mut results);
    answer(if results.is_empty() { "No matches found".to_owned() } else { results.join("\n") })
}

pub(crate) fn get_file_info(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let meta = fs::metadata(&path).map_err(|e| node::error(&e, "stat", &[&path]))?;
    let date = |time: std::io::Result<std::time::SystemTime>| time.map(|t| node::date(t.into())).unwrap_or_default();
    // WASI reports no permission bits: what the grant allows stands in for them.
    let writable =
        granted_dirs().iter().any(|dir| dir.writable && paths::is_within(&path, std::slice::from_ref(&dir.guest_path)));
    let permissions = match (meta.is_dir(), writable) {
        (true, true) => "755",
        (true, false) => "555",
        (false, true) => "644",
        (false, false) => "444",
    };
    let lines = [
        format!("size: {}", meta.len()),
        format!("created: {}", date(meta.created().or_else(|_| meta.modified()))),
        format!("modified: {}", date(meta.modified())),
        format!("accessed: {}", date(meta.accessed())),
        format!("isDirectory: {}", meta.is_dir()),
        format!("isFile: {}", meta.is_file()),
        format!("permissions: {permissions}"),
    ];
    answer(lines.join("\n"))
}
