//! Where the vault keeps its records, sealed: AES-256-GCM (ring) with the operator's key (or
//! one made for this process), a fresh 96-bit nonce per record, and the record's key as the
//! associated data, so that a record copied under another key (another principal's account)
//! does not open. In this process's memory, or in the fleet's store for every replica.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use zeroize::Zeroizing;

use crate::fleet::Fleet;

/// Sealed records in memory, each with when it expires.
type Records = Mutex<HashMap<String, (Vec<u8>, Option<Instant>)>>;

/// Where records live.
enum Place {
    /// This process only: links and accounts end with it.
    Memory(Records),
    Fleet(Fleet),
}

/// The vault's sealed records.
pub(crate) struct Sealed {
    place: Place,
    key: LessSafeKey,
    random: SystemRandom,
}

impl Sealed {
    /// Records sealed with `key` (32 bytes; `None`: made now), in `fleet`'s store or in memory.
    pub(crate) fn new(key: Option<&[u8]>, fleet: Option<Fleet>) -> Result<Sealed> {
        let random = SystemRandom::new();
        let mut made = Zeroizing::new([0u8; 32]);
        let key = match key {
            Some(key) => key,
            None => {
                random.fill(&mut made[..]).map_err(|_| anyhow!("no randomness for the vault's key"))?;
                &made[..]
            }
        };
        let key = LessSafeKey::new(
            UnboundKey::new(&AES_256_GCM, key).map_err(|_| anyhow!("the vault's key is not 32 bytes"))?,
        );
        let place = match fleet {
            Some(fleet) => Place::Fleet(fleet),
            None => Place::Memory(Mutex::default()),
        };
        Ok(Sealed { place, key, random })
    }

    /// 32 random bytes in hex: link ids, `state`, PKCE verifiers.
    pub(crate) fn random_id(&self) -> String {
        let mut bytes = [0u8; 32];
        // ring's system randomness does not fail on Linux; an all-zero id would be refused by
        // nobody, so fail loudly instead.
        if self.random.fill(&mut bytes).is_err() {
            tracing::error!("no randomness for a vault id");
        }
        crate::hex::hex(&bytes)
    }

    fn seal(&self, name: &str, plain: &[u8]) -> Result<Vec<u8>, String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).map_err(|_| "no randomness".to_owned())?;
        let mut sealed = Zeroizing::new(plain.to_vec());
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(name.as_bytes()), &mut *sealed)
            .map_err(|_| "cannot seal a vault record".to_owned())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn open(&self, name: &str, mut sealed: Vec<u8>) -> Option<Zeroizing<Vec<u8>>> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let nonce = Nonce::try_assume_unique_for_key(&sealed[..NONCE_LEN]).ok()?;
        let mut body = Zeroizing::new(sealed.split_off(NONCE_LEN));
        let plain = self.key.open_in_place(nonce, Aad::from(name.as_bytes()), &mut body[..]).ok()?.len();
        body.truncate(plain);
        Some(body)
    }

    /// Keeps `plain` under `name`, for `ttl` if given.
    pub(crate) async fn put(&self, name: &str, plain: &[u8], ttl: Option<Duration>) -> Result<(), String> {
        let sealed = self.seal(name, plain)?;
        match &self.place {
            Place::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                // Expired records go when a new one comes: the map stays bounded by what lives.
                let now = Instant::now();
                records.retain(|_, (_, until)| until.is_none_or(|until| until > now));
                records.insert(name.to_owned(), (sealed, ttl.map(|ttl| now + ttl)));
                Ok(())
            }
            Place::Fleet(fleet) => fleet.vault_put(name, &sealed, ttl).await,
        }
    }

    /// The record under `name`, opened; `take` removes it in the same step (single use).
    pub(crate) async fn get(&self, name: &str, take: bool) -> Result<Option<Zeroizing<Vec<u8>>>, String> {
        let sealed = match &self.place {
            Place::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let live = records.get(name).is_some_and(|(_, until)| until.is_none_or(|until| until > Instant::now()));
                match (live, take) {
                    (false, _) => None,
                    (true, true) => records.remove(name).map(|(sealed, _)| sealed),
                    (true, false) => records.get(name).map(|(sealed, _)| sealed.clone()),
                }
            }
            Place::Fleet(fleet) if take => fleet.vault_take(name).await?,
            Place::Fleet(fleet) => fleet.vault_get(name).await?,
        };
        Ok(sealed.and_then(|sealed| self.open(name, sealed)))
    }

    /// Removes the record under `name`.
    pub(crate) async fn delete(&self, name: &str) -> Result<(), String> {
        match &self.place {
            Place::Memory(records) => {
                records.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(name);
                Ok(())
            }
            Place::Fleet(fleet) => fleet.vault_delete(name).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_record_opens_only_under_its_own_name_and_once_when_taken() {
        let sealed = Sealed::new(None, None).unwrap();
        sealed.put("account:github:ada", b"token-a", None).await.unwrap();
        assert_eq!(&**sealed.get("account:github:ada", false).await.unwrap().unwrap(), b"token-a");
        // The same bytes under another name do not open.
        let Place::Memory(records) = &sealed.place else { unreachable!() };
        let copied = records.lock().unwrap()["account:github:ada"].clone();
        records.lock().unwrap().insert("account:github:bob".into(), copied);
        assert!(sealed.get("account:github:bob", false).await.unwrap().is_none());
        sealed.put("link:1", b"once", Some(Duration::from_secs(60))).await.unwrap();
        assert!(sealed.get("link:1", true).await.unwrap().is_some());
        assert!(sealed.get("link:1", true).await.unwrap().is_none(), "single use");
        sealed.put("link:2", b"short", Some(Duration::from_millis(1))).await.unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(sealed.get("link:2", false).await.unwrap().is_none(), "expired");
    }
}
