//! Shared helpers: build the guests once, start the real `mcpbox` binary, talk JSON-RPC to it
//! over its stdio like a client, and validate messages against the official MCP schemas.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod clock;
pub mod own;
mod server;

use own::OwnDirs;
pub use server::Server;

/// How long a test waits for one message. Generous: a debug host compiles a guest in seconds
/// the first time (the compile cache is shared by every server a test run starts).
pub const WAIT: Duration = Duration::from_secs(60);

/// How long a test waits for a log line mcpbox wrote before a response the test already has
/// (a refusal, a count of what was dropped, a plugin refused at load: mcpbox loads its plugins
/// before it answers `initialize`): only the stderr pipe is in between. A test that waited
/// [`WAIT`] for it would hold the proof of its protection (scripts/check-protections.py) for a
/// minute whenever the line never comes.
pub const LOGGED: Duration = Duration::from_secs(5);

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Builds every guest once per test process (cargo makes it a no-op when nothing changed);
/// not at all when `MCPBOX_TEST_GUESTS_BUILT` says the run built them already
/// (scripts/check-protections.py: a process per guarding test, each asking cargo for nothing
/// cost a second or two apiece).
pub fn guests() -> &'static Path {
    clock::started();
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = repo_root();
        if std::env::var_os("MCPBOX_TEST_GUESTS_BUILT").is_some() {
            return root.join("target");
        }
        let status = Command::new("bash")
            .arg(root.join("scripts/build-guests.sh"))
            .status()
            .expect("cannot run scripts/build-guests.sh");
        assert!(status.success(), "building the guest plugins failed");
        root.join("target")
    })
}

/// The test's own copy (`own.rs`) of a bundled plugin (`filesystem`, `memory`, `time`,
/// `sequential-thinking`, `textstats`); its fail-point build when this test process runs with
/// one of its fail points armed (`FAILPOINTS=guest.PLUGIN.NAME=return`, tests/protections.toml;
/// built by build-guests.sh).
pub fn plugin(name: &str) -> PathBuf {
    let prefix = format!("guest.{name}.");
    let armed = std::env::var("FAILPOINTS").unwrap_or_default();
    let guest_point = armed
        .split(';')
        .filter_map(|entry| entry.trim().split_once('='))
        .find_map(|(point, _)| point.strip_prefix(&prefix).map(str::to_owned));
    own::own_copy(&match guest_point {
        Some(point) => guests().join("failpoint-plugins").join(point).join(format!("{name}.wasm")),
        None => guests().join("plugins").join(format!("{name}.wasm")),
    })
}

/// The test's own copy of a test fixture (`fs`, `conformance`, `chaos`, `tools_only`, `hello`).
pub fn fixture(name: &str) -> PathBuf {
    own::own_copy(&guests().join("test-plugins").join(format!("{name}.wasm")))
}

/// The test's own copy of the folder the whole-server tests serve (`fs`, `conformance` and
/// `textstats`).
pub fn test_set() -> PathBuf {
    own::own_copy(&guests().join("test-set"))
}

/// The test's own copy of the bundled plugins' folder, with their `mcpbox.toml` (as
/// `scripts/run.sh` leaves `target/plugins`); its pins file is the test's own too.
pub fn bundled() -> PathBuf {
    own::own_copy(&guests().join("plugins"))
}

/// The python of a virtualenv with the official MCP Python SDK (scripts/setup-python-client.sh),
/// set up or checked once per test process: the script's check imports the SDK, 1.7 s of CPU,
/// and the docs pages alone asked 40 times a run.
pub fn python_sdk() -> String {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let setup = Command::new("bash")
                .arg(repo_root().join("scripts/setup-python-client.sh"))
                .output()
                .expect("cannot run scripts/setup-python-client.sh");
            let failed = String::from_utf8_lossy(&setup.stderr);
            assert!(setup.status.success(), "setting up the Python SDK failed: {failed}");
            String::from_utf8(setup.stdout).unwrap().trim().to_owned()
        })
        .clone()
}

/// Node 22 and the directory of the official TypeScript SDK (`scripts/setup-ts-client.sh`), set
/// up or checked once per test process.
pub fn ts_sdk() -> (String, String) {
    static SDK: OnceLock<(String, String)> = OnceLock::new();
    SDK.get_or_init(|| {
        let setup = Command::new("bash")
            .arg(repo_root().join("scripts/setup-ts-client.sh"))
            .output()
            .expect("cannot run scripts/setup-ts-client.sh");
        let failed = String::from_utf8_lossy(&setup.stderr);
        assert!(setup.status.success(), "setting up the TypeScript SDK failed: {failed}");
        let printed = String::from_utf8(setup.stdout).unwrap();
        let (node, dir) = printed.trim().split_once(' ').expect("NODE SDK_DIR");
        (node.to_owned(), dir.to_owned())
    })
    .clone()
}

/// `mcpbox SUBCOMMAND` with the test's own state directories (`own.rs`: the same for every
/// command of one test) and the tests' shared compile cache; add arguments and run it.
pub fn mcpbox(subcommand: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    command.arg(subcommand);
    owned(&mut command);
    command
}

/// Gives `command` (an mcpbox, or a program that starts one) the test's own state directories
/// and the tests' shared compile cache.
pub fn owned(command: &mut Command) -> &mut Command {
    clock::started();
    OwnDirs::for_test().give(command);
    command.env("MCPBOX_CACHE_DIR", cache_dir())
}

