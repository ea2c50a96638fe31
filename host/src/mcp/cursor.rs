//! Stateless pagination cursors (MCP `server/utilities/pagination`). A cursor encodes the
//! sort key of the last item served, so the next page starts after it: no server state, valid
//! across restarts, and stable when items are added or removed between pages.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData as McpError;

const VERSION: &str = "v1:";

pub fn encode(last_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{VERSION}{last_key}"))
}

pub fn decode(cursor: &str) -> Result<String, McpError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix(VERSION).map(str::to_owned))
        .ok_or_else(|| McpError::invalid_params(format!("invalid cursor `{cursor}`"), None))
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_and_rejects_garbage() {
        let cursor = super::encode("fs.read_file");
        assert_eq!(super::decode(&cursor).unwrap(), "fs.read_file");
        assert!(super::decode("not a cursor!").is_err());
        assert!(
            super::decode(&base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, "v2:x")).is_err()
        );
    }
}
