//! `memory`: a drop-in replacement for the reference server `@modelcontextprotocol/server-memory`
//! (2026.8.31): a knowledge graph of entities, relations and observations, kept in a JSON Lines
//! file in the reference's format, so an existing memory file keeps working (and the reference
//! can read ours). The same nine tools, arguments, results and errors, and the resource
//! `memory://knowledge-graph`, announced as updated after every change.
//!
//! The file is `MEMORY_FILE_PATH` (the plugin's environment, a path inside the sandbox, or
//! relative to its first writable directory), else `memory.jsonl` in the first writable
//! directory granted to the plugin. Updates never get lost: every change holds a lock file
//! (created with `O_EXCL`, the one atomic test-and-set WASI offers, which works across mcpbox
//! processes sharing the file too) while it reads, changes and writes the graph, and the new
//! graph replaces the old with a rename, so a call stopped half way leaves the old file whole.

#[cfg_attr(feature = "failpoint-writers-lock", expect(dead_code, reason = "its fail-point build takes no lock"))]
mod lock;

use std::path::PathBuf;

use mcpbox_sdk::host::{granted_dirs, resource_updated};
use mcpbox_sdk::prelude::*;
use serde_json::Value;

const TOOLS: &str = include_str!("../tools.json");
const RESOURCE_URI: &str = "memory://knowledge-graph";

#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Entity {
    name: String,
    entity_type: String,
    observations: Vec<String>,
}

#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Relation {
    from: String,
    to: String,
    relation_type: String,
}

#[derive(Default, Serialize)]
struct Graph {
    entities: Vec<Entity>,
    relations: Vec<Relation>,
}

/// One line of the file, as the reference writes it.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line<'a> {
    Entity {
        name: &'a str,
        #[serde(rename = "entityType")]
        entity_type: &'a str,
        observations: &'a [String],
    },
    Relation {
        from: &'a str,
        to: &'a str,
        #[serde(rename = "relationType")]
        relation_type: &'a str,
    },
}

fn memory_file() -> Result<PathBuf, Error> {
    let writable = granted_dirs().into_iter().find(|dir| dir.writable).map(|dir| PathBuf::from(dir.guest_path));
    let configured = std::env::var("MEMORY_FILE_PATH").ok().filter(|p| !p.is_empty()).map(PathBuf::from);
    match (configured, writable) {
        (Some(path), _) if path.is_absolute() => Ok(path),
        (Some(path), Some(dir)) => Ok(dir.join(path)),
        (None, Some(dir)) => Ok(dir.join("memory.jsonl")),
        (_, None) => Err(Error::failed(
            "memory keeps its graph in a file: grant the plugin a writable directory \
             ([[plugin.memory.dirs]] with writable = true)",
        )),
    }
}

/// The graph in the file; no file is an empty graph. Lines of other types are skipped, as the
/// reference skips them.
fn load(path: &PathBuf) -> Result<Graph, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Graph::default()),
        Err(e) => return Err(Error::failed(format!("cannot read {}: {e}", path.display()))),
    };
    let mut graph = Graph::default();
    for line in text.split('\n').filter(|line| !line.trim().is_empty()) {
        let item: Value = serde_json::from_str(line)?;
        match item.get("type").and_then(Value::as_str) {
            Some("entity") => graph.entities.push(serde_json::from_value(item)?),
            Some("relation") => graph.relations.push(serde_json::from_value(item)?),
            _ => {}
        }
    }
    Ok(graph)
}

fn save(path: &PathBuf, graph: &Graph) -> Result<(), Error> {
    let entities = graph.entities.iter().map(|e| Line::Entity {
        name: &e.name,
        entity_type: &e.entity_type,
        observations: &e.observations,
    });
    let relations =
        graph.relations.iter().map(|r| Line::Relation { from: &r.from, to: &r.to, relation_type: &r.relation_type });
    let lines: Vec<String> =
        entities.chain(relations).map(|line| serde_json::to_string(&line)).collect::<Result<_, _>>()?;
    let partial = path.with_extension("jsonl.partial");
    std::fs::write(&partial, lines.join("\n"))?;
    std::fs::rename(&partial, path)?;
    Ok(())
}

