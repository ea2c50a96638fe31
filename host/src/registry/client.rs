//! Talking to registries through oci-client: resolving a tag, pulling a component artifact and
//! its cosign signatures into the store (every size bounded while it downloads), pushing an
//! artifact or a signature. Credentials come from the Docker config (`~/.docker/config.json`,
//! `DOCKER_CONFIG`), its credential helpers and store, as container tools find them; a registry
//! without an entry is pulled anonymously. Plain HTTP only for a registry on this machine or
//! one the operator names as insecure.

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow};
use futures::{StreamExt, TryStreamExt};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use super::artifact;
use super::cosign::{self, PAYLOAD_MEDIA_TYPE, SIGNATURE_ANNOTATION, Signature};
use super::progress::{Progress, Unwatched};
use super::reference::OciRef;
use super::store::Store;

/// The largest manifest or signature payload accepted: they are small JSON documents.
const MAX_DOCUMENT_BYTES: u64 = 1 << 20;
/// The size of the chunks a component is pushed in (a progress step each).
const PUSH_CHUNK_BYTES: usize = 1 << 20;
/// The manifest media types a component may be published under.
const MANIFEST_TYPES: &[&str] =
    &["application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json"];

/// Pull-through mirrors: a registry (as references write it) → the registries tried first,
/// in order (`[registries.mirrors]`).
pub type Mirrors = BTreeMap<String, Vec<String>>;

/// A registry client for a set of references.
pub struct Registries {
    client: Client,
    mirrors: Mirrors,
}

impl Registries {
    /// A client that speaks plain HTTP to loopback registries among `refs` and their mirrors
    /// and to `insecure` hosts, HTTPS to every other. Pulls try `mirrors` first; pushes never.
    pub fn new(refs: &[OciRef], insecure: &[String], mirrors: &Mirrors) -> Registries {
        // rustls without a provider of its own in oci-client: ring, the host's (installing it
        // twice is harmless, so the error is ignored).
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let mirrors = mirrors.clone();
        let everywhere = refs.iter().flat_map(|r| sources(&mirrors, r));
        let mut plain: Vec<String> = everywhere.filter(|r| r.is_loopback()).map(|r| r.registry().to_owned()).collect();
        plain.extend(insecure.iter().cloned());
        let config = ClientConfig {
            protocol: ClientProtocol::HttpsExcept(plain),
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            ..ClientConfig::default()
        };
        Registries { client: Client::new(config), mirrors }
    }

    /// The manifest digest `reference`'s tag points at now: at its first mirror that answers,
    /// else at its registry.
    pub async fn resolve(&self, reference: &OciRef) -> Result<String> {
        self.first_source(reference, |_| true, |source| async move { self.resolve_at(&source).await }).await
    }

    async fn resolve_at(&self, reference: &OciRef) -> Result<String> {
        let digest = self
            .client
            .fetch_manifest_digest(reference.reference(), &auth(reference.registry()))
            .await
            .with_context(|| format!("cannot resolve {reference}"))?;
        if !super::reference::is_sha256_digest(&digest) {
            return Err(anyhow!("{reference}: the registry gave `{digest}`, not a sha256 digest"));
        }
        Ok(digest)
    }

    /// Pulls manifest `digest` of `reference` and its component into `store`, each unless the
    /// store has it (the component against `max_bytes` while it downloads; the store refuses
    /// bytes that are not their digest, wherever they came from): from its first mirror that
    /// has them, else from its registry. Returns the component's digest.
    pub async fn pull(
        &self,
        reference: &OciRef,
        digest: &str,
        store: &Store,
        max_bytes: u64,
        progress: &dyn Progress,
    ) -> Result<String> {
        let pull = |source: OciRef| async move { self.pull_at(&source, digest, store, max_bytes, progress).await };
        self.first_source(reference, |_| true, pull).await
    }

