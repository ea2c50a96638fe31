//! No import circles between rooms: a folder of `host/src` is a room (a nested folder one of its
//! own), and no room imports from a room that imports from it back, directly or through others.
//! The files of one folder may use each other, and a folder may use what the folders around it
//! hold (a child its parent's items, which is no circle: the parent made the child). A circle is
//! found as a strongly connected component of the rooms' graph, made from the import graph of
//! `imports.rs`, and reported with the file edges that make it and their lines.

use super::imports::{Graph, Source, graph};
use std::collections::BTreeMap;
use std::path::Path;

/// The room of a file: its folder (`mcp/call/steps.rs` and `mcp/call/mod.rs` → `mcp/call`;
/// `lib.rs` → the crate's root, ``).
fn room_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// Whether `room` is `outer` or lies inside it.
fn within(room: &str, outer: &str) -> bool {
    outer.is_empty() || room == outer || room.strip_prefix(outer).is_some_and(|rest| rest.starts_with('/'))
}

/// The rooms' graph: an edge for each import from a file of one room into a file of another
/// that does not hold it, with the first line of the first file that makes it.
fn rooms(files: &Graph) -> Graph {
    let mut rooms = Graph::new();
    for (from, edges) in files {
        let here = room_of(from);
        let out = rooms.entry(here.to_owned()).or_default();
        for (to, line) in edges {
            let there = room_of(to);
            if !within(here, there) {
                out.entry(there.to_owned()).or_insert(*line);
            }
        }
    }
    rooms
}

/// The files of `graph` that reach each other, each circle sorted, smallest first.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively deep enough for a crate (recursion depth = longest path).
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, file: &'g str) {
            let number = self.index.len();
            self.index.insert(file, number);
            self.low.insert(file, number);
            self.stack.push(file);
            for next in self.graph.get(file).into_iter().flat_map(|edges| edges.keys()) {
                if !self.index.contains_key(next.as_str()) {
                    self.visit(next);
                    let low = self.low[file].min(self.low[next.as_str()]);
                    self.low.insert(file, low);
                } else if self.stack.contains(&next.as_str()) {
                    let low = self.low[file].min(self.index[next.as_str()]);
                    self.low.insert(file, low);
                }
            }
            if self.low[file] == self.index[file] {
                let at = self.stack.iter().rposition(|f| *f == file).unwrap_or_default();
                let mut circle: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if circle.len() > 1 {
                    circle.sort();
                    self.found.push(circle);
                }
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_str()) {
            walk.visit(file);
        }
    }
    walk.found.sort_by_key(|circle| (circle.len(), circle.clone()));
    walk.found
}

/// A circle of rooms as the file edges that make it: `a/x.rs:12 imports from b/y.rs`.
fn describe(files: &Graph, circle: &[String]) -> String {
    let mut lines = Vec::new();
    for (from, edges) in files {
        let here = room_of(from);
        for (to, line) in edges {
            let there = room_of(to);
            if circle.iter().any(|r| r == here) && circle.iter().any(|r| r == there) && !within(here, there) {
                lines.push(format!("  {from}:{line} imports from {to}"));
            }
        }
    }
    lines.join("\n")
}

/// The files of the crate under `src` (without `main.rs`, the binary, another crate).
pub(super) fn sources_under(src: &Path) -> Vec<Source> {
    let mut found = Vec::new();
    sources(src, src, &mut found);
    found
}

fn sources(dir: &Path, root: &Path, found: &mut Vec<Source>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if relative != "main.rs" {
                found.push(Source { text: std::fs::read_to_string(&path).unwrap(), path: relative });
            }
        }
    }
}

