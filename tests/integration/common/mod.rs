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
use own::OwnDirs;

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

/// Builds every guest once per test process (cargo makes it a no-op when nothing changed).
pub fn guests() -> &'static Path {
    clock::started();
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = repo_root();
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

/// The python of a virtualenv with the official MCP Python SDK (scripts/setup-python-client.sh).
pub fn python_sdk() -> String {
    let setup = Command::new("bash")
        .arg(repo_root().join("scripts/setup-python-client.sh"))
        .output()
        .expect("cannot run scripts/setup-python-client.sh");
    assert!(setup.status.success(), "setting up the Python SDK failed: {}", String::from_utf8_lossy(&setup.stderr));
    String::from_utf8(setup.stdout).unwrap().trim().to_owned()
}

/// Node 22 and the directory of the official TypeScript SDK (`scripts/setup-ts-client.sh`).
pub fn ts_sdk() -> (String, String) {
    let setup = Command::new("bash")
        .arg(repo_root().join("scripts/setup-ts-client.sh"))
        .output()
        .expect("cannot run scripts/setup-ts-client.sh");
    assert!(setup.status.success(), "setting up the TypeScript SDK failed: {}", String::from_utf8_lossy(&setup.stderr));
    let printed = String::from_utf8(setup.stdout).unwrap();
    let (node, dir) = printed.trim().split_once(' ').expect("NODE SDK_DIR");
    (node.to_owned(), dir.to_owned())
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

/// A running `mcpbox` and a JSON-RPC client for it.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// Messages read while waiting for something else.
    pub backlog: Vec<Value>,
    /// Its HOME, XDG directories and state, removed with it.
    _own: OwnDirs,
}

impl Server {
    /// Starts `mcpbox serve` with these arguments.
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Server {
        Self::start_command("serve", args)
    }

    pub fn start_command<S: AsRef<std::ffi::OsStr>>(command: &str, args: &[S]) -> Server {
        Server::spawn(command, args, &[])
    }

    /// `mcpbox serve ARGS` with extra environment variables for mcpbox itself.
    pub fn start_with_env<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> Server {
        Server::spawn("serve", args, env)
    }

    /// `mcpbox serve ARGS` in network and mount namespaces of its own (`unshare`): no network
    /// but a loopback that is down, so nothing leaves the machine, and `hosts` mounted over
    /// `/etc/hosts`, so that names resolve (through the system resolver, as always) to the
    /// addresses a test picks.
    pub fn start_isolated<S: AsRef<std::ffi::OsStr>>(hosts: &Path, args: &[S]) -> Server {
        let mut wrapper = Command::new("unshare");
        wrapper
            .args(["--mount", "--net", "--map-root-user", "sh", "-c", "mount --bind \"$0\" /etc/hosts && exec \"$@\""])
            .arg(hosts)
            .arg(env!("CARGO_BIN_EXE_mcpbox"));
        Server::spawn_command(wrapper, "serve", args, &[])
    }

    /// `PROGRAM serve ARGS`: another copy of mcpbox.
    pub fn start_program<S: AsRef<std::ffi::OsStr>>(program: &Path, args: &[S]) -> Server {
        Server::spawn_command(Command::new(program), "serve", args, &[])
    }

    fn spawn<S: AsRef<std::ffi::OsStr>>(command: &str, args: &[S], env: &[(&str, &str)]) -> Server {
        Server::spawn_command(Command::new(env!("CARGO_BIN_EXE_mcpbox")), command, args, env)
    }

    fn spawn_command<S: AsRef<std::ffi::OsStr>>(
        mut program: Command,
        command: &str,
        args: &[S],
        env: &[(&str, &str)],
    ) -> Server {
        guests();
        if let Some(shared) = own::shared_in(args, env) {
            own::check_sharing(&shared);
        }
        let own = OwnDirs::for_server();
        own.give(&mut program);
        let mut child = program
            .arg(command)
            .args(args)
            .env("MCPBOX_CACHE_DIR", cache_dir())
            .env("MCPBOX_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start mcpbox");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let (stderr, _) = collect(child.stderr.take().unwrap());
        let stdin = child.stdin.take();
        Server { child, stdin, lines, stderr, next_id: 0, backlog: Vec::new(), _own: own }
    }

