//! The audit (docs/audit.md): a line per call listing exactly what the call did (the `net`
//! fixture's `effects` tool reads two files, writes one, removes one, makes an allowed and a
//! refused request and asks one question), lines chained, checkpoints signed with a key from
//! `mcpbox keygen`; `mcpbox audit verify` finds an edited, removed or swapped line, and a chain
//! rewritten without the key at its next checkpoint. When the audit cannot be written (a file
//! size limit set on the running server with `prlimit`: EFBIG, as a full disk gives ENOSPC),
//! calls are refused and nothing runs; when it can again, an `outage` line says what was lost.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::*;
use crate::operations_support::Receiver;

/// An HTTP server on 127.0.0.1 answering every request `200 hello`.
fn hello_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        }
    });
    port
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn hash(line: &str) -> String {
    Sha256::digest(line.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// `mcpbox audit verify PATH [--key KEY]`: whether it passed, and what it said.
fn verify(path: &Path, key: Option<&Path>) -> (bool, String) {
    let mut command = mcpbox("audit");
    command.arg("verify").arg(path);
    if let Some(key) = key {
        command.arg("--key").arg(key);
    }
    let out = command.output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Writes `lines` as a file beside `path` named `name`, and returns its path.
fn tampered(path: &Path, name: &str, lines: &[String]) -> std::path::PathBuf {
    let copy = path.with_file_name(name);
    std::fs::write(&copy, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    copy
}

/// Answers the guest's one elicitation with `accept`, then returns the call's result.
fn call_answering(server: &mut Server, name: &str, arguments: Value) -> Value {
    let id = server.fresh_id();
    server.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}),
    );
    let asked = server.read_until(|m| m["method"] == "elicitation/create");
    server.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"ok": true}}}));
    server.read_until(|m| m["id"] == json!(id))["result"].clone()
}

