//! Runs a document's blocks in order, as a reader would, in a workspace of its own:
//!
//! - `HOME` is the workspace (so `~/project` exists: it holds `notes.txt`), with the tool homes
//!   (cargo, rustup, npm, pip) kept where they are, `MCPBOX_CACHE_DIR` the tests' shared
//!   compile cache and `MCPBOX_BUILD_TOOLS` their `mcpbox build` toolchain (and
//!   `MCPBOX_COMPONENTIZE_PY` the suite's componentize-py);
//! - `mcpbox` on `PATH` is the binary under test, and so is `target/release/mcpbox`;
//!   `target/plugins` holds the bundled plugins, as after `scripts/run.sh` in a checkout;
//! - a `cd` in one block holds for the next; stdin is empty, so `mcpbox serve` over stdio ends;
//! - `127.0.0.1:8080` in a block that runs, writes a file or shows output becomes a free port,
//!   and `127.0.0.1:9000` (a second server: an authorization server) another;
//! - `scripts/` is the checkout's, for the pages that set up a real component with its script;
//! - a page that runs `docker-registry` finds Debian's on `PATH` (`scripts/setup-registry.sh`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::blocks::{Block, Mode, blocks};
use crate::common::{free_port, guests, own, python_sdk, repo_root};

/// A document's workspace; background processes end with it.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    /// The current directory after the last block.
    pub cwd: PathBuf,
    port: u16,
    /// What `127.0.0.1:9000` becomes.
    second_port: u16,
    background: Vec<Child>,
    /// A directory put first on `PATH` (a real component the page runs).
    extra_path: Option<PathBuf>,
    /// What the last block printed (stdout, then stderr).
    last_output: String,
}

