//! One output budget (issue 13, class A): everything a call emits is measured as the JSON it
//! becomes, whichever field carries it, and counted against one limit; questions to the
//! client are capped per call; logs a guest sends through the host reach the host's stderr only
//! within the budget its stderr has; memory from large results goes back. The `overflow`
//! fixture makes each attack; `conformance` is the bystander that keeps answering.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

fn overflow(extra: &[&str]) -> Server {
    let mut args = vec![fixture("overflow").into_os_string(), fixture("conformance").into_os_string()];
    args.extend(extra.iter().map(Into::into));
    let mut server = Server::start(&args);
    server.initialize("2025-06-18", json!({}));
    server
}

fn assert_over_limit(result: &Value) {
    assert_eq!(result["isError"], true, "{result}");
    let message = text(result);
    assert!(
        message.contains("plugin `overflow` sent") && message.contains("over its output limit of 1 MiB"),
        "{message}"
    );
}

#[test]
fn every_field_of_a_result_counts() {
    let mut server = overflow(&["--max-output", "1"]);
    // Before: only text, data, uri and name were counted; a description went out free.
    assert_over_limit(&call_tool(&mut server, "overflow.fat_link", json!({ "bytes": 1_200_000 })));
    let fits = call_tool(&mut server, "overflow.fat_link", json!({ "bytes": 100_000 }));
    assert_eq!(fits["content"][0]["description"].as_str().map(str::len), Some(100_000), "{fits}");
    // So does an error's message.
    assert_over_limit(&call_tool(&mut server, "overflow.fat_error", json!({ "bytes": 1_200_000 })));
    assert_still_serving(&mut server);
}

#[test]
fn json_escaping_counts() {
    let mut server = overflow(&["--max-output", "1"]);
    // 300,000 characters, 1.8 MB once escaped as \u0001: over 1 MiB on the wire.
    assert_over_limit(&call_tool(&mut server, "overflow.escapes", json!({ "bytes": 300_000 })));
    let fits = call_tool(&mut server, "overflow.escapes", json!({ "bytes": 100_000 }));
    assert_eq!(text(&fits).len(), 100_000);
    assert_still_serving(&mut server);
}

#[test]
fn questions_to_the_client_are_capped_per_call() {
    let mut server = overflow(&[]);
    // The client offers no elicitation, so every question is refused; past 64 in one call,
    // they are refused as too many before anything goes to the client.
    let result = call_tool(&mut server, "overflow.ask_flood", json!({ "count": 100 }));
    assert_eq!(text(&result), "refused 36", "{result}");
    assert!(server.wait_for_log("more than 64 requests to the client", LOGGED), "{}", server.stderr());
    assert_still_serving(&mut server);
}

#[test]
fn logs_through_the_host_share_the_stderr_budget() {
    let mut server = overflow(&[]);
    // 2 MiB of warnings in 1 KiB lines: the client may get them all (within the output
    // limit), the host's stderr at most its 256 KiB guest-log budget.
    let result = call_tool(&mut server, "overflow.log_to_host", json!({ "bytes": 2 << 20 }));
    assert_eq!(text(&result), "logged", "{result}");
    assert!(server.wait_for_log("log budget was dropped", LOGGED), "{}", server.stderr());
    // Each line costs its 1 KiB, its quotes and the 512 bytes written around it: 169 fit.
    let logged = server.stderr().matches(&"L".repeat(1024)).count();
    assert!((150..=170).contains(&logged), "{logged} lines of 1 KiB reached the host's stderr");
    assert_still_serving(&mut server);
}