    async fn pull_at(
        &self,
        reference: &OciRef,
        digest: &str,
        store: &Store,
        max_bytes: u64,
        progress: &dyn Progress,
    ) -> Result<String> {
        let at = reference.at(digest);
        let auth = auth(reference.registry());
        let manifest = if store.has(digest) {
            store.read(digest)?
        } else {
            let (bytes, _) = self
                .client
                .pull_manifest_raw(&at, &auth, MANIFEST_TYPES)
                .await
                .with_context(|| format!("cannot pull {reference} ({digest})"))?;
            if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
                return Err(anyhow!("{reference}: the manifest is over {MAX_DOCUMENT_BYTES} bytes"));
            }
            store.write(digest, &bytes).with_context(|| format!("{reference}"))?;
            bytes.to_vec()
        };
        let layer = component_of(reference, &manifest)?;
        if !store.has(&layer.digest) {
            progress.begin(&format!("pulling {reference}"), u64::try_from(layer.size).unwrap_or(0));
            let pulled = self.bounded_blob(&at, &layer, max_bytes, progress).await;
            progress.end();
            let bytes = pulled.with_context(|| format!("cannot pull {reference}"))?;
            store.write(&layer.digest, &bytes).with_context(|| format!("{reference}"))?;
        }
        Ok(layer.digest)
    }

    /// The blob `layer`, refused as soon as it passes `max_bytes` (or says it will); oci-client
    /// checks its digest as it streams.
    async fn bounded_blob(
        &self,
        at: &Reference,
        layer: &OciDescriptor,
        max_bytes: u64,
        progress: &dyn Progress,
    ) -> Result<Vec<u8>> {
        let too_big = || anyhow!("the component is larger than the plugin size limit ({max_bytes} bytes)");
        if u64::try_from(layer.size).unwrap_or(u64::MAX) > max_bytes && !crate::switched_off!("registry.download-size")
        {
            return Err(too_big());
        }
        let mut stream = self.client.pull_blob_stream(at, layer).await?;
        if stream.content_length.is_some_and(|length| length > max_bytes)
            && !crate::switched_off!("registry.download-size")
        {
            return Err(too_big());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.try_next().await? {
            if (bytes.len() + chunk.len()) as u64 > max_bytes && !crate::switched_off!("registry.download-size") {
                return Err(too_big());
            }
            bytes.extend_from_slice(&chunk);
            progress.advance(chunk.len() as u64);
        }
        Ok(bytes)
    }

    /// The cosign signatures attached to `digest` in `reference`'s repository (none if there
    /// is no signature manifest): those of its first mirror that has any, else its registry's.
    pub async fn signatures(&self, reference: &OciRef, digest: &str) -> Result<Vec<Signature>> {
        let fetch = |source: OciRef| async move { self.signatures_at(&source, digest).await };
        self.first_source(reference, |found: &Vec<Signature>| !found.is_empty(), fetch).await
    }

    /// `attempt` at each of `reference`'s sources in order (its mirrors, then its registry):
    /// the first answer `enough` takes; else the last answer any source gave; else every
    /// source's error.
    async fn first_source<T, F: Future<Output = Result<T>>>(
        &self,
        reference: &OciRef,
        enough: impl Fn(&T) -> bool,
        attempt: impl Fn(OciRef) -> F,
    ) -> Result<T> {
        let (mut failures, mut answered) = (Vec::new(), None);
        for source in sources(&self.mirrors, reference) {
            match attempt(source.clone()).await {
                Ok(answer) if enough(&answer) => return Ok(answer),
                Ok(answer) => answered = Some(answer),
                Err(error) => failures.push((source, error)),
            }
        }
        answered.ok_or_else(|| all_failed(failures))
    }

    async fn signatures_at(&self, reference: &OciRef, digest: &str) -> Result<Vec<Signature>> {
        let tag = reference.tagged(cosign::signature_tag(digest));
        let auth = auth(reference.registry());
        let manifest = match self.client.pull_manifest_raw(&tag, &auth, MANIFEST_TYPES).await {
            Ok((bytes, _)) => bytes,
            Err(OciDistributionError::ImageManifestNotFoundError(_)) => return Ok(Vec::new()),
            Err(OciDistributionError::RegistryError { envelope, .. })
                if envelope
                    .errors
                    .iter()
                    .any(|e| matches!(e.code, oci_client::errors::OciErrorCode::ManifestUnknown)) =>
            {
                return Ok(Vec::new());
            }
            Err(e) => return Err(anyhow!("cannot read the signatures of {reference}: {e}")),
        };
        let manifest: OciImageManifest = serde_json::from_slice(&manifest)
            .with_context(|| format!("{reference}: the signature manifest is not an image manifest"))?;
        let mut found = Vec::new();
        for layer in manifest.layers.iter().filter(|layer| layer.media_type == PAYLOAD_MEDIA_TYPE) {
            let Some(signature) = layer.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION)) else {
                continue;
            };
            let payload = self.bounded_blob(&tag, layer, MAX_DOCUMENT_BYTES, &Unwatched).await?;
            found.push(Signature { payload: base64_encode(&payload), signature: signature.clone() });
        }
        Ok(found)
    }

    /// Pushes a component artifact, its layers streamed (a blob the repository already has is
    /// not sent again); returns the manifest digest.
    pub async fn push(
        &self,
        reference: &OciRef,
        layers: &[ImageLayer],
        config: Config,
        manifest: OciImageManifest,
        progress: &dyn Progress,
    ) -> Result<String> {
        let digest = artifact::manifest_digest(&manifest)?;
        let image = reference.reference();
        let failed = || format!("cannot push {reference}");
        self.client.store_auth_if_needed(reference.registry(), &auth(reference.registry())).await;
        for (layer, descriptor) in layers.iter().zip(&manifest.layers) {
            if self.client.blob_exists(image, &descriptor.digest).await.unwrap_or(false) {
                continue;
            }
            progress.begin(&format!("pushing {reference}"), layer.data.len() as u64);
            let pushed = self.push_streamed(image, layer, &descriptor.digest, progress).await;
            progress.end();
            pushed.with_context(failed)?;
        }
        self.client.push_blob(image, config.data, &manifest.config.digest).await.with_context(failed)?;
        self.client.push_manifest(image, &manifest.into()).await.with_context(failed)?;
        Ok(digest)
    }

    /// Pushes `layer` as blob `digest` in chunks, telling `progress` as each one goes.
    async fn push_streamed(
        &self,
        image: &Reference,
        layer: &ImageLayer,
        digest: &str,
        progress: &dyn Progress,
    ) -> Result<()> {
        let data = &layer.data;
        // oci-client wants a 'static stream, so the chunks report through a channel.
        let (sent, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let chunks: Vec<_> =
            data.chunks(PUSH_CHUNK_BYTES).map(|chunk| Ok::<_, OciDistributionError>(data.slice_ref(chunk))).collect();
        let stream = futures::stream::iter(chunks).inspect(move |chunk| {
            if let Ok(chunk) = chunk {
                let _ = sent.send(chunk.len() as u64);
            }
        });
        let size = Some(data.len() as u64);
        let push = self.client.push_blob_stream(image, stream, digest, size);
        let report = async {
            while let Some(bytes) = reports.recv().await {
                progress.advance(bytes);
            }
        };
        let (pushed, ()) = tokio::join!(push, report);
        pushed?;
        Ok(())
    }

    /// Attaches `signature` to `digest`, beside any signatures already there (as cosign does).
    pub async fn push_signature(&self, reference: &OciRef, digest: &str, signature: &Signature) -> Result<()> {
        let tag = reference.tagged(cosign::signature_tag(digest));
        let auth = auth(reference.registry());
        let mut layers = Vec::new();
        // The registry's own signatures: a mirror's are not what is being appended to.
        for old in self.signatures_at(reference, digest).await? {
            if old != *signature {
                layers.push(signature_layer(&old)?);
            }
        }
        layers.push(signature_layer(signature)?);
        let config = Config::new(b"{}".to_vec(), "application/vnd.oci.image.config.v1+json".to_owned(), None);
        let manifest = OciImageManifest::build(&layers, &config, None);
        self.client
            .push(&tag, &layers, config, &auth, Some(manifest))
            .await
            .with_context(|| format!("cannot push the signature of {reference}"))?;
        Ok(())
    }
}

