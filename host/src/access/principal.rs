//! Who a valid access token stands for: issuer, subject, scopes and the claims entitlements
//! name, with the name of the principal's own directories and its key for limits, made once
//! when the token is checked.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::runtime::Caller;

/// Who a valid access token stands for, with what requests need of it made once, when the
/// token is checked (a token's principal is remembered with it and shared by its requests).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The issuer, subject and scopes: what a plugin may be told (`host.caller`).
    identity: Arc<Caller>,
    /// When the token expires (`exp`, seconds since the epoch).
    pub expires_at: u64,
    /// The claims entitlements name (`[[auth.entitlements]] claim`), each as its string
    /// values: a string claim is one, a list of strings its strings.
    pub claims: BTreeMap<String, Vec<String>>,
    /// See [`Principal::key`].
    key: String,
    /// See [`Principal::dir_name`].
    dir_name: Arc<str>,
}

impl Principal {
    pub(crate) fn new(
        issuer: String,
        subject: String,
        scopes: Vec<String>,
        expires_at: u64,
        claims: BTreeMap<String, Vec<String>>,
    ) -> Principal {
        let key = serde_json::to_string(&[&issuer, &subject]).unwrap_or_default();
        let dir_name = dir_name(&issuer, &subject).into();
        Principal { identity: Arc::new(Caller { issuer, subject, scopes }), expires_at, claims, key, dir_name }
    }

    /// Who this is, as one string: the issuer and the subject, so that two issuers' equal
    /// subjects stay two principals (JSON, so that no pair of strings spells another's).
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The name of this principal's own directory under a per-principal base (see
    /// [`dir_name`]).
    pub(crate) fn dir_name(&self) -> &Arc<str> {
        &self.dir_name
    }

    /// This principal as the runtime tells a plugin that may know (`host.caller`).
    pub(crate) fn caller(&self) -> &Arc<Caller> {
        &self.identity
    }

    /// Whether the token grants `scope`.
    pub(crate) fn has_scope(&self, scope: &str) -> bool {
        self.identity.scopes.iter().any(|s| s == scope)
    }

    /// Whether the token's claim `name` is, or holds, `value`.
    pub(crate) fn has_claim(&self, name: &str, value: &str) -> bool {
        self.claims.get(name).is_some_and(|values| values.iter().any(|v| v == value))
    }

    /// The time the token expires at.
    pub(crate) fn expiry(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.expires_at)
    }
}

/// The name of a principal's own directory under a per-principal base
/// (`runtime/grants/principal_dirs.rs`): the issuer as [`issuer_label`], `-`, then the subject with
/// every byte but ASCII letters, digits and `-` written `_XX` (hex). Two principals never share
/// one: the label is fixed-length and distinct per configured issuer (checked at start-up), and
/// the escaping is one-to-one; no name is `.`, `..` or holds a `/`.
fn dir_name(issuer: &str, subject: &str) -> String {
    let mut name = issuer_label(issuer);
    name.push('-');
    for byte in subject.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' => name.push(byte as char),
            _ => name.push_str(&format!("_{byte:02X}")),
        }
    }
    name
}

/// An issuer in directory names: the first 16 hex digits of its SHA-256.
pub(crate) fn issuer_label(issuer: &str) -> String {
    use sha2::Digest;
    crate::hex::hex(&sha2::Sha256::digest(issuer.as_bytes())[..8])
}

/// The claims of `all` named in `names`, as strings.
pub(crate) fn picked_claims(names: &[String], all: &serde_json::Map<String, Value>) -> BTreeMap<String, Vec<String>> {
    names
        .iter()
        .filter_map(|name| {
            let values = all.get(name).filter(|v| v.is_string() || v.is_array())?;
            Some((name.clone(), strings(Some(values)).into_iter().map(str::to_owned).collect()))
        })
        .collect()
}

/// A claim that is a string or a list of strings (`aud`, `scp`, `groups`), as its strings;
/// anything else as none.
pub(crate) fn strings(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_are_one_to_one_and_never_leave_the_base() {
        let names: Vec<String> = [
            ("https://a", "ada"),
            ("https://b", "ada"),
            ("https://a", "ad_61"),
            ("https://a", "ada_"),
            ("https://a", ".."),
            ("https://a", "../b"),
            ("https://a", "a/b"),
        ]
        .iter()
        .map(|(issuer, subject)| dir_name(issuer, subject))
        .collect();
        let mut distinct = names.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        for name in &names {
            assert!(!name.contains('/') && !name.contains('.') && name.len() > 17, "{name}");
        }
        assert!(names[0].ends_with("-ada"), "{}", names[0]);
    }
}
