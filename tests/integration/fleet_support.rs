//! What the fleet tests (`fleet.rs`, `fleet_kill.rs`) share: a fleet started and stopped by
//! `scripts/fleet.sh`, stateless 2026-07-28 requests through it, tasks polled, a
//! `subscriptions/listen` stream, legacy sessions through a load balancer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

use crate::common::*;

pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A running fleet; stopped when dropped.
pub(crate) struct Fleet {
    dir: tempfile::TempDir,
    env: HashMap<String, String>,
    /// The files the `fs` plugin may write (shared by every replica).
    pub(crate) files: tempfile::TempDir,
    _config: ConfigFile,
    /// The replicas' state directories (one fleet: shared by its replicas, as on one machine).
    _own: own::OwnDirs,
}

impl Fleet {
    /// Three replicas serving the conformance plugin (with tasks), chaos, and fs over a
    /// writable directory.
    pub(crate) fn up() -> Fleet {
        let files = temp_dir();
        let dir = temp_dir();
        // Each replica writes a chain of its own: `{replica}` in the path, its name in each line.
        let config = ConfigFile::new(&format!(
            "plugins = [{:?}, {:?}, {:?}]\n\n[plugin.conformance]\nprefix = \"\"\n\n\
             [plugin.conformance.tasks.slow_compute]\nafter_ms = 300\n\
             [plugin.conformance.tasks.multi_input]\nafter_ms = 0\n\
             [audit]\npath = \"{}/audit-{{replica}}.jsonl\"\n",
            fixture("conformance"),
            fixture("chaos"),
            fixture("fs"),
            dir.path().display(),
        ));
        let mut up = Command::new("bash");
        up.arg(repo_root().join("scripts/fleet.sh"))
            .arg("up")
            .arg(dir.path())
            .args(["3", "--", "--root-rw"])
            .arg(files.path())
            .args(config.args())
            .env("MCPBOX", env!("CARGO_BIN_EXE_mcpbox"))
            .stdin(std::process::Stdio::null());
        let own = owned_server(&mut up);
        let output = up.output().expect("cannot run scripts/fleet.sh");
        let fleet = Fleet { env: read_env(dir.path()), dir, files, _config: config, _own: own };
        assert!(
            output.status.success(),
            "the fleet did not start: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            fleet.logs()
        );
        fleet
    }

    /// The replicas' audit files, with the replica each names in its file name.
    pub(crate) fn audits(&self) -> Vec<(String, PathBuf)> {
        let mut audits: Vec<(String, PathBuf)> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(|entry| {
                let name = entry.unwrap().file_name().into_string().unwrap();
                let replica = name.strip_prefix("audit-")?.strip_suffix(".jsonl")?.to_owned();
                Some((replica, self.dir.path().join(&name)))
            })
            .collect();
        audits.sort();
        audits
    }

