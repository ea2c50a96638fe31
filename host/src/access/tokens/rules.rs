//! What a token must satisfy to stand for a principal here, whichever way it is checked.

use super::keys::IssuerKeys;

/// The issuers, algorithms, audience and leeway a token is checked against, and the claims
/// its principal keeps.
pub(super) struct TokenRules {
    /// The `aud` a token must carry.
    pub(super) audience: String,
    pub(super) issuers: Vec<IssuerKeys>,
    pub(super) algorithms: Vec<jsonwebtoken::Algorithm>,
    pub(super) leeway_seconds: u64,
    /// The claims a principal keeps (those entitlements name).
    pub(super) claim_names: Vec<String>,
}

impl TokenRules {
    /// A number that changes whenever an issuer's key set is fetched again.
    pub(super) fn key_generation(&self) -> u64 {
        self.issuers.iter().map(IssuerKeys::generation).fold(0, u64::wrapping_add)
    }
}
