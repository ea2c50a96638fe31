//! `textstats`: line, word and character counts, the most frequent words, and SHA-256 digests
//! of files in the granted directories. Walking a directory reports progress per file and logs
//! what it skipped, so clients show it moving.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use mcpbox_sdk::host::{granted_dirs, is_cancelled, log, progress};
use mcpbox_sdk::prelude::*;
use mcpbox_sdk::{Icon, Subject};
use sha2::{Digest, Sha256};

const MAX_FILES: usize = 10_000;
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
struct StatsArgs {
    /// A file or directory, as the guest sees it (`/roots/<name>/...`) or relative to the only
    /// granted directory.
    path: String,
    /// How many of the most frequent words to return (default 10, at most 100).
    top: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
struct HashArgs {
    /// The file to hash.
    path: String,
}

#[derive(Serialize, JsonSchema, Default)]
struct Stats {
    files: usize,
    skipped: usize,
    bytes: u64,
    lines: usize,
    words: usize,
    chars: usize,
    /// The most frequent words (lowercased), most frequent first.
    top_words: Vec<(String, usize)>,
}

fn resolve(path: &str) -> Result<PathBuf, Error> {
    if path.starts_with('/') {
        return Ok(PathBuf::from(path));
    }
    match granted_dirs().as_slice() {
        [only] => Ok(Path::new(&only.guest_path).join(path)),
        [] => Err(Error::failed("no directory is granted to this call")),
        _ => Err(Error::invalid_arguments(
            "several directories are granted: give an absolute path such as /roots/<name>/file",
        )),
    }
}

fn collect_files(root: &Path, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let meta = fs::metadata(root).map_err(|e| Error::failed(format!("{}: {e}", root.display())))?;
    if meta.is_file() {
        files.push(root.to_owned());
        return Ok(());
    }
    let mut entries: Vec<_> = fs::read_dir(root)?.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if files.len() >= MAX_FILES {
            break;
        }
        if path.is_dir() {
            collect_files(&path, files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn stats(args: StatsArgs) -> Result<Json<Stats>, Error> {
    let root = resolve(&args.path)?;
    let mut files = Vec::new();
    collect_files(&root, &mut files)?;
    let total = files.len() as f64;
    let mut stats = Stats::default();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (done, path) in files.iter().enumerate() {
        if is_cancelled() {
            return Err(Error::failed("cancelled"));
        }
        progress(done as f64, Some(total), Some(&path.display().to_string()));
        let text = match fs::metadata(path) {
            Ok(m) if m.len() <= MAX_FILE_BYTES => fs::read_to_string(path).ok(),
            _ => None,
        };
        let Some(text) = text else {
            stats.skipped += 1;
            log(LogLevel::Debug, &format!("skipped {} (binary or larger than 16 MiB)", path.display()));
            continue;
        };
        stats.files += 1;
        stats.bytes += text.len() as u64;
        stats.lines += text.lines().count();
        stats.chars += text.chars().count();
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            stats.words += 1;
            *counts.entry(word.to_lowercase()).or_default() += 1;
        }
    }
    progress(total, Some(total), Some("done"));
    let mut top: Vec<_> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(args.top.unwrap_or(10).min(100));
    stats.top_words = top;
    log(LogLevel::Info, &format!("counted {} files under {}", stats.files, root.display()));
    Ok(Json(stats))
}

fn sha256(args: HashArgs) -> Result<String, Error> {
    use std::io::Read;
    let path = resolve(&args.path)?;
    let mut file = fs::File::open(&path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    let size = file.metadata()?.len().max(1) as f64;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut read_so_far = 0u64;
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        read_so_far += n as u64;
        progress(read_so_far as f64, Some(size), None);
    }
    let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{digest}  {}", path.display()))
}

/// The app that charts `stats`' most frequent words (MCP Apps), built into the component.
const CHART: &str = include_str!("../app/chart.html");
/// The skill this plugin ships, served at `skill://textstats/text-survey/SKILL.md`.
const SURVEY_SKILL: &str = include_str!("../skills/text-survey/SKILL.md");
/// A small bar-chart icon, as a `data:` URI (no request leaves the client to show it).
const ICON: &str = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHJlY3QgeD0iMSIgeT0iOCIgd2lkdGg9IjMiIGhlaWdodD0iNyIvPjxyZWN0IHg9IjYiIHk9IjMiIHdpZHRoPSIzIiBoZWlnaHQ9IjEyIi8+PHJlY3QgeD0iMTEiIHk9IjYiIHdpZHRoPSIzIiBoZWlnaHQ9IjkiLz48L3N2Zz4=";

fn plugin() -> Plugin {
    let icon = || Icon {
        src: ICON.to_owned(),
        mime_type: Some("image/svg+xml".to_owned()),
        sizes: vec!["any".to_owned()],
        theme: None,
    };
    Plugin::new()
        .tool(Tool::new("stats", "Count lines, words and characters of a file or of every text file under a directory, with the most frequent words.", stats).read_only())
        .tool(Tool::new("sha256", "SHA-256 digest of a file, as hex.", sha256).read_only())
        .app("stats", "ui://textstats/chart", CHART, json!({ "prefersBorder": true }))
        .metadata(Subject::Tool("sha256".to_owned()), None, vec![icon()])
        .instructions("Survey a directory with textstats.stats before reading its files (the text-survey skill says how).")
        .skill_file("text-survey/SKILL.md", SURVEY_SKILL)
}

mcpbox_sdk::export_plugin!(plugin);