#[test]
fn a_calls_line_lists_exactly_what_it_did_and_the_chain_finds_every_edit() {
    let port = hello_server();
    let dir = temp_dir();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("a.txt"), "aaa").unwrap();
    std::fs::write(data.join("b.txt"), "bbbb").unwrap();
    std::fs::write(data.join("old.txt"), "old").unwrap();
    std::fs::write(data.join("untouched.txt"), "never read").unwrap();
    let keys = dir.path().join("audit");
    let made = mcpbox("keygen").arg(&keys).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let audit = dir.path().join("audit.jsonl");
    let collector = Receiver::start();
    let config = ConfigFile::new(&format!(
        "plugins = [{net:?}]\n[[roots]]\npath = {data:?}\nname = \"data\"\nwritable = true\n\
         [plugin.net]\nnetwork = [\"http://127.0.0.1:{port}\"]\nallow_private_network = true\n\
         [audit]\npath = {audit:?}\nkey = {key:?}\ncheckpoint_lines = 3\notlp_endpoint = {otlp:?}\n",
        net = fixture("net"),
        key = keys.with_extension("key"),
        otlp = collector.endpoint,
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({"elicitation": {}}));
    let secret = "s3cr3t-argument-value";
    let refused = format!("http://10.1.2.3/private?token={secret}");
    let result = call_answering(
        &mut server,
        "net.effects",
        json!({"dir": "/roots/data", "allowed": format!("http://127.0.0.1:{port}/hi?q=1"), "refused": refused}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert!(text(&result).starts_with("allowed: 200; refused:"), "{result}");
    for _ in 0..4 {
        let fetched = call_tool(&mut server, "net.fetch", json!({"url": format!("http://127.0.0.1:{port}/again")}));
        assert_eq!(text(&fetched), "200 hello");
    }
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(30)).is_some_and(|s| s.success()), "{}", server.stderr());

    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&audit).unwrap().permissions().mode() & 0o777, 0o600);
    let text_of_file = std::fs::read_to_string(&audit).unwrap();
    assert!(!text_of_file.contains(secret), "an argument value is in the audit: {text_of_file}");
    let all = lines(&audit);
    assert_eq!(all[0]["kind"], "start");
    let line = &all[1];
    assert_eq!(line["kind"], "call", "{line}");
    assert_eq!(
        (&line["method"], &line["target"], &line["plugin"]),
        (&json!("tools/call"), &json!("net.effects"), &json!("net"))
    );
    assert!(line["component"].as_str().unwrap().starts_with("sha256:"), "{line}");
    assert_eq!(line["transport"], "stdio");
    assert_eq!(line["principal"], Value::Null);
    assert!(line["arguments"]["sha256"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(line["arguments"].as_object().unwrap().len(), 1, "only the digest: {line}");
    assert_eq!(line["outcome"], "ok");
    assert_eq!(line["grants"][0]["path"], "/roots/data");
    assert_eq!(line["grants"][0]["writable"], true);
    // The files: exactly these, with their bytes.
    let files = &line["effects"]["files"];
    assert_eq!(
        files,
        &json!([
            {"path": "/roots/data/a.txt", "read": 3},
            {"path": "/roots/data/b.txt", "read": 4},
            {"path": "/roots/data/out.txt", "written": 7, "created": true},
            {"path": "/roots/data/old.txt", "removed": true},
        ]),
        "{line}"
    );
    assert_eq!(line["effects"]["totals"], json!({"bytes_read": 7, "bytes_written": 7}));
    // The requests: the allowed one with its status and bytes, the refused one with the
    // reason; neither with its query.
    let http = line["effects"]["http"].as_array().unwrap();
    assert_eq!(http.len(), 2, "{line}");
    assert_eq!(
        http[0],
        json!({"method": "GET", "host": format!("127.0.0.1:{port}"), "path": "/hi", "status": 200, "sent": 0, "received": 5})
    );
    assert_eq!((&http[1]["host"], &http[1]["path"]), (&json!("10.1.2.3"), &json!("/private")), "{line}");
    assert!(http[1]["refused"].as_str().unwrap().contains("allow"), "{line}");
    assert_eq!(line["effects"]["questions"], json!([{"kind": "elicitation", "outcome": "accept"}]));
    // The next call's line follows in the chain.
    let raw: Vec<String> = text_of_file.lines().map(str::to_owned).collect();
    assert_eq!(all[2]["prev"], hash(&raw[1]), "line 3 chains to line 2");
    assert_eq!(all[2]["seq"], 2);
    assert_eq!(all[2]["effects"]["files"], json!([]));
    let checkpoints = all.iter().filter(|l| l["kind"] == "checkpoint").count();
    assert!(checkpoints >= 2, "every 3 lines and at the stop: {text_of_file}");
    assert_eq!(all.last().unwrap()["kind"], "checkpoint", "a clean stop signs the end");

    // Every line also went to the OTLP collector, as written: the body is the line, the
    // attributes what a collector filters on.
    let records = collector.logs(raw.len());
    let bodies: Vec<&str> = records.iter().map(|r| r["body"].as_str().unwrap()).collect();
    assert_eq!(bodies, raw.iter().map(String::as_str).collect::<Vec<_>>());
    let effects = &records[1];
    assert_eq!(effects["event_name"], "mcpbox.audit");
    assert_eq!(effects["resource"]["service.name"], "mcpbox");
    let attributes = &effects["attributes"];
    assert_eq!((&attributes["mcpbox.audit.seq"], &attributes["gen_ai.tool.name"]), (&json!(1), &json!("net.effects")));
    assert_eq!(attributes["mcpbox.audit.hash"], hash(&raw[1]));
    assert_eq!(attributes["mcpbox.plugin"], "net");

    // Verified whole; then each kind of tampering is found, with its line.
    let public = keys.with_extension("pub");
    let (ok, said) = verify(&audit, Some(&public));
    assert!(ok, "{said}");
    assert!(said.contains(&format!("{} lines", raw.len())) && said.contains("not covered by a signature: 0"), "{said}");
    let mut edited = raw.clone();
    edited[2] = edited[2].replace("\"seq\":2", "\"seq\":2,\"x\":1");
    let (ok, said) = verify(&tampered(&audit, "edited.jsonl", &edited), None);
    assert!(!ok && said.contains("line 3: altered"), "{said}");
    let mut removed = raw.clone();
    removed.remove(2);
    let (ok, said) = verify(&tampered(&audit, "removed.jsonl", &removed), None);
    assert!(!ok && said.contains("line 3: seq 3 follows seq 1"), "{said}");
    let mut swapped = raw.clone();
    swapped.swap(2, 3);
    let (ok, said) = verify(&tampered(&audit, "swapped.jsonl", &swapped), None);
    assert!(!ok && said.contains("line 3:"), "{said}");
    // Without the key, a chain rewritten consistently after a removal passes; the key's
    // checkpoint after it finds it.
    let mut rewritten: Vec<String> = raw[..2].to_vec();
    let mut prev = hash(&raw[1]);
    for (seq, original) in raw.iter().enumerate().skip(3) {
        let mut value: Value = serde_json::from_str(original).unwrap();
        value["seq"] = json!(seq - 1);
        value["prev"] = json!(prev);
        let line = value.to_string();
        prev = hash(&line);
        rewritten.push(line);
    }
    let rewritten = tampered(&audit, "rewritten.jsonl", &rewritten);
    let (ok, said) = verify(&rewritten, None);
    assert!(ok && said.contains("no key given"), "{said}");
    let first_checkpoint = raw.iter().skip(3).position(|l| l.contains("\"checkpoint\"")).unwrap() + 3;
    let (ok, said) = verify(&rewritten, Some(&public));
    assert!(!ok && said.contains(&format!("line {first_checkpoint}:")) && said.contains("signature"), "{said}");
    // Cut after the last checkpoint: what the window lets through; verify says how far.
    let kept = &raw[..raw.len() - 1];
    let uncovered = kept.iter().rev().take_while(|l| !l.contains("\"checkpoint\"")).count();
    assert!(uncovered > 0);
    let (ok, said) = verify(&tampered(&audit, "cut.jsonl", kept), Some(&public));
    let reported = format!("not covered by a signature: {uncovered}");
    assert!(ok && said.contains(&reported), "the cut tail is reported uncovered: {said}");
}

#[test]
fn calls_are_refused_while_the_audit_cannot_be_written_and_go_on_after() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let audit = dir.path().join("audit.jsonl");
    let mut server = Server::start(&[
        "--root-rw".as_ref(),
        data.as_os_str(),
        "--audit".as_ref(),
        audit.as_os_str(),
        fixture("fs").as_os_str(),
    ]);
    server.initialize("2025-06-18", json!({}));
    let write = |server: &mut Server, name: &str| {
        let path = format!("/roots/data/{name}");
        server.call("tools/call", json!({"name": "fs.write_file", "arguments": {"path": path, "content": "x"}}))
    };
    let one = write(&mut server, "one");
    assert_eq!(one["result"]["isError"], false, "{one}: {}", server.stderr());
    // The file may not grow: the next line fails (EFBIG, as ENOSPC on a full disk would).
    let size = std::fs::metadata(&audit).unwrap().len();
    let pid = server.pid();
    let limit = |bytes: &str| {
        let set = Command::new("prlimit").arg(format!("--pid={pid}")).arg(format!("--fsize={bytes}")).output().unwrap();
        assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    };
    limit(&format!("{size}:unlimited"));
    let withheld = write(&mut server, "two");
    assert!(withheld["error"]["message"].as_str().unwrap().contains("result is withheld"), "{withheld}");
    let refused = write(&mut server, "three");
    assert!(refused["error"]["message"].as_str().unwrap().contains("refuses calls"), "{refused}");
    assert!(!data.join("three").exists(), "a refused call did not run");
    assert_eq!(std::fs::metadata(&audit).unwrap().len(), size, "no partial line was left");
    assert!(server.wait_for_log("cannot write the audit", LOGGED), "{}", server.stderr());
    // Writable again: an outage line, then calls run.
    limit("unlimited:unlimited");
    // (The host logs it once calls are admitted again; the outage line is in the file before.)
    assert!(server.wait_for_log("the audit can be written again", Duration::from_secs(10)), "{}", server.stderr());
    assert!(std::fs::read_to_string(&audit).unwrap().contains("\"outage\""));
    let four = write(&mut server, "four");
    assert_eq!(four["result"]["isError"], false, "{four}: {}", server.stderr());
    // A listing that runs the plugin gets a line when the plugin did something (the fs fixture
    // lists its directories to list its resources).
    server.result("resources/list", json!({}));
    let all = lines(&audit);
    let listing = all.iter().find(|l| l["method"] == "resources/list").expect("the listing's line");
    assert!(listing["effects"]["files"].to_string().contains("\"listed\":true"), "{listing}");
    let outage = all.iter().find(|l| l["kind"] == "outage").unwrap();
    assert_eq!(
        (&outage["lost"], &outage["refused"]),
        (&json!(1), &json!(1)),
        "the withheld call's line, the refused call: {outage}"
    );
    assert!(all.iter().any(|l| l["target"] == "fs.write_file" && l["seq"].as_u64() > outage["seq"].as_u64()));
    let (ok, said) = verify(&audit, None);
    assert!(ok, "the chain goes on across the outage: {said}");
}
