//! The trust policy, deny by default: a component from a registry serves only if a signature
//! by a key the operator trusts (for every plugin, or for this plugin) signs its manifest
//! digest, or if the operator named that reference as allowed unsigned. Local files are the
//! operator's own and need no signature. Checked on every start against the signatures kept
//! in the store, so a key removed from the config stops serving what it alone signed.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, anyhow};

use super::cosign::{PublicKey, Signature, signed_by};
use super::reference::OciRef;

/// The operator's trust: keys for all, keys per plugin name, references allowed unsigned.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    pub keys: Vec<PublicKey>,
    pub per_plugin: BTreeMap<String, Vec<PublicKey>>,
    pub unsigned: BTreeSet<String>,
}

/// Why a component may serve.
pub enum Verdict {
    /// Signed by this key.
    SignedBy(String),
    /// The operator allowed this reference unsigned.
    AllowedUnsigned,
}

impl Trust {
    /// Whether manifest `digest` of `reference` may serve as its plugin given the `signatures`
    /// found for it. The refusal names the reference, the digest and what to do.
    pub fn check(&self, reference: &OciRef, digest: &str, signatures: &[Signature]) -> Result<Verdict> {
        let name = reference.plugin_name();
        if self.unsigned.contains(reference.written()) {
            return Ok(Verdict::AllowedUnsigned);
        }
        let mut keys: Vec<PublicKey> = self.keys.clone();
        keys.extend(self.per_plugin.get(&name).into_iter().flatten().cloned());
        let signer = if crate::switched_off!("registry.trusted-signature") {
            keys.first()
        } else {
            signed_by(signatures, digest, &keys)
        };
        if let Some(key) = signer {
            return Ok(Verdict::SignedBy(key.source.clone()));
        }
        let found = match signatures.len() {
            0 => "it has no signature".to_owned(),
            n => format!("none of its {n} signature(s) is by a trusted key for this digest"),
        };
        let trusted = if keys.is_empty() {
            "no key is trusted ([trust] keys is empty)".to_owned()
        } else {
            format!("trusted keys: {}", keys.iter().map(|k| k.source.as_str()).collect::<Vec<_>>().join(", "))
        };
        let repository = reference.repository();
        Err(anyhow!(
            "refused {reference} ({digest}): {found}; {trusted}. Sign it (`mcpbox sign oci://{repository}@{digest} --key KEY`, or cosign) and trust the publisher's public key under [trust] keys (or [trust.plugin.{name}] keys), or, to run it unsigned, list \"{reference}\" under [trust] unsigned"
        ))
    }
}
