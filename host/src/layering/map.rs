//! The written map stays true:
//!
//! - every path `docs/architecture.md` names in backticks, and every path in the comments of
//!   the Cargo manifests, is a file or folder of the repository;
//! - every `Type::member` the map names is a method or field of that type in the crate or its
//!   tests, and what a row says a file holds (`path.rs` (`Type`, ..)) is defined in that file;
//! - every folder's `mod.rs` (and `lib.rs`) names each of its modules in its doc;
//! - every page of `docs/` opens with its title.
//!
//! A map that drifted (a file moved, a method renamed, a module added and never described)
//! sends a newcomer to the wrong place; here it fails the test command instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::reading::{closing, definitions, identifiers, scrub, type_members};

/// Paths the map names that a build, a set-up or a run makes: not in the repository.
/// (`artifacts/` is mcpbox's own, in its cache directory.)
const MADE: &[&str] = &["target/", ".tools/", "plugins/target/", "node_modules/", "artifacts/"];

/// Types of other crates whose methods the map names, with the crate.
const FOREIGN: &[(&str, &str)] = &[("Component", "wasmtime")];

/// One text: its path relative to the repository and its content.
struct Text {
    path: String,
    text: String,
}

/// The words that name a path: with a `/` and ending in one, or in one of the repository's
/// extensions. Templates (`<name>`), globs, URLs and absolute paths are not the repository's.
fn path_like<'a>(words: impl Iterator<Item = (usize, &'a str)>) -> Vec<(usize, &'a str)> {
    const EXTENSIONS: &[&str] = &[".rs", ".sh", ".py", ".toml", ".md", ".wit", ".json", ".ts", ".js", ".yaml"];
    words
        .filter(|(_, word)| {
            let plain = !word.contains(['<', '*', '{', ' ', '$', '?', '=']) && !word.contains("://");
            let relative = !word.starts_with(['/', '~', '-', '.']) || word.starts_with(".ci/");
            plain && relative && (word.ends_with('/') || EXTENSIONS.iter().any(|ext| word.ends_with(ext)))
        })
        .collect()
}

/// The words of a TOML file's comments (`# ... (host/src/x.rs): ...`), by line, without the
/// punctuation around them.
fn commented(toml: &str) -> impl Iterator<Item = (usize, &str)> {
    toml.lines()
        .enumerate()
        .filter_map(|(number, line)| Some((number + 1, line.trim_start().strip_prefix('#')?)))
        .flat_map(|(number, comment)| {
            comment.split_whitespace().map(move |word| {
                (
                    number,
                    word.trim_end_matches('.')
                        .trim_matches(['(', ')', '[', ']', ',', ';', ':', '`', '"', '\''])
                        .trim_end_matches('.'),
                )
            })
        })
}

/// Every backticked word of `doc`, by line.
fn backticked(doc: &str) -> impl Iterator<Item = (usize, &str)> {
    doc.lines().enumerate().flat_map(|(number, line)| {
        line.split('`').skip(1).step_by(2).map(move |word| (number + 1, word.trim_end_matches("()")))
    })
}

/// The named paths that are no file or folder of `files` (the repository's, relative): a path
/// is found as written from the top or from any folder (`catalog/entry.rs` is the runtime's).
fn missing_paths(named: Vec<(usize, &str)>, files: &BTreeSet<String>) -> Vec<String> {
    let mut known: BTreeSet<&str> = BTreeSet::new();
    for file in files {
        known.insert(file);
        known.extend(file.match_indices('/').map(|(at, _)| &file[..at]));
    }
    named
        .into_iter()
        .filter(|(_, path)| !MADE.iter().any(|made| path.starts_with(made)))
        .filter(|(_, path)| {
            let path = path.trim_end_matches('/');
            !known.iter().any(|k| *k == path || k.strip_suffix(path).is_some_and(|head| head.ends_with('/')))
        })
        .map(|(line, path)| format!("line {line}: `{path}` is no file or folder of the repository"))
        .collect()
}

/// Each type's members (its fields, the methods of its inherent and trait impls, a trait's own
/// declarations), and the types that are defined at all, over `sources`.
fn methods(sources: &[Text]) -> (BTreeMap<String, BTreeSet<String>>, BTreeSet<String>) {
    let mut methods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut types = BTreeSet::new();
    for source in sources {
        let code = scrub(&source.text);
        for (_, keyword, name) in definitions(&code) {
            if matches!(keyword, "struct" | "enum" | "trait" | "type" | "union") {
                types.insert(name);
            }
        }
        for (owner, members) in type_members(&code) {
            methods.entry(owner).or_default().extend(members);
        }
    }
    (methods, types)
}

