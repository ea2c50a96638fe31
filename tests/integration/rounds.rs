//! Multi round-trip as plugins write it with `mcpbox:plugin@0.1.1` (issue 14, item 1): keys the
//! plugin chooses, several questions in one round, a state the plugin keeps across rounds so a
//! side effect happens once, the rules of asking enforced; and a plugin built against the
//! pinned 0.1.0 WIT (tests/fixtures/wit-0-1-0) loading and behaving exactly as before, in both
//! eras.

use serde_json::{Value, json};

use crate::common::*;

/// A 2026-07-28 `tools/call` of `name` by a client that can answer everything.
fn call(name: &str, arguments: Value, answers: Option<Value>, state: Option<&Value>) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({ "sampling": {}, "elicitation": {}, "roots": {} });
    let mut params = json!({ "name": name, "arguments": arguments, "_meta": meta });
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    if let Some(state) = state {
        params["requestState"] = state.clone();
    }
    params
}

fn accept(field: &str, value: &str) -> Value {
    json!({ "action": "accept", "content": { field: value } })
}

fn model_says(text: &str) -> Value {
    json!({ "role": "assistant", "content": { "type": "text", "text": text }, "model": "test-model" })
}

/// The keys of a round's questions, sorted.
fn keys(round: &Value) -> Vec<String> {
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert_schema("2026-07-28", "InputRequiredResult", round);
    round["inputRequests"].as_object().map(|q| q.keys().cloned().collect()).unwrap_or_default()
}

/// Runs `rounds.publish` to completion, answering whatever it asks; returns the number of
/// rounds and the final text.
fn publish(server: &mut Server, remember: bool, root: &std::path::Path) -> (usize, String) {
    let arguments = json!({ "remember": remember });
    let (mut answers, mut state) = (None, None);
    for round in 1..=5 {
        let response =
            server.call("tools/call", call("rounds.publish", arguments.clone(), answers.take(), state.as_ref()));
        let result = &response["result"];
        if result["resultType"] != "input_required" {
            return (round, text(result));
        }
        let mut given = serde_json::Map::new();
        for key in keys(result) {
            let answer = match key.as_str() {
                "topic" => accept("topic", "tides"),
                "summary" => model_says("the sea comes and goes"),
                "roots" => json!({ "roots": [{ "uri": format!("file://{}", root.display()) }] }),
                other => panic!("unexpected question {other}: {result}"),
            };
            given.insert(key, answer);
        }
        answers = Some(Value::Object(given));
        state = Some(result["requestState"].clone());
    }
    panic!("publish did not finish in 5 rounds");
}

#[test]
fn a_plugin_that_keeps_its_state_does_its_side_effect_once() {
    let dir = temp_dir();
    let mut server = Server::start(&[fixture("rounds").into_os_string(), "--root-rw".into(), dir.path().into()]);
    let log = dir.path().join("published.log");

    let (rounds, text) = publish(&mut server, true, dir.path());
    assert_eq!(text, "published tides; summary: the sea comes and goes");
    assert_eq!(rounds, 4, "the host's roots, the topic, the summary, then the result");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "tides\n", "published exactly once");

    // The same plugin without its state repeats the side effect on every later round: what the
    // state prevents.
    std::fs::remove_file(&log).unwrap();
    let (_, text) = publish(&mut server, false, dir.path());
    assert_eq!(text, "published tides; summary: the sea comes and goes");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "tides\ntides\n");
}

#[test]
fn plugins_choose_their_keys_and_ask_several_questions_in_one_round() {
    let mut server = Server::start(&[fixture("conformance")]);
    let first = server
        .call("tools/call", call("conformance.test_input_required_result_multiple_inputs", json!({}), None, None));
    assert_eq!(keys(&first["result"]), ["client_roots", "greeting", "user_name"]);
    assert_eq!(first["result"]["inputRequests"]["client_roots"]["method"], "roots/list");
    let answers = json!({
        "user_name": accept("name", "Ada"),
        "greeting": model_says("Good morning,"),
        "client_roots": { "roots": [{ "uri": "file:///work/ada", "name": "ada" }] },
    });
    let state = &first["result"]["requestState"];
    let done = server.result(
        "tools/call",
        call("conformance.test_input_required_result_multiple_inputs", json!({}), Some(answers), Some(state)),
    );
    assert_eq!(text(&done), "Good morning, Ada, roots: file:///work/ada");

    // An answer that is not a result of the method asked is asked again.
    let asked =
        server.call("tools/call", call("conformance.test_input_required_result_elicitation", json!({}), None, None));
    let wrong = json!({ "user_name": 12345 });
    let again = server.call(
        "tools/call",
        call(
            "conformance.test_input_required_result_elicitation",
            json!({}),
            Some(wrong),
            Some(&asked["result"]["requestState"]),
        ),
    );
    assert_eq!(keys(&again["result"]), ["user_name"]);

    // A plugin asks only what the request says the client can answer.
    let mut params = call("conformance.test_input_required_result_capabilities", json!({}), None, None);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({ "sampling": {} });
    let round = server.call("tools/call", params);
    assert_eq!(keys(&round["result"]), ["summary"]);
}