/// Resident memory of a process, in bytes (Linux).
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The peak resident memory since the last reset (`clear_refs`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn memory_from_large_results_is_returned() {
    let mut server = chaos(&["--max-output", "16"]);
    let near_limit = json!({ "bytes": 15 << 20 });
    // Warm up: the first large call sizes the pools and caches that stay.
    call_tool(&mut server, "chaos.big_output", near_limit.clone());
    std::thread::sleep(Duration::from_millis(500));
    let baseline = rss(server.pid());
    for _ in 0..3 {
        let ids: Vec<i64> = (0..8)
            .map(|_| {
                let id = server.fresh_id();
                server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": "chaos.big_output", "arguments": near_limit } }));
                id
            })
            .collect();
        for id in ids {
            let response = server.read_until(|m| m["id"] == id);
            assert_eq!(response["result"]["isError"], false, "{response}");
        }
    }
    let peak = rss(server.pid());
    // The pooling allocator returns a freed instance's pages in batches of 64 per CPU (one
    // TLB flush per batch, runtime/engine/knobs.rs); once no call has run for a second, mcpbox makes
    // it return them (runtime/engine/idle.rs): no further call is needed.
    let last_response = std::time::Instant::now();
    let mut after = rss(server.pid());
    while after > baseline + baseline / 4 && last_response.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        after = rss(server.pid());
    }
    eprintln!(
        "rss: baseline {} MiB, right after 24 results of 15 MiB {} MiB, then {} MiB after {:?} idle",
        baseline >> 20,
        peak >> 20,
        after >> 20,
        last_response.elapsed()
    );
    assert!(after <= baseline + baseline / 4, "rss grew from {} MiB to {} MiB", baseline >> 20, after >> 20);

    // One call's peak: the guest's 15 MiB string in its own memory (bounded by its memory
    // limit), and the host's copies of the result (lifted, converted, serialized, written).
    let pid = server.pid();
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    let before = rss(pid);
    call_tool(&mut server, "chaos.big_output", near_limit);
    let extra = peak_rss(pid).saturating_sub(before);
    eprintln!("one call of 15 MiB: peak {} MiB over {} MiB", extra >> 20, before >> 20);
    let guest = 16 << 20;
    assert!(extra < 3 * (16 << 20) + guest, "one 15 MiB result took {} MiB at its peak", extra >> 20);
    assert_still_serving(&mut server);
}

/// Calls `tool` and returns where the server's log stands once the call's `request finished`
/// line is in it (its end).
fn finished(server: &mut Server, tool: &str, arguments: serde_json::Value) -> usize {
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": arguments } }));
    let response = server.read_until(|m| m["id"] == id);
    assert_eq!(response["result"]["isError"], false, "{tool}: {response}");
    let marker = format!("\"jsonrpc.request.id\":\"{id}\"");
    let found = |log: &str| {
        let mut at = 0;
        for line in log.split_inclusive('\n') {
            at += line.len();
            if line.ends_with('\n') && line.contains("request finished") && line.contains(&marker) {
                return Some(at);
            }
        }
        None
    };
    let end = std::time::Instant::now() + LOGGED;
    loop {
        if let Some(at) = found(&server.stderr()) {
            return at;
        }
        assert!(std::time::Instant::now() < end, "{tool}: the request's end is not in the log:\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lines a guest causes on the host's stderr are bounded as they are written (each line's text
/// and the 512 bytes of time, level and request fields around it), whichever way it causes
/// them: empty `host.log` messages, short stderr lines, refused update announcements, denied
/// HTTP requests. Each flood puts at most the 256 KiB budget and 512 lines into the log, and
/// what it dropped is said once. (Before, 250,000 empty `host.log`s wrote 13.6 MB.)
#[test]
fn floods_of_short_lines_put_at_most_the_budget_into_the_hosts_stderr() {
    const BUDGET: usize = 256 * 1024;
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}, {:?}]\n[limits]\nmax_output_mib = 64\n[plugin.net]\nnetwork = [\"https://allowed.example\"]\n",
        fixture("overflow"),
        fixture("squatter"),
        fixture("net")
    ));
    let mut args: Vec<std::ffi::OsString> = config.args().iter().map(|a| a.into()).collect();
    args.extend(["--log-format".into(), "json".into()]);
    let mut server = Server::start(&args);
    server.initialize("2025-06-18", json!({}));
    // A window of the log is what one call wrote: from the end of the line that says the
    // request before it finished (the last line a request writes) to the end of its own. Lines
    // the server wrote before, still in the pipe when the call was sent (its start, the
    // handshake), are outside it however late they are read. The first window starts after a
    // call that writes nothing.
    let mut start = finished(&mut server, "overflow.short_lines", json!({ "count": 0 }));
    let floods = [
        ("overflow.empty_logs", json!({ "count": 250_000 })),
        ("overflow.short_lines", json!({ "count": 20_000 })),
        ("squatter.announce", json!({ "uri": "file:///not/its/own", "times": 5_000 })),
        ("net.fetch_repeatedly", json!({ "url": "http://127.0.0.1:9/", "times": 5_000 })),
    ];
    for (tool, arguments) in floods {
        let end = finished(&mut server, tool, arguments);
        let log = server.stderr();
        let written = &log[start..end];
        start = end;
        // The call says once what it dropped, when it ends.
        assert_eq!(
            written.matches("log budget was dropped").count(),
            1,
            "{tool}: the drop is said once:\n{}",
            &written[written.len().saturating_sub(2000)..]
        );
        assert!(written.len() <= BUDGET + 4096, "{tool}: {} bytes reached stderr", written.len());
        assert!(
            written.lines().count() <= BUDGET / 512 + 4,
            "{tool}: {} lines reached stderr",
            written.lines().count()
        );
    }
}
