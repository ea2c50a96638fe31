//! The import graph between the files of `host/src`: which file names an item that another file
//! defines. Every `use` and every path through `crate::`, `super::`, `self::`, a child module or
//! an imported module counts, and each path is resolved to the file that *defines* the item,
//! following re-exports (`pub use`) and imports of the module it passes through, so a `mod.rs`
//! that only re-exports is not mistaken for the item's home.
//!
//! It reads Rust with a scrubber and a few patterns, not a parser: enough for the code of this
//! crate (no `#[path]`, no macros that make modules), and its unit tests say what it resolves.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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

type ModulePath = Vec<String>;

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
            return None; // A module itself: what is used through it is resolved where it is used.
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

/// `text` with comments, string and character literals blanked to spaces (newlines kept), so
/// that what remains is code at the same offsets.
fn scrub(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|b| *b == b'\n').map_or(bytes.len(), |n| at + n);
            blank(&mut out, at, end);
            at = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut end) = (0usize, at);
            while end < bytes.len() {
                if bytes[end..].starts_with(b"/*") {
                    depth += 1;
                    end += 2;
                } else if bytes[end..].starts_with(b"*/") {
                    depth -= 1;
                    end += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    end += 1;
                }
            }
            blank(&mut out, at, end);
            at = end;
        } else if rest[0] == b'r'
            && (at == 0 || !ident(bytes[at - 1]) || (bytes[at - 1] == b'b' && (at < 2 || !ident(bytes[at - 2]))))
            && rest[1..].iter().take_while(|b| **b == b'#').count() + 1 < rest.len()
            && rest[1 + rest[1..].iter().take_while(|b| **b == b'#').count()] == b'"'
        {
            let hashes = rest[1..].iter().take_while(|b| **b == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let open = at + 2 + hashes;
            let end = bytes[open..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(bytes.len(), |n| open + n + close.len());
            blank(&mut out, at + 1, end);
            at = end;
        } else if rest[0] == b'"' {
            let mut end = at + 1;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, at, end + 1);
            at = end + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', or one multi-byte character), or a
            // lifetime ('a), which stays.
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|b| *b == b'\'').map(|n| at + 2 + n + 1)
            } else {
                let width = std::str::from_utf8(&rest[1..rest.len().min(5)]).map_or_else(
                    |e| {
                        std::str::from_utf8(&rest[1..1 + e.valid_up_to()])
                            .unwrap_or_default()
                            .chars()
                            .next()
                            .map_or(1, char::len_utf8)
                    },
                    |s| s.chars().next().map_or(1, char::len_utf8),
                );
                (rest.get(1 + width) == Some(&b'\'')).then_some(at + 2 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut out, at, end);
                    at = end;
                }
                None => at += 1,
            }
        } else {
            at += 1;
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The identifiers of `code` with their offsets.
fn identifiers(code: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_alphabetic() || bytes[at] == b'_' {
            let end = bytes[at..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .map_or(bytes.len(), |n| at + n);
            found.push((at, &code[at..end]));
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

/// Inline modules: `mod NAME {` to its closing brace.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let words = identifiers(code);
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let ((_, keyword), (at, name)) = (pair[0], pair[1]);
        let after = code[at + name.len()..].trim_start();
        if keyword == "mod" && after.starts_with('{') {
            let open = code.len() - after.len();
            let mut depth = 0usize;
            let close = code[open..].char_indices().find_map(|(n, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(open + n)
            });
            found.push((open, close.unwrap_or(code.len()), name.to_owned()));
        }
    }
    found
}

/// Items defined in `code`: offset, keyword and name.
fn definitions(code: &str) -> Vec<(usize, &str, String)> {
    const KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "const", "static", "union", "macro_rules"];
    identifiers(code)
        .windows(2)
        .filter(|pair| KEYWORDS.contains(&pair[0].1))
        .map(|pair| (pair[1].0, pair[0].1, pair[1].1.to_owned()))
        .collect()
}

/// `use` declarations: where the tree starts and ends, and the tree without whitespace
/// (`crate::a::{b,c::D as E}`).
fn use_trees(code: &str) -> Vec<(usize, usize, String)> {
    identifiers(code)
        .into_iter()
        .filter(|(at, word)| *word == "use" && !code[..*at].trim_end().ends_with("::"))
        .filter_map(|(at, _)| {
            let start = at + 3;
            let end = start + code[start..].find(';')?;
            let tree: String = code[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
            Some((start, end, tree.replace(" as ", "@").replace(' ', "")))
        })
        .collect()
}

/// A use tree's imports: each path and the name it binds (`None` for a glob).
fn flatten(tree: &str) -> Vec<(ModulePath, Option<String>)> {
    let mut found = Vec::new();
    flatten_into(&[], tree, &mut found);
    found
}

fn flatten_into(prefix: &[String], tree: &str, found: &mut Vec<(ModulePath, Option<String>)>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let mut path = prefix.to_vec();
        path.extend(tree[..open].split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            flatten_into(&path, part, found);
        }
        return;
    }
    let (tree, alias) = tree.split_once('@').map_or((tree, None), |(t, a)| (t, Some(a.to_owned())));
    let mut path = prefix.to_vec();
    path.extend(tree.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
    match path.last().map(String::as_str) {
        Some("*") => {
            path.pop();
            found.push((path, None));
        }
        Some("self") => {
            path.pop();
            let name = alias.or_else(|| path.last().cloned());
            found.push((path, name));
        }
        Some(last) => {
            let name = alias.unwrap_or_else(|| last.to_owned());
            found.push((path, Some(name)));
        }
        None => {}
    }
}

/// The parts of a group (`a,b::{c,d},e`) split at its top-level commas.
fn split_top(group: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Paths of two or more segments in code (`a::b`, `super::c::D`), each from its first segment.
fn code_paths(code: &str) -> Vec<(usize, ModulePath)> {
    let words = identifiers(code);
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let (start, first) = words[at];
        let mut path = vec![first.to_owned()];
        let mut next = at + 1;
        let mut end = start + first.len();
        while next < words.len() && &code[end..words[next].0] == "::" {
            path.push(words[next].1.to_owned());
            end = words[next].0 + words[next].1.len();
            next += 1;
        }
        if path.len() > 1 && !code[..start].ends_with("::") {
            found.push((start, path));
        }
        at = next;
    }
    found
}
