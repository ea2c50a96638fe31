//! The command line guides instead of stalling: a bare `mcpbox` on a terminal says what to do,
//! a plugin path after `--http` is named as such, an unusable compile cache is reported once,
//! and `inspect`, `check`, `compile` and `serve` compile a plugin once between them.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;

/// Compiled artifacts in the compile cache `dir`.
fn cached_files(dir: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                // Compiled artifacts only: wasmtime's cache worker writes `.stats` files and
                // `wip-` files in the background, at its own pace.
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !name.contains('.') && !name.starts_with("wip") {
                    count += 1;
                }
            }
        }
    }
    count
}

/// Runs `mcpbox COMMAND ARGS` with stdin closed and the compile cache in `cache`.
fn run_with_cache(cache: &Path, command: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let output = mcpbox(command).args(args).env("MCPBOX_CACHE_DIR", cache).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "mcpbox {command}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
fn inspect_check_compile_and_serve_compile_a_plugin_once() {
    // A plugin of 4 MiB or more: the size at which serving turns copy-on-write on, which is part
    // of the compile cache's key (the guides' Python and JavaScript plugins are this large).
    let dir = temp_dir();
    let mut bytes = std::fs::read(fixture("echo")).unwrap();
    bytes.extend(crate::plain::custom_section("padding", &vec![0u8; 5 << 20]));
    let big = dir.path().join("big.wasm");
    std::fs::write(&big, bytes).unwrap();
    let cache = dir.path().join("cache");
    run_with_cache(&cache, "inspect", &[big.as_os_str()]);
    let compiled = cached_files(&cache);
    assert!(compiled > 0, "inspect compiled nothing into {}", cache.display());
    for command in ["check", "compile", "serve"] {
        let output = run_with_cache(&cache, command, &[big.as_os_str()]);
        assert_eq!(
            cached_files(&cache),
            compiled,
            "`mcpbox {command}` compiled the plugin again: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn an_unusable_compile_cache_is_reported_once_and_mcpbox_runs_without_it() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("a-file"), "not a directory").unwrap();
    let cache = dir.path().join("a-file/cache");
    let output = run_with_cache(&cache, "serve", &[fixture("echo").as_os_str()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("cannot use the compile cache directory").count(), 1, "{stderr}");
    assert!(stderr.contains("compiling every plugin afresh"), "{stderr}");
}

#[test]
fn a_plugin_path_after_http_is_named_as_such() {
    let dir = temp_dir();
    let output = mcpbox("serve").arg("--http").arg(dir.path()).stdin(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("is a plugin path, not an address"), "{stderr}");
    assert!(stderr.contains("put the plugin paths before it"), "{stderr}");
}

#[test]
fn a_bare_mcpbox_on_a_terminal_says_what_to_do_and_still_serves() {
    // A terminal from Python's pty module: mcpbox's stdin and stderr are the pty.
    let script = r#"
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1]])
out, deadline = b"", time.time() + 60
while b"Ctrl-D" not in out and time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 1)
    if ready:
        out += os.read(fd, 65536)
os.write(fd, b"\x04")
time.sleep(0.5)
sys.stdout.write(out.decode(errors="replace"))
_, status = os.waitpid(pid, 0)
sys.stdout.write("\nexit=%d\n" % os.waitstatus_to_exitcode(status))
"#;
    let mut wrapper = Command::new("python3");
    wrapper.args(["-c", script, env!("CARGO_BIN_EXE_mcpbox")]);
    let _own = owned_server(&mut wrapper);
    let mut child = wrapper.stdout(Stdio::piped()).spawn().unwrap();
    let mut output = String::new();
    child.stdout.take().unwrap().read_to_string(&mut output).unwrap();
    let status = child.wait_timeout_or_kill(Duration::from_secs(90));
    assert!(status, "the pty helper did not finish:\n{output}");
    assert!(output.contains("mcpbox is an MCP server"), "{output}");
    assert!(output.contains("mcpbox serve PLUGINS... --root DIR"), "{output}");
    assert!(output.contains("exit=0"), "Ctrl-D ends it like the end of a client's input:\n{output}");
}

trait WaitTimeout {
    fn wait_timeout_or_kill(&mut self, within: Duration) -> bool;
}

impl WaitTimeout for std::process::Child {
    fn wait_timeout_or_kill(&mut self, within: Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if self.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.kill();
        false
    }
}

#[test]
fn check_names_a_missing_folder_as_a_path_not_a_plugin() {
    let dir = temp_dir();
    let missing = dir.path().join("plugins");
    let output = mcpbox("check").arg(&missing).output().unwrap();
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success());
    let row = table.lines().find(|l| l.contains("does not exist")).unwrap_or_else(|| panic!("{table}"));
    assert!(row.starts_with("- "), "a missing folder is not a plugin called `plugins`: {row}");
}