/// Reads, changes and writes the graph under the lock, then announces the change.
fn change<T>(edit: impl FnOnce(&mut Graph) -> Result<T, Error>) -> Result<T, Error> {
    let path = memory_file()?;
    let outcome = {
        // Switched off only in the test suite's proof that a test guards it (tests/protections.toml).
        #[cfg(not(feature = "failpoint-writers-lock"))]
        let _lock = lock::Lock::acquire(&path)?;
        let mut graph = load(&path)?;
        let outcome = edit(&mut graph)?;
        save(&path, &graph)?;
        outcome
    };
    resource_updated(RESOURCE_URI);
    Ok(outcome)
}

fn read() -> Result<Graph, Error> {
    load(&memory_file()?)
}

fn answer(text: String, structured: Value) -> CallResult {
    CallResult { structured_content: Some(structured.to_string()), ..CallResult::text(text) }
}

fn pretty(value: &impl Serialize) -> Result<String, Error> {
    Ok(serde_json::to_string_pretty(value)?)
}

fn done(message: &str) -> CallResult {
    answer(message.to_owned(), json!({"success": true, "message": message}))
}

/// A subgraph: the chosen entities and every relation touching one of them.
fn subgraph(graph: Graph, keep: impl Fn(&Entity) -> bool) -> Result<CallResult, Error> {
    let entities: Vec<Entity> = graph.entities.into_iter().filter(|e| keep(e)).collect();
    let touches = |name: &str| entities.iter().any(|e| e.name == name);
    let relations = graph.relations.into_iter().filter(|r| touches(&r.from) || touches(&r.to)).collect();
    let graph = Graph { entities, relations };
    Ok(answer(pretty(&graph)?, serde_json::to_value(&graph)?))
}

#[derive(Deserialize)]
struct Entities {
    entities: Vec<Entity>,
}

