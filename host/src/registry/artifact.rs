//! The CNCF Wasm OCI artifact layout (tag-runtime.cncf.io, "Wasm OCI Artifact layout"), which
//! wkg and the other WASM tool hosts push and pull: an OCI image manifest whose config has the
//! media type `application/vnd.wasm.config.v0+json` and whose one layer is the component,
//! `application/wasm`.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::Serialize;

use super::store::sha256_digest;

/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The annotation carrying the plugin's description.
pub const DESCRIPTION_ANNOTATION: &str = "org.opencontainers.image.description";
/// The annotation with the grants the component asks for: its `mcpbox-policy` section or
/// `.policy.toml` file as JSON, which a pulled plugin gets back as its `.policy.toml` (an
/// operator reads it in `mcpbox inspect`, `add` and `update`; it grants nothing).
pub const POLICY_ANNOTATION: &str = "dev.mcpbox.requested-policy";

/// The config blob (the spec's required fields; `component` is optional and left out).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig<'a> {
    created: String,
    architecture: &'a str,
    os: &'a str,
    layer_digests: Vec<String>,
}

/// The manifest, config and layer that publish `component`, with `annotations` on the
/// manifest.
pub fn build(
    component: Vec<u8>,
    annotations: BTreeMap<String, String>,
) -> Result<(Vec<ImageLayer>, Config, OciImageManifest)> {
    let layer = ImageLayer::new(component, WASM_MEDIA_TYPE.to_owned(), None);
    let config = WasmConfig {
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        architecture: "wasm",
        os: "wasip2",
        layer_digests: vec![layer.sha256_digest()],
    };
    let config = Config::new(serde_json::to_vec(&config)?, CONFIG_MEDIA_TYPE.to_owned(), None);
    let layers = vec![layer];
    let mut manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    manifest.media_type = Some(oci_client::manifest::OCI_IMAGE_MEDIA_TYPE.to_owned());
    Ok((layers, config, manifest))
}

/// The component layer of a pulled manifest: exactly one `application/wasm` layer, under a
/// Wasm config (an image of another kind is named in the error).
pub fn component_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor> {
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(anyhow!(
            "it is not a Wasm component artifact: its config is `{}`, not `{CONFIG_MEDIA_TYPE}`",
            manifest.config.media_type
        ));
    }
    let mut wasm = manifest.layers.iter().filter(|layer| layer.media_type == WASM_MEDIA_TYPE);
    match (wasm.next(), wasm.next()) {
        (Some(layer), None) => Ok(layer),
        (None, _) => Err(anyhow!("it has no `{WASM_MEDIA_TYPE}` layer")),
        (Some(_), Some(_)) => Err(anyhow!("it has more than one `{WASM_MEDIA_TYPE}` layer")),
    }
}

/// The requested policy a manifest was published with, if any.
pub fn requested_policy(manifest: &OciImageManifest) -> Option<&str> {
    manifest.annotations.as_ref()?.get(POLICY_ANNOTATION).map(String::as_str)
}

/// The digest the manifest bytes of `manifest` will have once pushed: oci-client pushes
/// canonical JSON (OCI image-spec, considerations.md), so the same serialization here.
pub fn manifest_digest(manifest: &OciImageManifest) -> Result<String> {
    use serde::Serialize;
    let mut body = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut body, olpc_cjson::CanonicalFormatter::new());
    oci_client::manifest::OciManifest::Image(manifest.clone()).serialize(&mut serializer)?;
    Ok(sha256_digest(&body))
}
