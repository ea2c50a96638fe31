//! `mcpbox add REF`: a registry plugin added to the config and pinned in the lock in one step.
//! The reference is resolved, pulled and checked against the config's trust first; if it may
//! not serve, the config is left as it was and the refusal says what to do. The config is
//! edited in place (toml_edit keeps its comments and layout).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use toml_edit::{Array, DocumentMut, Item, Table};

use super::summary::Summary;
use crate::cli::progress::Transfers;
use crate::config::{ServeArgs, Settings};
use crate::registry::{self, OciRef};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::plugin_name;

/// The config `add` and `update` use when none is given.
pub(crate) const DEFAULT_CONFIG: &str = "mcpbox.toml";

/// What `mcpbox add` is asked to do.
pub(crate) struct AddRequest {
    pub reference: String,
    /// The config to add to (created if missing) [default: `mcpbox.toml`].
    pub config: Option<PathBuf>,
    /// Publisher keys to trust for this plugin only (`[trust.plugin.NAME] keys`).
    pub trust_keys: Vec<PathBuf>,
    /// Serve it unsigned (`[trust] unsigned`).
    pub allow_unsigned: bool,
    /// Registries to reach over plain HTTP (`[registries] insecure`).
    pub insecure: Vec<String>,
}

/// `mcpbox add REF`.
pub(crate) async fn add(request: AddRequest) -> Result<()> {
    let reference = OciRef::parse(&request.reference)?;
    let name = reference.plugin_name();
    let config = request.config.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG));
    let text = match std::fs::read_to_string(&config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", config.display())),
    };
    let args = ServeArgs {
        config: (!text.is_empty()).then(|| config.clone()),
        trust_keys: request.trust_keys.clone(),
        allow_unsigned: if request.allow_unsigned { vec![reference.written().to_owned()] } else { Vec::new() },
        insecure_registries: request.insecure.clone(),
        cache_dir: std::env::var_os("MCPBOX_CACHE_DIR").map(PathBuf::from),
        ..ServeArgs::default()
    };
    let mut settings = Settings::from_args(&args)?;
    settings.registry.lock_path = registry::lock_path(Some(&config));
    refuse_clash(&settings, &reference, &config)?;
    // Only the new reference is resolved: the others are as the lock has them.
    settings.plugin_refs = vec![reference.clone()];
    let mut resolution = super::resolve::resolve(&settings, false, &Transfers::new()).await?;
    if let Some(unresolved) = resolution.failed.pop() {
        return Err(unresolved.error.context(format!("{} is unchanged", config.display())));
    }
    let (_, file) = resolution.files.pop().ok_or_else(|| anyhow!("{reference} resolved to nothing"))?;
    let edited = edit(&text, &config, &request, &reference)?;
    std::fs::write(&config, edited).with_context(|| format!("cannot write {}", config.display()))?;
    let lock = registry::Lock::read(&settings.registry.lock_path)?;
    let digest = lock
        .get(reference.written())
        .map_or_else(|| reference.pinned().unwrap_or("-").to_owned(), |l| l.digest.clone());
    println!("added {reference} to {} as plugin `{name}`", config.display());
    println!("  pinned: {digest} in {}", settings.registry.lock_path.display());
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    match Summary::of(&compiler, &settings, &file, None).await {
        Ok(summary) => print!("{}", summary.render()),
        Err(error) => println!("  it does not load yet: {error:#}"),
    }
    println!("  grant what you agree to under [plugin.{name}] in {}", config.display());
    Ok(())
}

/// Refuses a reference the config already names, or one whose plugin name another plugin has.
fn refuse_clash(settings: &Settings, reference: &OciRef, config: &Path) -> Result<()> {
    let name = reference.plugin_name();
    for other in &settings.plugin_refs {
        if other.written() == reference.written() {
            return Err(anyhow!(
                "{} already names {reference}: `mcpbox update {name}` re-resolves it",
                config.display()
            ));
        }
        if other.plugin_name() == name {
            return Err(anyhow!(
                "{} already has a plugin `{name}` ({other}): two plugins cannot share a name",
                config.display()
            ));
        }
    }
    if let Some(file) = settings.plugin_paths.iter().find(|path| path.is_file() && plugin_name(path) == name) {
        return Err(anyhow!(
            "{} already has a plugin `{name}` ({}): two plugins cannot share a name",
            config.display(),
            file.display()
        ));
    }
    Ok(())
}