impl Drop for Workspace {
    fn drop(&mut self) {
        for child in &mut self.background {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Workspace {
    fn new() -> Workspace {
        let root = repo_root();
        guests(); // target/plugins is built
        let dir = tempfile::Builder::new().prefix("mcpbox-docs").tempdir().unwrap();
        let bin = dir.path().join(".doc-test-bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.path().join("target/release")).unwrap();
        install_mcpbox(&bin.join("mcpbox"));
        install_mcpbox(&dir.path().join("target/release/mcpbox"));
        // The page's own copies (hard links): a server it starts watches them and writes its
        // pins beside their config, as in a reader's checkout, never in the suite's.
        own::copy_folder(&root.join("target/plugins"), &dir.path().join("target/plugins"));
        own::copy_folder(&root.join("target/test-plugins"), &dir.path().join("target/test-plugins"));
        // Where rustup's toolchain is out of reach, guests build with Debian's rustc (see
        // scripts/setup-wasm-toolchain.sh); `cargo` here is the one that can.
        let route = std::fs::read_to_string(root.join(".tools/wasm-toolchain")).unwrap_or_default();
        if route.trim() == "debian" {
            let shim = bin.join("cargo");
            std::fs::write(&shim, "#!/bin/sh\nRUSTC=/usr/bin/rustc exec /usr/bin/cargo \"$@\"\n").unwrap();
            std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::write(dir.path().join("project/notes.txt"), "a file in ~/project\n").unwrap();
        let cwd = dir.path().to_owned();
        std::os::unix::fs::symlink(root.join("scripts"), dir.path().join("scripts")).unwrap();
        share_compiled_code(dir.path());
        Workspace {
            dir,
            cwd,
            port: free_port(),
            second_port: free_port(),
            background: Vec::new(),
            last_output: String::new(),
            extra_path: None,
        }
    }

    /// A command in the workspace's environment, in its current directory.
    fn command(&self, program: &str) -> Command {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let mut command = Command::new(program);
        let mut path =
            format!("{}:{}", self.dir.path().join(".doc-test-bin").display(), std::env::var("PATH").unwrap());
        if let Some(extra) = &self.extra_path {
            path = format!("{}:{path}", extra.display());
        }
        command
            .current_dir(&self.cwd)
            .env("PATH", path)
            .env("HOME", self.dir.path())
            .env("CARGO_HOME", std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo")))
            .env("RUSTUP_HOME", std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup")))
            .env("npm_config_cache", std::env::var("npm_config_cache").unwrap_or_else(|_| format!("{home}/.npm")))
            .env("PIP_CACHE_DIR", std::env::var("PIP_CACHE_DIR").unwrap_or_else(|_| format!("{home}/.cache/pip")))
            .env("MCPBOX_CACHE_DIR", repo_root().join("target/test-compile-cache"))
            .env("MCPBOX_BUILD_TOOLS", repo_root().join("target/build-tools"))
            .env("MCPBOX_TEST_BUILD_CACHE", crate::existing_servers::build_cache())
            .env("MCPBOX_COMPONENTIZE_PY", repo_root().join("target/componentize-py/bin/componentize-py"))
            .env_remove("CARGO_TARGET_DIR")
            // The reader's state is under the workspace's HOME, nowhere else.
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("MCPBOX_STATE_DIR")
            // A reader's cargo lints nothing as it builds (scripts/test.sh's clippy does).
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CLIPPY_ARGS")
            .stdin(Stdio::null());
        command
    }

    fn with_port(&self, text: &str) -> String {
        text.replace("127.0.0.1:8080", &format!("127.0.0.1:{}", self.port))
            .replace("localhost:8080", &format!("localhost:{}", self.port))
            .replace("127.0.0.1:9000", &format!("127.0.0.1:{}", self.second_port))
    }

    /// Runs `script` with bash (`set -euo pipefail`); keeps the directory it ends in.
    fn shell(&mut self, script: &str) -> Output {
        let state = self.dir.path().join(".doc-test-cwd");
        let full = format!("set -euo pipefail\ntrap 'pwd > \"{}\"' EXIT\n{script}", state.display());
        let output = self.command("bash").arg("-c").arg(full).output().unwrap();
        if let Ok(cwd) = std::fs::read_to_string(&state) {
            self.cwd = PathBuf::from(cwd.trim());
        }
        self.last_output =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        output
    }

    /// Does what `block`'s marker says; panics naming the block if it does not hold.
    pub fn apply(&mut self, block: &Block) {
        let at = block.at();
        let mode = match &block.mode {
            Some(Ok(mode)) => mode.clone(),
            Some(Err(why)) => panic!("{at}: {why}"),
            None => panic!("{at}: a block without a doc-test marker"),
        };
        let shell = matches!(mode, Mode::Run | Mode::RunFails | Mode::Background);
        assert!(!shell || block.info == "sh", "{at}: a `{}` block cannot be run as a shell script", block.info);
        match mode {
            Mode::Run | Mode::RunFails => {
                let output = self.shell(&self.with_port(&block.text));
                let expect_success = mode == Mode::Run;
                assert!(
                    output.status.success() == expect_success,
                    "{at}: the block {} as written:\n{}\n{}",
                    if expect_success { "fails" } else { "succeeds, but the docs say it fails" },
                    block.text,
                    self.last_output
                );
            }
            Mode::Output => assert_output(&at, &self.with_port(&block.text), &self.last_output),
            Mode::File(path) => {
                let path = self.cwd.join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, self.with_port(&block.text)).unwrap();
            }
            Mode::SameAs(path) => {
                let file = std::fs::read_to_string(repo_root().join(&path)).unwrap();
                assert!(file == block.text, "{at}: the block differs from {path}; copy the file into the docs");
            }
            Mode::Written(path) => {
                let written = std::fs::read_to_string(self.cwd.join(&path))
                    .unwrap_or_else(|e| panic!("{at}: {path} was not written: {e}"));
                let shown = self.with_port(&block.text);
                assert!(written == shown, "{at}: {path} as written differs from the block:\n{written}");
            }
            Mode::Background => self.background(&at, &block.text),
            Mode::Python => {
                let script = self.dir.path().join(format!(".doc-test-{}.py", block.line));
                std::fs::write(&script, self.with_port(&block.text)).unwrap();
                let output = self.command(&python_sdk()).arg(&script).output().unwrap();
                self.last_output =
                    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
                assert!(output.status.success(), "{at}: the Python snippet fails as written:\n{}", self.last_output);
            }
            Mode::Json => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&block.text) {
                    panic!("{at}: not valid JSON: {e}");
                }
            }
            Mode::Skip(_) => {}
        }
    }

    /// Starts `script` for the rest of the document and waits until its port answers (the
    /// second one if it names `127.0.0.1:9000`).
    fn background(&mut self, at: &str, script: &str) {
        let port = if script.contains("127.0.0.1:9000") { self.second_port } else { self.port };
        let mut child = self
            .command("bash")
            .arg("-c")
            .arg(format!("exec {}", self.with_port(script.trim())))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
                panic!("{at}: the server ended ({status}) before listening:\n{stderr}");
            }
            assert!(started.elapsed() < Duration::from_secs(60), "{at}: nothing listens on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.background.push(child);
    }
}

/// The suite's compile cache for the servers a page's Python blocks start: the official SDK's
/// stdio client passes a server only HOME, PATH and a few more, not `MCPBOX_CACHE_DIR`, so
/// those servers compile into the page's `~/.cache/mcpbox`, and each page compiled the bundled
/// and built plugins afresh (120 s of CPU a run; a 28 MB JavaScript component alone 39 s).
/// Only the compiled code is shared (wasmtime's module cache, Cranelift's functions, the note
/// that a file compiled within the bounds), by links, as every test shares it: the page keeps
/// its own `artifacts/` (mcpbox maps none through a link) and its own registry store (`oci/`).
fn share_compiled_code(home: &Path) {
    let shared = repo_root().join("target/test-compile-cache");
    let own = home.join(".cache/mcpbox");
    std::fs::create_dir_all(&own).unwrap();
    for part in ["wasmtime", "functions", "mcpbox-compiled-within-bounds"] {
        std::fs::create_dir_all(shared.join(part)).unwrap();
        std::os::unix::fs::symlink(shared.join(part), own.join(part)).unwrap();
    }
}

/// Whether each non-empty line of `expected` matches a line of `output`, in order; `...` in a
/// line matches any text (the pieces between appear in the line in that order).
pub fn matches_output(expected: &str, output: &str) -> bool {
    let mut lines = output.lines();
    expected.lines().map(str::trim).filter(|l| !l.is_empty()).all(|wanted| {
        let pieces: Vec<&str> = wanted.split("...").collect();
        lines.any(|line| {
            let mut rest = line;
            pieces.iter().all(|piece| match rest.find(piece) {
                Some(at) => {
                    rest = &rest[at + piece.len()..];
                    true
                }
                None => false,
            })
        })
    })
}

fn assert_output(at: &str, expected: &str, output: &str) {
    assert!(
        matches_output(expected, output),
        "{at}: the output is not as the docs show:\n{expected}\n---- it is:\n{output}"
    );
}

/// Runs every block of `path` in a fresh workspace; returns it for more checks.
pub fn run_document(path: &str) -> Workspace {
    let mut workspace = Workspace::new();
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
    if text.contains("docker-registry serve") {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-registry.sh")).output().unwrap();
        assert!(setup.status.success(), "setting up the registry failed: {}", String::from_utf8_lossy(&setup.stderr));
        let binary = PathBuf::from(String::from_utf8(setup.stdout).unwrap().trim());
        workspace.extra_path = binary.parent().map(PathBuf::from);
    }
    for block in blocks(&repo_root(), path) {
        workspace.apply(&block);
    }
    workspace
}

/// Puts the mcpbox under test at `at`, as a user's installed one would be. The test suite's
/// fail-point build runs only with `MCPBOX_TEST_FAILPOINTS=1` (and the fail points the test
/// armed), which a page's client may not pass on (the MCP SDKs start a stdio server with a few
/// variables only): a script that sets them stands in for it.
fn install_mcpbox(at: &Path) {
    let mcpbox = env!("CARGO_BIN_EXE_mcpbox");
    // A page's `mcpbox build` goes through the suite's build cache (the tests build the same
    // servers); everything else runs the binary under test. A fail-point build runs with the
    // suite's variable and what this process armed.
    let cached = repo_root().join("tests/clients/build_cache.py");
    let failpoints = match cfg!(feature = "failpoints") {
        true => format!(
            "export MCPBOX_TEST_FAILPOINTS=1 FAILPOINTS='{}'\n",
            std::env::var("FAILPOINTS").unwrap_or_default().replace('\'', "")
        ),
        false => String::new(),
    };
    let script = format!(
        "#!/bin/sh\n{failpoints}[ \"$1\" = build ] && exec python3 '{}' '{mcpbox}' \"$@\"\nexec '{mcpbox}' \"$@\"\n",
        cached.display()
    );
    std::fs::write(at, script).unwrap();
    std::fs::set_permissions(at, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}
