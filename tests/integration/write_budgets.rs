//! Write budgets (docs/config.md, SECURITY.md): a call may write `max_write_mib` (64 MiB by
//! default), a writable directory's tree may grow to `max_mib` and hold `max_files` entries.
//! Past a budget a write fails in the guest: `set-size`, an open that makes an entry and every
//! other call that returns an error code get WASI's `quota` (Rust's `QuotaExceeded`); a write
//! through a stream carries `quota` as the stream error's code, which wasi-libc's `write()`
//! (Rust's `std::fs::write` on wasm32-wasip2, CPython) does not ask for: those see EIO
//! (`Uncategorized`, os error 29). The operator's log names plugin, grant and budget, and what
//! was written before stays. (A Python plugin's `open().write()`: `languages.rs`.)

use serde_json::json;

use crate::common::*;

/// How wasi-libc's `write()` reports a stream write that failed, whatever its code.
const STREAM_WRITE_FAILED: &str = "error Uncategorized: I/O error (os error 29)";

fn fill(server: &mut Server, path: &str, bytes: u64) -> String {
    text(&call_tool(server, "fs.fill", json!({ "path": path, "bytes": bytes })))
}

#[test]
fn a_call_writes_up_to_its_budget_and_set_size_cannot_pass_it() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut server = Server::start(&[
        "--root-rw".as_ref(),
        data.as_os_str(),
        "--max-write-mib".as_ref(),
        "1".as_ref(),
        fixture("fs").as_os_str(),
    ]);
    server.initialize("2025-06-18", json!({}));
    assert_eq!(fill(&mut server, "/roots/data/kept", 4096), "wrote 4096 bytes");
    let refused = fill(&mut server, "/roots/data/big", 2 << 20);
    assert!(refused.starts_with(STREAM_WRITE_FAILED), "{refused}: {}", server.stderr());
    let held = std::fs::metadata(data.join("big")).unwrap().len();
    assert!(held <= 1 << 20, "at most the budget was written: {held}");
    assert!(refused.ends_with(&format!("the file holds {held} bytes")), "{refused}");
    assert_eq!(std::fs::read(data.join("kept")).unwrap(), vec![b'x'; 4096], "earlier data intact");
    // A new call has a budget of its own: under it, nothing changes.
    assert_eq!(fill(&mut server, "/roots/data/next", 1 << 19), "wrote 524288 bytes");
    // A sparse terabyte is refused too, the file's size unchanged.
    let grown = text(&call_tool(&mut server, "fs.grow", json!({ "path": "/roots/data/kept", "size": 1u64 << 40 })));
    assert!(grown.starts_with("error QuotaExceeded") && grown.ends_with("holds 4096 bytes"), "{grown}");
    assert_eq!(std::fs::metadata(data.join("kept")).unwrap().len(), 4096);
    let log = server.stderr();
    assert!(
        log.contains("refused a write")
            && log.contains("plugin=fs")
            && log.contains("grant=data")
            && log.contains("max_write_mib"),
        "{log}"
    );
    let listed = call_tool(&mut server, "fs.list_dir", json!({ "path": "/roots/data" }));
    assert_eq!(listed["isError"], false, "still serving: {listed}");
}

#[test]
fn a_directory_grows_to_its_budget_across_calls_and_holds_its_entries() {
    let dir = temp_dir();
    let (data, few) = (dir.path().join("data"), dir.path().join("few"));
    std::fs::create_dir(&data).unwrap();
    std::fs::create_dir(&few).unwrap();
    std::fs::write(data.join("there-before"), vec![b'o'; 100 << 10]).unwrap();
    let config = ConfigFile::new(&format!(
        "plugins = [{fs:?}]\n[[roots]]\npath = {data:?}\nname = \"data\"\nwritable = true\nmax_mib = 1\n\
         [[roots]]\npath = {few:?}\nname = \"few\"\nwritable = true\nmax_files = 3\n",
        fs = fixture("fs"),
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    // 100 KiB were there; three files of 350 KiB in three calls pass 1 MiB at the third.
    for name in ["one", "two"] {
        assert_eq!(fill(&mut server, &format!("/roots/data/{name}"), 350 << 10), "wrote 358400 bytes");
    }
    let third = fill(&mut server, "/roots/data/three", 350 << 10);
    assert!(third.starts_with(STREAM_WRITE_FAILED), "{third}");
    for name in ["one", "two"] {
        assert_eq!(std::fs::metadata(data.join(name)).unwrap().len(), 350 << 10, "{name} intact");
    }
    // Rewriting a file (truncated first) does not grow the tree: allowed.
    assert_eq!(fill(&mut server, "/roots/data/one", 350 << 10), "wrote 358400 bytes");
    // Entries: three, then the fourth is refused.
    for name in ["a", "b", "c"] {
        assert_eq!(fill(&mut server, &format!("/roots/few/{name}"), 1), "wrote 1 bytes");
    }
    let fourth = fill(&mut server, "/roots/few/d", 1);
    assert!(fourth.starts_with("error QuotaExceeded"), "{fourth}");
    assert!(!few.join("d").exists());
    let log = server.stderr();
    assert!(log.contains("max_mib") && log.contains("max_files"), "{log}");
}

/// A budget on a read-only directory is a mistake the operator is told of, with file and line.
#[test]
fn a_budget_on_a_read_only_directory_is_refused_with_its_line() {
    let dir = temp_dir();
    let config = ConfigFile::new(&format!("[[roots]]\npath = {:?}\nmax_mib = 5\n", dir.path()));
    let out = mcpbox("check").args(config.args()).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("mcpbox.toml:3") && said.contains("read-only"), "{said}");
}