/// The `Type::member` words of `doc` that name no method or field of a type of ours (foreign
/// types listed in [`FOREIGN`] apart).
fn missing_methods(doc: &str, sources: &[Text]) -> Vec<String> {
    let (methods, types) = methods(sources);
    let mut missing = Vec::new();
    for (line, word) in backticked(doc) {
        let mut segments = word.rsplit("::");
        let (Some(method), Some(owner)) = (segments.next(), segments.next()) else { continue };
        let camel =
            owner.starts_with(|c: char| c.is_ascii_uppercase()) && owner.chars().all(|c| c.is_ascii_alphanumeric());
        let lower = method.starts_with(|c: char| c.is_ascii_lowercase())
            && method.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !camel || !lower || FOREIGN.iter().any(|(name, _)| *name == owner) {
            continue;
        }
        if !types.contains(owner) {
            missing.push(format!("line {line}: `{word}`: no type `{owner}` in the crate or its tests"));
        } else if !methods.get(owner).is_some_and(|m| m.contains(method)) {
            missing.push(format!("line {line}: `{word}`: `{owner}` has no method or field `{method}`"));
        }
    }
    missing
}

/// What a row says a file holds, ``path.rs` (`Type`, `Type::member`: what it does, ..)`, that
/// the file does not define: a map that names the right type in the wrong file sends a reader
/// to the wrong place as surely as a wrong name. Only the parts of the parentheses that open
/// with the name count (prose that mentions a type elsewhere does not), and only types of
/// ours (other crates' are not looked for).
fn misplaced(doc: &str, sources: &[Text]) -> Vec<String> {
    let (_, ours) = methods(sources);
    let camel =
        |w: &str| w.starts_with(|c: char| c.is_ascii_uppercase()) && w.chars().all(|c| c.is_ascii_alphanumeric());
    let mut found = Vec::new();
    for (number, line) in doc.lines().enumerate() {
        for (at, _) in line.match_indices(".rs` (") {
            let Some(start) = line[..at].rfind('`') else { continue };
            let path = &line[start + 1..at + 3];
            let mut homes = sources.iter().filter(|s| s.path == path || s.path.ends_with(&format!("/{path}")));
            let (Some(home), None) = (homes.next(), homes.next()) else { continue };
            let inside = &line[at + 5..];
            let Some(end) = closing(inside, '(', ')') else { continue };
            let (members, types) = methods(std::slice::from_ref(home));
            for piece in inside[1..end].split([',', ';']) {
                let Some((word, rest)) = piece.trim_start().strip_prefix('`').and_then(|p| p.split_once('`')) else {
                    continue;
                };
                if !(rest.is_empty() || rest.starts_with(':')) {
                    continue;
                }
                let missing = match word.trim_end_matches("()").split_once("::") {
                    Some((owner, member)) if camel(owner) && ours.contains(owner) => {
                        !members.get(owner).is_some_and(|m| m.contains(member))
                    }
                    None if camel(word) && ours.contains(word) => !types.contains(word),
                    _ => false,
                };
                if missing {
                    found.push(format!("line {}: `{word}` is not in `{path}` ({})", number + 1, home.path));
                }
            }
        }
    }
    found
}

/// The modules a folder's `mod.rs` (or `lib.rs`) declares in files of their own that its doc
/// (`//!`) does not name in backticks (`name`, `name.rs`, `name/`), tests apart.
fn unlisted_modules(sources: &[Text]) -> Vec<String> {
    let mut found = Vec::new();
    for source in sources.iter().filter(|s| s.path.ends_with("/mod.rs") || s.path.ends_with("src/lib.rs")) {
        let doc: String = source.text.lines().filter_map(|line| line.trim_start().strip_prefix("//!")).collect();
        let named: BTreeSet<&str> =
            backticked(&doc).flat_map(|(_, word)| word.split(['/', '.', ':', ' ', '(', ')', '[', ']'])).collect();
        let code = scrub(&source.text);
        let words = identifiers(&code);
        for (i, (at, word)) in words.iter().enumerate() {
            let Some((end, name)) = words.get(i + 1) else { continue };
            let declared = *word == "mod" && code[end + name.len()..].trim_start().starts_with(';');
            let for_tests = code[..*at].trim_end().ends_with("#[cfg(test)]");
            if declared && !for_tests && !named.contains(name) {
                found.push(format!("{}: the doc does not name its module `{name}`", source.path));
            }
        }
    }
    found
}

