//! `fs`: files in the directories granted to the call (operator `--root`s, narrowed by the
//! client's MCP roots). The sandbox is what confines it: only the granted directories are
//! preopened, read-only unless granted writable, so nothing here can reach beyond them.

use std::fs;
use std::path::{Path, PathBuf};

use mcpbox_sdk::host::{granted_dirs, is_cancelled};
use mcpbox_sdk::prelude::*;
use mcpbox_sdk::{GrantedDir, ResourceBody};

const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
const MAX_SEARCH_RESULTS: usize = 200;
const MAX_SEARCH_FILES: usize = 20_000;
const MAX_SEARCH_FILE_BYTES: u64 = 1024 * 1024;
const MAX_LISTED_RESOURCES: usize = 500;

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// A path inside a granted directory: absolute as the guest sees it (`/roots/project/a.txt`),
    /// or relative to the granted directory named by its first component (`project/a.txt`),
    /// or, with a single granted directory, relative to it.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The file to read (see `stat` for the accepted path forms).
    path: String,
    /// Byte offset to start at.
    #[serde(default)]
    offset: u64,
    /// At most this many bytes (default and maximum 4 MiB).
    max_bytes: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    /// The file to write; it must be inside a directory granted writable.
    path: String,
    /// The new contents (UTF-8 text).
    content: String,
    /// Append instead of replacing the file.
    #[serde(default)]
    append: bool,
    /// Create missing parent directories.
    #[serde(default)]
    create_dirs: bool,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum SearchMode {
    /// Match file names.
    Name,
    /// Match lines of file contents.
    Content,
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// Directory to search under (default: every granted directory).
    path: Option<String>,
    /// Case-insensitive substring to look for.
    pattern: String,
    /// What to match: file names (default) or file contents.
    mode: Option<SearchMode>,
    /// At most this many matches (default and maximum 200).
    max_results: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
struct Entry {
    name: String,
    kind: String,
    size: u64,
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    path: String,
    entries: Vec<Entry>,
}

#[derive(Serialize, JsonSchema)]
struct Stat {
    path: String,
    kind: String,
    size: u64,
    readonly: bool,
    /// Seconds since the Unix epoch.
    modified: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
struct SearchHit {
    path: String,
    /// 1-based line number, for content matches.
    line: Option<usize>,
    text: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct SearchResult {
    matches: Vec<SearchHit>,
    /// True when the search stopped at a bound (results, files scanned) before finishing.
    truncated: bool,
}

fn resolve(path: &str, dirs: &[GrantedDir]) -> Result<PathBuf, Error> {
    if dirs.is_empty() {
        return Err(Error::failed("no directory is granted to this call (see `mcpbox serve --root`)"));
    }
    if path.starts_with('/') {
        return Ok(PathBuf::from(path));
    }
    let relative = Path::new(path);
    if let Some(first) = relative.components().next()
        && let Some(dir) = dirs.iter().find(|d| first.as_os_str() == d.name.as_str())
    {
        return Ok(Path::new(&dir.guest_path).join(relative.strip_prefix(&dir.name).unwrap_or(relative)));
    }
    if let [only] = dirs {
        return Ok(Path::new(&only.guest_path).join(relative));
    }
    let names: Vec<&str> = dirs.iter().map(|d| d.name.as_str()).collect();
    Err(Error::invalid_arguments(format!(
        "relative path `{path}` must start with a granted directory name: {}",
        names.join(", ")
    )))
}

fn kind_of(meta: &fs::Metadata) -> &'static str {
    if meta.is_dir() {
        "directory"
    } else if meta.is_symlink() {
        "symlink"
    } else {
        "file"
    }
}

fn read_file(args: ReadArgs) -> Result<CallResult, Error> {
    use std::io::{Read, Seek, SeekFrom};
    let path = resolve(&args.path, &granted_dirs())?;
    let limit = args.max_bytes.unwrap_or(MAX_READ_BYTES).min(MAX_READ_BYTES);
    let mut file = fs::File::open(&path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    file.seek(SeekFrom::Start(args.offset))?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(CallResult::text(text)),
        Err(e) => Ok(CallResult::new(vec![blob_resource(
            &format!("file://{}", path.display()),
            mime_for(&path),
            e.into_bytes(),
        )])),
    }
}

fn write_file(args: WriteArgs) -> Result<String, Error> {
    let dirs = granted_dirs();
    let path = resolve(&args.path, &dirs)?;
    let writable = dirs.iter().any(|d| d.writable && path.starts_with(&d.guest_path));
    if !writable {
        return Err(Error::failed(format!("{} is not inside a directory granted writable", path.display())));
    }
    if args.create_dirs
        && let Some(parent) = path.parent()
    {
        fs::create_dir_all(parent)?;
    }
    let mut options = fs::OpenOptions::new();
    options.create(true);
    if args.append {
        options.append(true)
    } else {
        options.write(true).truncate(true)
    };
    let mut file = options.open(&path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    std::io::Write::write_all(&mut file, args.content.as_bytes())?;
    // Its resource (file:///roots/...) changed: subscribed clients hear of it.
    mcpbox_sdk::host::resource_updated(&format!("file://{}", path.display()));
    Ok(format!("wrote {} bytes to {}", args.content.len(), path.display()))
}

fn list_dir(args: PathArgs) -> Result<Json<Listing>, Error> {
    let path = resolve(&args.path, &granted_dirs())?;
    let mut entries = Vec::new();
    for entry in fs::read_dir(&path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))? {
        let entry = entry?;
        let meta = entry.metadata()?;
        entries.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind: kind_of(&meta).to_owned(),
            size: meta.len(),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Json(Listing { path: path.display().to_string(), entries }))
}

fn stat(args: PathArgs) -> Result<Json<Stat>, Error> {
    let path = resolve(&args.path, &granted_dirs())?;
    let meta = fs::symlink_metadata(&path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_secs());
    Ok(Json(Stat {
        path: path.display().to_string(),
        kind: kind_of(&meta).to_owned(),
        size: meta.len(),
        readonly: meta.permissions().readonly(),
        modified,
    }))
}

/// Depth-first walk in name order, stopping when `visit` returns false.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path, &fs::Metadata) -> bool) -> bool {
    let Ok(read) = fs::read_dir(dir) else { return true };
    let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else { continue };
        if !visit(&path, &meta) {
            return false;
        }
        if meta.is_dir() && !walk(&path, visit) {
            return false;
        }
    }
    true
}

