//! `mcpbox publish`, `mcpbox sign` and `mcpbox keygen`: what an author (or an operator
//! without cosign) needs to put a signed component in a registry.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow};

use crate::cli::progress::Transfers;
use crate::registry::cosign::SigningKey;
use crate::registry::{self, DESCRIPTION_ANNOTATION, Mirrors, OciRef, POLICY_ANNOTATION, Registries};
use crate::runtime::engine::compile::CompileBounds;
use crate::runtime::grants::requested::read_requested;

/// `mcpbox publish FILE oci://...`: pushes a component as a Wasm OCI artifact, with its
/// description and requested policy as annotations; prints the digest to sign.
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
        // One line: manifests are canonical JSON, whose strings carry control characters raw,
        // which registries refuse.
        let line: String = description.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        annotations.insert(DESCRIPTION_ANNOTATION.to_owned(), line);
    }
    // The grants it asks for travel with it (its section, or the `.policy.toml` beside it),
    // so that an operator sees them in `mcpbox add` and `mcpbox update` before granting. As
    // JSON: one line, with any newline of a reason escaped.
    if let Some(requested) = read_requested(file, &bytes)? {
        annotations.insert(POLICY_ANNOTATION.to_owned(), serde_json::to_string(&requested)?);
    }
    let (layers, config, manifest) = registry::build_artifact(bytes, annotations)?;
    let repository = reference.repository();
    let registries = Registries::new(std::slice::from_ref(&reference), insecure, &Mirrors::new());
    let digest = registries
        .push(&reference, &layers, config, manifest, &Transfers::new())
        .await
        .map_err(|e| registry::explain(e, reference.registry()))?;
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
    Registries::new(std::slice::from_ref(&reference), insecure, &Mirrors::new())
        .push_signature(&reference, &digest, &signature)
        .await
        .map_err(|e| registry::explain(e, reference.registry()))?;
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
