//! Signatures in cosign's format, verified offline with the operator's public keys.
//!
//! cosign (sigstore) signs an image by pushing, under the tag `sha256-HEX.sig` of the same
//! repository, a manifest whose layers are "simple signing" payloads
//! (`application/vnd.dev.cosign.simplesigning.v1+json`: the signed manifest digest under
//! `critical.image.docker-manifest-digest`), each with its signature in the annotation
//! `dev.cosignproject.cosign/signature`: ECDSA P-256 with SHA-256 over the payload's bytes,
//! DER, Base64. Keys are PEM: `PUBLIC KEY` (SubjectPublicKeyInfo, as `cosign.pub` is) and, to
//! sign, an unencrypted PKCS#8 `PRIVATE KEY` (`mcpbox keygen`, or `openssl genpkey -algorithm
//! EC -pkeyopt ec_paramgen_curve:P-256`); cosign's password-encrypted `cosign.key` is signed
//! with cosign itself. The ECDSA is ring's (rustls's own crypto, already in the host).

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair, UnparsedPublicKey,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The media type of a signed payload layer.
pub const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a payload's signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The DER prefix of a P-256 SubjectPublicKeyInfo (id-ecPublicKey, prime256v1, a 66-byte
/// BIT STRING), before the 65-byte uncompressed point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
    0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The tag cosign stores the signatures of `digest` under.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// One signature as found in a registry: the payload's bytes and its signature, both Base64.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub payload: String,
    pub signature: String,
}

/// A publisher's public key, and where the operator named it (for messages).
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub source: String,
    point: Vec<u8>,
}

impl PublicKey {
    /// Reads a PEM `PUBLIC KEY` file (an ECDSA P-256 key, as cosign makes).
    pub fn read(path: &Path) -> Result<PublicKey> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the key {}", path.display()))?;
        PublicKey::from_pem(&text, &path.display().to_string())
    }

    /// Parses a PEM `PUBLIC KEY`; `source` names it in errors.
    pub fn from_pem(text: &str, source: &str) -> Result<PublicKey> {
        let der = pem_block(text, "PUBLIC KEY").with_context(|| format!("the key {source}"))?;
        let point = der
            .strip_prefix(&P256_SPKI_PREFIX[..])
            .filter(|point| point.len() == 65 && point[0] == 4)
            .ok_or_else(|| anyhow!("the key {source} is not an ECDSA P-256 public key (the kind cosign makes)"))?;
        Ok(PublicKey { source: source.to_owned(), point: point.to_vec() })
    }

    /// Whether `signature` (DER, Base64) signs `payload` under this key.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        let Ok(der) = STANDARD.decode(signature.trim()) else { return false };
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.point).verify(payload, &der).is_ok()
    }

    /// The key as PEM.
    pub fn to_pem(&self) -> String {
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.point);
        pem("PUBLIC KEY", &der)
    }
}

/// A signing key: an ECDSA P-256 key in PKCS#8.
pub struct SigningKey {
    pair: EcdsaKeyPair,
}

impl SigningKey {
    /// Reads a PEM `PRIVATE KEY` (PKCS#8, unencrypted) file.
    pub fn read(path: &Path) -> Result<SigningKey> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the key {}", path.display()))?;
        if text.contains("ENCRYPTED") {
            return Err(anyhow!(
                "the key {} is encrypted (cosign's own format): sign with `cosign sign --key {}` instead, or use an unencrypted PKCS#8 key (`mcpbox keygen`)",
                path.display(),
                path.display()
            ));
        }
        let der = pem_block(&text, "PRIVATE KEY").with_context(|| format!("the key {}", path.display()))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &der, &SystemRandom::new())
            .map_err(|e| anyhow!("the key {} is not an ECDSA P-256 PKCS#8 private key: {e}", path.display()))?;
        Ok(SigningKey { pair })
    }

    /// A new key, as PEM (private, public).
    pub fn generate() -> Result<(String, String)> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
            .map_err(|e| anyhow!("cannot generate a key: {e}"))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|e| anyhow!("cannot read the generated key: {e}"))?;
        let public = PublicKey { source: String::new(), point: pair.public_key().as_ref().to_vec() };
        Ok((pem("PRIVATE KEY", pkcs8.as_ref()), public.to_pem()))
    }

    /// The signature of `digest` (a manifest in `repository`, e.g. `127.0.0.1:5000/tools/echo`)
    /// in cosign's format.
    /// Signs `message` itself (ECDSA P-256, SHA-256), Base64: the audit's checkpoints.
    pub fn sign_bytes(&self, message: &[u8]) -> Result<String> {
        let signature = self.pair.sign(&SystemRandom::new(), message).map_err(|e| anyhow!("cannot sign: {e}"))?;
        Ok(STANDARD.encode(signature.as_ref()))
    }

    pub fn sign(&self, repository: &str, digest: &str) -> Result<Signature> {
        let payload = json!({
            "critical": {
                "identity": { "docker-reference": repository },
                "image": { "docker-manifest-digest": digest },
                "type": PAYLOAD_TYPE,
            },
            "optional": null,
        })
        .to_string();
        let signature =
            self.pair.sign(&SystemRandom::new(), payload.as_bytes()).map_err(|e| anyhow!("cannot sign: {e}"))?;
        Ok(Signature { payload: STANDARD.encode(payload), signature: STANDARD.encode(signature.as_ref()) })
    }
}