fn search(args: SearchArgs) -> Result<Json<SearchResult>, Error> {
    let dirs = granted_dirs();
    let roots = match &args.path {
        Some(path) => vec![resolve(path, &dirs)?],
        None => dirs.iter().map(|d| PathBuf::from(&d.guest_path)).collect(),
    };
    let needle = args.pattern.to_lowercase();
    let mode = args.mode.unwrap_or(SearchMode::Name);
    let max = args.max_results.unwrap_or(MAX_SEARCH_RESULTS).min(MAX_SEARCH_RESULTS);
    let mut matches = Vec::new();
    let mut scanned = 0usize;
    let mut truncated = false;
    for root in roots {
        let finished = walk(&root, &mut |path, meta| {
            scanned += 1;
            if scanned > MAX_SEARCH_FILES || matches.len() >= max || is_cancelled() {
                truncated = true;
                return false;
            }
            let shown = path.display().to_string();
            match mode {
                SearchMode::Name => {
                    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
                    if name.contains(&needle) {
                        matches.push(SearchHit { path: shown, line: None, text: None });
                    }
                }
                SearchMode::Content if meta.is_file() && meta.len() <= MAX_SEARCH_FILE_BYTES => {
                    let Ok(text) = fs::read_to_string(path) else { return true };
                    for (number, line) in text.lines().enumerate() {
                        if line.to_lowercase().contains(&needle) {
                            matches.push(SearchHit {
                                path: shown.clone(),
                                line: Some(number + 1),
                                text: Some(line.chars().take(200).collect()),
                            });
                            if matches.len() >= max {
                                break;
                            }
                        }
                    }
                }
                SearchMode::Content => {}
            }
            true
        });
        if !finished {
            break;
        }
    }
    Ok(Json(SearchResult { matches, truncated }))
}

fn mime_for(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "toml" => "application/toml",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "js" => "text/javascript",
        "html" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "wav" => "audio/wav",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn file_resources() -> Vec<Resource> {
    let mut resources = Vec::new();
    for dir in granted_dirs() {
        walk(Path::new(&dir.guest_path), &mut |path, meta| {
            if meta.is_file() {
                let name = path.strip_prefix("/roots").unwrap_or(path).display().to_string();
                let mut resource =
                    Resource::new(&format!("file://{}", path.display()), &name).mime_type(mime_for(path));
                resource.size = Some(meta.len());
                resources.push(resource);
            }
            resources.len() < MAX_LISTED_RESOURCES
        });
    }
    resources
}

fn read_resource(uri: &str) -> Result<Vec<ResourceContents>, Error> {
    let Some(path) = uri.strip_prefix("file://") else {
        return Err(Error::not_found(format!("not a file uri: {uri}")));
    };
    let path = Path::new(path);
    let meta = fs::metadata(path).map_err(|e| Error::not_found(format!("{}: {e}", path.display())))?;
    if meta.len() > MAX_READ_BYTES {
        return Err(Error::failed(format!("{} is larger than 4 MiB", path.display())));
    }
    let bytes = fs::read(path)?;
    let mime = mime_for(path);
    let body = match String::from_utf8(bytes) {
        Ok(text) => ResourceBody::Text(text),
        Err(e) => ResourceBody::Blob(e.into_bytes()),
    };
    Ok(vec![ResourceContents { uri: uri.to_owned(), mime_type: Some(mime.to_owned()), body }])
}

fn plugin() -> Plugin {
    Plugin::new()
        .tool(Tool::new("read_file", "Read a file in a granted directory (text, or a blob if it is binary).", read_file).read_only())
        .tool(Tool::new("write_file", "Write or append UTF-8 text to a file in a directory granted writable.", write_file))
        .tool(Tool::new("list_dir", "List a directory in a granted directory: names, kinds and sizes.", list_dir).read_only())
        .tool(Tool::new(
            "search",
            "Find files by name, or lines by content, under the granted directories (case-insensitive substring; bounded).",
            search,
        ).read_only())
        .tool(Tool::new("stat", "Kind, size, permissions and modification time of a path in a granted directory.", stat).read_only())
        .dynamic_resources(file_resources, read_resource)
        .resource_template(
            ResourceTemplate::new("file:///{path}", "file").description("Any file in a granted directory, by its path in the sandbox (e.g. file:///roots/project/README.md)."),
            |uri, _vars| read_resource(uri),
        )
}

mcpbox_sdk::export_plugin!(plugin);
