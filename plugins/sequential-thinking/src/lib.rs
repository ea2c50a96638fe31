//! `sequential-thinking`: a drop-in replacement for the reference server
//! `@modelcontextprotocol/server-sequential-thinking` (2026.8.31): the tool
//! `sequentialthinking`, with the same arguments (strings coerced as the reference's zod schema
//! coerces them), result and errors.
//!
//! The reference keeps the thought history in its process, one per client. Every mcpbox call
//! runs in a fresh instance, so the history lives in a file the operator chose: `history.json`
//! in the first writable directory granted to the plugin (`[[plugin.sequential-thinking.dirs]]`),
//! one history per directory. `scripts/run.sh` gives each server run a fresh directory, so a
//! history lasts as long as the server, like the reference's. Only what the result reports is
//! kept (the number of thoughts and the branch ids), never the thoughts' text. Without a
//! writable directory every call starts a new history (and says so in the log).

use std::path::PathBuf;

use mcpbox_sdk::host::{granted_dirs, warn};
use mcpbox_sdk::prelude::*;
use serde_json::Value;

const TOOLS: &str = include_str!("../tools.json");
const HISTORY_FILE: &str = "history.json";

/// What the reference's history reports: its length and the branch ids, in JavaScript's key
/// order (see [`History::add_branch`]).
#[derive(Default, Serialize, Deserialize)]
struct History {
    thoughts: u64,
    branches: Vec<String>,
}

impl History {
    /// Records a branch id the way `Object.keys` of the reference's `branches` object orders
    /// them: array-index keys ("0" to "4294967294") first in ascending order, then the others
    /// in insertion order.
    fn add_branch(&mut self, id: &str) {
        if self.branches.iter().any(|b| b == id) {
            return;
        }
        self.branches.push(id.to_owned());
        let index = |key: &str| key.parse::<u32>().ok().filter(|n| *n < u32::MAX && n.to_string() == key);
        let (mut indices, others): (Vec<String>, Vec<String>) =
            self.branches.drain(..).partition(|key| index(key).is_some());
        indices.sort_by_key(|key| index(key));
        self.branches = indices.into_iter().chain(others).collect();
    }
}

/// `z.coerce.number().int().min(1)`: a number or a numeric string, whole, at least 1; `None`
/// when absent.
fn whole_number(args: &Value, name: &str) -> Result<Option<u64>, String> {
    let number = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => {
            Some(if s.trim().is_empty() { 0.0 } else { s.trim().parse::<f64>().unwrap_or(f64::NAN) })
        }
        Some(Value::Bool(b)) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    };
    match number {
        Some(n) if n.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&n) => Ok(Some(n as u64)),
        _ => Err(format!("{name}: expected a whole number of at least 1")),
    }
}

/// The reference's `coercedBoolean`: a boolean, or "true"/"false" in any case.
fn boolean(args: &Value, name: &str, required: bool) -> Result<Option<bool>, String> {
    match args.get(name) {
        None if !required => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        _ => Err(format!("{name}: expected boolean or \"true\"/\"false\" string")),
    }
}

fn history_path() -> Option<PathBuf> {
    granted_dirs().into_iter().find(|dir| dir.writable).map(|dir| PathBuf::from(dir.guest_path).join(HISTORY_FILE))
}

fn think(args: Value) -> Result<CallResult, Error> {
    let invalid = |message: String| Error::invalid_arguments(message);
    // The thought itself is for the model's benefit only: checked, never stored.
    args.get("thought").and_then(Value::as_str).ok_or_else(|| invalid("thought: expected string".into()))?;
    let required =
        |name: &str| whole_number(&args, name)?.ok_or_else(|| format!("{name}: expected a whole number of at least 1"));
    let number = required("thoughtNumber").map_err(invalid)?;
    let mut total = required("totalThoughts").map_err(invalid)?;
    let next = boolean(&args, "nextThoughtNeeded", true).map_err(invalid)?.unwrap_or(false);
    whole_number(&args, "revisesThought").map_err(invalid)?;
    for optional in ["isRevision", "needsMoreThoughts"] {
        boolean(&args, optional, false).map_err(invalid)?;
    }
    let branch_id = match args.get("branchId") {
        None => None,
        Some(Value::String(id)) => Some(id.as_str()),
        Some(_) => return Err(invalid("branchId: expected string".into())),
    };
    let branch_from = whole_number(&args, "branchFromThought").map_err(invalid)?;
    if number > total {
        total = number;
    }

    let path = history_path();
    let mut history: History = match &path {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
            Err(_) => History::default(),
        },
        None => {
            warn("no writable directory is granted to sequential-thinking: this thought starts a new history");
            History::default()
        }
    };
    history.thoughts += 1;
    if let (Some(_), Some(id)) = (branch_from, branch_id.filter(|id| !id.is_empty())) {
        history.add_branch(id);
    }
    if let Some(path) = &path {
        // Written whole, then renamed over the old one: a call stopped half way leaves the
        // previous history, never half a file.
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, serde_json::to_vec(&history)?)?;
        std::fs::rename(&partial, path)?;
    }

    let result = json!({
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": next,
        "branches": history.branches,
        "thoughtHistoryLength": history.thoughts,
    });
    let text = serde_json::to_string_pretty(&result)?;
    Ok(CallResult { structured_content: Some(result.to_string()), ..CallResult::text(text) })
}

/// The reference's tool list (read only when the host lists the tools).
fn listing() -> String {
    TOOLS.to_owned()
}

fn plugin() -> Plugin {
    Plugin::new().tool(Tool::new("sequentialthinking", "", think).listed_in(listing))
}

mcpbox_sdk::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_keep_javascripts_key_order() {
        let mut history = History::default();
        for id in ["alt", "10", "b", "2", "alt", "01", "4294967295"] {
            history.add_branch(id);
        }
        assert_eq!(history.branches, ["2", "10", "alt", "b", "01", "4294967295"]);
    }

    #[test]
    fn numbers_coerce_like_zod() {
        let args = json!({"a": "7", "b": 2.5, "c": 0, "d": " 3 ", "e": "x", "f": true});
        assert_eq!(whole_number(&args, "a"), Ok(Some(7)));
        assert!(whole_number(&args, "b").is_err());
        assert!(whole_number(&args, "c").is_err());
        assert_eq!(whole_number(&args, "d"), Ok(Some(3)));
        assert!(whole_number(&args, "e").is_err());
        assert_eq!(whole_number(&args, "f"), Ok(Some(1)));
        assert_eq!(whole_number(&args, "missing"), Ok(None));
    }
}
