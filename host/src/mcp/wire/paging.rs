//! Pagination (MCP `server/utilities/pagination`) with stateless cursors. A cursor encodes the
//! sort key of the last item served, so the next page starts after it: no server state, valid
//! across restarts, and stable when items are added or removed between pages. A forged cursor
//! is just a key: it starts the page somewhere, never out of bounds.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData as McpError;
use rmcp::model::PaginatedRequestParams;

const VERSION: &str = "v1:";

fn encode(last_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{VERSION}{last_key}"))
}

fn decode(cursor: &str) -> Result<String, McpError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix(VERSION).map(str::to_owned))
        .ok_or_else(|| McpError::invalid_params(format!("invalid cursor `{cursor}`"), None))
}

/// One page of `items` (sorted by `key`) after the request's cursor, at most `size` long, and
/// the cursor of the next page if there is one.
pub(crate) fn page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    params: &Option<PaginatedRequestParams>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let after = params.as_ref().and_then(|p| p.cursor.as_deref()).map(decode).transpose()?;
    let start = match &after {
        Some(last) => items.partition_point(|item| key(item) <= last.as_str()),
        None => 0,
    };
    // Any page size the operator sets is valid: a huge one means "everything at once".
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len() && end > start).then(|| encode(key(&items[end - 1])));
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn params(cursor: &str) -> Option<PaginatedRequestParams> {
        serde_json::from_value(serde_json::json!({ "cursor": cursor })).unwrap()
    }

    #[test]
    fn round_trip_and_rejects_garbage() {
        let cursor = encode("fs.read_file");
        assert_eq!(decode(&cursor).unwrap(), "fs.read_file");
        assert!(decode("not a cursor!").is_err());
        assert!(decode(&URL_SAFE_NO_PAD.encode("v2:x")).is_err());
    }

    #[test]
    fn a_maximal_page_size_with_a_forged_cursor_is_answered() {
        let items = ["a", "b", "c", "d"];
        let rest = page(&items, |s| s, &params(&encode("b")), usize::MAX).unwrap();
        assert_eq!(rest, (vec!["c", "d"], None));
        let past_the_end = page(&items, |s| s, &params(&encode("\u{10ffff}")), usize::MAX).unwrap();
        assert_eq!(past_the_end, (vec![], None));
        let (first, next) = page(&items, |s| s, &None, 3).unwrap();
        assert_eq!(first, vec!["a", "b", "c"]);
        assert_eq!(page(&items, |s| s, &params(&next.unwrap()), 3).unwrap(), (vec!["d"], None));
    }
}
