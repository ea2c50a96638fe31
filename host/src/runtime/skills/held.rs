//! The skills a plugin ships (WIT 0.1.3 `metadata.skills`): files given at load, held in
//! memory, served at `skill://<plugin>/<skill>/<path>` under the same rules as an operator's
//! directory. A plugin's bytes are its own word, so any rule broken refuses them all, named.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::frontmatter::{frontmatter, valid_name};
use super::library::{FileBytes, Found, MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillFile, digest};
use super::scan::{SKILL_MD, mime_type, valid_path_segment};

/// A skill's files: their paths in the skill, and bytes.
type Members = Vec<(Vec<String>, Arc<[u8]>)>;

/// The skills in `files` (`<skill>/<path>` and bytes) of plugin `plugin`.
pub(crate) fn held_skills(plugin: &str, files: Vec<(String, Arc<[u8]>)>) -> Result<Found, String> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    if !valid_path_segment(plugin) {
        return Err(format!("the plugin name `{plugin}` cannot stand in a skill:// URI"));
    }
    let mut by_skill: BTreeMap<String, Members> = BTreeMap::new();
    for (path, bytes) in files {
        let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
        if segments.len() < 2 || segments.iter().any(|s| !valid_path_segment(s)) {
            return Err(format!(
                "`{}` is not <skill>/<path> of plain URI segments ([A-Za-z0-9._~-])",
                path.chars().take(200).collect::<String>()
            ));
        }
        by_skill.entry(segments[0].clone()).or_default().push((segments[1..].to_vec(), bytes));
    }
    let origin = format!("plugin {plugin}");
    let mut found = Vec::new();
    for (name, mut members) in by_skill {
        let uri = format!("skill://{plugin}/{name}/{SKILL_MD}");
        if !valid_name(&name) {
            return Err(format!("skill `{name}` breaks the Agent Skills naming rules"));
        }
        if members.len() > MAX_SKILL_FILES {
            return Err(format!("skill `{name}` has {} files, over the extension's {MAX_SKILL_FILES}", members.len()));
        }
        let total: u64 = members.iter().map(|(_, bytes)| bytes.len() as u64).sum();
        if total > MAX_SKILL_BYTES {
            return Err(format!("skill `{name}` holds {total} bytes, over the extension's {MAX_SKILL_BYTES}"));
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        if members.windows(2).any(|pair| pair[0].0 == pair[1].0) {
            return Err(format!("skill `{name}` gives a file twice"));
        }
        let manifest = members
            .iter()
            .find(|(rest, _)| rest.len() == 1 && rest[0] == SKILL_MD)
            .ok_or_else(|| format!("skill `{name}` has no SKILL.md"))?;
        let text = std::str::from_utf8(&manifest.1).map_err(|_| format!("{uri} is not UTF-8"))?;
        let front = frontmatter(text).map_err(|why| format!("{uri}: {why}"))?;
        if front.get("name").and_then(|n| n.as_str()) != Some(name.as_str()) {
            return Err(format!("{uri}: its frontmatter name is not `{name}`"));
        }
        let description = front.get("description").and_then(|d| d.as_str()).map(str::to_owned);
        let files: Vec<Arc<SkillFile>> = members
            .into_iter()
            .map(|(rest, bytes)| {
                let is_manifest = rest.len() == 1 && rest[0] == SKILL_MD;
                Arc::new(SkillFile {
                    uri: format!("skill://{plugin}/{name}/{}", rest.join("/")),
                    name: if is_manifest { name.clone() } else { rest.last().cloned().unwrap_or_default() },
                    description: if is_manifest { description.clone() } else { None },
                    mime_type: mime_type(rest.last().map_or("", String::as_str), &bytes),
                    digest: digest(&bytes),
                    size: bytes.len() as u64,
                    bytes: FileBytes::Held(bytes),
                })
            })
            .collect();
        let skill = Skill {
            uri,
            frontmatter: front,
            files: files.iter().map(|f| f.uri.clone()).collect(),
            origin: origin.clone(),
        };
        found.push((skill, files));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> (String, Arc<[u8]>) {
        (path.to_owned(), Arc::from(text.as_bytes()))
    }

    #[test]
    fn a_plugins_skills_are_served_under_its_name_or_refused() {
        let found = held_skills(
            "charts",
            vec![
                file("plotting/SKILL.md", "---\nname: plotting\ndescription: Plot\n---\n"),
                file("plotting/refs/a.md", "# A\n"),
            ],
        )
        .unwrap();
        assert_eq!(found[0].0.files, ["skill://charts/plotting/SKILL.md", "skill://charts/plotting/refs/a.md"]);
        for bad in [
            vec![file("plotting/refs/a.md", "x")],
            vec![file("../etc/SKILL.md", "x")],
            vec![file("plotting/SKILL.md", "---\nname: other\ndescription: x\n---\n")],
            vec![file("Plot/SKILL.md", "---\nname: Plot\ndescription: x\n---\n")],
        ] {
            assert!(held_skills("charts", bad).is_err());
        }
    }
}
