//! The import graph between the files of `host/src`: which file names an item that another file
//! defines. Every `use` and every path through `crate::`, `super::`, `self::`, a child module or
//! an imported module counts, and each path is resolved to the file that *defines* the item,
//! following re-exports (`pub use`) and imports of the module it passes through, so a `mod.rs`
//! that only re-exports is not mistaken for the item's home.
//!
//! The text is read by `reading.rs` (a scrubber and a few patterns, not a parser); the unit
//! tests in `circles.rs` say what it resolves.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::reading::{ModulePath, code_paths, definitions, flatten, inline_modules, scrub, use_trees};

/// One file: its path relative to `src/` (`runtime/mod.rs`) and its text.
pub(super) struct Source {
    pub(super) path: String,
    pub(super) text: String,
}

/// Edges from a file to the files it imports from, by relative path, with the first line of
/// each import (for the report).
pub(super) type Graph = BTreeMap<String, BTreeMap<String, usize>>;

/// Builds the graph of `sources` (a crate's files, `lib.rs` at the root).
pub(super) fn graph(sources: &[Source]) -> Graph {
    let files: Vec<File> = sources.iter().map(File::read).collect();
    let crate_ = Crate::index(&files);
    let mut graph = Graph::new();
    for (index, file) in files.iter().enumerate() {
        let edges = graph.entry(file.path.clone()).or_default();
        for (target, offset) in crate_.references(file) {
            if target != index {
                let line = file.line_at(offset);
                let first = edges.entry(files[target].path.clone()).or_insert(line);
                *first = (*first).min(line);
            }
        }
    }
    graph
}

struct File {
    path: String,
    /// The text with comments and literals blanked (same offsets as the original).
    code: String,
    module: ModulePath,
    /// Inline modules (`mod tests { .. }`): byte range and name.
    inline: Vec<(usize, usize, String)>,
}

impl File {
    fn read(source: &Source) -> File {
        let code = scrub(&source.text);
        let inline = inline_modules(&code);
        File { path: source.path.clone(), module: module_of(&source.path), code, inline }
    }

    /// The module at `offset`: the file's, and the inline modules around it.
    fn module_at(&self, offset: usize) -> ModulePath {
        let mut module = self.module.clone();
        module.extend(
            self.inline.iter().filter(|(start, end, _)| (*start..*end).contains(&offset)).map(|(_, _, n)| n.clone()),
        );
        module
    }

    fn line_at(&self, offset: usize) -> usize {
        self.code[..offset].matches('\n').count() + 1
    }
}

/// `runtime/sandbox/mod.rs` → `runtime::sandbox`; `runtime/plugin/loaded.rs` → `runtime::plugin::loaded`.
fn module_of(path: &str) -> ModulePath {
    let trimmed = path.trim_end_matches(".rs");
    let mut segments: ModulePath = trimmed.split('/').map(str::to_owned).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    segments
}

/// A `use` binding: the name it brings into its module (`None` for a glob), and the absolute
/// path it stands for (or the module a glob imports from).
struct Binding {
    name: Option<String>,
    path: ModulePath,
}

struct Crate {
    /// Every module, file or inline, and the file it lives in.
    modules: HashMap<ModulePath, usize>,
    /// Items each module defines.
    items: HashMap<ModulePath, BTreeSet<String>>,
    /// `use` bindings and globs per module.
    bindings: HashMap<ModulePath, Vec<Binding>>,
    /// `#[macro_export]` macros live at the crate root wherever they are written.
    macros: HashMap<String, usize>,
}