/// The config text with the reference added to `plugins`, and the trust the request gives it.
fn edit(text: &str, config: &Path, request: &AddRequest, reference: &OciRef) -> Result<String> {
    let invalid = |e: toml_edit::TomlError| anyhow!("{}: {e}", config.display());
    let mut document: DocumentMut = text.parse().map_err(invalid)?;
    let root = document.as_table_mut();
    array(root, "plugins", config)?.push(reference.written());
    if request.allow_unsigned {
        array(table(root, "trust", config)?, "unsigned", config)?.push(reference.written());
    }
    if !request.trust_keys.is_empty() {
        let plugin = table(table(table(root, "trust", config)?, "plugin", config)?, &reference.plugin_name(), config)?;
        let keys = array(plugin, "keys", config)?;
        for key in &request.trust_keys {
            keys.push(relative_to(key, config)?);
        }
    }
    for host in &request.insecure {
        let insecure = array(table(root, "registries", config)?, "insecure", config)?;
        if !insecure.iter().any(|known| known.as_str() == Some(host)) {
            insecure.push(host.as_str());
        }
    }
    Ok(document.to_string())
}

/// The table `key` of `parent`, made (without a header of its own while empty) if missing.
fn table<'a>(parent: &'a mut Table, key: &str, config: &Path) -> Result<&'a mut Table> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    item.as_table_mut().ok_or_else(|| anyhow!("{}: `{key}` is not a table", config.display()))
}

/// The array `key` of `table`, made if missing.
fn array<'a>(table: &'a mut Table, key: &str, config: &Path) -> Result<&'a mut Array> {
    let item = table.entry(key).or_insert_with(|| toml_edit::value(Array::new()));
    item.as_array_mut().ok_or_else(|| anyhow!("{}: `{key}` is not an array", config.display()))
}

/// `path` (given relative to the current directory) as the config names paths: relative to the
/// config's directory when inside it, else absolute.
fn relative_to(path: &Path, config: &Path) -> Result<String> {
    let absolute = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let dir = std::path::absolute(config)
        .with_context(|| format!("cannot resolve {}", config.display()))?
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default();
    let shown = absolute.strip_prefix(&dir).unwrap_or(&absolute);
    shown.to_str().map(str::to_owned).ok_or_else(|| anyhow!("{} is not UTF-8", shown.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(reference: &str) -> AddRequest {
        AddRequest {
            reference: reference.to_owned(),
            config: None,
            trust_keys: Vec::new(),
            allow_unsigned: false,
            insecure: Vec::new(),
        }
    }

    #[test]
    fn the_config_keeps_its_comments_and_gains_the_reference_and_its_trust() {
        let text = "# my tools\nplugins = [\"local/\"] # the local ones\n\n[limits]\ntimeout_ms = 5000\n";
        let reference = OciRef::parse("oci://127.0.0.1:5000/tools/echo:1").unwrap();
        let mut asked = request(reference.written());
        asked.allow_unsigned = true;
        asked.insecure = vec!["registry.lan:5000".to_owned()];
        let edited = edit(text, Path::new("mcpbox.toml"), &asked, &reference).unwrap();
        assert!(
            edited.starts_with(
                "# my tools\nplugins = [\"local/\", \"oci://127.0.0.1:5000/tools/echo:1\"] # the local ones\n"
            ),
            "{edited}"
        );
        let parsed: toml::Value = toml::from_str(&edited).unwrap();
        assert_eq!(parsed["limits"]["timeout_ms"].as_integer(), Some(5000));
        assert_eq!(parsed["trust"]["unsigned"][0].as_str(), Some(reference.written()));
        assert_eq!(parsed["registries"]["insecure"][0].as_str(), Some("registry.lan:5000"));
    }

    #[test]
    fn keys_are_trusted_for_the_added_plugin_only() {
        let reference = OciRef::parse("oci://127.0.0.1:5000/echo:1").unwrap();
        let mut asked = request(reference.written());
        asked.trust_keys = vec![PathBuf::from("keys/alice.pub")];
        let edited = edit("", Path::new("mcpbox.toml"), &asked, &reference).unwrap();
        let parsed: toml::Value = toml::from_str(&edited).unwrap();
        assert_eq!(parsed["plugins"][0].as_str(), Some(reference.written()));
        assert_eq!(parsed["trust"]["plugin"]["echo"]["keys"][0].as_str(), Some("keys/alice.pub"), "{edited}");
        assert!(parsed["trust"].get("keys").is_none(), "{edited}");
    }

    #[test]
    fn a_config_of_another_shape_is_named() {
        let reference = OciRef::parse("oci://127.0.0.1:5000/echo:1").unwrap();
        let error =
            edit("plugins = \"x\"\n", Path::new("c.toml"), &request(reference.written()), &reference).unwrap_err();
        assert_eq!(error.to_string(), "c.toml: `plugins` is not an array");
    }
}
