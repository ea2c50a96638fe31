//! Inside the runtime and inside the protocol layer, the rooms stand in one order, and a room
//! imports only from the rooms after it (over the import graph of `imports.rs`, so a path
//! through a re-export counts where the item is defined). A layer's `mod.rs` (the runtime's face
//! to the layers above) and its loose files (the protocol layer's `session.rs` and `state.rs`,
//! the types every room shares) are in no room; a room nested in another counts as its outer
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

/// The protocol layer's rooms, top to bottom (`mcp/mod.rs`).
const MCP_ROOMS: &[(&str, &str)] = &[
    ("transport", "carries bytes to rmcp and back; no room of the protocol layer knows a transport"),
    ("server", "answers one connection's requests that run nothing; a call knows no handler"),
    ("call", "runs a request's plugin after its steps; skills and the wire words know no call"),
    ("skills", "serves the skills extension; the wire words know no skill"),
    ("wire", "the words every room speaks; it knows no session, request or call"),
];

/// The layers whose folders are rooms in one order.
const LAYERS: &[(&str, &[(&str, &str)])] = &[("runtime/", RUNTIME_ROOMS), ("mcp/", MCP_ROOMS)];

/// The layer (its index in [`LAYERS`]) and room of a file, by its folder under the layer.
fn room(file: &str) -> Option<(usize, usize)> {
    LAYERS.iter().enumerate().find_map(|(layer, (prefix, rooms))| {
        let (folder, _) = file.strip_prefix(prefix)?.split_once('/')?;
        Some((layer, rooms.iter().position(|(name, _)| *name == folder)?))
    })
}

/// Every import from a room into a room above it in the same layer, as `file:line imports from
/// file, but (the room above) (its rule)`.
fn upward(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for (from, edges) in graph {
        let Some((layer, below)) = room(from) else { continue };
        for (to, line) in edges {
            if let Some((_, above)) = room(to).filter(|&(other, above)| other == layer && above < below) {
                let (name, rule) = LAYERS[layer].1[above];
                found.push(format!("{from}:{line} imports from {to}, but {name} {rule}"));
            }
        }
    }
    found
}

#[test]
fn each_room_imports_only_from_the_rooms_below_it() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward(&graph(&super::circles::sources_under(&src)));
    assert!(found.is_empty(), "imports against the rooms' order:\n{}", found.join("\n"));
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

/// The protocol layer's rooms too; its loose files (`session.rs`) and a room nested in another
/// (`call/checks`, counted as `call`) follow the same rule.
#[test]
fn the_room_check_finds_an_import_upward_in_the_protocol_layer() {
    let files = [
        ("lib.rs", "mod mcp;"),
        ("mcp/mod.rs", "mod call;\nmod session;\nmod wire;"),
        ("mcp/session.rs", "pub(crate) struct Session;\nfn f(_: crate::mcp::wire::Word) {}"),
        ("mcp/call/mod.rs", "mod checks;"),
        ("mcp/call/checks/mod.rs", "pub(crate) struct Pass;\nfn f(_: crate::mcp::session::Session) {}"),
        ("mcp/wire/mod.rs", "pub(crate) struct Word;\nfn f(_: crate::mcp::call::checks::Pass) {}"),
    ];
    let found = upward(&crate_of(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("mcp/wire/mod.rs:2 imports from mcp/call/checks/mod.rs, but call"), "{found:?}");
}
