//! What the fuzz targets share (issue 13, item 6): random JSON, and how long a run is.
//!
//! The targets are property tests (`proptest`, which runs on the stable toolchain), one per
//! input surface of the host, each in a `fuzz` module beside the code it fuzzes:
//! `mcp/transport/framing/fuzz.rs` (framing and JSON-RPC parsing, every message transport), `runtime/plugin/plain/value/fuzz.rs`
//! (JSON to component values of random WIT types), `config/file/fuzz.rs` (config files),
//! `mcp/wire/paging/fuzz.rs` (cursors) and `mcp/call/rounds/client/fuzz.rs` (`inputResponses`). The test command
//! runs each briefly (`PROPTEST_CASES`, 256 by default); `scripts/fuzz.sh` runs them for as
//! long as you like with fresh seeds. A case that fails is shrunk and its seed saved under
//! `host/proptest-regressions/`, which is committed and replayed first by every later run.

use proptest::prelude::*;

/// Cases per run of a target: `PROPTEST_CASES` if set (`scripts/fuzz.sh` sets it), else
/// `default`, for targets whose cases cost more than most (compiling a component each).
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}
use serde_json::{Map, Value};

/// Any JSON value, nested a few levels, with strings that include escapes and non-ASCII text.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        json_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((json_string(), inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Short strings, often of the characters JSON must escape.
pub(crate) fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![".{0,12}", "[\"\\\\\\n\\t\\u{0}-\\u{1f}a-z]{0,8}", Just(String::new())]
}
