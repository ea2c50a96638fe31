//! Each call runs in a fresh sandbox: failures become results that name the plugin, limits
//! hold, output is captured, the filesystem is exactly the grants, cancellation interrupts.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

#[test]
fn a_trapping_guest_becomes_an_error_result_and_the_host_goes_on() {
    let mut server = chaos(&[]);
    let result = call_tool(&mut server, "chaos.panic", json!({ "message": "boom at the disco" }));
    assert_eq!(result["isError"], true);
    let message = text(&result);
    assert!(message.contains("plugin `chaos` crashed") && message.contains("boom at the disco"), "{message}");
    assert_eq!(text(&call_tool(&mut server, "chaos.echo", json!({ "value": "still here" }))), "\"still here\"");
}

#[test]
fn crashes_in_resources_and_prompts_become_json_rpc_errors() {
    let mut server = chaos(&[]);
    let read = server.call("resources/read", json!({ "uri": "chaos://panic" }));
    assert_eq!(read["error"]["code"], -32603, "{read}");
    let message = read["error"]["message"].as_str().unwrap();
    assert!(message.contains("plugin `chaos` crashed") && message.contains("resource boom"), "{message}");
    let prompt = server.call("prompts/get", json!({ "name": "chaos.panic" }));
    assert_eq!(prompt["error"]["code"], -32603, "{prompt}");
    assert!(prompt["error"]["message"].as_str().unwrap().contains("prompt boom"), "{prompt}");
    // The other plugin's resources are still read and listed.
    let text = server.result("resources/read", json!({ "uri": "test://static-text" }));
    assert_eq!(text["contents"][0]["text"], "This is the content of the static text resource.");
    let listed = server.result("resources/list", json!({}));
    assert_eq!(listed["resources"].as_array().unwrap().len(), 4, "{listed}");
}

#[test]
fn deep_recursion_is_a_stack_overflow_not_a_host_crash() {
    let mut server = chaos(&[]);
    assert_eq!(text(&call_tool(&mut server, "chaos.recurse", json!({ "depth": 100 }))), "5050");
    let result = call_tool(&mut server, "chaos.recurse", json!({ "depth": 10_000_000u64 }));
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("plugin `chaos` crashed: stack overflow"), "{result}");
    assert!(server.call("ping", json!({}))["result"].is_object());
}

#[test]
fn an_endless_loop_hits_the_deadline_while_other_calls_proceed() {
    let mut server = chaos(&["--timeout", "2"]);
    let started = Instant::now();
    let looping = server.fresh_id();
    server.send(
        &json!({ "jsonrpc": "2.0", "id": looping, "method": "tools/call", "params": { "name": "chaos.loop_forever" } }),
    );
    // Meanwhile another plugin answers at once.
    let quick = call_tool(&mut server, "conformance.test_simple_text", json!({}));
    assert_eq!(quick["isError"], false);
    assert!(started.elapsed() < Duration::from_secs(2), "a looping guest must not hold up other calls");
    let result = server.read_until_within(|m| m["id"] == looping, Duration::from_secs(10))["result"].clone();
    let elapsed = started.elapsed();
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("plugin `chaos` exceeded its time limit of 2 s"), "{result}");
    assert!(elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(10), "{elapsed:?}");
}

#[test]
fn endless_allocation_hits_the_memory_limit() {
    let mut server = chaos(&["--memory", "64"]);
    let result = call_tool(&mut server, "chaos.alloc_forever", json!({}));
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("plugin `chaos` exceeded its memory limit of 64 MiB"), "{result}");
    assert_eq!(call_tool(&mut server, "chaos.echo", json!({ "value": 1 }))["isError"], false);
}

#[test]
fn a_huge_result_hits_the_output_limit() {
    let mut server = chaos(&["--max-output", "1"]);
    let fits = call_tool(&mut server, "chaos.big_output", json!({ "bytes": 500_000 }));
    assert_eq!(text(&fits).len(), 500_000);
    let result = call_tool(&mut server, "chaos.big_output", json!({ "bytes": 3_000_000 }));
    assert_eq!(result["isError"], true);
    // Measured as the JSON of the whole result: the text plus its block, as on the wire.
    let message = text(&result);
    assert!(message.starts_with("plugin `chaos` sent 3000"), "{result}");
    assert!(
        message.ends_with("bytes (result, logs, progress, requests and announcements), over its output limit of 1 MiB"),
        "{result}"
    );
    // Empty blocks are not free: a hundred thousand of them are over the limit too. (Far more
    // stop earlier: wasmtime bounds what one call may copy between guest and host.)
    let blocks = call_tool(&mut server, "chaos.many_blocks", json!({ "bytes": 100_000 }));
    assert_eq!(blocks["isError"], true);
    assert!(text(&blocks).contains("over its output limit of 1 MiB"), "{blocks}");
}

