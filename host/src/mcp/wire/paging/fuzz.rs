//! Fuzz target: pagination cursors. A forged, truncated or random cursor is refused or starts
//! a page somewhere in the list; following the cursors the server hands out visits every item
//! exactly once, in order, whatever the page size.

use proptest::prelude::*;
use rmcp::model::PaginatedRequestParams;

use super::{encode, page};
use crate::fuzzing::json_string;

fn params(cursor: String) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))
}

/// A sorted list of distinct names.
fn names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set(json_string(), 0..24).prop_map(|set| set.into_iter().collect())
}

proptest! {
    #[test]
    fn fuzz_cursor_forged(items in names(), cursor in prop_oneof![
        ".{0,24}",
        json_string().prop_map(|key| encode(&key)),
        "[A-Za-z0-9_-]{0,24}",
    ], size in prop_oneof![Just(0usize), 1usize..8, Just(usize::MAX)]) {
        if let Ok((served, next)) = page(&items, |s| s.as_str(), &params(cursor), size) {
            prop_assert!(served.len() <= size.max(1));
            // What is served is a run of the list: it starts after some key and keeps order.
            if let Some(first) = served.first() {
                let start = items.iter().position(|item| item == first);
                prop_assert!(start.is_some());
                let start = start.unwrap_or_default();
                prop_assert_eq!(&items[start..start + served.len()], &served[..]);
            }
            if next.is_some() {
                prop_assert!(!served.is_empty());
            }
        }
    }

    #[test]
    fn fuzz_cursor_walk(items in names(), size in 1usize..6) {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (served, next) = page(&items, |s| s.as_str(), &cursor.map(params).unwrap_or_default(), size)
                .map_err(|e| TestCaseError::fail(e.message.to_string()))?;
            seen.extend(served);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
            prop_assert!(seen.len() <= items.len(), "a walk never serves more than the list");
        }
        prop_assert_eq!(seen, items);
    }
}