impl Crate {
    fn index(files: &[File]) -> Crate {
        let mut crate_ =
            Crate { modules: HashMap::new(), items: HashMap::new(), bindings: HashMap::new(), macros: HashMap::new() };
        for (index, file) in files.iter().enumerate() {
            crate_.modules.insert(file.module.clone(), index);
            for (start, _, _) in &file.inline {
                crate_.modules.insert(file.module_at(*start + 1), index);
            }
        }
        for (index, file) in files.iter().enumerate() {
            for (offset, keyword, name) in definitions(&file.code) {
                if keyword == "macro_rules" {
                    crate_.macros.insert(name.clone(), index);
                }
                crate_.items.entry(file.module_at(offset)).or_default().insert(name);
            }
            for (offset, _, tree) in use_trees(&file.code) {
                let module = file.module_at(offset);
                for (path, name) in flatten(&tree) {
                    if let Some(path) = crate_.absolute(&module, &path) {
                        crate_.bindings.entry(module.clone()).or_default().push(Binding { name, path });
                    }
                }
            }
        }
        crate_
    }

    /// `path` as written in `module`, made absolute; `None` for another crate's path.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<ModulePath> {
        let mut base: ModulePath = module.to_vec();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = base.clone();
                child.push(first.to_owned());
                let bound = self.binding(module, first).map(|b| b.path.clone());
                if self.modules.contains_key(&child) {
                } else if let Some(bound) = bound {
                    base = bound;
                    rest = &rest[1..];
                } else {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn binding(&self, module: &[String], name: &str) -> Option<&Binding> {
        self.bindings.get(module)?.iter().find(|b| b.name.as_deref() == Some(name))
    }

    /// The file defining what the absolute `path` names (a module's own file if the item is
    /// none it knows, e.g. a variant's path cut short).
    fn resolve(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 16 {
            return None;
        }
        let known = (0..=path.len()).rev().find(|at| self.modules.contains_key(&path[..*at]))?;
        if known == path.len() {
            // A module itself: what is used through it is resolved where it is used. Unless
            // its parent also binds the name to an item (`pub use discover::discover;`, a
            // function named after its module: another namespace), which a path in code that
            // ends here calls: `crate::runtime::catalog::discover(..)` went unseen.
            let (name, parent) = path.split_last()?;
            let item = self.binding(parent, name).map(|b| b.path.clone()).filter(|item| item.as_slice() != path)?;
            return self.resolve(&item, depth + 1);
        }
        let module = &path[..known];
        let name = &path[known];
        if self.items.get(module).is_some_and(|items| items.contains(name)) {
            return self.modules.get(module).copied();
        }
        if let Some(binding) = self.binding(module, name) {
            let mut through = binding.path.clone();
            through.extend(path[known + 1..].iter().cloned());
            return self.resolve(&through, depth + 1);
        }
        let globs = self.bindings.get(module).into_iter().flatten().filter(|b| b.name.is_none());
        for glob in globs {
            let mut through = glob.path.clone();
            through.extend(path[known..].iter().cloned());
            if let Some(found) = self.resolve(&through, depth + 1) {
                return Some(found);
            }
        }
        if let Some(found) = self.macros.get(name).filter(|_| module.is_empty()) {
            return Some(*found);
        }
        self.modules.get(module).copied()
    }

    /// The files `file` imports from, each with the offset of the import: its `use` trees, and
    /// paths in code starting at `crate`, `super`, `self`, a child module or a name a `use`
    /// bound.
    fn references(&self, file: &File) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let uses = use_trees(&file.code);
        for (start, _, tree) in &uses {
            let module = file.module_at(*start);
            for (path, name) in flatten(tree) {
                let Some(path) = self.absolute(&module, &path) else { continue };
                // A glob may use anything of the module: it depends on the module's file.
                let target = if name.is_none() { self.modules.get(&path).copied() } else { self.resolve(&path, 0) };
                found.extend(target.map(|target| (target, *start)));
            }
        }
        for (offset, path) in code_paths(&file.code) {
            if uses.iter().any(|(start, end, _)| (*start..*end).contains(&offset)) {
                continue;
            }
            let module = file.module_at(offset);
            let target = self.absolute(&module, &path).and_then(|path| self.resolve(&path, 0));
            found.extend(target.map(|target| (target, offset)));
        }
        found
    }
}