#[test]
fn the_rules_of_asking_fail_the_call_or_refuse_the_ask() {
    let mut server = Server::start(&[fixture("rounds")]);
    let twice = server.result("tools/call", call("rounds.same_key_twice", json!({}), None, None));
    assert_eq!(twice["isError"], true, "{twice}");
    assert!(
        text(&twice)
            .contains("plugin `rounds` returned invalid questions: the question key `topic` is used twice in one call"),
        "{twice}"
    );

    // The host's own key for the client's roots is not the plugin's to answer with anything else.
    let roots = server.result("tools/call", call("rounds.roots_key", json!({}), None, None));
    assert!(text(&roots).contains("the question key `roots` is reserved for the client's roots"), "{roots}");

    // Round four: a composer's harmless question under its callee's key space (`call0.confirm`)
    // would have the person's answer to it given to the callee's confirmation: refused, named.
    for key in ["call0.confirm", "call12.pin"] {
        let squat = server.result("tools/call", call("rounds.squat_key", json!({ "key": key }), None, None));
        assert!(
            text(&squat).contains(&format!("the question key \"{key}\" is reserved for the questions of the tools")),
            "{squat}"
        );
    }
    let free = server.call("tools/call", call("rounds.squat_key", json!({ "key": "calls.confirm" }), None, None));
    assert_eq!(keys(&free["result"]), ["calls.confirm"], "only call<digits>. is reserved: {free}");

    let bad = server.result("tools/call", call("rounds.bad_key", json!({}), None, None));
    assert!(
        text(&bad).contains("a key") && text(&bad).contains("is not 1 to 64 characters of [A-Za-z0-9_.-]"),
        "{bad}"
    );

    // One ask counts as many questions as it holds: 65 at once are refused whole, to the plugin;
    // 64 are asked (in one round, under their keys).
    let many = server.result("tools/call", call("rounds.ask_many", json!({ "count": 65 }), None, None));
    assert!(text(&many).contains("too many requests to the client in one call (at most 64)"), "{many}");
    let most = server.call("tools/call", call("rounds.ask_many", json!({ "count": 64 }), None, None));
    assert_eq!(keys(&most["result"]).len(), 64);

    // A state over 64 KiB is refused to the plugin (which goes on); one within it is sealed.
    let topic = json!({ "topic": accept("topic", "tides") });
    let big = server.call("tools/call", call("rounds.save_bytes", json!({ "bytes": 65_537 }), None, None));
    let state = &big["result"]["requestState"];
    let done = server
        .result("tools/call", call("rounds.save_bytes", json!({ "bytes": 65_537 }), Some(topic.clone()), Some(state)));
    assert!(text(&done).contains("a saved state of 65537 bytes is over the 65536 bytes a call may keep"), "{done}");
    let fits = server.call("tools/call", call("rounds.save_bytes", json!({ "bytes": 65_536 }), None, None));
    let sealed = fits["result"]["requestState"].as_str().unwrap();
    assert!(sealed.len() > 4 * 65_536 / 3, "the state carries the saved bytes: {} characters", sealed.len());
}

#[test]
fn a_plugin_built_against_the_0_1_0_wit_behaves_as_before() {
    let inspect = mcpbox("inspect").arg(fixture("wit_0_1_0")).arg("--json").output().unwrap();
    let description: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert!(description["imports"].as_array().unwrap().contains(&json!("mcpbox:plugin/host@0.1.0")), "{description}");
    assert!(description["exports"].as_array().unwrap().contains(&json!("mcpbox:plugin/tools@0.1.0")), "{description}");

    // 2026-07-28: the generated keys, one question per round, the earlier answers in the state.
    let mut server = Server::start(&[fixture("wit_0_1_0")]);
    let first = server.call("tools/call", call("wit_0_1_0.greet", json!({}), None, None));
    assert_eq!(keys(&first["result"]), ["elicitation-0"]);
    let second = server.call(
        "tools/call",
        call(
            "wit_0_1_0.greet",
            json!({}),
            Some(json!({ "elicitation-0": accept("first", "Ada") })),
            Some(&first["result"]["requestState"]),
        ),
    );
    assert_eq!(keys(&second["result"]), ["elicitation-1"]);
    let done = server.result(
        "tools/call",
        call(
            "wit_0_1_0.greet",
            json!({}),
            Some(json!({ "elicitation-1": accept("last", "Lovelace") })),
            Some(&second["result"]["requestState"]),
        ),
    );
    assert_eq!(text(&done), "Hello, Ada Lovelace!");
    let draft = server.call("tools/call", call("wit_0_1_0.draft", json!({}), None, None));
    assert_eq!(keys(&draft["result"]), ["sampling-0"]);

    // Legacy: server-to-client requests, as before.
    let mut legacy = Server::start(&[fixture("wit_0_1_0")]);
    legacy.initialize("2025-11-25", json!({ "elicitation": {} }));
    let id = legacy.fresh_id();
    legacy
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "wit_0_1_0.greet" } }));
    for (field, value) in [("first", "Ada"), ("last", "Lovelace")] {
        let question = legacy.read_until(|m| m["method"] == "elicitation/create");
        legacy.send(&json!({ "jsonrpc": "2.0", "id": question["id"], "result": accept(field, value) }));
    }
    let result = legacy.read_until(|m| m["id"] == id);
    assert_eq!(text(&result["result"]), "Hello, Ada Lovelace!");
}

