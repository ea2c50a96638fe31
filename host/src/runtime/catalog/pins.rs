//! Pinned definitions: what each plugin's tools, prompts and resource templates say (names,
//! titles, descriptions, schemas, annotations: what a model reads and trusts) is pinned by
//! digest per plugin, and a definition that changed is withheld until the operator accepts it
//! (`mcpbox accept`), so that a plugin updated, hot-reloaded or replaced under the same name
//! cannot steer the model with a new description ("tool poisoning", a "rug pull").
//!
//! A plugin's first appearance pins it (trust on first use) unless `--locked` refuses plugins
//! without pins; `[plugin.NAME] pin = false` (a development folder) and `--unpinned` serve
//! every definition as it is. Pins live in a file of their own beside the config
//! (`mcpbox.pins.json`), not in `mcpbox.lock`: the lock is written by `add`, `update` and
//! `pull` and followed by running servers as the signal to re-resolve, while pins are written
//! by `serve` itself (first use) and by `accept`; and the lock names registry references only,
//! pins every plugin, from files too. The definitions themselves are kept beside their digests,
//! so that a change is shown as a readable diff. Listed resources (`list-resources`, asked on
//! every `resources/list`) cannot be pinned; they are bounded like every call's output, and a
//! URI is served only by the plugin that owns it (`ownership.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::diff::{diff, lines};
use super::entry::LoadProblem;
use crate::runtime::plugin::metadata::ItemMeta;
use crate::runtime::plugin::{Plugin, ToolInfo};

/// The file's schema version.
const VERSION: u32 = 1;

/// Where definitions are pinned, and how.
#[derive(Debug, Clone, Default)]
pub struct PinSettings {
    /// The pins file; `None`: pins are kept in memory only (no place to write them).
    pub path: Option<PathBuf>,
    /// Refuse a plugin that has no pins (`--locked`).
    pub locked: bool,
    /// Serve every definition as it is (`--unpinned`).
    pub off: bool,
}

/// The pins file.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PinFile {
    version: u32,
    #[serde(default)]
    plugins: BTreeMap<String, Definitions>,
}

/// What one plugin serves, by kind and by its own names.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Definitions {
    #[serde(default)]
    tools: BTreeMap<String, Pinned>,
    #[serde(default)]
    prompts: BTreeMap<String, Pinned>,
    #[serde(default)]
    templates: BTreeMap<String, Pinned>,
    /// What it adds to the server's instructions (WIT 0.1.3), under the key `instructions`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    instructions: BTreeMap<String, Pinned>,
    /// The skills it ships (WIT 0.1.3), by URI: frontmatter and every file's digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    skills: BTreeMap<String, Pinned>,
    /// Its MCP Apps, by URI: the digest of the HTML (which runs in the user's client).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    apps: BTreeMap<String, Pinned>,
}

/// One definition and its digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pinned {
    digest: String,
    definition: Value,
}

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DefinitionKind {
    Tool,
    Prompt,
    Template,
    /// What a plugin adds to the server's instructions.
    Instructions,
    /// A skill a plugin ships, by its URI.
    Skill,
    /// An MCP App's HTML, by its URI.
    App,
}

impl std::fmt::Display for DefinitionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DefinitionKind::Tool => "tool",
            DefinitionKind::Prompt => "prompt",
            DefinitionKind::Template => "resource template",
            DefinitionKind::Instructions => "instructions",
            DefinitionKind::Skill => "skill",
            DefinitionKind::App => "app",
        })
    }
}

/// A definition withheld because it differs from its pin (or has none in a pinned plugin).
#[derive(Debug, Clone)]
pub struct Withheld {
    pub plugin: String,
    pub kind: DefinitionKind,
    /// The plugin's own name for it.
    pub name: String,
    /// What changed, readable.
    pub diff: String,
    /// It had no pin: a definition added since the plugin was pinned.
    pub new: bool,
}

impl std::fmt::Display for Withheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.new { "is new since it was pinned" } else { "changed since it was pinned" };
        write!(f, "{} `{}` of plugin `{}` {what}:\n{}", self.kind, self.name, self.plugin, self.diff)
    }
}

/// What settling a catalog's plugins against the pins decided.
#[derive(Debug, Default)]
pub struct Settled {
    pub withheld: Vec<Withheld>,
    /// Plugins refused (unpinned under `--locked`), with why.
    pub refused: Vec<LoadProblem>,
    /// Plugins pinned now, on first use (or that would be, when only checking).
    pub first_use: Vec<String>,
}