/// The repository's files (relative paths), without what builds and set-ups make.
fn repository_files(root: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, root: &Path, found: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), ".git" | ".tools" | "target" | "node_modules") {
                    walk(&path, root, found);
                }
            } else if let Ok(relative) = path.strip_prefix(root) {
                found.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(root, root, &mut found);
    found
}

/// The Rust files under `dirs` of the repository, as texts.
fn rust_texts(root: &Path, files: &BTreeSet<String>, dirs: &[&str]) -> Vec<Text> {
    files
        .iter()
        .filter(|f| f.ends_with(".rs") && dirs.iter().any(|d| f.starts_with(d)))
        .filter_map(|f| Some(Text { path: f.clone(), text: std::fs::read_to_string(root.join(f)).ok()? }))
        .collect()
}

#[test]
fn the_architecture_map_names_only_what_exists_and_each_folder_lists_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = repository_files(&root);
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let sources = rust_texts(&root, &files, &["host/src/", "tests/"]);
    let mut found = missing_paths(path_like(backticked(&doc)), &files);
    for manifest in ["Cargo.toml", "host/Cargo.toml"] {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        let comments = missing_paths(path_like(commented(&text)), &files);
        found.extend(comments.into_iter().map(|problem| format!("{manifest}, {problem}")));
    }
    found.extend(missing_methods(&doc, &sources));
    found.extend(misplaced(&doc, &sources));
    found.extend(unlisted_modules(&rust_texts(&root, &files, &["host/src/"])));
    // A page opens with its title (a pasted table once stood above performance.md's).
    for page in files.iter().filter(|f| f.starts_with("docs/") && f.ends_with(".md")) {
        let text = std::fs::read_to_string(root.join(page)).unwrap_or_default();
        if !text.lines().find(|line| !line.trim().is_empty()).is_some_and(|line| line.starts_with("# ")) {
            found.push(format!("{page}: the page does not open with its title (`# `)"));
        }
    }
    assert!(found.is_empty(), "the map drifted (docs/architecture.md, the folders' mod.rs):\n{}", found.join("\n"));
}

#[test]
fn the_map_check_finds_broken_paths_a_missing_method_and_an_unlisted_module() {
    let files: BTreeSet<String> =
        ["host/src/runtime/catalog/entry.rs", "scripts/test.sh"].into_iter().map(str::to_owned).collect();
    let doc = "see `catalog/entry.rs`, `scripts/`, `target/plugins/` and `catalog/gone.rs`;\n\
               `Catalog::assemble`, `Catalog::plugins`, `Catalog::vanished`, `Ghost::walk`, `Component::deserialize_file`, `tools/call`";
    assert_eq!(
        missing_paths(path_like(backticked(doc)), &files),
        ["line 1: `catalog/gone.rs` is no file or folder of the repository"]
    );
    let manifest = "# The tests (scripts/test.sh), the checks (scripts/gone.sh).\nx = 1 # not/a/comment.rs";
    assert_eq!(
        missing_paths(path_like(commented(manifest)), &files),
        ["line 1: `scripts/gone.sh` is no file or folder of the repository"]
    );
    let sources = [
        Text {
            path: "host/src/runtime/catalog/assembled.rs".to_owned(),
            text: "pub struct Catalog {\n    #[serde(default)]\n    pub plugins: Vec<(String, u8)>,\n    live: bool,\n}\nimpl Catalog {\n    pub fn assemble() { fn vanished() {} }\n}".to_owned(),
        },
        Text {
            path: "host/src/runtime/catalog/mod.rs".to_owned(),
            text: "//! - `assembled`: the catalog;\nmod assembled;\nmod entry;\n#[cfg(test)]\nmod tests;".to_owned(),
        },
    ];
    assert_eq!(
        missing_methods(doc, &sources),
        [
            "line 2: `Catalog::vanished`: `Catalog` has no method or field `vanished`",
            "line 2: `Ghost::walk`: no type `Ghost` in the crate or its tests"
        ]
    );
    assert_eq!(
        unlisted_modules(&sources),
        ["host/src/runtime/catalog/mod.rs: the doc does not name its module `entry`"]
    );
}