/// Where `reference` is pulled from, in order: its mirrors, then its registry. A mirror that
/// does not make a valid reference is skipped (the config check names it).
fn sources(mirrors: &Mirrors, reference: &OciRef) -> Vec<OciRef> {
    let mirrored = mirrors.get(reference.registry_as_written()).or_else(|| mirrors.get(reference.registry()));
    let mirrored = if crate::switched_off!("registry.mirrors") { None } else { mirrored };
    let mut found: Vec<OciRef> = mirrored.into_iter().flatten().filter_map(|m| reference.via(m).ok()).collect();
    found.push(reference.clone());
    found
}

/// The error of the last source (the registry itself), with what each mirror before it said.
fn all_failed(mut failures: Vec<(OciRef, anyhow::Error)>) -> anyhow::Error {
    let Some((_, last)) = failures.pop() else {
        return anyhow!("no registry to pull from");
    };
    if failures.is_empty() {
        return last;
    }
    let mirrors: Vec<String> =
        failures.iter().map(|(source, error)| format!("mirror {}: {error:#}", source.registry())).collect();
    last.context(format!("{}; then the registry itself", mirrors.join("; ")))
}

/// The component layer `manifest` (of `reference`) names: the artifact's one wasm layer, with a
/// sha256 digest.
pub fn component_of(reference: &OciRef, manifest: &[u8]) -> Result<OciDescriptor> {
    let manifest: OciImageManifest =
        serde_json::from_slice(manifest).with_context(|| format!("{reference}: not an image manifest"))?;
    let layer = artifact::component_layer(&manifest).with_context(|| format!("cannot serve {reference}"))?;
    if !super::reference::is_sha256_digest(&layer.digest) {
        return Err(anyhow!("{reference}: the component's digest `{}` is not sha256", layer.digest));
    }
    Ok(layer.clone())
}

