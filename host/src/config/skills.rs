//! `[[skills]]` and `--skills` (the directories of skills served, docs/skills.md), and the
//! server's `instructions`.

use anyhow::{Result, anyhow};

use super::args::ServeArgs;
use super::file::ConfigFile;
use super::problems::Problems;
use crate::runtime::SkillSource;
use crate::runtime::skills::valid_path_segment;

/// The most characters of `instructions` (what every client puts into its model's context).
const MAX_INSTRUCTIONS_CHARS: usize = 16 << 10;

/// The file's skill directories (relative to it), then the command line's; each must be a
/// directory, and a `prefix` plain URI path segments.
pub(super) fn skill_sources(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> Vec<SkillSource> {
    let mut sources = Vec::new();
    for entry in &file.config.skills {
        let at = file.at(entry.span());
        let skills = entry.get_ref();
        let path = file.resolve(&skills.path);
        let prefix: Vec<String> = match &skills.prefix {
            None => Vec::new(),
            Some(prefix) => prefix.split('/').map(str::to_owned).collect(),
        };
        if let Some(bad) = prefix.iter().find(|segment| !valid_path_segment(segment)) {
            problems.take::<()>(Err(anyhow!(
                "{at}: [[skills]] prefix: `{bad}` is not a plain URI path segment (letters, digits, `-`, `.`, `_`, `~`; segments split by `/`)"
            )));
            continue;
        }
        if !path.is_dir() {
            problems.take::<()>(Err(anyhow!("{at}: [[skills]] path: {} is not a directory", path.display())));
            continue;
        }
        sources.push(SkillSource { path, prefix });
    }
    for path in &args.skills {
        if !path.is_dir() {
            problems.take::<()>(Err(anyhow!("--skills {}: not a directory", path.display())));
            continue;
        }
        sources.push(SkillSource { path: path.clone(), prefix: Vec::new() });
    }
    sources
}

/// `instructions`, at most [`MAX_INSTRUCTIONS_CHARS`] characters.
pub(super) fn instructions(file: &ConfigFile) -> Result<Option<String>> {
    let Some(text) = &file.config.instructions else { return Ok(None) };
    if text.get_ref().chars().count() > MAX_INSTRUCTIONS_CHARS {
        return Err(anyhow!(
            "{}: instructions: over {MAX_INSTRUCTIONS_CHARS} characters (clients put them into every model context)",
            file.at(text.span())
        ));
    }
    Ok(Some(text.get_ref().clone()))
}
