//! Tasks (the `io.modelcontextprotocol/tasks` extension, issue 14 item 3): calls the operator
//! lets run as tasks answer with a `CreateTaskResult` and go on in their sandbox; a second
//! process holding only the task's id polls it to its result; questions wait in the task for
//! `tasks/update`, answered in parts; `tasks/cancel` stops the guest; the task deadline is its
//! own limit; the limits on held tasks hold; legacy sessions and clients without the extension
//! never get a task, and a plugin cannot make itself one without the operator's grant.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::http::{messages, post};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The conformance plugin (unprefixed) with `policy` as its `[plugin.conformance.tasks.*]`.
fn config(policy: &str) -> ConfigFile {
    let plugin = fixture("conformance");
    ConfigFile::new(&format!("plugins = [{plugin:?}]\n\n[plugin.conformance]\nprefix = \"\"\n\n{policy}"))
}

/// slow_compute becomes a task after 300 ms; confirm_delete and multi_input at once;
/// failing_job only as a task.
const POLICY: &str = "[plugin.conformance.tasks.slow_compute]\nafter_ms = 300\n\
    [plugin.conformance.tasks.confirm_delete]\nafter_ms = 0\n\
    [plugin.conformance.tasks.multi_input]\nafter_ms = 0\n\
    [plugin.conformance.tasks.failing_job]\nafter_ms = 0\nrequired = true\n";

/// `_meta` of a 2026-07-28 request from a client that declares `capabilities`.
fn meta(capabilities: Value) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    meta
}

/// A client that takes tasks and answers elicitation.
fn tasking() -> Value {
    meta(json!({ "elicitation": {}, "extensions": { TASKS: {} } }))
}

fn call(name: &str, arguments: Value) -> Value {
    json!({ "name": name, "arguments": arguments, "_meta": tasking() })
}

fn on_task(id: &str) -> Value {
    json!({ "taskId": id, "_meta": tasking() })
}

/// A task's `tasks/get` result, checked against the extension's schema.
fn get(server: &mut Server, id: &str) -> Value {
    let task = server.result("tasks/get", on_task(id));
    assert_schema("tasks-draft", "GetTaskResult", &task);
    assert!(task.get("requestState").is_none(), "tasks carry no requestState: {task}");
    task
}

