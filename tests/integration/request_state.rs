//! Sealed `requestState` (issue 14, item 2): a 2026-07-28 client answers only the latest
//! questions and echoes the state, which carries the earlier answers; a state that was altered,
//! belongs to another request, expired, or was sealed with another key is refused and nothing
//! runs. Keys from a file let another process (a replica) continue the request.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

fn params(arguments: Value, answers: Option<Value>, state: Option<&str>) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({ "sampling": {}, "elicitation": {} });
    let mut params = json!({ "name": "chaos.ask_twice", "arguments": arguments, "_meta": meta });
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    params
}

/// The first two rounds of `chaos.ask_twice`; the state after the second.
fn two_rounds(server: &mut Server) -> String {
    let first = server.call("tools/call", params(json!({}), None, None));
    let round = &first["result"];
    assert_eq!(round["resultType"], "input_required", "{first}");
    assert_schema("2026-07-28", "InputRequiredResult", round);
    assert!(round["inputRequests"]["elicitation-0"].is_object(), "{first}");
    let state = round["requestState"].as_str().expect("a requestState").to_owned();
    let user = json!({ "elicitation-0": { "action": "accept", "content": { "name": "ada" } } });
    let second = server.call("tools/call", params(json!({}), Some(user), Some(&state)));
    let round = &second["result"];
    assert!(round["inputRequests"]["sampling-1"].is_object(), "{second}");
    round["requestState"].as_str().expect("a requestState").to_owned()
}

fn model_answer() -> Value {
    json!({ "sampling-1": { "role": "assistant", "content": { "type": "text", "text": "hi" }, "model": "m" } })
}

fn assert_refused(response: &Value, why: &str) {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("invalid requestState: {why}")), "{message}");
}

#[test]
fn the_state_carries_earlier_answers_and_is_refused_when_forged() {
    let mut server = Server::start(&[fixture("chaos")]);
    let state = two_rounds(&mut server);
    // The last round answers only the model's question: the user's answer comes from the state.
    let done = server.call("tools/call", params(json!({}), Some(model_answer()), Some(&state)));
    let text = text(&done["result"]);
    assert!(text.contains("\"name\":\"ada\"") && text.contains("model: hi"), "{done}");

    let mut altered = state.clone().into_bytes();
    altered[state.len() / 2] = if altered[state.len() / 2] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    assert_refused(
        &server.call("tools/call", params(json!({}), Some(model_answer()), Some(&altered))),
        "it was altered",
    );
    // The same state for another request (other arguments) is refused.
    let other = server.call("tools/call", params(json!({ "extra": 1 }), Some(model_answer()), Some(&state)));
    assert_refused(&other, "it belongs to another request");
    assert_refused(&server.call("tools/call", params(json!({}), None, Some("garbage"))), "not one this server issued");

    // Another process with a key of its own cannot open it.
    let mut stranger = Server::start(&[fixture("chaos")]);
    let foreign = stranger.call("tools/call", params(json!({}), Some(model_answer()), Some(&state)));
    assert_refused(&foreign, "not sealed with a key this server holds");
}

#[test]
fn replicas_sharing_keys_continue_each_others_requests_and_old_states_expire() {
    let dir = temp_dir();
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "# rotate by adding a new first line\nMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n")
        .unwrap();
    let args = [fixture("chaos").into_os_string(), "--request-state-keys".into(), keys.clone().into_os_string()];
    let mut first = Server::start(&args);
    let state = two_rounds(&mut first);
    let mut second = Server::start(&args);
    let done = second.call("tools/call", params(json!({}), Some(model_answer()), Some(&state)));
    assert!(text(&done["result"]).contains("model: hi"), "{done}");

    let mut short = Server::start(&[fixture("chaos").into_os_string(), "--request-state-ttl".into(), "0.2".into()]);
    let state = two_rounds(&mut short);
    std::thread::sleep(Duration::from_millis(400));
    assert_refused(&short.call("tools/call", params(json!({}), Some(model_answer()), Some(&state))), "it expired");
}
