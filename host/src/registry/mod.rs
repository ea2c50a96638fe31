//! Plugins from OCI registries: `oci://` references resolved to digests and pinned in
//! `mcpbox.lock`, components pulled into a content-addressed store, and served only when signed
//! by a key the operator trusts.
//!
//! - `reference`: parsing `oci://REGISTRY/REPO[:TAG][@DIGEST]`, the plugin name it gives;
//! - `store`: the content-addressed store under the cache directory, verified on every read;
//! - `lock`: the lock file;
//! - `artifact`: the CNCF Wasm OCI artifact layout;
//! - `cosign`: cosign's signature format, verification and signing;
//! - `trust`: the trust policy;
//! - `client`: the registry client (oci-client), pulls and pushes;
//! - `progress`: how a transfer goes, for the command line to draw.
//!
//! [`resolve`] turns the references of a config into plugin files for the loader (`serve`,
//! `check`, `compile`, `pull`, `add`, and `update` with [`Resolve::refresh`]); `publish`,
//! `sign` and `keygen` use the same pieces. Transfers are reported through [`Progress`].

mod artifact;
mod client;
pub(crate) mod cosign;
mod lock;
mod progress;
mod reference;
mod store;
mod trust;

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

pub(crate) use artifact::{DESCRIPTION_ANNOTATION, POLICY_ANNOTATION, build as build_artifact};
pub(crate) use client::{Mirrors, Registries, explain};
pub(crate) use lock::{Lock, Locked, lock_path};
pub(crate) use progress::{Progress, Unwatched};
pub(crate) use reference::{OciRef, is_reference};
pub(crate) use store::Store;
pub(crate) use trust::{Trust, Verdict};

/// How the references of a config are resolved.
pub(crate) struct Resolve<'a> {
    pub store: &'a Store,
    pub lock_path: &'a Path,
    /// Refuse anything the lock does not pin (`--locked`).
    pub locked: bool,
    /// Resolve tags again although the lock pins them (`mcpbox update`).
    pub refresh: bool,
    pub trust: &'a Trust,
    /// Registries that may be reached over plain HTTP although not on this machine.
    pub insecure: &'a [String],
    /// Pull-through mirrors, tried before each registry.
    pub mirrors: &'a Mirrors,
    /// The plugin size limit, enforced while downloading.
    pub max_bytes: u64,
    /// Told how each download goes.
    pub progress: &'a dyn Progress,
}

/// What resolving a config's references gave.
pub(crate) struct Resolution {
    /// Each reference that serves (as written) and its plugin file, in the config's order.
    pub files: Vec<(String, PathBuf)>,
    /// Each that does not, and why.
    pub failed: Vec<Unresolved>,
}

/// A reference that could not be served, and why.
pub(crate) struct Unresolved {
    pub reference: String,
    pub error: anyhow::Error,
}

/// Resolves `refs` to plugin files: each pinned (by its own digest, else by the lock, else by
/// resolving its tag now and pinning it), pulled unless the store has it (so a pulled plugin
/// serves with the registry down), and checked against the trust policy. A reference that fails
/// is reported by name and the others serve. The lock is written if a pin was added.
pub(crate) async fn resolve(refs: &[OciRef], how: &Resolve<'_>) -> Result<Resolution> {
    let mut lock = Lock::read(how.lock_path)?;
    // Made on first use: a plugin already pulled, pinned and signed needs no registry, and the
    // client's TLS set-up (the system's root certificates) was most of such a start's 44 ms.
    let registries = Lazy { cell: std::sync::OnceLock::new(), refs, insecure: how.insecure, mirrors: how.mirrors };
    let (mut files, mut failed) = (Vec::new(), Vec::new());
    for reference in refs {
        let written = reference.written().to_owned();
        match resolve_one(reference, how, &registries, &mut lock).await {
            Ok(file) => files.push((written, file)),
            Err(error) => {
                failed.push(Unresolved { reference: written, error: client::explain(error, reference.registry()) })
            }
        }
    }
    lock.save(how.lock_path)?;
    Ok(Resolution { files, failed })
}