/// Whether settling may write the pins of a plugin seen for the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstUse {
    /// Pin it (serving).
    Pin,
    /// Only say it would be (`mcpbox check`).
    Report,
}

/// The pins, as last read or written.
pub struct Pins {
    settings: PinSettings,
    file: Mutex<PinFile>,
    /// Whether the pins file was there when last read or written.
    existed: AtomicBool,
    /// The pins file existed and is gone (removed by someone else): nothing is served until it
    /// is restored or `mcpbox accept` writes it anew. A missing file is never taken for "no
    /// pins" once there was one: that would pin every changed definition on first use.
    gone: AtomicBool,
}

impl Pins {
    /// The pins at `settings.path` (none yet if the file is missing); a file that does not
    /// parse is an error naming it: a damaged trust record is not silently trusted anew.
    pub fn open(settings: PinSettings) -> Result<Pins> {
        let read = match &settings.path {
            Some(path) => read(path)?,
            None => None,
        };
        let existed = AtomicBool::new(read.is_some());
        let file = read.unwrap_or_else(|| PinFile { version: VERSION, ..PinFile::default() });
        Ok(Pins { settings, file: Mutex::new(file), existed, gone: AtomicBool::new(false) })
    }

    /// Pins nothing, withholds nothing (benchmarks, `inspect`).
    pub fn off() -> Pins {
        Pins {
            settings: PinSettings { off: true, ..PinSettings::default() },
            file: Mutex::default(),
            existed: AtomicBool::new(false),
            gone: AtomicBool::new(false),
        }
    }

    /// The pins file, if there is one.
    pub fn path(&self) -> Option<&Path> {
        self.settings.path.as_deref()
    }

    /// Reads the file again (another process, `mcpbox accept`, changed it). A file that was
    /// there and is gone withholds everything from now on (until it is back or accepted).
    pub fn reread(&self) -> Result<()> {
        let Some(path) = &self.settings.path else { return Ok(()) };
        match read(path)? {
            Some(file) => {
                *self.file.lock().unwrap_or_else(PoisonError::into_inner) = file;
                self.existed.store(true, Ordering::SeqCst);
                self.gone.store(false, Ordering::SeqCst);
            }
            None if self.existed.load(Ordering::SeqCst) && !crate::switched_off!("pins.gone-withholds") => {
                self.gone.store(true, Ordering::SeqCst);
                tracing::warn!(
                    pins = %path.display(),
                    "the pins file was removed: every pinned plugin is withheld until it is restored or \
                     `mcpbox accept` pins them anew"
                );
            }
            None => *self.file.lock().unwrap_or_else(PoisonError::into_inner) = PinFile::default(),
        }
        Ok(())
    }

    /// Decides, for every plugin, which of its definitions serve: those equal to their pins;
    /// a plugin without pins is pinned now (or refused under `--locked`).
    pub fn settle(&self, plugins: &[std::sync::Arc<Plugin>], first_use: FirstUse) -> Settled {
        let mut settled = Settled::default();
        if self.settings.off {
            return settled;
        }
        if self.gone.load(Ordering::SeqCst) {
            let at = self.path().map(|p| p.display().to_string()).unwrap_or_default();
            let diff = format!(
                "  the pins file {at} was removed: nothing is served until it is restored or `mcpbox accept` pins anew\n"
            );
            for plugin in plugins.iter().filter(|p| p.pin) {
                settled.withheld.extend(
                    changed(&plugin.name, &Definitions::default(), &definitions(plugin))
                        .into_iter()
                        .map(|w| Withheld { diff: diff.clone(), new: false, ..w }),
                );
            }
            return settled;
        }
        let mut new = Vec::new();
        {
            let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
            for plugin in plugins.iter().filter(|p| p.pin) {
                let now = definitions(plugin);
                let Some(pinned) = file.plugins.get(&*plugin.name) else {
                    if self.settings.locked && !crate::switched_off!("pins.locked-refuses-unpinned") {
                        let at = self.path().map_or_else(|| "memory".to_owned(), |p| p.display().to_string());
                        settled.refused.push(LoadProblem {
                            path: plugin.path.clone(),
                            error: anyhow!(
                                "plugin `{}` has no pinned definitions in {at}, and --locked refuses unpinned plugins: \
                                 review it (`mcpbox inspect`) and pin it with `mcpbox accept {}`",
                                plugin.name,
                                plugin.name
                            ),
                        });
                    } else {
                        settled.first_use.push(plugin.name.to_string());
                        new.push((plugin.name.to_string(), now));
                    }
                    continue;
                };
                settled.withheld.extend(changed(&plugin.name, pinned, &now));
            }
        }
        if first_use == FirstUse::Pin && !new.is_empty() {
            for (name, _) in &new {
                tracing::info!(plugin = %name, pins = ?self.path(), "pinned the plugin's definitions on first use");
            }
            if let Err(error) = self.write(new) {
                tracing::warn!("{error:#}; the pins are kept in memory until mcpbox stops");
            }
        }
        if crate::switched_off!("pins.changes-withheld") {
            settled.withheld.clear();
        }
        settled
    }

