//! An operator's skill directory read into skills (`[[skills]] path`, docs/skills.md): every
//! directory under it that holds a `SKILL.md` is a skill, served at
//! `skill://<prefix>/<path from the directory>/<file>` (extensions/skills §Resource Mapping);
//! a directory that is itself a skill is served under its own name.
//!
//! What is read is bounded: symbolic links are never followed (they could lead out of the
//! directory), at most [`MAX_DEPTH`] levels and [`MAX_ENTRIES`] entries are walked, and a
//! skill over the extension's limits (512 files, 16 MiB) is left out. A skill that breaks a
//! rule is left out and named; the others are served.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::frontmatter::{frontmatter, valid_name};
use super::library::{FileBytes, Found, MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillFile, digest, read_bounded};

/// How deep the walk goes below a skill directory.
const MAX_DEPTH: usize = 16;
/// How many entries one skill directory's walk reads at most.
const MAX_ENTRIES: usize = 100_000;
/// The file that makes a directory a skill.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// A directory of skills the operator configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSource {
    /// The directory.
    pub path: PathBuf,
    /// Segments before the skill's own path (`prefix = "acme/billing"`).
    pub prefix: Vec<String>,
}

/// Whether `segment` may stand in a skill's path: unreserved URI characters only, so the
/// first one is a valid authority (RFC 3986 `reg-name`) and none needs escaping.
pub(crate) fn valid_path_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// A file found by the walk: its path below the source, as segments, and on disk.
struct Walked {
    segments: Vec<String>,
    path: PathBuf,
}

/// The skills of `source`, each with its files, and what was left out and why.
pub(crate) fn scan(source: &SkillSource) -> (Found, Vec<String>) {
    let mut problems = Vec::new();
    let origin = format!("skill directory {}", source.path.display());
    let (files, mut walk_problems) = walk(&source.path);
    problems.append(&mut walk_problems);
    // The segments every URI of this source starts with.
    let mut base = source.prefix.clone();
    let root_is_skill = files.iter().any(|f| f.segments.len() == 1 && f.segments[0] == SKILL_MD);
    if root_is_skill {
        match source.path.file_name().and_then(|n| n.to_str()) {
            Some(name) => base.push(name.to_owned()),
            None => {
                problems.push(format!("{origin}: the directory has no name to serve its skill under"));
                return (Vec::new(), problems);
            }
        }
    }
    let skill_dirs: Vec<&[String]> = files
        .iter()
        .filter(|f| f.segments.last().is_some_and(|n| n == SKILL_MD))
        .map(|f| &f.segments[..f.segments.len() - 1])
        .collect();
    // Digests are computed once per file, however many skills it belongs to.
    let mut hashed: BTreeMap<PathBuf, Arc<SkillFile>> = BTreeMap::new();
    let mut skills = Vec::new();
    for dir in skill_dirs {
        let skill_path: Vec<&str> = base.iter().chain(dir).map(String::as_str).collect();
        let uri = format!("skill://{}/{SKILL_MD}", skill_path.join("/"));
        match skill(&skill_path, dir, &files, &mut hashed) {
            Ok((frontmatter, members)) => {
                let files = members.iter().map(|f| f.uri.clone()).collect();
                skills.push((Skill { uri, frontmatter, files, origin: origin.clone() }, members));
            }
            Err(why) => problems.push(format!("skill {uri} from {origin} is left out: {why}")),
        }
    }
    (skills, problems)
}

/// A skill's frontmatter and files.
type Members = (serde_json::Map<String, serde_json::Value>, Vec<Arc<SkillFile>>);

/// One skill: its frontmatter and files, or why it is left out.
fn skill(
    skill_path: &[&str],
    dir: &[String],
    files: &[Walked],
    hashed: &mut BTreeMap<PathBuf, Arc<SkillFile>>,
) -> Result<Members, String> {
    if let Some(bad) = skill_path.iter().find(|s| !valid_path_segment(s)) {
        return Err(format!("`{bad}` in its path is not a plain URI segment ([A-Za-z0-9._~-])"));
    }
    let name = skill_path.last().copied().unwrap_or_default();
    if !valid_name(name) {
        return Err(format!(
            "its directory name `{name}` breaks the Agent Skills naming rules (1-64 of a-z, 0-9 and -, no hyphen at an end or twice)"
        ));
    }
    let members: Vec<&Walked> =
        files.iter().filter(|f| f.segments.len() > dir.len() && f.segments.starts_with(dir)).collect();
    if members.len() > MAX_SKILL_FILES {
        return Err(format!("it has {} files, over the extension's {MAX_SKILL_FILES}", members.len()));
    }
    let manifest = members
        .iter()
        .find(|f| f.segments.len() == dir.len() + 1 && f.segments[dir.len()] == SKILL_MD)
        .ok_or("no SKILL.md")?;
    let text = read_bounded(&manifest.path).map_err(|e| format!("SKILL.md cannot be read: {e}"))?;
    let text = String::from_utf8(text).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let frontmatter = frontmatter(&text)?;
    if frontmatter.get("name").and_then(|n| n.as_str()) != Some(name) {
        return Err(format!("its frontmatter name is not its directory's name `{name}`"));
    }
    let description = frontmatter.get("description").and_then(|d| d.as_str()).map(str::to_owned);
    let mut out = Vec::with_capacity(members.len());
    let mut total = 0u64;
    for found in members {
        let rest = &found.segments[dir.len()..];
        let uri = format!(
            "skill://{}/{}",
            skill_path.join("/"),
            rest.iter().map(|s| escape(s)).collect::<Vec<_>>().join("/")
        );
        let file = match hashed.get(&found.path) {
            Some(file) if file.uri == uri => file.clone(),
            _ => {
                let bytes = read_bounded(&found.path).map_err(|e| format!("{}: {e}", rest.join("/")))?;
                let is_manifest = rest.len() == 1 && rest[0] == SKILL_MD;
                let file = Arc::new(SkillFile {
                    name: if is_manifest { name.to_owned() } else { rest.last().cloned().unwrap_or_default() },
                    description: if is_manifest { description.clone() } else { None },
                    mime_type: mime_type(rest.last().map_or("", String::as_str), &bytes),
                    digest: digest(&bytes),
                    size: bytes.len() as u64,
                    bytes: FileBytes::Disk(found.path.clone()),
                    uri,
                });
                hashed.insert(found.path.clone(), file.clone());
                file
            }
        };
        total += file.size;
        out.push(file);
    }
    if total > MAX_SKILL_BYTES {
        return Err(format!("its files hold {total} bytes, over the extension's {MAX_SKILL_BYTES}"));
    }
    out.sort_by(|a, b| a.uri.cmp(&b.uri));
    Ok((frontmatter, out))
}