#[derive(Deserialize)]
struct Relations {
    relations: Vec<Relation>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Observation {
    entity_name: String,
    contents: Vec<String>,
}

#[derive(Deserialize)]
struct Observations {
    observations: Vec<Observation>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntityNames {
    entity_names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Deletion {
    entity_name: String,
    observations: Vec<String>,
}

#[derive(Deserialize)]
struct Deletions {
    deletions: Vec<Deletion>,
}

#[derive(Deserialize)]
struct Query {
    query: String,
}

#[derive(Deserialize)]
struct Names {
    names: Vec<String>,
}

fn create_entities(args: Entities) -> Result<CallResult, Error> {
    let created = change(|graph| {
        // Checked against the graph as it was, not within the batch: the reference's rule.
        let created: Vec<Entity> =
            args.entities.into_iter().filter(|entity| !graph.entities.iter().any(|e| e.name == entity.name)).collect();
        graph.entities.extend(created.iter().cloned());
        Ok(created)
    })?;
    Ok(answer(pretty(&created)?, json!({ "entities": created })))
}

fn create_relations(args: Relations) -> Result<CallResult, Error> {
    let created = change(|graph| {
        let created: Vec<Relation> =
            args.relations.into_iter().filter(|relation| !graph.relations.contains(relation)).collect();
        graph.relations.extend(created.iter().cloned());
        Ok(created)
    })?;
    Ok(answer(pretty(&created)?, json!({ "relations": created })))
}

fn add_observations(args: Observations) -> Result<CallResult, Error> {
    let results = change(|graph| {
        let mut results = Vec::new();
        for observation in args.observations {
            let entity = graph
                .entities
                .iter_mut()
                .find(|e| e.name == observation.entity_name)
                .ok_or_else(|| Error::failed(format!("Entity with name {} not found", observation.entity_name)))?;
            let added: Vec<String> =
                observation.contents.into_iter().filter(|content| !entity.observations.contains(content)).collect();
            entity.observations.extend(added.iter().cloned());
            results.push(json!({"entityName": observation.entity_name, "addedObservations": added}));
        }
        Ok(results)
    })?;
    Ok(answer(pretty(&results)?, json!({ "results": results })))
}

fn delete_entities(args: EntityNames) -> Result<CallResult, Error> {
    change(|graph| {
        let named = |name: &String| args.entity_names.contains(name);
        graph.entities.retain(|e| !named(&e.name));
        graph.relations.retain(|r| !named(&r.from) && !named(&r.to));
        Ok(())
    })?;
    Ok(done("Entities deleted successfully"))
}

fn delete_observations(args: Deletions) -> Result<CallResult, Error> {
    change(|graph| {
        for deletion in &args.deletions {
            if let Some(entity) = graph.entities.iter_mut().find(|e| e.name == deletion.entity_name) {
                entity.observations.retain(|o| !deletion.observations.contains(o));
            }
        }
        Ok(())
    })?;
    Ok(done("Observations deleted successfully"))
}

fn delete_relations(args: Relations) -> Result<CallResult, Error> {
    change(|graph| {
        graph.relations.retain(|r| !args.relations.contains(r));
        Ok(())
    })?;
    Ok(done("Relations deleted successfully"))
}

fn read_graph(_: NoArgs) -> Result<CallResult, Error> {
    subgraph(read()?, |_| true)
}

fn search_nodes(args: Query) -> Result<CallResult, Error> {
    // JavaScript's toLowerCase on both sides, as the reference compares.
    let query = args.query.to_lowercase();
    subgraph(read()?, |e| {
        e.name.to_lowercase().contains(&query)
            || e.entity_type.to_lowercase().contains(&query)
            || e.observations.iter().any(|o| o.to_lowercase().contains(&query))
    })
}

fn open_nodes(args: Names) -> Result<CallResult, Error> {
    subgraph(read()?, |e| args.names.contains(&e.name))
}

fn knowledge_graph(uri: &str) -> Result<Vec<ResourceContents>, Error> {
    let graph = read()?;
    Ok(vec![ResourceContents {
        uri: uri.to_owned(),
        mime_type: Some("application/json".to_owned()),
        body: mcpbox_sdk::ResourceBody::Text(pretty(&graph)?),
    }])
}

/// A tool whose failures read as the reference's: an `isError` result with the message alone.
fn tool<A: serde::de::DeserializeOwned + 'static>(name: &str, run: fn(A) -> Result<CallResult, Error>) -> Tool {
    let handler = move |args: Value| -> Result<CallResult, Error> {
        let outcome = serde_json::from_value(args).map_err(Error::from).and_then(run);
        Ok(outcome.unwrap_or_else(|e| CallResult::error(e.message())))
    };
    Tool::new(name, "", handler).listed_in(listing)
}

/// The reference's tool list (read only when the host lists the tools).
fn listing() -> String {
    TOOLS.to_owned()
}

fn plugin() -> Plugin {
    Plugin::new()
        .tool(tool("create_entities", create_entities))
        .tool(tool("create_relations", create_relations))
        .tool(tool("add_observations", add_observations))
        .tool(tool("delete_entities", delete_entities))
        .tool(tool("delete_observations", delete_observations))
        .tool(tool("delete_relations", delete_relations))
        .tool(tool("read_graph", read_graph))
        .tool(tool("search_nodes", search_nodes))
        .tool(tool("open_nodes", open_nodes))
        .resource(
            Resource::new(RESOURCE_URI, "knowledge-graph")
                .description("The full knowledge graph with all entities and relations")
                .mime_type("application/json"),
            knowledge_graph,
        )
}

mcpbox_sdk::export_plugin!(plugin);
