//! Compilation is bounded (issue 13, class 5): a plugin file over the size limit is refused
//! before it is read, and one whose compilation takes longer than the time limit is stopped
//! (its compiling process killed, not merely abandoned) and refused by name, while the other
//! plugins load and serve.

use std::time::Duration;

use serde_json::json;

use crate::common::*;

/// The processes compiling a file under `dir` (the child processes of bounded compilation).
fn compiling_in(dir: &std::path::Path) -> Vec<u32> {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains("__compile") && cmdline.contains(&needle)).then_some(pid)
        })
        .collect()
}

/// Kills whatever still compiles a file under its directory when the test ends, passed or
/// failed: declared after the directory, it runs before the directory is removed. A compiling
/// child that outlives its test (with `compile.stops-with-mcpbox` armed, which is how this
/// test is proven to guard it) would otherwise write its cache back into the removed
/// directory for seconds after, into the run's TMPDIR.
struct KillCompiling<'a>(&'a std::path::Path);

impl Drop for KillCompiling<'_> {
    fn drop(&mut self) {
        for pid in compiling_in(self.0) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

#[test]
fn a_compilation_over_the_time_limit_is_stopped_and_the_others_serve() {
    let cache = temp_dir();
    let _reap = KillCompiling(cache.path());
    let cache_arg = cache.path().as_os_str().to_owned();
    // The bystander compiled once within the default bound: remembered, so it loads in process.
    let status = mcpbox("compile").arg(fixture("conformance")).arg("--cache-dir").arg(&cache_arg).status().unwrap();
    assert!(status.success());
    let slow = slow_to_compile(cache.path());
    let args = [
        slow.into_os_string(),
        fixture("conformance").into_os_string(),
        "--cache-dir".into(),
        cache_arg,
        "--compile-timeout".into(),
        "0.2".into(),
    ];
    let mut server = Server::start(&args);
    // Stopped 0.2 s into its compilation, so logged long before 10 s (a compilation that runs
    // on would keep `initialize` waiting as long as it lasts).
    assert!(
        server.wait_for_log(
            "slow.wasm took longer than 0.2 s, the compile time limit, and was stopped",
            Duration::from_secs(10)
        ),
        "{}",
        server.stderr()
    );
    server.initialize("2025-06-18", json!({}));
    assert_still_serving(&mut server);
    // Killed, not abandoned: gone within moments (under a loaded machine's scheduling), long
    // before such a compilation would end by itself.
    let gone = (0..100).any(|_| {
        let gone = compiling_in(cache.path()).is_empty();
        if !gone {
            std::thread::sleep(Duration::from_millis(50));
        }
        gone
    });
    assert!(gone, "the compiling process must be gone");
}

#[test]
fn a_file_over_the_size_limit_is_refused_and_the_others_serve() {
    let dir = temp_dir();
    let big = dir.path().join("big.wasm");
    std::fs::write(&big, vec![0u8; 3 << 20]).unwrap();
    let mut server = Server::start(&[
        big.into_os_string(),
        fixture("conformance").into_os_string(),
        "--max-plugin-mib".into(),
        "2".into(),
    ]);
    server.initialize("2025-06-18", json!({}));
    assert!(
        server.wait_for_log("big.wasm is 3.0 MiB, over the 2 MiB limit for plugin files", LOGGED),
        "{}",
        server.stderr()
    );
    assert_still_serving(&mut server);
}

/// A component that takes seconds to compile even with an optimized Cranelift: one core module
/// of many long functions (valid, and useless: it exports nothing mcpbox serves), each with
/// constants of its own (identical functions would be compiled once: cranelift's incremental
/// cache, `runtime/engine/functions.rs`).
fn slow_to_compile(dir: &std::path::Path) -> std::path::PathBuf {
    use wasm_encoder::{CodeSection, Function, FunctionSection, Instruction, Module, TypeSection, ValType};
    let mut types = TypeSection::new();
    types.ty().function([ValType::I64], [ValType::I64]);
    let (mut functions, mut code) = (FunctionSection::new(), CodeSection::new());
    for function in 0..3_000i64 {
        functions.function(0);
        let mut body = Function::new([]);
        body.instruction(&Instruction::LocalGet(0));
        for round in 0..400 {
            body.instruction(&Instruction::I64Const(round * 7 + 1 + function * 4_001));
            body.instruction(&Instruction::I64Mul);
            body.instruction(&Instruction::LocalGet(0));
            body.instruction(&Instruction::I64Xor);
        }
        body.instruction(&Instruction::End);
        code.function(&body);
    }
    let mut module = Module::new();
    module.section(&types).section(&functions).section(&code);
    let mut component = wasm_encoder::Component::new();
    component.section(&wasm_encoder::ModuleSection(&module));
    let path = dir.join("slow.wasm");
    std::fs::write(&path, component.finish()).unwrap();
    path
}

#[test]
fn a_compilation_stops_when_mcpbox_dies() {
    let cache = temp_dir();
    let _reap = KillCompiling(cache.path());
    let slow = slow_to_compile(cache.path());
    let server = Server::start(&[slow.into_os_string(), "--cache-dir".into(), cache.path().as_os_str().into()]);
    let started = std::time::Instant::now();
    while compiling_in(cache.path()).is_empty() {
        assert!(started.elapsed() < WAIT, "no compiling process appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Past reading the bytes mcpbox sends (a pipe's worth of milliseconds), well before the
    // compilation ends (seconds).
    std::thread::sleep(Duration::from_millis(300));
    assert!(!compiling_in(cache.path()).is_empty(), "the compilation ended too soon for this test");
    drop(server); // SIGKILL: mcpbox cannot clean up after itself
    let killed = std::time::Instant::now();
    while !compiling_in(cache.path()).is_empty() {
        assert!(killed.elapsed() < Duration::from_millis(500), "the compilation outlived mcpbox");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn without_its_own_executable_mcpbox_still_loads_new_plugins() {
    // mcpbox replaced by an upgrade while it runs: no child can be started from its file, so a
    // new plugin is compiled in process (without the time limit), with a warning, and served.
    let bin = temp_dir();
    let program = bin.path().join("mcpbox");
    std::fs::copy(env!("CARGO_BIN_EXE_mcpbox"), &program).unwrap();
    let plugins = temp_dir();
    let cache = temp_dir();
    let args = [plugins.path().as_os_str(), "--cache-dir".as_ref(), cache.path().as_os_str()];
    let mut server = Server::start_program(&program, &args);
    server.initialize("2025-06-18", json!({}));
    std::fs::remove_file(&program).unwrap();
    std::fs::copy(fixture("conformance"), plugins.path().join("conformance.wasm")).unwrap();
    assert!(server.wait_for_log("without the time limit", WAIT), "{}", server.stderr());
    assert!(server.wait_for_log("loaded plugin plugin=conformance", WAIT), "{}", server.stderr());
    // Served once the new catalog is swapped in, which the client is told of.
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert_still_serving(&mut server);
}