    /// The load balancer's MCP endpoint.
    pub(crate) fn lb(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.env["LB_PORT"])
    }

    /// nginx's MCP endpoint (routing sessions by their id).
    pub(crate) fn nginx(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.env["NGINX_PORT"])
    }

    /// The replica an `X-Served-By` names: HAProxy gives its name, nginx its address.
    pub(crate) fn name_of(&self, served_by: &str) -> String {
        (1..=3)
            .find(|i| served_by == format!("127.0.0.1:{}", self.env[&format!("REPLICA_{i}_PORT")]))
            .map_or_else(|| served_by.to_owned(), |i| format!("r{i}"))
    }

    /// Replica `i`'s own endpoint (1-based), bypassing the load balancer.
    pub(crate) fn replica(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.env[&format!("REPLICA_{i}_PORT")])
    }

    /// Replica `i`'s `/readyz` answer.
    pub(crate) async fn readyz(&self, i: usize) -> (u16, Value) {
        let url = format!("http://127.0.0.1:{}/readyz", self.env[&format!("REPLICA_{i}_PORT")]);
        let response = http_client().get(url).send().await.unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// The store's URL and the replicas' key file, for one more replica.
    pub(crate) fn store_args(&self) -> Vec<String> {
        vec![
            "--store".to_owned(),
            format!("redis://127.0.0.1:{}/", self.env["REDIS_PORT"]),
            "--request-state-keys".to_owned(),
            self.dir.path().join("state-keys").display().to_string(),
        ]
    }

    pub(crate) fn kill(&self, i: usize) {
        let status = Command::new("bash")
            .arg(repo_root().join("scripts/fleet.sh"))
            .args(["kill".as_ref(), self.dir.path().as_os_str(), i.to_string().as_ref()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Stops the store (its process), the replicas staying up.
    pub(crate) fn stop_store(&self) {
        let status = Command::new("kill").arg(&self.env["REDIS_PID"]).status().unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(300));
    }

    /// `redis-cli ARGS` against the fleet's store, its output.
    pub(crate) fn redis(&self, args: &[&str]) -> String {
        let root = repo_root().join(".tools/redis/root/usr");
        let output = Command::new(root.join("bin/redis-cli"))
            .env("LD_LIBRARY_PATH", root.join("lib/x86_64-linux-gnu"))
            .args(["-p", &self.env["REDIS_PORT"]])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn logs(&self) -> String {
        let mut logs = String::new();
        for name in ["r1.log", "r2.log", "r3.log", "haproxy.log"] {
            let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            logs.push_str(&format!("--- {name}\n{}\n", tail.into_iter().rev().collect::<Vec<_>>().join("\n")));
        }
        logs
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("scripts/fleet.sh"))
            .args(["down".as_ref(), self.dir.path().as_os_str()])
            .status();
    }
}

fn read_env(dir: &Path) -> HashMap<String, String> {
    std::fs::read_to_string(dir.join("fleet.env"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// `_meta` of a 2026-07-28 client that takes tasks, answers elicitation and sampling.
pub(crate) fn meta() -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({ "elicitation": {}, "sampling": {}, "extensions": { TASKS: {} } });
    meta
}

/// A stateless 2026-07-28 request to `url`: the final message and the replica that answered
/// (`X-Served-By`, set by HAProxy); `name` is the `Mcp-Name` header (a tool's, a task's id). Errors of the connection or the load balancer come back
/// as `Err` (what a client retries).
pub(crate) async fn request(
    url: &str,
    method: &str,
    name: Option<&str>,
    mut params: Value,
) -> Result<(Value, String), String> {
    params["_meta"] = meta();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let mut request = http_client()
        .post(url)
        .timeout(Duration::from_secs(30))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let response = request.body(body.to_string()).send().await.map_err(|e| format!("connection: {e}"))?;
    let status = response.status();
    let served_by = response.headers().get("x-served-by").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    if status.is_server_error() {
        return Err(format!("{status} from the load balancer"));
    }
    let text = response.text().await.map_err(|e| format!("body: {e}"))?;
    let last = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| !data.is_empty())
        .map_or_else(|| serde_json::from_str(&text), serde_json::from_str)
        .map_err(|e| format!("{status}: {e}: {text}"))?;
    Ok((last, served_by))
}

/// `tools/call` of `name`; the result.
pub(crate) async fn call(url: &str, name: &str, arguments: Value) -> Value {
    let (message, _) =
        request(url, "tools/call", Some(name), json!({ "name": name, "arguments": arguments })).await.unwrap();
    assert!(message.get("error").is_none(), "{message}");
    message["result"].clone()
}

/// `tasks/get` of `id` on `url`.
pub(crate) async fn task(url: &str, id: &str) -> Value {
    let (message, _) = request(url, "tasks/get", Some(id), json!({ "taskId": id })).await.unwrap();
    message["result"].clone()
}

/// Polls task `id` on `url` until `done` holds (at most 20 s).
pub(crate) async fn wait_task(url: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    wait_task_until(url, id, Instant::now() + Duration::from_secs(20), done).await
}

/// Polls task `id` on `url` until `done` holds or `end` passes; the task as it then is.
pub(crate) async fn wait_task_until(url: &str, id: &str, end: Instant, done: impl Fn(&Value) -> bool) -> Value {
    loop {
        let task = task(url, id).await;
        if done(&task) || Instant::now() > end {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A `subscriptions/listen` stream on `url` for what `filter` names; returns once
/// acknowledged, with the stream's remaining events.
pub(crate) async fn listen(url: &str, filter: Value) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(), "notifications": filter } });
    let response = http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let (send, mut receive) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut bytes = response.bytes_stream();
        let mut buffer = String::new();
        while let Some(Ok(chunk)) = bytes.next().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find('\n') {
                let line = buffer[..end].trim().to_owned();
                buffer.drain(..=end);
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(message) = serde_json::from_str::<Value>(data.trim())
                    && send.send(message).is_err()
                {
                    return;
                }
            }
        }
    });
    let acknowledged = tokio::time::timeout(Duration::from_secs(10), receive.recv()).await.unwrap().unwrap();
    assert_eq!(acknowledged["method"], "notifications/subscriptions/acknowledged", "{acknowledged}");
    receive
}

/// Writes `file` through `url`'s fs plugin (which announces the resource as updated); its URI.
pub(crate) async fn write(fleet: &Fleet, url: &str, file: &str, content: &str) -> String {
    let name = fleet.files.path().file_name().unwrap().to_str().unwrap().to_owned();
    let result =
        call(url, "fs.write_file", json!({ "path": format!("/roots/{name}/{file}"), "content": content })).await;
    assert_eq!(result["isError"], false, "{result}");
    format!("file:///roots/{name}/{file}")
}

/// Opens a legacy session through `balancer`: its id and the replica (by name) that holds it.
pub(crate) async fn open_session(balancer: &str) -> (String, String) {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "fleet", "version": "1" } } });
    let response = crate::http::post(balancer, &init, &[]).await;
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let home = session.split('.').next().unwrap().to_owned();
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    crate::http::post(balancer, &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), &headers).await;
    (session, home)
}

/// A `tools/call` in `session` through `balancer`: the status, and its `X-Served-By`.
pub(crate) async fn session_call(balancer: &str, session: &str, n: u64) -> (u16, String) {
    let headers = [("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")];
    let body = json!({ "jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": { "name": "greet", "arguments": { "name": "s" } } });
    let response = crate::http::post(balancer, &body, &headers).await;
    let status = response.status().as_u16();
    let by = response.headers().get("x-served-by").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    if status == 200 {
        let answer = crate::http::messages(response).await.pop().unwrap();
        assert_eq!(text(&answer["result"]), "Hello, s!");
    }
    (status, by)
}