#[test]
fn no_room_imports_a_room_that_imports_it_back() {
    let files = graph(&sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")));
    let found = circles(&rooms(&files));
    let report: Vec<String> = found.iter().map(|circle| describe(&files, circle)).collect();
    assert!(found.is_empty(), "{} import circles between rooms:\n{}", found.len(), report.join("\n\n"));
}

/// The graph of a crate made of `files` (path, text), for the checkers' own tests.
pub(super) fn crate_of(files: &[(&str, &str)]) -> Graph {
    let sources: Vec<Source> =
        files.iter().map(|(path, text)| Source { path: (*path).to_owned(), text: (*text).to_owned() }).collect();
    graph(&sources)
}

#[test]
fn the_checker_finds_a_circle_through_super() {
    let files = crate_of(&[
        ("lib.rs", "mod a;\nmod c;"),
        ("a/mod.rs", "mod b;"),
        ("a/b/mod.rs", "use super::super::c::Top;\npub(crate) fn helper() {}"),
        ("c/mod.rs", "pub(crate) struct Top;\nfn f() { crate::a::b::helper(); }"),
    ]);
    let found = circles(&rooms(&files));
    assert_eq!(found, vec![vec!["a/b".to_owned(), "c".to_owned()]]);
    let report = describe(&files, &found[0]);
    assert!(report.contains("a/b/mod.rs:1 imports from c/mod.rs"), "{report}");
    assert!(report.contains("c/mod.rs:2 imports from a/b/mod.rs"), "{report}");
}

#[test]
fn the_checker_resolves_a_path_to_the_file_that_defines_the_item() {
    // `c` names `Thing` through the re-export in `a/mod.rs`: the edge goes to `b`, which
    // imports from `c` in turn; `a`, whose `mod.rs` re-exports only, is in no circle.
    let files = crate_of(&[
        ("lib.rs", "mod a;"),
        ("a/mod.rs", "mod b;\nmod c;\npub(crate) use b::Thing;"),
        ("a/b/mod.rs", "use super::c::Other;\npub(crate) struct Thing;"),
        ("a/c/mod.rs", "pub(crate) struct Other;\nfn f() -> crate::a::Thing { todo!() }"),
    ]);
    assert_eq!(circles(&rooms(&files)), vec![vec!["a/b".to_owned(), "a/c".to_owned()]]);
    assert_eq!(files["a/c/mod.rs"].keys().collect::<Vec<_>>(), ["a/b/mod.rs"]);
}

/// The files of one folder use each other, and a child folder uses its parent's items while
/// the parent uses the child's: no circle between rooms. Two sibling folders that use each
/// other, through a file each, are one.
#[test]
fn files_of_a_folder_and_a_child_and_its_parent_may_use_each_other() {
    let files = crate_of(&[
        ("lib.rs", "mod a;\nmod d;"),
        ("a/mod.rs", "mod x;\nmod y;\nmod b;"),
        ("a/x.rs", "pub(crate) struct X;\nfn f(_: super::y::Y) {}"),
        ("a/y.rs", "pub(crate) struct Y;\nfn f(_: super::x::X, _: super::b::B) {}"),
        ("a/b/mod.rs", "pub(crate) struct B;\nfn f(_: crate::a::x::X) {}"),
        ("d/mod.rs", "fn f(_: crate::a::x::X) {}"),
    ]);
    assert!(files["a/x.rs"].contains_key("a/y.rs") && files["a/y.rs"].contains_key("a/x.rs"), "{files:?}");
    assert!(circles(&rooms(&files)).is_empty(), "{:?}", rooms(&files));
    let crossed = crate_of(&[
        ("lib.rs", "mod a;\nmod d;"),
        ("a/mod.rs", "mod x;"),
        ("a/x.rs", "pub(crate) struct X;\nfn f(_: crate::d::D) {}"),
        ("d/mod.rs", "pub(crate) struct D;\nfn f(_: crate::a::x::X) {}"),
    ]);
    assert_eq!(circles(&rooms(&crossed)), vec![vec!["a".to_owned(), "d".to_owned()]]);
}

#[test]
fn the_checker_ignores_tests_comments_strings_and_other_crates() {
    let graph = crate_of(&[
        ("lib.rs", "mod a;\nmod b;"),
        (
            "a.rs",
            "pub(crate) fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n// crate::b::g()\nconst S: &str = \"crate::b::g\";\nuse std::fmt;",
        ),
        ("b.rs", "pub(crate) fn g() { crate::a::f(); let c = 'x'; let r = r#\"super::a\"#; }"),
    ]);
    assert!(circles(&graph).is_empty(), "{graph:?}");
    assert!(graph["a.rs"].is_empty(), "{graph:?}");
    assert_eq!(graph["b.rs"].keys().collect::<Vec<_>>(), ["a.rs"]);
}