/// Gives `command` (a program that starts an mcpbox server: a client, a script) a server's
/// own state directories, which last as long as the value returned, and the shared compile
/// cache.
pub fn owned_server(command: &mut Command) -> OwnDirs {
    clock::started();
    let own = OwnDirs::for_server();
    own.give(command);
    command.env("MCPBOX_CACHE_DIR", cache_dir());
    own
}

/// [`owned_server`] for a tokio command.
pub fn owned_server_tokio(command: &mut tokio::process::Command) -> OwnDirs {
    clock::started();
    let own = OwnDirs::for_server();
    own.give_tokio(command);
    command.env("MCPBOX_CACHE_DIR", cache_dir());
    own
}

/// The compile cache every mcpbox of a test run shares (keyed by the component's digest).
pub fn cache_dir() -> PathBuf {
    repo_root().join("target").join("test-compile-cache")
}

/// `_meta` of a 2026-07-28 request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "mcpbox-tests", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Adds the 2026-07-28 `_meta` to `params`.
pub fn modern(mut params: Value) -> Value {
    params.as_object_mut().unwrap().insert("_meta".into(), modern_meta());
    params
}

/// The text of the first content block of a tool result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Validates `value` against definition `name` of the official MCP schema of `version`.
pub fn assert_schema(version: &str, name: &str, value: &Value) {
    type Validators = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;
    static VALIDATORS: OnceLock<Validators> = OnceLock::new();
    let key = (version.to_owned(), name.to_owned());
    let validator = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_insert_with(|| {
            let path = repo_root().join("tests/schemas").join(format!("{version}.json"));
            let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let defs = if schema.get("$defs").is_some() { "$defs" } else { "definitions" };
            assert!(schema[defs].get(name).is_some(), "schema {version} has no definition {name}");
            schema.as_object_mut().unwrap().insert("$ref".into(), json!(format!("#/{defs}/{name}")));
            Arc::new(jsonschema::validator_for(&schema).unwrap())
        })
        .clone();
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "not a valid {name} of MCP {version}: {errors:?}\nvalue: {value}");
}

/// An HTTP client for the tests. reqwest's rustls comes without a crypto provider (the host's
/// oci-client asks for it so, to use ring): install ring's before the first client.
pub fn http_client() -> reqwest::Client {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// `tools/call` of `name` with `arguments`; the result.
pub fn call_tool(server: &mut Server, name: &str, arguments: Value) -> Value {
    server.result("tools/call", json!({ "name": name, "arguments": arguments }))
}

/// The chaos fixture beside the conformance plugin (a bystander that must keep answering),
/// initialized; `extra` are more `serve` arguments.
pub fn chaos(extra: &[&str]) -> Server {
    let mut args = vec![fixture("chaos").into_os_string(), fixture("conformance").into_os_string()];
    args.extend(extra.iter().map(Into::into));
    let mut server = Server::start(&args);
    server.initialize("2025-06-18", json!({}));
    server
}

/// The host is up and the conformance plugin (the bystander) still answers.
pub fn assert_still_serving(server: &mut Server) {
    let result = call_tool(server, "conformance.test_simple_text", json!({}));
    assert_eq!(result["isError"], false, "the bystander plugin failed: {result}");
}

/// A temporary directory (for grants, configs, projects), removed with the value.
pub fn temp_dir() -> tempfile::TempDir {
    clock::started();
    tempfile::Builder::new().prefix("mcpbox-test").tempdir().unwrap()
}

/// A config file in a temporary directory of its own.
pub struct ConfigFile {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl ConfigFile {
    pub fn new(contents: &str) -> ConfigFile {
        let target = repo_root().join("target");
        if let Some(folder) = contents.split('"').find_map(|s| own::shared_folder(Path::new(s), &target)) {
            own::check_sharing(&format!("is configured with a plugin in the shared folder target/{folder}"));
        }
        let dir = temp_dir();
        let path = dir.path().join("mcpbox.toml");
        std::fs::write(&path, contents).unwrap();
        ConfigFile { _dir: dir, path }
    }

    pub fn rewrite(&self, contents: &str) {
        std::fs::write(&self.path, contents).unwrap();
    }

    /// The arguments that point `mcpbox` at this file.
    pub fn args(&self) -> [&std::ffi::OsStr; 2] {
        ["--config".as_ref(), self.path.as_os_str()]
    }

    /// Starts `mcpbox serve --config FILE`.
    pub fn serve(&self) -> Server {
        Server::start(&self.args())
    }
}

/// The error output of `command`, an HTTP server's start that must be refused: a server that
/// starts instead (it logs where it serves) is killed and fails the test at once; one that
/// neither starts nor exits within 20 s fails it too (rather than hanging it).
pub fn refused_start(mut command: Command) -> String {
    let mut child = command
        .env("MCPBOX_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stderr, reader) = server::collect(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let started = stderr.lock().unwrap().contains("serving MCP over");
        if started || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server started instead of refusing to:\n{}", stderr.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    let stderr = stderr.lock().unwrap().clone();
    assert!(!status.success(), "exited successfully: {stderr}");
    stderr
}

/// A loopback port free now, for a server the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