#[test]
fn one_huge_allocation_hits_the_memory_limit() {
    let mut server = chaos(&["--memory", "64"]);
    let fits = call_tool(&mut server, "chaos.grab_memory", json!({ "bytes": 16 << 20 }));
    assert_eq!(text(&fits), format!("got {} bytes", 16 << 20));
    let result = call_tool(&mut server, "chaos.grab_memory", json!({ "bytes": 1u64 << 30 }));
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("plugin `chaos` exceeded its memory limit of 64 MiB"), "{result}");
}

#[test]
fn a_notification_flood_is_capped() {
    let mut server = chaos(&[]);
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "chaos.log_flood", "arguments": { "bytes": 25_000 }, "_meta": { "progressToken": 1 } } }));
    let result = server.read_until(|m| m["id"] == id);
    assert_eq!(text(&result["result"]), "flooded");
    assert_eq!(server.take_notifications("notifications/progress").len(), 10_000);
    assert!(server.wait_for_log("more than 10000 log/progress events", LOGGED), "{}", server.stderr());
}

#[test]
fn guest_stdout_never_reaches_the_protocol_stream() {
    let mut server = chaos(&[]);
    // Server::read panics on any stdout line that is not JSON, so a leak fails here.
    let result = call_tool(&mut server, "chaos.stdout_flood", json!({ "bytes": 2_000_000 }));
    assert_eq!(text(&result), "flooded");
    assert!(server.call("ping", json!({}))["result"].is_object());
    assert!(
        server.wait_for_log("chaos wrote 2000000 bytes to stdout", LOGGED),
        "stderr lines are logged with the plugin"
    );
    assert!(server.wait_for_log("dropped", LOGGED), "the flood beyond the log budget is dropped and counted");
}

#[test]
fn the_guest_sees_no_environment_and_no_arguments() {
    let mut server = chaos(&[]);
    let result = call_tool(&mut server, "chaos.environment", json!({}));
    assert_eq!(result["structuredContent"], json!({ "env": [], "args": [] }));
}

#[test]
fn the_filesystem_is_exactly_the_grants() {
    let outer = temp_dir();
    let granted = outer.path().join("granted");
    let writable = outer.path().join("writable");
    std::fs::create_dir_all(&granted).unwrap();
    std::fs::create_dir_all(&writable).unwrap();
    std::fs::write(granted.join("inside.txt"), "inside").unwrap();
    std::fs::write(outer.path().join("secret.txt"), "TOP SECRET").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), granted.join("link")).unwrap();
    std::os::unix::fs::symlink("..", granted.join("up")).unwrap();
    let secret_path = outer.path().join("secret.txt").display().to_string();

    let mut server = Server::start(&[
        fixture("chaos").into_os_string(),
        fixture("fs").into_os_string(),
        "--root".into(),
        granted.clone().into_os_string(),
        "--root-rw".into(),
        writable.clone().into_os_string(),
    ]);
    server.initialize("2025-06-18", json!({}));

    let inside = call_tool(&mut server, "fs.read_file", json!({ "path": "/roots/granted/inside.txt" }));
    assert_eq!(text(&inside), "inside");

    for path in [
        "/roots/granted/../secret.txt".to_owned(),
        "/roots/granted/link".to_owned(),
        "/roots/granted/up/secret.txt".to_owned(),
        secret_path.clone(),
        "/etc/passwd".to_owned(),
        "granted/../../secret.txt".to_owned(),
    ] {
        for tool in ["fs.read_file", "chaos.read_path"] {
            let result = call_tool(&mut server, tool, json!({ "path": path }));
            assert_eq!(result["isError"], true, "{tool} read {path}: {result}");
            assert!(!result.to_string().contains("TOP SECRET"), "{tool} escaped with {path}");
        }
    }

    // Read-only grants stay unwritten, whether the plugin checks or not.
    let denied = call_tool(&mut server, "fs.write_file", json!({ "path": "/roots/granted/new.txt", "content": "x" }));
    assert_eq!(denied["isError"], true);
    let raw = call_tool(&mut server, "chaos.write_path", json!({ "path": "/roots/granted/raw.txt", "content": "x" }));
    assert_eq!(raw["isError"], true, "{raw}");
    assert!(!granted.join("new.txt").exists() && !granted.join("raw.txt").exists());
    let over = call_tool(
        &mut server,
        "chaos.write_path",
        json!({ "path": "/roots/granted/inside.txt", "content": "changed" }),
    );
    assert_eq!(over["isError"], true);
    assert_eq!(std::fs::read_to_string(granted.join("inside.txt")).unwrap(), "inside");

    // Writable grants take writes, and only inside.
    let wrote =
        call_tool(&mut server, "fs.write_file", json!({ "path": "/roots/writable/out.txt", "content": "hello" }));
    assert_eq!(wrote["isError"], false, "{wrote}");
    assert_eq!(std::fs::read_to_string(writable.join("out.txt")).unwrap(), "hello");
    let escape =
        call_tool(&mut server, "chaos.write_path", json!({ "path": "/roots/writable/../escaped.txt", "content": "x" }));
    assert_eq!(escape["isError"], true);
    assert!(!outer.path().join("escaped.txt").exists());
    assert!(!outer.path().join("roots").exists());
}

