//! [`Server`]: a running `mcpbox` and a JSON-RPC client for it over its stdio, its stderr
//! collected as it comes.

use super::*;

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

    /// Waits until the server's log, whole, satisfies `holds` (a count of lines, two fields of
    /// one line): what a single needle cannot say.
    pub fn wait_for_log_where(&self, within: Duration, holds: impl Fn(&str) -> bool) -> bool {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if holds(&self.stderr()) {
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

/// Reads `pipe` into a string, as it comes, on a thread of its own (joined at the pipe's end).
/// `MCPBOX_TEST_STDERR_LAG_MS` makes the reader wait that long before each read, as a busy
/// machine's scheduler may: a test that takes "what the log holds now" for "what the server has
/// written so far" fails under it (it found the budget test's miscount).
pub(super) fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<String>>, std::thread::JoinHandle<()>) {
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