/// Every regular file below `root`, without following links, bounded in depth and count.
fn walk(root: &Path) -> (Vec<Walked>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut entries = 0usize;
    let mut pending = vec![(root.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, segments)) = pending.pop() {
        let listing = match std::fs::read_dir(&dir) {
            Ok(listing) => listing,
            Err(e) => {
                problems.push(format!("skill directory {}: {e}", dir.display()));
                continue;
            }
        };
        for entry in listing.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                problems
                    .push(format!("skill directory {}: over {MAX_ENTRIES} entries, the rest not read", root.display()));
                return (found, problems);
            }
            let Ok(name) = entry.file_name().into_string() else {
                problems.push(format!("{}: a name that is not UTF-8 is skipped", dir.display()));
                continue;
            };
            let Ok(mut kind) = entry.file_type() else { continue };
            if kind.is_symlink() && crate::switched_off!("skills.links-not-followed") {
                let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
                kind = meta.file_type();
            }
            let mut child = segments.clone();
            child.push(name);
            if kind.is_dir() && child.len() < MAX_DEPTH {
                pending.push((entry.path(), child));
            } else if kind.is_file() {
                found.push(Walked { segments: child, path: entry.path() });
            }
            // Symbolic links, sockets and the like are not part of any skill.
        }
    }
    found.sort_by(|a, b| a.segments.cmp(&b.segments));
    (found, problems)
}

/// A file name as a URI path segment: unreserved characters as they are, the rest
/// percent-encoded.
fn escape(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A file's MIME type, by its extension; text/plain or application/octet-stream for others.
pub(super) fn mime_type(name: &str, bytes: &[u8]) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_directory_of_skills_is_read_with_digests_and_nested_skills() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "pdf-processing/SKILL.md", "---\nname: pdf-processing\ndescription: PDFs\n---\nbody\n");
        write(root, "pdf-processing/templates/a b.md", "# A\n");
        write(root, "pdf-processing/inner/SKILL.md", "---\nname: inner\ndescription: nested\n---\n");
        write(root, "Bad_Name/SKILL.md", "---\nname: Bad_Name\ndescription: x\n---\n");
        write(root, "mismatch/SKILL.md", "---\nname: other\ndescription: x\n---\n");
        write(root, "README.md", "not a skill\n");
        let source = SkillSource { path: root.to_path_buf(), prefix: vec!["acme".into()] };
        let (skills, problems) = scan(&source);
        let uris: Vec<&str> = skills.iter().map(|(s, _)| s.uri.as_str()).collect();
        assert_eq!(uris, ["skill://acme/pdf-processing/SKILL.md", "skill://acme/pdf-processing/inner/SKILL.md"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("Bad_Name") && p.contains("naming rules")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("mismatch") && p.contains("frontmatter name")), "{problems:?}");
        let (outer, files) = &skills[0];
        assert_eq!(
            outer.files,
            [
                "skill://acme/pdf-processing/SKILL.md",
                "skill://acme/pdf-processing/inner/SKILL.md",
                "skill://acme/pdf-processing/templates/a%20b.md"
            ]
        );
        let template = files.iter().find(|f| f.uri.ends_with("a%20b.md")).unwrap();
        assert_eq!(template.size, 4);
        assert_eq!(template.digest, digest(b"# A\n"));
        assert_eq!(template.mime_type, "text/markdown");
        let manifest = files.iter().find(|f| f.uri.ends_with("pdf-processing/SKILL.md")).unwrap();
        assert_eq!((manifest.name.as_str(), manifest.description.as_deref()), ("pdf-processing", Some("PDFs")));
    }

    #[test]
    fn a_skill_directory_itself_is_served_under_its_name_and_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("git-workflow");
        write(&root, "SKILL.md", "---\nname: git-workflow\ndescription: git\n---\n");
        write(dir.path(), "secret.txt", "secret\n");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let (skills, problems) = scan(&SkillSource { path: root, prefix: Vec::new() });
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].0.files, ["skill://git-workflow/SKILL.md"]);
    }

    #[test]
    fn a_skill_over_the_limits_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "big/SKILL.md", "---\nname: big\ndescription: x\n---\n");
        for i in 0..MAX_SKILL_FILES {
            write(dir.path(), &format!("big/f{i}.txt"), "x");
        }
        let (skills, problems) = scan(&SkillSource { path: dir.path().to_path_buf(), prefix: Vec::new() });
        assert!(skills.is_empty());
        assert!(problems[0].contains("513 files"), "{problems:?}");
    }
}
