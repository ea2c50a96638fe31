//! No import circles between files: no file of `host/src` imports from a file that imports from
//! it back, directly or through others. A circle is found as a strongly connected component of
//! the import graph (`imports.rs`) and reported with its edges and their lines.

use super::imports::{Graph, Source, graph};
use std::collections::BTreeMap;
use std::path::Path;

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

/// A circle as the edges inside it: `a.rs:12 → b.rs`.
fn describe(graph: &Graph, circle: &[String]) -> String {
    let mut lines = Vec::new();
    for from in circle {
        for (to, line) in graph.get(from).into_iter().flatten() {
            if circle.contains(to) {
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
fn no_file_imports_a_file_that_imports_it_back() {
    let graph = graph(&sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")));
    let found = circles(&graph);
    let report: Vec<String> = found.iter().map(|circle| describe(&graph, circle)).collect();
    assert!(found.is_empty(), "{} import circles between files:\n{}", found.len(), report.join("\n\n"));
}

fn crate_of(files: &[(&str, &str)]) -> Graph {
    let sources: Vec<Source> =
        files.iter().map(|(path, text)| Source { path: (*path).to_owned(), text: (*text).to_owned() }).collect();
    graph(&sources)
}

#[test]
fn the_checker_finds_a_circle_through_super() {
    let graph = crate_of(&[
        ("lib.rs", "mod a;"),
        ("a/mod.rs", "mod b;\npub(crate) struct Top;\nfn f() { b::helper(); }"),
        ("a/b.rs", "use super::Top;\npub(crate) fn helper() {}"),
    ]);
    assert_eq!(circles(&graph), vec![vec!["a/b.rs".to_owned(), "a/mod.rs".to_owned()]]);
    assert!(describe(&graph, &circles(&graph)[0]).contains("a/b.rs:1 imports from a/mod.rs"));
}

#[test]
fn the_checker_resolves_a_path_to_the_file_that_defines_the_item() {
    // `c` names `Thing` through the re-export in `a/mod.rs`: the edge goes to `b.rs`, which
    // imports from `c` in turn; `a/mod.rs` re-exports only and is in no circle.
    let graph = crate_of(&[
        ("lib.rs", "mod a;"),
        ("a/mod.rs", "mod b;\nmod c;\npub(crate) use b::Thing;"),
        ("a/b.rs", "use super::c::Other;\npub(crate) struct Thing;"),
        ("a/c.rs", "pub(crate) struct Other;\nfn f() -> crate::a::Thing { todo!() }"),
    ]);
    assert_eq!(circles(&graph), vec![vec!["a/b.rs".to_owned(), "a/c.rs".to_owned()]]);
    assert_eq!(graph["a/c.rs"].keys().collect::<Vec<_>>(), ["a/b.rs"]);
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
