//! Lowercase hexadecimal, as digests and random ids are written: `sha256:HEX` in the registry store, the
//! compile cache's markers, the digest of a multi round-trip request. Not `format!` per byte:
//! the request digest runs for every 2026-07-28 call (it was 2.6% of one, profiled).

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    text
}

/// `N` random bytes as hex (ids that must not be guessed: a replica's, a session's); `None`
/// if the system has no randomness to give.
pub(crate) fn random_hex<const N: usize>() -> Option<String> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; N];
    ring::rand::SystemRandom::new().fill(&mut bytes).ok()?;
    Some(hex(&bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_are_two_lowercase_digits_each() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(super::hex(&[]), "");
    }
}