#[test]
fn cancellation_interrupts_the_running_guest() {
    let mut server = chaos(&[]);
    // A guest that computes (only an epoch interrupt stops it)...
    let spinning = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": spinning, "method": "tools/call",
        "params": { "name": "chaos.spin", "arguments": { "ms": 120000, "announce": true } } }));
    assert!(server.wait_for_log("spin started", WAIT), "{}", server.stderr());
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": spinning, "reason": "test" } }));
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );

    // ...and one that waits in the host, cancelled with the `$/cancelRequest` spelling.
    let sleeping = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": sleeping, "method": "tools/call",
        "params": { "name": "chaos.sleep", "arguments": { "ms": 120000, "announce": true } } }));
    assert!(server.wait_for_log("sleep started", WAIT), "{}", server.stderr());
    server.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": sleeping } }));
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.stderr().matches("call to plugin `chaos` was cancelled").count() < 2 {
        assert!(Instant::now() < deadline, "the sleeping guest was not interrupted:\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Cancelled requests get no response, and the server goes on.
    assert_eq!(call_tool(&mut server, "chaos.echo", json!({ "value": 2 }))["isError"], false);
    assert!(server.backlog.iter().all(|m| m["id"] != spinning && m["id"] != sleeping), "{:?}", server.backlog);
}

#[test]
fn concurrent_calls_each_get_their_own_instance() {
    let mut server = chaos(&[]);
    let started = Instant::now();
    let ids: Vec<i64> = (0..8)
        .map(|_| {
            let id = server.fresh_id();
            server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "chaos.sleep", "arguments": { "ms": 1000 } } }));
            id
        })
        .collect();
    for id in ids {
        assert_eq!(text(&server.read_until(|m| m["id"] == id)["result"]), "slept");
    }
    // Sleeping guests wait on the host, so eight of them overlap rather than queue.
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
}

/// Calls run in instances made ahead of them (`[plugin.NAME] prepared`), and such an instance is
/// as fresh as one made on arrival: one call uses it, it holds nothing an earlier call left, and
/// it sees exactly its own call's directories, whatever the client's roots were when it was made.
#[test]
fn an_instance_made_ahead_serves_one_call_and_sees_only_that_calls_roots() {
    let allowed = temp_dir();
    for name in ["a", "b"] {
        std::fs::create_dir_all(allowed.path().join(name)).unwrap();
        std::fs::write(allowed.path().join(name).join(format!("{name}.txt")), format!("in {name}")).unwrap();
    }
    let mut server = Server::start_with_env(
        &[fixture("chaos").into_os_string(), "--root".into(), allowed.path().into()],
        &[("MCPBOX_LOG", "info,mcpbox::runtime::plugin=debug")],
    );
    server.initialize("2025-06-18", json!({ "roots": { "listChanged": true } }));
    let mut remembered = 0;
    for round in 0..4 {
        let (mine, other) = if round % 2 == 0 { ("a", "b") } else { ("b", "a") };
        if round > 0 {
            server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }));
        }
        let request = server.read_until(|m| m["method"] == "roots/list");
        let root = json!([{ "uri": format!("file://{}", allowed.path().join(mine).display()), "name": mine }]);
        server.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": root } }));
        for _ in 0..3 {
            let read =
                call_tool(&mut server, "chaos.read_path", json!({ "path": format!("/roots/{mine}/{mine}.txt") }));
            assert_eq!(text(&read), format!("in {mine}"), "round {round}: {read}");
            let other =
                call_tool(&mut server, "chaos.read_path", json!({ "path": format!("/roots/{other}/{other}.txt") }));
            assert_eq!(other["isError"], true, "round {round}: an instance saw another call's root: {other}");
            let listed = call_tool(&mut server, "chaos.list_dir", json!({ "path": format!("/roots/{mine}") }));
            assert_eq!(text(&listed), format!("{mine}.txt"));
            let fresh = call_tool(&mut server, "chaos.remember", json!({ "message": format!("secret {remembered}") }));
            remembered += 1;
            assert_eq!(fresh["structuredContent"], json!({ "earlier": [] }), "an instance was used twice: {fresh}");
        }
    }
    // Calls in flight together each take their own.
    let ids: Vec<i64> = (0..16)
        .map(|n| {
            let id = server.fresh_id();
            server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "chaos.remember", "arguments": { "message": format!("concurrent {n}") } } }));
            id
        })
        .collect();
    for id in ids {
        let result = &server.read_until(|m| m["id"] == id)["result"];
        assert_eq!(result["structuredContent"], json!({ "earlier": [] }), "an instance was used twice: {result}");
    }
    // And the calls above did run in instances made ahead (the first of each plugin cannot).
    let made_ahead = server.stderr().matches("the call runs in an instance made ahead of it").count();
    assert!(made_ahead >= 40, "only {made_ahead} of 64 calls ran in instances made ahead:\n{}", server.stderr());
}
