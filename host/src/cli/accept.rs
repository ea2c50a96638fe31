//! `mcpbox accept [NAME...]`: pins what plugins serve now (their tools', prompts' and
//! templates' definitions), so that a serving mcpbox serves the definitions it withheld
//! because they changed (`runtime/catalog/pins.rs`). Prints what it accepted, as diffs.
//!
//! It takes `serve`'s options; of its words, those that name a plugin path (a file or folder
//! that exists, an `oci://` reference) are plugin paths, the others plugin names: `mcpbox
//! accept echo --config mcpbox.toml`, or `mcpbox accept ./plugins` for every plugin there.

use anyhow::{Result, anyhow, bail};

use super::progress::Transfers;
use super::registry;
use crate::config::{ServeArgs, Settings};
use crate::registry::is_reference;
use crate::runtime::Catalog;
use crate::runtime::catalog::{FirstUse, Pins};
use crate::runtime::engine::compile::Compiler;
use crate::runtime::plugin::Plugin;

/// `mcpbox accept`.
pub(crate) async fn run(mut args: ServeArgs) -> Result<()> {
    let (paths, names): (Vec<_>, Vec<_>) =
        args.paths.drain(..).partition(|word| word.exists() || word.to_str().is_some_and(is_reference));
    let names: Vec<String> = names.iter().map(|n| n.to_string_lossy().into_owned()).collect();
    args.paths = paths;
    let mut settings = Settings::from_args(&args)?;
    let pulled = registry::resolve_into(&mut settings, &Transfers::new()).await?;
    let compiler = Compiler::new(&settings.engine, settings.compile_bounds)?;
    let configs = &settings.plugin_configs;
    let unpinned = Pins::off();
    let (catalog, problems) =
        Catalog::load(&compiler, &settings.plugin_paths, configs, settings.limits, &unpinned, FirstUse::Report).await;
    for problem in &problems {
        eprintln!("not loaded, so not accepted: {}: {:#}", problem.path.display(), problem.error);
    }
    for unresolved in &pulled.failed {
        eprintln!("not loaded, so not accepted: {}: {:#}", unresolved.reference, unresolved.error);
    }
    let loaded: Vec<&Plugin> = catalog.plugins().iter().map(AsRef::as_ref).collect();
    if loaded.is_empty() {
        bail!("no plugin loaded: give the config (--config) or the plugin paths `serve` is given");
    }
    let chosen: Vec<&Plugin> = match names.is_empty() {
        true => loaded.clone(),
        false => {
            if let Some(unknown) = names.iter().find(|n| !loaded.iter().any(|p| *p.name == **n)) {
                let known: Vec<&str> = loaded.iter().map(|p| &*p.name).collect();
                return Err(anyhow!("no plugin `{unknown}` is loaded (loaded: {})", known.join(", ")));
            }
            loaded.into_iter().filter(|p| names.iter().any(|n| *p.name == **n)).collect()
        }
    };
    let pins = Pins::open(settings.pins.clone())?;
    let accepted = pins.accept(&chosen)?;
    for plugin in &chosen {
        let changes: Vec<_> = accepted.iter().filter(|a| *a.plugin == *plugin.name).collect();
        match changes.is_empty() {
            true => println!("{}: unchanged", plugin.name),
            false => {
                for change in changes {
                    print!("accepted {change}");
                }
            }
        }
    }
    let file = pins.path().map_or_else(|| "memory (no state directory)".to_owned(), |p| p.display().to_string());
    println!("pinned in {file}; a serving mcpbox watching its plugins serves them now");
    Ok(())
}