/// The payload's claim: which manifest it signs.
#[derive(Deserialize)]
struct Payload {
    critical: Critical,
}
#[derive(Deserialize)]
struct Critical {
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}
#[derive(Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    digest: String,
}

/// The first of `keys` under which one of `signatures` signs exactly `digest`, if any.
pub fn signed_by<'k>(signatures: &[Signature], digest: &str, keys: &'k [PublicKey]) -> Option<&'k PublicKey> {
    signatures.iter().find_map(|signature| {
        let payload = STANDARD.decode(&signature.payload).ok()?;
        let claim: Payload = serde_json::from_slice(&payload).ok()?;
        if claim.critical.kind != PAYLOAD_TYPE
            || (claim.critical.image.digest != digest && !crate::switched_off!("registry.signature-names-digest"))
        {
            return None;
        }
        keys.iter().find(|key| key.verifies(&payload, &signature.signature))
    })
}

/// The DER inside the first PEM block labelled `label`.
fn pem_block(text: &str, label: &str) -> Result<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin).ok_or_else(|| anyhow!("is not a PEM `{label}`"))? + begin.len();
    let stop = text[start..].find(&end).ok_or_else(|| anyhow!("has no `{end}` line"))? + start;
    let body: String = text[start..stop].chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD.decode(body).map_err(|e| anyhow!("is not valid PEM: {e}"))
}

/// `der` as a PEM block.
fn pem(label: &str, der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let mut text = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        text.push_str(&String::from_utf8_lossy(line));
        text.push('\n');
    }
    text.push_str(&format!("-----END {label}-----\n"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cosign").join(name)
    }

    /// A signature cosign made (containers/image's fixtures, see their README): it verifies
    /// under cosign's key for its digest, and under no other key or digest.
    #[test]
    fn a_signature_cosign_made_verifies_for_its_digest_and_key_only() {
        let payload = std::fs::read(fixture("payload.json")).unwrap();
        let signature = std::fs::read_to_string(fixture("signature.b64")).unwrap().trim().to_owned();
        let found = [Signature { payload: STANDARD.encode(&payload), signature }];
        let cosign = PublicKey::read(&fixture("cosign.pub")).unwrap();
        let other = PublicKey::read(&fixture("other.pub")).unwrap();
        let digest = "sha256:634a8f35b5f16dcf4aaa0822adc0b1964bb786fca12f6831de8ddc45e5986a00";
        assert!(signed_by(&found, digest, std::slice::from_ref(&cosign)).is_some());
        assert!(signed_by(&found, digest, std::slice::from_ref(&other)).is_none());
        let another = format!("sha256:{}", "0".repeat(64));
        assert!(signed_by(&found, &another, std::slice::from_ref(&cosign)).is_none());
        // The payload changed by one byte no longer verifies.
        let mut changed = payload.clone();
        changed[10] ^= 1;
        assert!(!cosign.verifies(&changed, &found[0].signature));
    }

    #[test]
    fn own_signatures_verify_under_the_generated_public_key() {
        let dir = tempfile::tempdir().unwrap();
        let (private, public) = SigningKey::generate().unwrap();
        std::fs::write(dir.path().join("k.key"), private).unwrap();
        let key = SigningKey::read(&dir.path().join("k.key")).unwrap();
        let public = PublicKey::from_pem(&public, "k.pub").unwrap();
        let digest = format!("sha256:{}", "a".repeat(64));
        let signature = key.sign("127.0.0.1:5000/tools/echo", &digest).unwrap();
        assert!(signed_by(std::slice::from_ref(&signature), &digest, std::slice::from_ref(&public)).is_some());
        let cosign = PublicKey::read(&fixture("cosign.pub")).unwrap();
        assert!(signed_by(&[signature], &digest, &[cosign]).is_none());
        assert!(PublicKey::from_pem("not a key", "x.pub").unwrap_err().to_string().contains("x.pub"));
    }
}