    /// What of `plugin` differs from its pins (every definition if it has none); nothing is
    /// written (`mcpbox update` shows it).
    pub fn pending(&self, plugin: &Plugin) -> Vec<Withheld> {
        let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let before = file.plugins.get(&*plugin.name).cloned().unwrap_or_default();
        changed(&plugin.name, &before, &definitions(plugin))
    }

    /// Pins what `plugins` serve now; returns, per plugin, the definitions that changed.
    pub fn accept(&self, plugins: &[&Plugin]) -> Result<Vec<Withheld>> {
        let mut accepted = Vec::new();
        let mut new = Vec::new();
        {
            let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
            for plugin in plugins {
                let now = definitions(plugin);
                let before = file.plugins.get(&*plugin.name).cloned().unwrap_or_default();
                accepted.extend(changed(&plugin.name, &before, &now));
                new.push((plugin.name.to_string(), now));
            }
        }
        self.write(new)?;
        Ok(accepted)
    }

    /// Sets `plugins`' pins in the file as it is now on disk (another process may have pinned
    /// others meanwhile), written whole or not at all.
    fn write(&self, plugins: Vec<(String, Definitions)>) -> Result<()> {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(path) = &self.settings.path {
            // Gone since it was read: the pins in memory are the last known, not "none".
            if let Ok(Some(on_disk)) = read(path) {
                *file = on_disk;
            }
        }
        file.version = VERSION;
        file.plugins.extend(plugins);
        let Some(path) = &self.settings.path else { return Ok(()) };
        let text = serde_json::to_string_pretty(&*file).context("cannot encode the pins")?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let staging = path.with_extension(format!("partial.{}", std::process::id()));
        std::fs::write(&staging, text + "\n")
            .and_then(|()| std::fs::rename(&staging, path))
            .with_context(|| format!("cannot write the pins file {}", path.display()))?;
        self.existed.store(true, Ordering::SeqCst);
        self.gone.store(false, Ordering::SeqCst);
        Ok(())
    }
}

/// The pins file at `path`; `None` if there is none.
fn read(path: &Path) -> Result<Option<PinFile>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow!("cannot read the pins file {}: {e}", path.display())),
    };
    let file: PinFile = serde_json::from_str(&text).map_err(|e| {
        anyhow!("{}:{}:{}: {e} (fix it, or delete it to pin every plugin anew)", path.display(), e.line(), e.column())
    })?;
    if file.version != VERSION {
        return Err(anyhow!(
            "{}: version {} is not {VERSION}, the one this mcpbox reads",
            path.display(),
            file.version
        ));
    }
    Ok(Some(file))
}