/// Polls the task until `done` holds of it (at most 20 s).
fn wait(server: &mut Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let task = get(server, id);
        if done(&task) || Instant::now() > end {
            return task;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The plugin (unprefixed here) still answers.
fn still_serving(server: &mut Server) {
    assert_eq!(text(&server.result("tools/call", call("greet", json!({ "name": "again" })))), "Hello, again!");
}

fn created(result: &Value) -> String {
    assert_eq!(result["resultType"], "task", "{result}");
    assert_schema("tasks-draft", "CreateTaskResult", result);
    let id = result["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() >= 43, "a task id carries 256 random bits: {id}");
    id
}

#[tokio::test]
async fn a_task_created_over_http_is_polled_to_completion_by_another_process() {
    let config = config(POLICY);
    let (_server, url) = Server::start_http(&config.args());
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": call("slow_compute", json!({ "seconds": 2.5, "label": "shared" })) });
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "slow_compute")];
    let started = Instant::now();
    let answer = messages(post(&url, &body, &headers).await).await.pop().unwrap();
    // Past the operator's 300 ms threshold the call became a task; the client that made it is
    // gone once it has the id (each request is its own connection).
    let id = created(&answer["result"]);
    assert!(started.elapsed() < Duration::from_secs(2), "answered at the threshold, not at the end");
    assert_eq!(answer["result"]["status"], "working");

    let poller = std::process::Command::new("python3")
        .arg(repo_root().join("tests/clients/poll_task.py"))
        .args([&url, &id, "30"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&poller.stdout);
    assert!(poller.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&poller.stderr));
    let task: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_schema("tasks-draft", "GetTaskResult", &task);
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(text(&task["result"]), "computed for 2.5 s (shared)");
    assert_eq!(task["_statusesSeen"][0], "working", "{task}");
    // A finished task stays readable for the retention: its time to live grew past the run.
    assert!(task["ttlMs"].as_u64().unwrap() >= 3_600_000, "{task}");
}

#[test]
fn progress_becomes_the_status_message_and_cancel_stops_the_guest() {
    let config = config(POLICY);
    let mut server = config.serve();
    // The client asks for progress: a task answers with its status message instead.
    let mut slow = call("slow_compute", json!({ "seconds": 60 }));
    slow["_meta"]["progressToken"] = json!("p");
    let id = created(&server.result("tools/call", slow));
    let working = wait(&mut server, &id, |t| t["statusMessage"].as_str().is_some_and(|m| m.starts_with("step ")));
    assert_eq!(working["status"], "working", "{working}");
    assert!(working["statusMessage"].as_str().unwrap().ends_with("of 600"), "{working}");
    assert!(server.take_notifications("notifications/progress").is_empty(), "tasks carry no progress notifications");

    let ack = server.result("tasks/cancel", on_task(&id));
    assert_eq!(ack, json!({ "resultType": "complete" }));
    assert_schema("tasks-draft", "CancelTaskResult", &ack);
    let started = Instant::now();
    let cancelled = wait(&mut server, &id, |t| t["status"] != "working");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(started.elapsed() < Duration::from_secs(5), "the sleeping guest was stopped, not waited for");
    // Cancelling a finished task is acknowledged the same way and changes nothing.
    assert_eq!(server.result("tasks/cancel", on_task(&id)), json!({ "resultType": "complete" }));
    assert_eq!(get(&mut server, &id)["status"], "cancelled");

    for method in ["tasks/get", "tasks/cancel"] {
        let unknown = server.call(method, on_task("no-such-task"));
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    }
    // The 2025-11-25 experimental methods are not served.
    for method in ["tasks/result", "tasks/list"] {
        assert_eq!(server.call(method, on_task(&id))["error"]["code"], -32601);
    }
    still_serving(&mut server);
}

#[test]
fn questions_wait_in_the_task_and_are_answered_in_parts() {
    let config = config(POLICY);
    let mut server = config.serve();
    let id = created(&server.result("tools/call", call("multi_input", json!({}))));
    let waiting = wait(&mut server, &id, |t| t["status"] == "input_required");
    let asked: Vec<&String> = waiting["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(asked, ["first", "second"], "{waiting}");
    assert_eq!(waiting["inputRequests"]["first"]["method"], "elicitation/create");

    // An answer that is not an elicitation result is refused whole: nothing is delivered.
    let update = |answers: Value| json!({ "taskId": id, "inputResponses": answers, "_meta": tasking() });
    let refused = server.call("tasks/update", update(json!({ "first": { "nonsense": true } })));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(get(&mut server, &id)["inputRequests"].as_object().unwrap().len(), 2);

    let accept = |name: &str| json!({ "action": "accept", "content": { "name": name } });
    let ack = server.result("tasks/update", update(json!({ "first": accept("Ada"), "unknown": accept("x") })));
    assert_eq!(ack, json!({ "resultType": "complete" }));
    assert_schema("tasks-draft", "UpdateTaskResult", &ack);
    let partial = get(&mut server, &id);
    assert_eq!(partial["status"], "input_required", "the other question is still open: {partial}");
    assert_eq!(partial["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["second"]);

    server.result("tasks/update", update(json!({ "second": accept("Grace") })));
    let done = wait(&mut server, &id, |t| t["status"] == "completed");
    assert_eq!(text(&done["result"]), "got Ada and Grace", "{done}");
}

#[test]
fn only_the_operator_and_a_declaring_client_make_a_task() {
    let config = config(POLICY);
    let mut server = config.serve();
    // A tool without a policy, and a call that ends before the threshold: plain results.
    let greeted = server.result("tools/call", call("greet", json!({ "name": "Ada" })));
    assert_eq!((greeted["resultType"].as_str(), text(&greeted).as_str()), (Some("complete"), "Hello, Ada!"));
    let quick = server.result("tools/call", call("slow_compute", json!({ "seconds": 0 })));
    assert_eq!(quick["resultType"], "complete", "{quick}");

    // A client without the extension waits for the result, past the threshold too; a tool
    // the operator requires as a task is refused to it with the capability it lacks.
    let plain = json!({ "name": "slow_compute", "arguments": { "seconds": 0.6 }, "_meta": meta(json!({})) });
    assert_eq!(text(&server.result("tools/call", plain)), "computed for 0.6 s ()");
    let required = json!({ "name": "failing_job", "arguments": {}, "_meta": meta(json!({})) });
    let refused = server.call("tools/call", required);
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));
    let untasked = server.call("tasks/get", json!({ "taskId": "x", "_meta": meta(json!({})) }));
    assert_eq!(untasked["error"]["code"], -32021, "{untasked}");

    // A tool error in a task is a completed task whose result has isError.
    let failing = created(&server.result("tools/call", call("failing_job", json!({}))));
    let failed = wait(&mut server, &failing, |t| t["status"] != "working");
    assert_eq!((failed["status"].as_str(), failed["result"]["isError"].as_bool()), (Some("completed"), Some(true)));

    // The plugin's own `detach` widens nothing: without the operator's grant it is refused.
    let first = server.result("tools/call", call("test_tool_with_task", json!({})));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let mut again = call("test_tool_with_task", json!({}));
    again["inputResponses"] = json!({ "user_name": { "action": "accept", "content": { "name": "Eve" } } });
    again["requestState"] = first["requestState"].clone();
    let denied = server.result("tools/call", again);
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(text(&denied).contains("cannot become a task"), "{denied}");
}

#[test]
fn legacy_sessions_get_no_tasks() {
    let config = config(POLICY);
    let mut server = config.serve();
    // Even a 2025-11-25 client declaring the extension: it is not defined for that version.
    server.initialize("2025-11-25", json!({ "extensions": { TASKS: {} }, "elicitation": {} }));
    let result = call_tool(&mut server, "slow_compute", json!({ "seconds": 0.6, "label": "legacy" }));
    assert_eq!(text(&result), "computed for 0.6 s (legacy)");
    let refused = server.call("tools/call", json!({ "name": "failing_job", "arguments": {} }));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

#[test]
fn the_task_deadline_is_its_own_limit() {
    let config = config(POLICY);
    let mut server = Server::start(&[
        config.args()[0],
        config.args()[1],
        "--timeout".as_ref(),
        "1".as_ref(),
        "--task-deadline".as_ref(),
        "3".as_ref(),
    ]);
    // Past the 1 s call limit as a task, within the 3 s deadline.
    let id = created(&server.result("tools/call", call("slow_compute", json!({ "seconds": 1.5 }))));
    let done = wait(&mut server, &id, |t| t["status"] != "working");
    assert_eq!(text(&done["result"]), "computed for 1.5 s ()", "{done}");
    let id = created(&server.result("tools/call", call("slow_compute", json!({ "seconds": 30 }))));
    let stopped = wait(&mut server, &id, |t| t["status"] != "working");
    assert_eq!(stopped["result"]["isError"], true, "{stopped}");
    assert!(text(&stopped["result"]).contains("time limit of 3 s"), "{stopped}");
}

#[test]
fn one_client_holds_a_bounded_number_of_tasks() {
    let config = config(POLICY);
    let mut server =
        Server::start(&[config.args()[0], config.args()[1], "--max-tasks-per-client".as_ref(), "2".as_ref()]);
    for file in ["a", "b"] {
        created(&server.result("tools/call", call("confirm_delete", json!({ "filename": file }))));
    }
    let refused = server.call("tools/call", call("confirm_delete", json!({ "filename": "c" })));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("limit of 2 tasks"), "{refused}");
    still_serving(&mut server);
}
