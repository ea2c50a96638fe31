//! What the resource server remembers about tokens it checked (JWTs verified, introspection
//! answers): by the token's digest, never the token, each until a deadline, bounded.

/// A token's key in the caches: its SHA-256, so that no cache holds a token.
pub(super) fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// What is remembered about tokens (JWTs verified, introspection answers), by [`digest`],
/// each until a deadline; at most 10,000 entries (past it, the expired go, and if none has,
/// all), so a flood of tokens cannot grow it.
pub(super) struct TokenCache<V>(std::sync::Mutex<std::collections::HashMap<[u8; 32], (V, std::time::Instant)>>);

impl<V: Clone> TokenCache<V> {
    const MAX: usize = 10_000;

    pub(super) fn new() -> TokenCache<V> {
        TokenCache(std::sync::Mutex::default())
    }

    pub(super) fn get(&self, key: &[u8; 32]) -> Option<V> {
        let entries = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.get(key).filter(|(_, until)| std::time::Instant::now() < *until).map(|(value, _)| value.clone())
    }

    pub(super) fn insert(&self, key: [u8; 32], value: V, until: std::time::Instant) {
        let mut entries = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() >= Self::MAX {
            let now = std::time::Instant::now();
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= Self::MAX {
                entries.clear();
            }
        }
        entries.insert(key, (value, until));
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn an_entry_stands_until_its_deadline_and_a_full_cache_drops_the_expired_first() {
        let cache = TokenCache::new();
        let now = Instant::now();
        cache.insert(digest("live"), 1, now + Duration::from_secs(60));
        cache.insert(digest("gone"), 2, now);
        assert_eq!(cache.get(&digest("live")), Some(1));
        assert_eq!(cache.get(&digest("gone")), None);
        for n in 0..TokenCache::<u32>::MAX {
            cache.insert(digest(&n.to_string()), 3, now);
        }
        // Full of expired entries: they went, the live one stayed.
        cache.insert(digest("new"), 4, now + Duration::from_secs(60));
        assert_eq!(cache.get(&digest("live")), Some(1));
        assert!(cache.0.lock().unwrap().len() < 10);
    }
}