/// What `plugin` serves now, as pinned.
pub(crate) fn definitions(plugin: &Plugin) -> Definitions {
    let pinned = |value: Value| {
        let value = sorted(&value);
        Pinned { digest: format!("sha256:{}", crate::hex::hex(&Sha256::digest(value.to_string()))), definition: value }
    };
    let serialized = |item: Result<Value, serde_json::Error>| item.unwrap_or(Value::Null);
    // `_meta` and icons (WIT 0.1.3) are part of what a model and a client read: pinned with
    // their item (absent ones leave earlier pins as they were).
    let with = |mut value: Value, extra: Option<&ItemMeta>| {
        if let (Value::Object(map), Some(extra)) = (&mut value, extra) {
            extra.apply(map);
        }
        value
    };
    let metadata = &plugin.metadata;
    Definitions {
        tools: plugin
            .tools
            .iter()
            .map(|t| (t.descriptor.name.clone(), pinned(with(tool(t), metadata.tools.get(&t.descriptor.name)))))
            .collect(),
        prompts: plugin
            .prompts
            .iter()
            .map(|p| (p.name.clone(), pinned(with(serialized(serde_json::to_value(p)), metadata.prompts.get(&p.name)))))
            .collect(),
        templates: plugin
            .templates
            .iter()
            .map(|t| {
                let extra = metadata.templates.get(&t.uri_template);
                (t.name.clone(), pinned(with(serialized(serde_json::to_value(t)), extra)))
            })
            .collect(),
        instructions: metadata
            .instructions
            .iter()
            .map(|text| ("instructions".to_owned(), pinned(json!(text))))
            .collect(),
        skills: metadata
            .skills
            .iter()
            .map(|(skill, files)| {
                let files: Vec<Value> =
                    files.iter().map(|f| json!({ "uri": f.uri, "digest": f.digest, "size": f.size })).collect();
                (skill.uri.clone(), pinned(json!({ "frontmatter": skill.frontmatter, "resources": files })))
            })
            .collect(),
        apps: metadata.apps.iter().map(|(uri, digest)| (uri.clone(), pinned(json!({ "html": digest })))).collect(),
    }
}

/// A tool as the model reads it (before the host's own annotations).
fn tool(info: &ToolInfo) -> Value {
    let d = &info.descriptor;
    json!({
        "name": d.name,
        "title": d.title,
        "description": d.description,
        "inputSchema": info.input_schema,
        "outputSchema": info.output_schema,
        "annotations": d.annotations,
    })
}

/// `value` with every object's members in key order, whatever serde_json's map keeps.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&object[k]))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The definitions of `now` that differ from `pinned` (or are not in it), with their diffs.
fn changed(plugin: &str, pinned: &Definitions, now: &Definitions) -> Vec<Withheld> {
    let kinds = [
        (DefinitionKind::Tool, &pinned.tools, &now.tools),
        (DefinitionKind::Prompt, &pinned.prompts, &now.prompts),
        (DefinitionKind::Template, &pinned.templates, &now.templates),
        (DefinitionKind::Instructions, &pinned.instructions, &now.instructions),
        (DefinitionKind::Skill, &pinned.skills, &now.skills),
        (DefinitionKind::App, &pinned.apps, &now.apps),
    ];
    let mut withheld = Vec::new();
    for (kind, pinned, now) in kinds {
        for (name, current) in now {
            let before = pinned.get(name);
            if before.is_some_and(|b| b.digest == current.digest) {
                continue;
            }
            let diff = match before {
                Some(before) => diff(&before.definition, &current.definition),
                None => lines("+ ", &current.definition),
            };
            let new = before.is_none();
            withheld.push(Withheld { plugin: plugin.to_owned(), kind, name: name.clone(), diff, new });
        }
    }
    withheld
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unchanged_definitions_are_not_withheld_and_changed_or_new_ones_are() {
        let pin = |value: Value| Pinned {
            digest: format!("sha256:{}", crate::hex::hex(&Sha256::digest(sorted(&value).to_string()))),
            definition: sorted(&value),
        };
        let pinned = Definitions {
            tools: [("a".to_owned(), pin(json!({ "description": "one" })))].into(),
            ..Definitions::default()
        };
        let same = pinned.clone();
        assert!(changed("p", &pinned, &same).is_empty());
        let mut now = pinned.clone();
        now.tools.insert("a".into(), pin(json!({ "description": "two" })));
        now.prompts.insert("b".into(), pin(json!({ "name": "b" })));
        let withheld = changed("p", &pinned, &now);
        let named: Vec<_> = withheld.iter().map(|w| (w.kind, w.name.as_str())).collect();
        assert_eq!(named, [(DefinitionKind::Tool, "a"), (DefinitionKind::Prompt, "b")]);
        assert!(withheld[1].new && withheld[1].diff.contains("+ name: \"b\""), "{}", withheld[1].diff);
        // Member order does not change a digest.
        assert_eq!(pin(json!({ "a": 1, "b": 2 })).digest, pin(json!({ "b": 2, "a": 1 })).digest);
    }
}
