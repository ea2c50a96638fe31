//! Resolving a config's `oci://` references into plugin files, and `mcpbox pull`.

use anyhow::{Result, anyhow};

use crate::cli::progress::Transfers;
use crate::config::{ServeArgs, Settings};
use crate::registry::{self, Progress, Resolution, Resolve, Store};

/// Resolves the settings' registry references (pinning, pulling, verifying) and adds the
/// plugin files to its paths. A reference that cannot serve is in the result's `failed`; the
/// others serve.
pub(crate) async fn resolve_into(settings: &mut Settings, progress: &dyn Progress) -> Result<Resolution> {
    if settings.plugin_refs.is_empty() {
        return Ok(Resolution { files: Vec::new(), failed: Vec::new() });
    }
    let resolution = resolve(settings, false, progress).await?;
    let files: Vec<_> = resolution.files.iter().map(|(_, file)| file.clone()).collect();
    settings.add_plugin_files(&files);
    Ok(resolution)
}

/// Resolves the settings' references; `refresh` resolves tags again although pinned.
pub(super) async fn resolve(settings: &Settings, refresh: bool, progress: &dyn Progress) -> Result<Resolution> {
    let store = store(settings)?;
    let how = Resolve {
        store: &store,
        lock_path: &settings.registry.lock_path,
        locked: settings.registry.locked,
        refresh,
        trust: &settings.registry.trust,
        insecure: &settings.registry.insecure,
        mirrors: &settings.registry.mirrors,
        max_bytes: settings.compile_bounds.max_file_bytes,
        progress,
    };
    registry::resolve(&settings.plugin_refs, &how).await
}

pub(super) fn store(settings: &Settings) -> Result<Store> {
    let dir = settings
        .registry
        .store_dir
        .as_deref()
        .ok_or_else(|| anyhow!("no cache directory for pulled plugins: set --cache-dir or HOME"))?;
    Ok(Store::new(dir))
}

/// `mcpbox pull`: pins and fetches every reference of the config, verifying each, so that
/// serving needs no registry afterwards. Fails if any reference fails.
pub(crate) async fn pull(args: ServeArgs) -> Result<()> {
    let settings = Settings::from_args(&args)?;
    if settings.plugin_refs.is_empty() {
        println!("nothing to pull: the config names no oci:// plugin");
        return Ok(());
    }
    let Resolution { files, failed } = resolve(&settings, false, &Transfers::new()).await?;
    for (_, file) in &files {
        println!("pulled {}", file.display());
    }
    for unresolved in &failed {
        eprintln!("mcpbox: {}: {:#}", unresolved.reference, unresolved.error);
    }
    if !failed.is_empty() {
        return Err(anyhow!("{} of {} references failed", failed.len(), settings.plugin_refs.len()));
    }
    println!("pinned in {}", settings.registry.lock_path.display());
    Ok(())
}
