//! Parsing of `host:port` authorities. (Which addresses are public: `special_purpose.rs`.)

/// `host:port`, `[v6]:port`, `host` → host (brackets kept for v6) and port.
pub fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        return match rest.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if rest.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((authority, None)),
    }
}