/// The official Python SDK (2.3.0, discover mode) answers a question in each of two rounds
/// through its callbacks, over Streamable HTTP; the side effect between them happens once.
#[test]
fn the_python_sdk_completes_a_call_that_asks_across_two_rounds() {
    let python = python_sdk();
    let dir = temp_dir();
    let (_server, url) =
        Server::start_http(&[fixture("rounds").into_os_string(), "--root-rw".into(), dir.path().into()]);
    let output = std::process::Command::new(&python)
        .arg(repo_root().join("tests/clients/python_sdk_client.py"))
        .args(["rounds", &url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("(rounds): ok"), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("published.log")).unwrap(), "tides\n");
}

/// In a legacy session `ask` sends each question as a server-to-client request, one after the
/// other, the roots included; a question the client cannot answer gets its reason, the others
/// their answers.
#[test]
fn legacy_sessions_get_each_question_of_an_ask_as_a_request() {
    let mut server = Server::start(&[fixture("conformance")]);
    server.initialize("2025-11-25", json!({ "elicitation": {}, "roots": {} }));
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "conformance.test_input_required_result_multiple_inputs" } }));
    // The host asks for the session's roots too; every roots/list gets the same answer. No
    // sampling capability: that question is not sent. (The server numbers its own requests
    // too: the answer is the message without a method.)
    let mut asked = Vec::new();
    let result = loop {
        let message = server.read(WAIT).expect("no message");
        match message["method"].as_str() {
            Some("elicitation/create") => {
                server.send(&json!({ "jsonrpc": "2.0", "id": message["id"], "result": accept("name", "Ada") }));
            }
            Some("roots/list") => {
                server.send(&json!({ "jsonrpc": "2.0", "id": message["id"],
                    "result": { "roots": [{ "uri": "file:///work/ada", "name": "ada" }] } }));
            }
            Some(_) => {}
            None if message["id"] == id => break message,
            None => {}
        }
        asked.extend(message["method"].as_str().map(str::to_owned));
    };
    // The host's own roots question when the session started, then the plugin's elicitation
    // and its roots question (the sampling one is never sent).
    let count = |method: &str| asked.iter().filter(|m| *m == method).count();
    assert_eq!((count("elicitation/create"), count("roots/list")), (1, 2), "{asked:?}");
    assert!(!asked.iter().any(|m| m.starts_with("sampling")), "{asked:?}");
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(text(&result["result"]).contains("the client does not offer sampling/createMessage"), "{result}");
}

/// Round four, 19: an answer is bound to the question it answered, not only to its key. A
/// plugin that asks for a topic under `k`, then for a PIN under the same `k`, does not get the
/// topic as the PIN: the PIN is asked, and its answer is the one given.
#[test]
fn an_answer_is_given_only_to_the_question_it_answered() {
    let mut server = Server::start(&[fixture("rounds")]);
    let first = server.call("tools/call", call("rounds.switch_question", json!({}), None, None));
    assert_eq!(keys(&first["result"]), ["k"]);
    assert_eq!(first["result"]["inputRequests"]["k"]["params"]["message"], "What should I publish?", "{first}");
    let topic = json!({ "k": accept("topic", "tides") });
    let second = server.call(
        "tools/call",
        call("rounds.switch_question", json!({}), Some(topic), Some(&first["result"]["requestState"])),
    );
    assert_eq!(keys(&second["result"]), ["k"], "the topic's answer is not the PIN's: {second}");
    assert_eq!(second["result"]["inputRequests"]["k"]["params"]["message"], "Your PIN?", "{second}");
    let pin = json!({ "k": accept("pin", "4711") });
    let done = server.result(
        "tools/call",
        call("rounds.switch_question", json!({}), Some(pin), Some(&second["result"]["requestState"])),
    );
    assert_eq!(text(&done), "pin 4711", "{done}");
}
