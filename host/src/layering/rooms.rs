//! Inside the runtime, the rooms stand in one order, and a room imports only from the rooms
//! after it (over the import graph of `imports.rs`, so a path through a re-export counts where
//! the item is defined). `runtime/mod.rs`, the runtime's face to the layers above, is in no
//! room.

use super::circles::crate_of;
use super::imports::{Graph, graph};

/// The runtime's rooms, top to bottom, each with the boundary it keeps to the rooms below.
const RUNTIME_ROOMS: &[(&str, &str)] = &[
    ("catalog", "routes calls to plugins and settles their names; nothing below knows the catalog"),
    ("tasks", "keeps the records of calls that go on as tasks; no plugin or sandbox knows tasks"),
    ("plugin", "a plugin as loaded runs its calls in sandboxes; a sandbox knows no plugin"),
    ("sandbox", "one call in a fresh store; it hands effects their grants and its log"),
    ("effects", "what a guest does to the world, under grants it is handed; it knows no sandbox"),
    ("grants", "values the operator and the user give; they run nothing"),
    ("skills", "skill files read, checked and digested; they run nothing and know no plugin"),
    ("engine", "wasmtime, compilation and the WIT's bindings; it knows no plugin, call or grant"),
];

/// The room of a file under `runtime/`, by its folder.
fn room(file: &str) -> Option<usize> {
    let inside = file.strip_prefix("runtime/")?;
    let folder = inside.split('/').next()?;
    RUNTIME_ROOMS.iter().position(|(name, _)| *name == folder)
}

/// Every import from a room into a room above it, as `file:line imports from file (why not)`.
fn upward(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for (from, edges) in graph {
        let Some(below) = room(from) else { continue };
        for (to, line) in edges {
            if let Some(above) = room(to).filter(|above| *above < below) {
                let (name, rule) = RUNTIME_ROOMS[above];
                found.push(format!("{from}:{line} imports from {to}, but {name} {rule}"));
            }
        }
    }
    found
}

#[test]
fn each_runtime_room_imports_only_from_the_rooms_below_it() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward(&graph(&super::circles::sources_under(&src)));
    assert!(found.is_empty(), "imports against the runtime's rooms:\n{}", found.join("\n"));
}

#[test]
fn the_room_check_finds_an_import_upward() {
    let files = [
        ("lib.rs", "mod runtime;"),
        ("runtime/mod.rs", "mod catalog;\nmod sandbox;"),
        ("runtime/catalog/mod.rs", "pub(crate) struct Catalog;"),
        ("runtime/sandbox/mod.rs", "fn f(_: &crate::runtime::catalog::Catalog) {}"),
    ];
    let found = upward(&crate_of(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("runtime/sandbox/mod.rs:1 imports from runtime/catalog/mod.rs"), "{found:?}");
}

/// A call through a path to a function that has its module's name (re-exported by the parent)
/// is an import too: the module and the function are in different namespaces.
#[test]
fn the_room_check_finds_a_call_upward_through_a_path() {
    let files = [
        ("lib.rs", "mod runtime;"),
        ("runtime/mod.rs", "mod catalog;\nmod engine;"),
        ("runtime/catalog/mod.rs", "mod discover;\npub use discover::discover;"),
        ("runtime/catalog/discover.rs", "pub fn discover() {}"),
        ("runtime/engine/mod.rs", "fn f() {\n    crate::runtime::catalog::discover();\n}"),
    ];
    let found = upward(&crate_of(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("runtime/engine/mod.rs:2 imports from runtime/catalog/discover.rs"), "{found:?}");
}
