//! `mcpbox update [NAME]`: resolves the config's tags again and moves the lock where they
//! point now, showing for each plugin what changed: the digest, its tools and prompts, and the
//! grants it asks for. A new version that may not serve (unsigned, or signed by no trusted key)
//! is refused and the lock keeps the old one. A server running on the config follows the lock.

use std::path::PathBuf;

use anyhow::{Result, anyhow};

use super::add::DEFAULT_CONFIG;
use super::summary::Summary;
use crate::cli::progress::Transfers;
use crate::config::{ServeArgs, Settings};
use crate::registry::{self, Lock, OciRef};
use crate::runtime::catalog::Pins;
use crate::runtime::engine::compile::Compiler;

/// `mcpbox update [NAME] [--config FILE]`.
pub(crate) async fn update(name: Option<String>, config: Option<PathBuf>, insecure: Vec<String>) -> Result<()> {
    let config = config.unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG));
    if !config.is_file() {
        return Err(anyhow!("no config {}: give the one to update with --config FILE", config.display()));
    }
    let args = ServeArgs {
        config: Some(config.clone()),
        insecure_registries: insecure,
        cache_dir: std::env::var_os("MCPBOX_CACHE_DIR").map(PathBuf::from),
        ..ServeArgs::default()
    };
    let mut settings = Settings::from_args(&args)?;
    let chosen = chosen(&settings.plugin_refs, name.as_deref(), &config)?;
    let lock_path = settings.registry.lock_path.clone();
    let before = Lock::read(&lock_path)?;
    settings.plugin_refs = chosen.clone();
    let resolution = super::resolve::resolve(&settings, true, &Transfers::new()).await?;
    let after = Lock::read(&lock_path)?;
    let store = super::resolve::store(&settings)?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let pins = Pins::open(settings.pins.clone())?;
    for reference in &chosen {
        let name = reference.plugin_name();
        let old = before.get(reference.written()).map(|locked| locked.digest.clone());
        if let Some(unresolved) = resolution.failed.iter().find(|u| u.reference == reference.written()) {
            let kept = old.as_deref().map_or(String::new(), |digest| format!(" (the lock keeps {digest})"));
            println!("{name}: not updated{kept}: {:#}", unresolved.error);
            continue;
        }
        if let Some(digest) = reference.pinned() {
            println!("{name}: {reference} names its digest {digest}; edit the config to move it");
            continue;
        }
        let new = after.get(reference.written()).map(|locked| locked.digest.clone());
        let (Some(new), Some(new_file)) =
            (new, resolution.files.iter().find(|(written, _)| written == reference.written()).map(|(_, f)| f))
        else {
            continue;
        };
        if old.as_deref() == Some(&new) {
            println!("{name}: up to date ({new})");
            continue;
        }
        println!("{name}: {reference} updated");
        println!("  digest: {} → {new}", old.as_deref().unwrap_or("(not pinned)"));
        let after_summary = Summary::of(&compiler, &settings, new_file, Some(&pins)).await;
        let before_file = match &old {
            Some(old) => registry::stored_plugin(&store, reference, old).ok().flatten(),
            None => None,
        };
        let before_summary = match before_file {
            Some(file) => Summary::of(&compiler, &settings, &file, None).await.ok(),
            None => None,
        };
        match (before_summary, &after_summary) {
            (Some(before), Ok(after)) => {
                let changes = after.changes_from(&before);
                print!(
                    "{}",
                    if changes.is_empty() { "  tools, prompts and requests: unchanged\n".to_owned() } else { changes }
                );
            }
            (None, Ok(after)) => print!("  (the previous version is not in the store to compare)\n{}", after.render()),
            (_, Err(error)) => println!("  the new version does not load: {error:#}"),
        }
        if let Ok(after) = &after_summary
            && !after.unpinned.is_empty()
        {
            // What the model would read differs from what was pinned: shown, and withheld by a
            // serving mcpbox until the operator accepts it.
            println!("  definitions that differ from their pins (withheld until `mcpbox accept {name}`):");
            for changed in &after.unpinned {
                print!("  {}", changed.replace('\n', "\n  ").trim_end_matches(' '));
                println!();
            }
        }
    }
    if resolution.failed.is_empty() {
        Ok(())
    } else {
        Err(anyhow!("{} of {} plugins could not be updated", resolution.failed.len(), chosen.len()))
    }
}

/// The references `name` chooses (a plugin name or a reference as written; all without one).
fn chosen(refs: &[OciRef], name: Option<&str>, config: &std::path::Path) -> Result<Vec<OciRef>> {
    if refs.is_empty() {
        return Err(anyhow!("{} names no oci:// plugin: nothing to update", config.display()));
    }
    let Some(name) = name else { return Ok(refs.to_vec()) };
    let chosen: Vec<OciRef> = refs.iter().filter(|r| r.plugin_name() == name || r.written() == name).cloned().collect();
    if chosen.is_empty() {
        let known: Vec<String> = refs.iter().map(OciRef::plugin_name).collect();
        return Err(anyhow!("{} has no registry plugin `{name}` (it has: {})", config.display(), known.join(", ")));
    }
    Ok(chosen)
}
