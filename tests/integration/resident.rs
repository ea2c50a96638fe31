//! Resident resets (`runtime/engine/resident.rs`, the patched wasmtime of `host/vendor/`): a
//! freed memory slot whose written pages are reset in place, not given back to the kernel, is
//! as fresh for the next call as a new one, however scattered the previous call's writes were.

use serde_json::{Value, json};

use super::operations_support::metrics_url;
use crate::common::*;

/// The value of the unlabelled sample `name` in a metrics text.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Whether mcpbox resets freed slots in place on this machine: Linux 6.7 or later, no swap.
fn resident_resets_expected() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse::<u32>().ok());
    let recent = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) >= (6, 7);
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    recent && swaps.lines().skip(1).all(|line| line.trim().is_empty())
}

fn assert_pristine(result: &Value, what: &str) {
    assert_eq!(result["isError"], false, "{what}: {result}");
    let report = &result["structuredContent"];
    assert_eq!(
        report["changed"],
        json!({ "image": 0, "zeroed": 0, "grown": 0 }),
        "{what}: an earlier call's canary: {result}"
    );
    // Every other page of three areas of 256 pages: 384 runs of one page each.
    assert_eq!(report["marked_pages"], 384, "{what}: {result}");
}

/// The guest writes a canary into every other page of its memory image, of its zeroed memory
/// and of memory it grows (384 separate runs, far more than the 32 regions one page scan
/// reports), and reads those areas first: every call, one after another and eight at a time,
/// with the memory image mapped copy-on-write and copied, finds them as a fresh instance has
/// them. And the pool did keep pages resident (the resets were in place, not given back).
///
/// The pages are looked at while a call of the same server still runs (`chaos.wait_for`, until
/// the test creates a file): a server idle for a second gives its freed pages back
/// (`runtime/engine/idle.rs`), and on a busy machine the scrape came later than that after the
/// last canary and found only 80 KiB. With a call in flight the server is never idle.
#[tokio::test]
async fn a_slot_reset_in_place_holds_nothing_of_the_call_before() {
    for copy_on_write in ["on", "off"] {
        let dir = temp_dir();
        let mut server = Server::start(&[
            fixture("chaos").into_os_string(),
            "--copy-on-write".into(),
            copy_on_write.into(),
            "--metrics".into(),
            "127.0.0.1:0".into(),
            "--root".into(),
            dir.path().into(),
        ]);
        server.initialize("2025-06-18", json!({}));
        let url = metrics_url(&server);
        // The call that keeps the server busy, running once it reports progress.
        let guest_go = format!("/roots/{}/go", dir.path().file_name().unwrap().to_str().unwrap());
        let holding = server.fresh_id();
        server.send(&json!({ "jsonrpc": "2.0", "id": holding, "method": "tools/call",
            "params": { "name": "chaos.wait_for", "arguments": { "path": guest_go }, "_meta": { "progressToken": "held" } } }));
        server.read_until(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "held");
        for round in 0..12 {
            let result = call_tool(&mut server, "chaos.canary", json!({}));
            assert_pristine(&result, &format!("copy-on-write {copy_on_write}, call {round}"));
        }
        for batch in 0..3 {
            let ids: Vec<i64> = (0..8)
                .map(|_| {
                    let id = server.fresh_id();
                    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": { "name": "chaos.canary", "arguments": {} } }));
                    id
                })
                .collect();
            for id in ids {
                let response = server.read_until(|m| m["id"] == id);
                assert_pristine(&response["result"], &format!("copy-on-write {copy_on_write}, batch {batch}"));
            }
        }
        let text = http_client().get(&url).send().await.unwrap().text().await.unwrap();
        let resident = sample(&text, "mcpbox_pool_resident_bytes").unwrap_or(-1.0);
        if resident_resets_expected() {
            // At least one slot kept what its call wrote (the canaries, some of 384 pages).
            assert!(resident >= 64.0 * 4096.0, "no slot was reset in place: {resident} bytes resident\n{text}");
        } else {
            eprintln!("resident resets are off on this machine (old kernel or swap on): {resident} bytes resident");
        }
        std::fs::write(dir.path().join("go"), b"").unwrap();
        let released = server.read_until(|m| m["id"] == holding);
        assert_eq!(released["result"]["content"][0]["text"], "released", "{released}");
    }
}
