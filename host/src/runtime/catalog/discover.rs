//! Which files are plugins: directories expand to their `.wasm` files (sorted, so that load
//! order and reports are deterministic), files are kept as given.

use std::path::PathBuf;

use anyhow::anyhow;

use super::LoadProblem;

/// Expands directories into their `.wasm` files (sorted) and keeps files as given; a path that
/// is neither is a problem naming it.
pub fn discover(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<LoadProblem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        if path.is_dir() {
            match std::fs::read_dir(path) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| is_plugin_file(p) && p.is_file())
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => problems.push(LoadProblem {
                    path: path.clone(),
                    error: anyhow!("cannot read plugin directory {}: {e}", path.display()),
                }),
            }
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            problems.push(LoadProblem {
                path: path.clone(),
                error: anyhow!("plugin path {} does not exist", path.display()),
            });
        }
    }
    (files, problems)
}

/// Whether `path` names a plugin file (by its extension).
pub(crate) fn is_plugin_file(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm")
}
