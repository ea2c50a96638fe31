//! Fuzz target: one message (a line of stdin, a WebSocket text frame, a POST body), framed and
//! parsed. Whatever the bytes, the framer answers with one JSON-RPC error line, skips the
//! message, or hands rmcp a message; it never panics.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Framed, Framer};
use crate::fuzzing::{json_string, json_value};

/// Methods the framer or rmcp treat specially, and one nobody knows.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/read",
    "resources/templates/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "$/cancelRequest",
    "x/unknown",
];

/// Messages shaped like JSON-RPC, with every member possibly missing or of the wrong type.
fn message() -> impl Strategy<Value = Value> {
    let version = prop_oneof![Just(json!("2.0")), Just(json!("1.0")), json_value()];
    let id = prop_oneof![any::<i64>().prop_map(Value::from), json_string().prop_map(Value::from), json_value()];
    let method = prop_oneof![prop::sample::select(METHODS).prop_map(Value::from), json_value()];
    let params = prop_oneof![
        json_value(),
        prop::collection::btree_map(
            prop::sample::select(&["name", "arguments", "uri", "cursor", "_meta", "id", "requestId", "ref"][..]),
            json_value(),
            0..4
        )
        .prop_map(|members| json!(members)),
    ];
    (
        prop::option::of(version),
        prop::option::of(id),
        prop::option::of(method),
        prop::option::of(params),
        prop::option::of(json_value()),
    )
        .prop_map(|(version, id, method, params, result)| {
            let mut object = serde_json::Map::new();
            for (key, value) in
                [("jsonrpc", version), ("id", id), ("method", method), ("params", params), ("result", result)]
            {
                if let Some(value) = value {
                    object.insert(key.to_owned(), value);
                }
            }
            Value::Object(object)
        })
}

/// What every outcome must look like.
fn check(framed: Framed) -> Result<(), TestCaseError> {
    if let Framed::Reply(line) = framed {
        prop_assert!(!line.contains('\n'), "a reply is one line");
        let reply: Value = serde_json::from_str(&line).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reply["jsonrpc"], "2.0");
        prop_assert!(reply["error"]["code"].is_i64());
        prop_assert!(reply["error"]["message"].is_string());
        prop_assert!(reply["id"].is_null() || reply["id"].is_string() || reply["id"].is_number());
    }
    Ok(())
}

proptest! {
    #[test]
    fn fuzz_stdio_bytes(lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..96), 1..4)) {
        let mut framer = Framer { seen_request: false, transport: None };
        for line in lines {
            check(framer.frame(&line))?;
        }
    }

    #[test]
    fn fuzz_stdio_messages(first in any::<bool>(), messages in prop::collection::vec(message(), 1..4)) {
        let mut framer = Framer { seen_request: first, transport: None };
        for message in messages {
            let mut line = message.to_string().into_bytes();
            check(framer.frame(&line))?;
            // The same message with a CR, as Windows clients send it, and cut short.
            line.push(b'\r');
            check(framer.frame(&line))?;
            let half = line.len() / 2;
            check(framer.frame(&line[..half]))?;
        }
    }
}
