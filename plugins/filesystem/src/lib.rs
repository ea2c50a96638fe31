//! `filesystem`: a drop-in replacement for the reference server
//! `@modelcontextprotocol/server-filesystem` (2026.8.31): its fourteen tools with the same
//! names, arguments, results and errors, on the host's own paths (`/home/me/project/a.txt`).
//! Serve it with `host_paths = true` (the default config does), so the directories mcpbox
//! grants appear in the sandbox where they are on the host. Which directories: the operator's
//! (`--root`, `--root-rw`), narrowed by the client's MCP roots as for every plugin, where the
//! reference takes its command line and then the client's roots. Writes need a directory
//! granted writable. Differences that are the sandbox's: `get_file_info` reports the access
//! the grant gives (not the host's mode bits) and the status-change time as `created` (WASI
//! has no birth time), and names are compared as given (no Unicode-equivalent lookup).
//!
//! Modules: `paths` (which paths a call may use), `edit` (edit_file and its diff), `listing`
//! (the directory tools, glob matching), `node` (the reference's Node.js wording and formats).

mod edit;
mod listing;
mod node;
mod paths;

use std::fs;

use base64::Engine;
use mcpbox_sdk::content::{audio, blob_resource, image};
use mcpbox_sdk::prelude::*;
use serde_json::Value;

const TOOLS: &str = include_str!("../tools.json");

/// A tool's failure as the reference reports it: an `isError` result with the message alone.
type Outcome = Result<CallResult, String>;

/// A tool's implementation: its arguments to its outcome.
type Run = fn(&Value) -> Outcome;

/// The reference's answer shape: one text block and `{"content": text}`.
fn answer(text_value: String) -> Outcome {
    Ok(CallResult {
        structured_content: Some(json!({ "content": text_value }).to_string()),
        ..CallResult::text(text_value)
    })
}

fn string_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, String> {
    args.get(name).and_then(Value::as_str).ok_or_else(|| format!("Invalid arguments: `{name}` must be a string"))
}

fn number_arg(args: &Value, name: &str) -> Result<Option<f64>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(format!("Invalid arguments: `{name}` must be a number")),
    }
}

fn strings_arg(args: &Value, name: &str) -> Result<Vec<String>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| format!("Invalid arguments: `{name}` must hold strings"))
            })
            .collect(),
        Some(_) => Err(format!("Invalid arguments: `{name}` must be an array of strings")),
    }
}

fn read_text(path: &str) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|e| {
        node::error(&e, if e.kind() == std::io::ErrorKind::IsADirectory { "read" } else { "open" }, &[path])
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `read_text_file` (and the deprecated `read_file`): the whole file, or its first or last lines.
fn read_text_file(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let head = number_arg(args, "head")?.filter(|n| *n != 0.0);
    let tail = number_arg(args, "tail")?.filter(|n| *n != 0.0);
    if head.is_some() && tail.is_some() {
        return Err("Cannot specify both head and tail parameters simultaneously".into());
    }
    let content = read_text(&path)?;
    let content = match (head, tail) {
        (_, Some(tail)) => last_lines(&edit::normalize_line_endings(&content), tail),
        (Some(head), _) => first_lines(&content, head),
        _ => content,
    };
    answer(content)
}

/// The reference's `tailFile`: `text.split('\n').slice(-n).join('\n')`.
fn last_lines(text: &str, n: f64) -> String {
    if n < 0.0 || text.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let keep = (n.trunc() as usize).min(lines.len());
    if keep == 0 { text.to_owned() } else { lines[lines.len() - keep..].join("\n") }
}

/// The reference's `headFile`: complete lines (line endings as they are), then what is left
/// after the last newline if fewer lines were asked for than there are.
fn first_lines(text: &str, n: f64) -> String {
    if n <= 0.0 {
        return String::new();
    }
    let wanted = n.ceil() as usize;
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines.truncate(wanted);
    lines.join("\n")
}

fn read_media_file(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let extension = path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
    let mime = match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        _ => "application/octet-stream",
    };
    let bytes = fs::read(&path).map_err(|e| node::error(&e, "open", &[&path]))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let (block, listed) = if let Some(kind) =
        mime.strip_prefix("image/").map(|_| "image").or(mime.strip_prefix("audio/").map(|_| "audio"))
    {
        let block = if kind == "image" { image(bytes, mime) } else { audio(bytes, mime) };
        (block, json!({"type": kind, "data": data, "mimeType": mime}))
    } else {
        let uri = node::file_url(&path);
        let listed = json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime, "blob": data}});
        (blob_resource(&uri, mime, bytes), listed)
    };
    Ok(CallResult {
        content: vec![block],
        structured_content: Some(json!({ "content": [listed] }).to_string()),
        is_error: false,
    })
}

