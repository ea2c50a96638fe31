//! What the operations tests share: the tools they check with (`scripts/setup-operations.sh`),
//! a real Prometheus and the OTLP receiver on loopback ports, stopped when dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// The paths `scripts/setup-operations.sh` prints (`PYTHON`, `PROMTOOL`, `PROMETHEUS`,
/// `BUILDAH`, `MMDEBSTRAP`), set up once per test process.
pub(crate) fn tool(name: &str) -> PathBuf {
    static TOOLS: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    let tools = TOOLS.get_or_init(|| {
        let setup = Command::new(repo_root().join("scripts/setup-operations.sh")).output().unwrap();
        assert!(setup.status.success(), "setup-operations.sh failed: {}", String::from_utf8_lossy(&setup.stderr));
        String::from_utf8(setup.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, path)| (name.to_owned(), PathBuf::from(path)))
            .collect()
    });
    tools.get(name).unwrap_or_else(|| panic!("setup-operations.sh printed no {name}")).clone()
}

/// The address `--metrics 127.0.0.1:0` bound, from mcpbox's log.
pub(crate) fn metrics_url(server: &Server) -> String {
    assert!(server.wait_for_log("metrics at ", WAIT), "no metrics listener:\n{}", server.stderr());
    let log = server.stderr();
    let at = log.find("metrics at ").unwrap() + "metrics at ".len();
    log[at..].split(|c: char| c.is_whitespace() || c == '"').next().unwrap().to_owned()
}

/// A child process killed and reaped when dropped.
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real Prometheus scraping `target` (`HOST:PORT`) every second, its data in a temporary
/// directory; answers PromQL queries.
pub(crate) struct Prometheus {
    _process: Running,
    _dir: tempfile::TempDir,
    api: String,
}

impl Prometheus {
    pub(crate) fn scraping(target: &str) -> Prometheus {
        let dir = temp_dir();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
                 scrape_configs:\n  - job_name: mcpbox\n    static_configs: [{{targets: ['{target}']}}]\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(tool("PROMETHEUS"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Prometheus { _process: Running(child), _dir: dir, api: format!("http://127.0.0.1:{port}/api/v1") }
    }

    /// The answer to `query` once its first sample's value (a string, as Prometheus sends it)
    /// satisfies `wanted`, or what it last answered after 40 s (Prometheus starts, then scrapes
    /// every second).
    pub(crate) async fn wait_for(&self, query: &str, wanted: impl Fn(&str) -> bool) -> Value {
        let end = Instant::now() + Duration::from_secs(40);
        loop {
            let answer = http_client().get(format!("{}/query", self.api)).query(&[("query", query)]).send().await;
            let answer: Value = match answer {
                Ok(response) => response.json().await.unwrap_or_default(),
                Err(_) => Value::Null,
            };
            if answer["data"]["result"][0]["value"][1].as_str().is_some_and(&wanted) || Instant::now() > end {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// The OTLP/HTTP receiver (`tests/clients/otlp_receiver.py`, the official protobuf
/// definitions): every span it decoded, as JSON.
pub(crate) struct Receiver {
    _process: Running,
    pub(crate) endpoint: String,
    spans: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    pub(crate) fn start() -> Receiver {
        let mut child = Command::new(tool("PYTHON"))
            .arg(repo_root().join("tests/clients/otlp_receiver.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let port = first.strip_prefix("listening ").unwrap_or_else(|| panic!("the receiver said {first:?}")).to_owned();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let sink = spans.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push(serde_json::from_str::<Value>(&line).unwrap());
            }
        });
        Receiver { _process: Running(child), endpoint: format!("http://127.0.0.1:{port}"), spans }
    }

    /// The spans received once there are at least `count`, or all after 20 s.
    pub(crate) fn spans(&self, count: usize) -> Vec<Value> {
        self.received(count, false)
    }

    /// The log records received once there are at least `count`, or all after 20 s.
    pub(crate) fn logs(&self, count: usize) -> Vec<Value> {
        self.received(count, true)
    }

    fn received(&self, count: usize, logs: bool) -> Vec<Value> {
        let pick = || -> Vec<Value> {
            let all = self.spans.lock().unwrap();
            all.iter().filter(|item| (item["signal"] == "log") == logs).cloned().collect()
        };
        let end = Instant::now() + Duration::from_secs(20);
        while pick().len() < count && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        pick()
    }
}
