//! The registry commands (`publish`, `sign`, `pull`, `keygen`) and the step of `serve` that
//! turns `oci://` references into plugin files (`registry/` does the work).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use crate::config::{ServeArgs, Settings};
use crate::registry::cosign::SigningKey;
use crate::registry::{self, DESCRIPTION_ANNOTATION, OciRef, Registries, Resolve, Store};
use crate::runtime::compile::CompileBounds;

/// Resolves the settings' registry references (pinning, pulling, verifying) and adds the
/// plugin files to its paths. A reference that cannot serve is reported by name; the others
/// serve.
pub(crate) async fn resolve_into(settings: &mut Settings) -> Result<()> {
    if settings.plugin_refs.is_empty() {
        return Ok(());
    }
    let (files, failed) = resolve(settings).await?;
    for unresolved in &failed {
        tracing::error!("failed to load plugin {}: {:#}", unresolved.reference, unresolved.error);
    }
    settings.plugin_paths.extend(files);
    Ok(())
}

async fn resolve(settings: &Settings) -> Result<(Vec<PathBuf>, Vec<registry::Unresolved>)> {
    let store = store(settings)?;
    let how = Resolve {
        store: &store,
        lock_path: &settings.registry.lock_path,
        locked: settings.registry.locked,
        trust: &settings.registry.trust,
        insecure: &settings.registry.insecure,
        max_bytes: settings.compile_bounds.max_file_bytes,
    };
    registry::resolve(&settings.plugin_refs, &how).await
}

fn store(settings: &Settings) -> Result<Store> {
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
    let (files, failed) = resolve(&settings).await?;
    for file in &files {
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

/// `mcpbox publish FILE oci://...`: pushes a component as a Wasm OCI artifact; prints the
/// digest to sign.
pub(crate) async fn publish(
    file: &Path,
    reference: &str,
    description: Option<String>,
    insecure: &[String],
) -> Result<()> {
    let reference = OciRef::parse(reference)?;
    if reference.pinned().is_some() {
        return Err(anyhow!("publish to a tag ({reference} names a digest)"));
    }
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let max = CompileBounds::default().max_file_bytes;
    if bytes.len() as u64 > max {
        return Err(anyhow!("{} is larger than the plugin size limit ({max} bytes)", file.display()));
    }
    if !wasmparser::Parser::is_component(&bytes) {
        return Err(anyhow!("{} is not a WebAssembly component", file.display()));
    }
    let mut annotations = BTreeMap::new();
    annotations.insert("org.opencontainers.image.title".to_owned(), reference.plugin_name());
    if let Some(description) = description {
        annotations.insert(DESCRIPTION_ANNOTATION.to_owned(), description);
    }
    let (layers, config, manifest) = registry::build_artifact(bytes, annotations)?;
    let repository = reference.repository();
    let registries = Registries::new(std::slice::from_ref(&reference), insecure);
    let digest = registries.push(&reference, &layers, config, manifest).await?;
    println!("published {reference}\ndigest {digest}\nsign it with: mcpbox sign oci://{repository}@{digest} --key KEY");
    Ok(())
}

/// `mcpbox sign oci://...@sha256:... --key KEY`: attaches a cosign-format signature.
pub(crate) async fn sign(reference: &str, key: &Path, insecure: &[String]) -> Result<()> {
    let reference = OciRef::parse(reference)?;
    let Some(digest) = reference.pinned().map(str::to_owned) else {
        return Err(anyhow!(
            "sign a digest, not a tag: `{reference}@sha256:...` (a tag can move after you sign; `mcpbox publish` prints the digest)"
        ));
    };
    let key = SigningKey::read(key)?;
    let repository = reference.repository();
    let signature = key.sign(&repository, &digest)?;
    Registries::new(std::slice::from_ref(&reference), insecure).push_signature(&reference, &digest, &signature).await?;
    println!("signed {repository}@{digest}");
    Ok(())
}

/// `mcpbox keygen NAME`: writes `NAME.key` (PKCS#8, keep it private) and `NAME.pub`.
pub(crate) fn keygen(name: &Path) -> Result<()> {
    let (private, public) = SigningKey::generate()?;
    let (key, public_path) = (name.with_extension("key"), name.with_extension("pub"));
    for path in [&key, &public_path] {
        if path.exists() {
            return Err(anyhow!("{} exists: not overwriting a key", path.display()));
        }
    }
    write_private(&key, &private)?;
    std::fs::write(&public_path, public).with_context(|| format!("cannot write {}", public_path.display()))?;
    println!(
        "private key {} (keep it secret)\npublic key {} (give it to operators for [trust] keys)",
        key.display(),
        public_path.display()
    );
    Ok(())
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}