/// The registry client, made when a reference first needs it.
struct Lazy<'a> {
    cell: std::sync::OnceLock<Registries>,
    refs: &'a [OciRef],
    insecure: &'a [String],
    mirrors: &'a Mirrors,
}

impl Lazy<'_> {
    fn get(&self) -> &Registries {
        self.cell.get_or_init(|| Registries::new(self.refs, self.insecure, self.mirrors))
    }
}

async fn resolve_one(reference: &OciRef, how: &Resolve<'_>, registries: &Lazy<'_>, lock: &mut Lock) -> Result<PathBuf> {
    let pinned = lock.get(reference.written()).map(|locked| locked.digest.clone());
    // A digest in the reference pins it by itself; a tag is pinned by the lock, or resolved
    // now unless --locked forbids it.
    let digest = match (reference.pinned(), pinned.clone()) {
        (Some(digest), _) => digest.to_owned(),
        (None, Some(locked)) if !how.refresh || crate::switched_off!("registry.update-resolves-again") => locked,
        (None, None) if how.locked && !crate::switched_off!("registry.locked") => {
            return Err(anyhow!(
                "{reference} is not pinned in {} and --locked forbids resolving it: run `mcpbox pull` without --locked to pin it",
                how.lock_path.display()
            ));
        }
        (None, _) => registries.get().resolve(reference).await?,
    };
    let component = match stored_component(how.store, reference, &digest)? {
        Some(component) => component,
        None => registries.get().pull(reference, &digest, how.store, how.max_bytes, how.progress).await?,
    };
    match verify(reference, &digest, how, registries).await? {
        Verdict::SignedBy(key) => tracing::info!("{reference} ({digest}) is signed by {key}"),
        Verdict::AllowedUnsigned => {
            tracing::warn!("{reference} ({digest}) serves unsigned: [trust] unsigned names it");
        }
    }
    let policy = client::published_policy(reference, &how.store.read(&digest)?)?;
    let file = how.store.plugin_file(&digest, &component, &reference.plugin_name(), policy.as_deref())?;
    if let Some(old) = lock.pin(Locked { reference: reference.written().to_owned(), digest: digest.clone() }) {
        tracing::info!("{reference}: pinned to {digest} (was {}) in {}", old.digest, how.lock_path.display());
    } else if pinned.is_none() {
        tracing::info!("{reference}: pinned to {digest} in {}", how.lock_path.display());
    }
    Ok(file)
}

/// The plugin file of manifest `digest` of `reference`, if the store holds it whole (what a
/// lock pinned before `mcpbox update` moved it).
pub(crate) fn stored_plugin(store: &Store, reference: &OciRef, digest: &str) -> Result<Option<PathBuf>> {
    let Some(component) = stored_component(store, reference, digest)? else {
        return Ok(None);
    };
    let policy = client::published_policy(reference, &store.read(digest)?)?;
    store.plugin_file(digest, &component, &reference.plugin_name(), policy.as_deref()).map(Some)
}

/// The component manifest `digest` names, if the store has both: read from the verified
/// manifest, never from the lock.
fn stored_component(store: &Store, reference: &OciRef, digest: &str) -> Result<Option<String>> {
    if !store.has(digest) {
        return Ok(None);
    }
    let component = client::component_of(reference, &store.read(digest)?)?;
    Ok(store.has(&component.digest).then_some(component.digest))
}

/// The trust verdict: from the signatures in the store, and, if they do not suffice, from the
/// registry's current ones (a signature added since the last pull), which are kept.
async fn verify(reference: &OciRef, digest: &str, how: &Resolve<'_>, registries: &Lazy<'_>) -> Result<Verdict> {
    let stored = how.store.signatures(digest)?;
    if let Ok(verdict) = how.trust.check(reference, digest, &stored) {
        return Ok(verdict);
    }
    let fresh = match registries.get().signatures(reference, digest).await {
        Ok(fresh) => fresh,
        Err(e) => {
            tracing::warn!("{e:#}");
            stored
        }
    };
    how.store.write_signatures(digest, &fresh)?;
    how.trust.check(reference, digest, &fresh)
}