fn read_multiple_files(args: &Value) -> Outcome {
    let requested = strings_arg(args, "paths")?;
    if requested.is_empty() {
        return Err("Invalid arguments: `paths` must name at least one file".into());
    }
    let results: Vec<String> = requested
        .iter()
        .map(|path| match paths::validate(path).and_then(|valid| read_text(&valid)) {
            Ok(content) => format!("{path}:\n{content}\n"),
            Err(error) => format!("{path}: Error - {error}"),
        })
        .collect();
    answer(results.join("\n---\n"))
}

/// Written whole, then renamed over the old file (as the reference does), so a reader never
/// sees half a file; a new file is created directly.
fn replace_file(path: &str, content: &str) -> Result<(), String> {
    match fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => {
            std::io::Write::write_all(&mut file, content.as_bytes()).map_err(|e| node::error(&e, "write", &[path]))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let partial = format!("{path}.mcpbox-partial");
            fs::write(&partial, content).map_err(|e| node::error(&e, "open", &[&partial]))?;
            fs::rename(&partial, path).map_err(|e| {
                let _ = fs::remove_file(&partial);
                node::error(&e, "rename", &[&partial, path])
            })
        }
        Err(e) => Err(node::error(&e, "open", &[path])),
    }
}

fn write_file(args: &Value) -> Outcome {
    let requested = string_arg(args, "path")?;
    let path = paths::validate(requested)?;
    replace_file(&path, string_arg(args, "content")?)?;
    answer(format!("Successfully wrote to {requested}"))
}

fn edit_file(args: &Value) -> Outcome {
    let path = paths::validate(string_arg(args, "path")?)?;
    let edits = match args.get("edits") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|edit| Ok((string_arg(edit, "oldText")?.to_owned(), string_arg(edit, "newText")?.to_owned())))
            .collect::<Result<Vec<_>, String>>()?,
        _ => return Err("Invalid arguments: `edits` must be an array of {oldText, newText}".into()),
    };
    let dry_run = match args.get("dryRun") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("Invalid arguments: `dryRun` must be a boolean".into()),
    };
    let content = edit::normalize_line_endings(&read_text(&path)?);
    let modified = edit::apply(&content, &edits)?;
    let diff = edit::fenced_diff(&path, &content, &modified);
    if !dry_run {
        replace_file(&path, &modified)?;
    }
    answer(diff)
}

fn create_directory(args: &Value) -> Outcome {
    let requested = string_arg(args, "path")?;
    let path = paths::validate(requested)?;
    fs::create_dir_all(&path).map_err(|e| node::error(&e, "mkdir", &[&path]))?;
    answer(format!("Successfully created directory {requested}"))
}

fn move_file(args: &Value) -> Outcome {
    let (source, destination) = (string_arg(args, "source")?, string_arg(args, "destination")?);
    let from = paths::validate(source)?;
    let to = paths::validate(destination)?;
    if fs::symlink_metadata(&to).is_ok() {
        return Err(format!("Destination already exists: {to}"));
    }
    fs::rename(&from, &to).map_err(|e| node::error(&e, "rename", &[&from, &to]))?;
    answer(format!("Successfully moved {source} to {destination}"))
}

fn list_allowed_directories(_: &Value) -> Outcome {
    answer(format!("Allowed directories:\n{}", paths::allowed_dirs().join("\n")))
}

/// A tool whose failures read as the reference's: an `isError` result with the message alone.
fn tool(name: &str, run: Run) -> Tool {
    let handler = move |args: Value| -> Result<CallResult, Error> { Ok(run(&args).unwrap_or_else(CallResult::error)) };
    Tool::new(name, "", handler).listed_in(listing)
}

/// The reference's tool list (read only when the host lists the tools).
fn listing() -> String {
    TOOLS.to_owned()
}

fn plugin() -> Plugin {
    let tools: [(&str, Run); 14] = [
        ("read_file", read_text_file),
        ("read_text_file", read_text_file),
        ("read_media_file", read_media_file),
        ("read_multiple_files", read_multiple_files),
        ("write_file", write_file),
        ("edit_file", edit_file),
        ("create_directory", create_directory),
        ("list_directory", listing::list_directory),
        ("list_directory_with_sizes", listing::list_directory_with_sizes),
        ("directory_tree", listing::directory_tree),
        ("move_file", move_file),
        ("search_files", listing::search_files),
        ("get_file_info", listing::get_file_info),
        ("list_allowed_directories", list_allowed_directories),
    ];
    tools.into_iter().fold(Plugin::new(), |plugin, (name, run)| plugin.tool(tool(name, run)))
}

mcpbox_sdk::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_and_tails_like_the_reference() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(first_lines(text, 2.0), "one\ntwo");
        assert_eq!(first_lines(text, 9.0), "one\ntwo\nthree");
        assert_eq!(first_lines("a\nb", 5.0), "a\nb");
        assert_eq!(last_lines(text, 2.0), "three\n");
        assert_eq!(last_lines("a\nb\nc", 1.0), "c");
        assert_eq!(last_lines("", 3.0), "");
    }
}