    /// Starts `mcpbox serve --http 127.0.0.1:0` with these arguments and returns it with the
    /// URL of its MCP endpoint.
    pub fn start_http<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Server, String) {
        Server::start_http_with_env(args, &[])
    }

    /// [`Server::start_http`] with extra environment variables for mcpbox itself.
    pub fn start_http_with_env<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> (Server, String) {
        Server::start_http_at(args, env, "127.0.0.1:0")
    }

    /// [`Server::start_http_with_env`] listening at `address`.
    pub fn start_http_at<S: AsRef<std::ffi::OsStr>>(
        args: &[S],
        env: &[(&str, &str)],
        address: &str,
    ) -> (Server, String) {
        let mut all: Vec<std::ffi::OsString> = args.iter().map(|a| a.as_ref().to_owned()).collect();
        all.extend(["--http".into(), address.into()]);
        let server = Server::start_with_env(&all, env);
        let end = Instant::now() + WAIT;
        loop {
            let log = server.stderr();
            if let Some(at) = log.find("serving MCP over ") {
                // Up to a space, or the quote that ends a JSON log line's message.
                let url = log[at + "serving MCP over ".len()..]
                    .split(|c: char| c.is_whitespace() || c == '"')
                    .next()
                    .unwrap()
                    .to_owned();
                return (server, url);
            }
            assert!(Instant::now() < end, "the HTTP server did not start:\n{log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until the server's log contains `text`.
    pub fn wait_for_log(&self, text: &str, within: Duration) -> bool {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if self.stderr().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line on stdout, which must be JSON.
    pub fn read(&mut self, within: Duration) -> Option<Value> {
        match self.lines.recv_timeout(within) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("stdout carried a non-JSON line ({e}): {line:.200}\nstderr:\n{}", self.stderr())
            })),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next message for which `pick` holds; others go to the backlog.
    pub fn read_until(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        self.read_until_within(pick, WAIT)
    }

    /// [`Server::read_until`] waiting at most `within`: for a message that a limit the test set
    /// must bring sooner (a deadline, a refusal), so that a protection switched off fails the
    /// test quickly instead of after [`WAIT`].
    pub fn read_until_within(&mut self, pick: impl Fn(&Value) -> bool, within: Duration) -> Value {
        if let Some(i) = self.backlog.iter().position(&pick) {
            return self.backlog.remove(i);
        }
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let Some(message) = self.read(left) else {
                panic!(
                    "no matching message within {within:?}; backlog: {:?}\nstderr:\n{}",
                    self.backlog,
                    self.stderr()
                );
            };
            if pick(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    pub fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request and returns the whole response message (result or error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.fresh_id();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.read_until(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
    }

    /// A request whose result is expected.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}\nstderr:\n{}", self.stderr());
        response["result"].clone()
    }

    /// The legacy handshake: `initialize` then `notifications/initialized`.
    pub fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let result = self.result(
            "initialize",
            json!({ "protocolVersion": version, "capabilities": capabilities, "clientInfo": { "name": "mcpbox-tests", "version": "1" } }),
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        result
    }

    /// Takes every notification with this method out of the backlog.
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.backlog).into_iter().partition(|m| m["method"] == method);
        self.backlog = kept;
        taken
    }

    /// Waits for the process to exit and returns its exit status.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let (stderr, reader) = collect(child.stderr.take().unwrap());
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

/// Reads `pipe` into a string, as it comes, on a thread of its own (joined at the pipe's end).
/// `MCPBOX_TEST_STDERR_LAG_MS` makes the reader wait that long before each read, as a busy
/// machine's scheduler may: a test that takes "what the log holds now" for "what the server has
/// written so far" fails under it (it found the budget test's miscount).
fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<String>>, std::thread::JoinHandle<()>) {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    let lag = std::env::var("MCPBOX_TEST_STDERR_LAG_MS").ok().and_then(|ms| ms.parse().ok()).map(Duration::from_millis);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = {
            if let Some(lag) = lag {
                std::thread::sleep(lag);
            }
            pipe.read(&mut buf)
        } {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    (text, reader)
}

/// A loopback port free now, for a server the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