/// The requested policy `manifest` (of `reference`) was published with, if any.
pub fn published_policy(reference: &OciRef, manifest: &[u8]) -> Result<Option<String>> {
    let manifest: OciImageManifest =
        serde_json::from_slice(manifest).with_context(|| format!("{reference}: not an image manifest"))?;
    Ok(artifact::requested_policy(&manifest).map(str::to_owned))
}

/// A signature as a cosign signature layer: the payload, its signature annotated.
fn signature_layer(signature: &Signature) -> Result<ImageLayer> {
    use base64::Engine;
    let payload = base64::engine::general_purpose::STANDARD
        .decode(&signature.payload)
        .map_err(|e| anyhow!("a stored signature payload is not Base64: {e}"))?;
    let annotations = BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature.signature.clone())]);
    Ok(ImageLayer::new(payload, PAYLOAD_MEDIA_TYPE.to_owned(), Some(annotations)))
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `error` (of a request to `registry`), with what to do if the registry wanted credentials
/// it did not get or refused the ones it got.
pub fn explain(error: anyhow::Error, registry: &str) -> anyhow::Error {
    let denied = error.chain().filter_map(|cause| cause.downcast_ref::<OciDistributionError>()).any(|e| match e {
        OciDistributionError::AuthenticationFailure(_) | OciDistributionError::UnauthorizedError { .. } => true,
        OciDistributionError::ServerError { code, .. } => *code == 401 || *code == 403,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(e.code, oci_client::errors::OciErrorCode::Unauthorized | oci_client::errors::OciErrorCode::Denied)
        }),
        _ => false,
    });
    if !denied {
        return error;
    }
    let what = match auth(registry) {
        RegistryAuth::Anonymous => format!("{registry} wants credentials and the Docker config has none for it"),
        _ => format!("{registry} refused the credentials the Docker config has for it"),
    };
    error.context(format!(
        "{what}: log in with `docker login {registry}` or a credential helper (mcpbox reads $DOCKER_CONFIG/config.json, else ~/.docker/config.json)"
    ))
}

/// The credentials for `registry` from the Docker config, or anonymous.
fn auth(registry: &str) -> RegistryAuth {
    if crate::switched_off!("registry.docker-credentials") {
        return RegistryAuth::Anonymous;
    }
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(docker_credential::DockerCredential::IdentityToken(token)) => RegistryAuth::Bearer(token),
        Err(e) => {
            tracing::debug!("no credentials for {registry} ({e}): pulling anonymously");
            RegistryAuth::Anonymous
        }
    }
}
