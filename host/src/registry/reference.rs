//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`: a plugin reference, wherever a plugin
//! path goes (the command line, `plugins = [...]` in the config).

use std::fmt;

use anyhow::{Result, anyhow};
use oci_client::Reference;

/// The scheme that marks a plugin reference as a registry's rather than a path.
pub const SCHEME: &str = "oci://";

/// Whether a plugin argument names a registry component rather than a file.
pub fn is_reference(text: &str) -> bool {
    text.starts_with(SCHEME)
}

/// A parsed `oci://` reference, as the operator wrote it (the lock's key) and as oci-client
/// reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciRef {
    written: String,
    parsed: Reference,
}

impl OciRef {
    /// Parses `oci://...`; the error names the reference and what is wrong with it.
    pub fn parse(text: &str) -> Result<OciRef> {
        let rest = text.strip_prefix(SCHEME).ok_or_else(|| anyhow!("`{text}` is not an oci:// reference"))?;
        let parsed: Reference = rest.parse().map_err(|e| anyhow!("invalid reference `{text}`: {e}"))?;
        if let Some(digest) = parsed.digest().filter(|digest| !is_sha256_digest(digest)) {
            return Err(anyhow!("invalid reference `{text}`: only sha256 digests are accepted, not `{digest}`"));
        }
        Ok(OciRef { written: text.to_owned(), parsed })
    }

    /// The reference as written: the key in the lock file and in `[trust] unsigned`.
    pub fn written(&self) -> &str {
        &self.written
    }

    /// The reference for oci-client.
    pub fn reference(&self) -> &Reference {
        &self.parsed
    }

    /// The registry host (and port).
    pub fn registry(&self) -> &str {
        self.parsed.resolve_registry()
    }

    /// The digest the reference pins, if it names one.
    pub fn pinned(&self) -> Option<&str> {
        self.parsed.digest()
    }

    /// The same repository at `digest`: what is actually pulled once a tag is resolved.
    pub fn at(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.parsed.registry().to_owned(),
            self.parsed.repository().to_owned(),
            digest.to_owned(),
        )
    }

    /// The same repository under `tag` (where cosign keeps a digest's signatures).
    pub fn tagged(&self, tag: String) -> Reference {
        Reference::with_tag(self.parsed.registry().to_owned(), self.parsed.repository().to_owned(), tag)
    }

    /// `REGISTRY/REPOSITORY`, without tag or digest: what a signature names
    /// (`docker-reference`), and, after `oci://`, what to sign a digest of.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.parsed.registry(), self.parsed.repository())
    }

    /// The same reference on `registry`, a mirror, still written as the operator wrote it: the
    /// lock, the trust and the signatures keep naming the original.
    pub fn via(&self, registry: &str) -> Result<OciRef> {
        let mut text = format!("{registry}/{}", self.parsed.repository());
        if let Some(tag) = self.parsed.tag() {
            text.push(':');
            text.push_str(tag);
        }
        if let Some(digest) = self.parsed.digest() {
            text.push('@');
            text.push_str(digest);
        }
        let parsed: Reference = text.parse().map_err(|e| anyhow!("invalid mirror `{registry}` for {self}: {e}"))?;
        Ok(OciRef { written: self.written.clone(), parsed })
    }

    /// The registry as written (`docker.io`, not the `index.docker.io` it resolves to): the key of
    /// `[registries.mirrors]`.
    pub fn registry_as_written(&self) -> &str {
        self.parsed.registry()
    }

    /// The plugin name: the repository's last segment (`oci://ghcr.io/acme/tools/echo:1` is
    /// `echo`), with characters outside `[A-Za-z0-9_-]` replaced, as a file's stem is.
    pub fn plugin_name(&self) -> String {
        let last = self.parsed.repository().rsplit('/').next().unwrap_or_default();
        let name: String =
            last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        if name.is_empty() { "plugin".to_owned() } else { name }
    }

    /// Whether this registry may be reached over plain HTTP without the operator saying so:
    /// only a registry on this machine (`localhost`, `127.0.0.0/8`, `[::1]`).
    pub fn is_loopback(&self) -> bool {
        let registry = self.registry();
        let host = match registry.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
            None => registry.split(':').next().unwrap_or_default(),
        };
        host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

/// `sha256:` and 64 lowercase hex digits.
pub fn is_sha256_digest(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_names_its_plugin_registry_and_digest() {
        let at = OciRef::parse("oci://127.0.0.1:5000/tools/echo-tool:1.0").unwrap();
        assert_eq!(at.plugin_name(), "echo-tool");
        assert_eq!(at.registry(), "127.0.0.1:5000");
        assert!(at.is_loopback() && at.pinned().is_none());
        assert_eq!(at.repository(), "127.0.0.1:5000/tools/echo-tool");
        assert_eq!(OciRef::parse("oci://127.0.0.1:5000/echo").unwrap().repository(), "127.0.0.1:5000/echo");
        let digest = format!("sha256:{}", "ab".repeat(32));
        let pinned = OciRef::parse(&format!("oci://ghcr.io/acme/echo@{digest}")).unwrap();
        assert_eq!(pinned.pinned(), Some(digest.as_str()));
        assert!(!pinned.is_loopback());
        assert!(OciRef::parse("oci://localhost:5000/echo:1").unwrap().is_loopback());
        assert!(!OciRef::parse("oci://127.0.0.1.example.com/echo:1").unwrap().is_loopback());
        let mirrored = pinned.via("127.0.0.1:5001").unwrap();
        assert_eq!(mirrored.repository(), "127.0.0.1:5001/acme/echo");
        assert_eq!((mirrored.written(), mirrored.pinned()), (pinned.written(), Some(digest.as_str())));
        assert!(mirrored.is_loopback());
    }

    #[test]
    fn bad_references_are_refused_by_name() {
        for bad in ["oci://", "oci://UPPER/Case:x", "oci://r/e@md5:abcd", "oci://r/e@sha256:short"] {
            let error = OciRef::parse(bad).unwrap_err().to_string();
            assert!(error.contains(bad), "{error}");
        }
        assert!(OciRef::parse("./echo.wasm").is_err());
    }
}
