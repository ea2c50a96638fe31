//! The skills served now (extensions/skills §Skill Entries, §Resource Mapping, §Directory
//! Resources): each skill's entry, every file by its URI with the digest and size the host
//! computed, and the directories the files stand in. A snapshot: a rescan builds a new one.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The most bytes a skill's files may hold together, and so the most one file may hold
/// (extensions/skills §Limits: 16 MiB).
pub(crate) const MAX_SKILL_BYTES: u64 = 16 << 20;
/// The most files a skill may have, its `SKILL.md` included (§Limits).
pub(crate) const MAX_SKILL_FILES: usize = 512;
/// A directory resource's MIME type (§Directory Resources).
pub(crate) const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Where a file's bytes are: on the operator's disk (read again, and checked, on every read),
/// or held (a plugin's skills, given at load).
#[derive(Debug, Clone)]
pub(crate) enum FileBytes {
    Disk(PathBuf),
    Held(Arc<[u8]>),
}

/// One file of one or more skills (a nested skill's files belong to the skill around it too).
#[derive(Debug, Clone)]
pub(crate) struct SkillFile {
    pub(crate) uri: String,
    /// The resource's `name`: the file's name, or a `SKILL.md`'s frontmatter `name`.
    pub(crate) name: String,
    /// A `SKILL.md`'s frontmatter `description`.
    pub(crate) description: Option<String>,
    pub(crate) mime_type: &'static str,
    /// `sha256:` and 64 lowercase hex digits of the bytes.
    pub(crate) digest: String,
    pub(crate) size: u64,
    pub(crate) bytes: FileBytes,
}

/// Skills found, each with its files.
pub(crate) type Found = Vec<(Skill, Vec<Arc<SkillFile>>)>;

/// One skill's entry.
#[derive(Debug, Clone)]
pub(crate) struct Skill {
    /// The URI of its `SKILL.md`.
    pub(crate) uri: String,
    pub(crate) frontmatter: Map<String, Value>,
    /// Every file's URI, `SKILL.md` included, sorted.
    pub(crate) files: Vec<String>,
    /// Who serves it, for the log: an operator's directory or a plugin.
    pub(crate) origin: String,
}

/// A skill file's bytes as read now.
pub(crate) struct FileRead {
    pub(crate) bytes: Vec<u8>,
    pub(crate) mime_type: &'static str,
    /// The bytes differ from what the entry says (the file changed since the last scan).
    pub(crate) stale: bool,
}

/// The skills served now.
#[derive(Debug, Default)]
pub struct SkillLibrary {
    skills: BTreeMap<String, Skill>,
    files: BTreeMap<String, Arc<SkillFile>>,
    /// Each directory's URI and its direct children's URIs.
    dirs: BTreeMap<String, BTreeSet<String>>,
}

impl SkillLibrary {
    /// The library of `skills`, each with its files; a skill whose URI an earlier one took is
    /// left out and named in the returned problems.
    pub(crate) fn new(found: Found) -> (SkillLibrary, Vec<String>) {
        let mut library = SkillLibrary::default();
        let mut problems = Vec::new();
        for (skill, files) in found {
            if let Some(first) = library.skills.get(&skill.uri) {
                problems.push(format!(
                    "skill {} from {} is left out: {} serves the same URI",
                    skill.uri, skill.origin, first.origin
                ));
                continue;
            }
            for file in files {
                library.add_directories(&file.uri);
                library.files.entry(file.uri.clone()).or_insert(file);
            }
            library.skills.insert(skill.uri.clone(), skill);
        }
        (library, problems)
    }

    /// Registers every directory above `uri` (the scheme's root excluded) with its child.
    fn add_directories(&mut self, uri: &str) {
        let Some((scheme, path)) = uri.split_once("://") else { return };
        let segments: Vec<&str> = path.split('/').collect();
        for depth in 1..segments.len() {
            let dir = format!("{scheme}://{}", segments[..depth].join("/"));
            let child = format!("{scheme}://{}", segments[..=depth].join("/"));
            self.dirs.entry(dir).or_default().insert(child);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Every skill, by URI.
    pub(crate) fn skills(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.get(uri)
    }

    /// The file at `uri`.
    pub(crate) fn file(&self, uri: &str) -> Option<&Arc<SkillFile>> {
        self.files.get(uri)
    }

    /// Every file, by URI.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<SkillFile>> {
        self.files.values()
    }

    /// The direct children of the directory at `uri`, each with whether it is a directory;
    /// `None` if no directory is there.
    pub(crate) fn directory(&self, uri: &str) -> Option<Vec<(&str, bool)>> {
        let children = self.dirs.get(uri)?;
        Some(children.iter().map(|child| (child.as_str(), self.dirs.contains_key(child))).collect())
    }

    /// Reads the file at `uri` now; `None` if the library has none there.
    pub(crate) fn read(&self, uri: &str) -> Option<std::io::Result<FileRead>> {
        let file = self.files.get(uri)?;
        let bytes = match &file.bytes {
            FileBytes::Held(bytes) => Ok(bytes.to_vec()),
            FileBytes::Disk(path) => read_bounded(path),
        };
        Some(bytes.map(|bytes| {
            let stale = bytes.len() as u64 != file.size || digest(&bytes) != file.digest;
            FileRead { bytes, mime_type: file.mime_type, stale }
        }))
    }
}

/// A file's bytes, at most [`MAX_SKILL_BYTES`] (a larger one is an error, not a cut).
pub(crate) fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_SKILL_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SKILL_BYTES {
        return Err(std::io::Error::other(format!("{} is over {MAX_SKILL_BYTES} bytes", path.display())));
    }
    Ok(bytes)
}

/// `sha256:` and the lowercase hex digest of `bytes` (extensions/skills §Integrity and
/// Verification).
pub(crate) fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::hex::hex(&Sha256::digest(bytes)))
}

impl SkillLibrary {
    /// Whether `other` serves the same skills with the same files (a rescan that found
    /// nothing new is not a change).
    pub(crate) fn same_as(&self, other: &SkillLibrary) -> bool {
        self.files.len() == other.files.len()
            && self.files.iter().zip(&other.files).all(|((a, x), (b, y))| a == b && x.digest == y.digest)
            && self.skills.len() == other.skills.len()
            && self.skills.iter().zip(&other.skills).all(|((a, x), (b, y))| a == b && x.frontmatter == y.frontmatter)
    }
}
