//! The audit's writer: one thread owns the file and the chain's state, so lines are chained in
//! the order they are written whatever the calls' concurrency. A call hands its record over
//! and waits for the answer: written and flushed (and, under `fsync = "line"`, on disk) before
//! its response is sent.
//!
//! The file is opened append-only, mode 0600 (an existing file with a wider mode is narrowed,
//! and the host says so). On start the chain goes on from the file's last line (or the last
//! rotated file's), after a `start` line. When a line cannot be written (a full disk, an I/O
//! error) the call is told, the sink turns unhealthy, and every second the thread tries to
//! open the file again and write an `outage` line saying since when and how many lines were
//! lost; until then, under `on_failure = "closed"`, calls are refused before they run.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::chain;
use super::otlp::OtlpAudit;
use super::settings::{AuditSettings, Fsync, OnFailure};

/// How often the thread wakes without lines: time-based checkpoints, recovery.
const TICK: Duration = Duration::from_secs(1);

/// Lines written together and synced once, at most.
const MAX_BATCH: usize = 256;

/// A line to write, and where its call waits for the answer.
type Waiting = (Map<String, Value>, oneshot::Sender<Result<(), String>>);

enum Job {
    Line(Map<String, Value>, oneshot::Sender<Result<(), String>>),
    Stop(oneshot::Sender<()>),
}

/// The audit sink: a handle on the writer thread.
#[derive(Clone)]
pub(crate) struct AuditSink {
    jobs: Arc<Mutex<mpsc::Sender<Job>>>,
    healthy: Arc<AtomicBool>,
    /// Calls refused while the audit could not be written (told in the `outage` line).
    refused: Arc<AtomicU64>,
    pub(crate) settings: Arc<AuditSettings>,
}

impl AuditSink {
    /// Opens the audit under `settings` for the replica `replica` (`{replica}` in the path),
    /// writing its `start` line; fails if the file cannot be opened or written at all.
    pub(crate) fn open(settings: AuditSettings, replica: &str) -> Result<AuditSink> {
        let path = PathBuf::from(settings.path.to_string_lossy().replace("{replica}", replica));
        let mut writer = Writer::new(path, settings.clone(), replica.to_owned())?;
        writer
            .append(
                json!({"kind": "start", "version": env!("CARGO_PKG_VERSION")}).as_object().cloned().unwrap_or_default(),
            )
            .map_err(|e| anyhow!("cannot write the audit {}: {e}", writer.path.display()))?;
        let healthy = Arc::new(AtomicBool::new(true));
        let refused = Arc::new(AtomicU64::new(0));
        let (jobs, receive) = mpsc::channel();
        let (thread_healthy, thread_refused) = (healthy.clone(), refused.clone());
        std::thread::Builder::new()
            .name("mcpbox-audit".into())
            .spawn(move || writer.run(&receive, &thread_healthy, &thread_refused))
            .context("cannot start the audit's writer")?;
        Ok(AuditSink { jobs: Arc::new(Mutex::new(jobs)), healthy, refused, settings: Arc::new(settings) })
    }

    /// Whether a call may run: the audit can be written, or the operator chose to go on
    /// without it.
    pub(crate) fn admits(&self) -> bool {
        if self.healthy.load(Ordering::Relaxed) || self.settings.on_failure == OnFailure::Open {
            return true;
        }
        self.refused.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Writes `record` as the chain's next line; the error says why it was not written.
    pub(crate) async fn write(&self, record: Map<String, Value>) -> Result<(), String> {
        let (done, written) = oneshot::channel();
        let sent = self.jobs.lock().unwrap_or_else(PoisonError::into_inner).send(Job::Line(record, done));
        if sent.is_err() {
            return Err("the audit's writer has stopped".to_owned());
        }
        let result = written.await.unwrap_or_else(|_| Err("the audit's writer has stopped".to_owned()));
        if let Err(error) = &result {
            let policy = match self.settings.on_failure {
                OnFailure::Closed => "closed",
                OnFailure::Open => "open",
            };
            crate::telemetry::metrics::metrics().audit_failures.with_label_values(&[policy]).inc();
            tracing::error!(policy, "cannot write the audit: {error}");
        }
        result
    }

    /// Writes a last checkpoint (with a key) and stops the writer.
    pub(crate) async fn close(&self) {
        let (done, stopped) = oneshot::channel();
        if self.jobs.lock().unwrap_or_else(PoisonError::into_inner).send(Job::Stop(done)).is_ok() {
            let _ = stopped.await;
        }
    }
}

/// The thread's state: the file and the chain.
struct Writer {
    path: PathBuf,
    settings: AuditSettings,
    replica: String,
    file: Option<File>,
    size: u64,
    seq: u64,
    prev: String,
    since_checkpoint: u64,
    last_checkpoint: Instant,
    /// Lines lost since the sink turned unhealthy, and since when.
    lost: u64,
    outage_since: Option<String>,
    /// Where each written line is sent too.
    otlp: Option<OtlpAudit>,
}

impl Writer {
    fn new(path: PathBuf, settings: AuditSettings, replica: String) -> Result<Writer> {
        let (seq, prev) = chain::last_link(&path)?;
        let mut writer = Writer {
            path,
            settings,
            replica,
            file: None,
            size: 0,
            seq,
            prev,
            since_checkpoint: 0,
            last_checkpoint: Instant::now(),
            lost: 0,
            outage_since: None,
            otlp: None,
        };
        if let Some(endpoint) = &writer.settings.otlp_endpoint {
            writer.otlp = Some(OtlpAudit::new(endpoint, &writer.replica)?);
        }
        writer.reopen()?;
        Ok(writer)
    }

    fn run(mut self, jobs: &mpsc::Receiver<Job>, healthy: &AtomicBool, refused: &AtomicU64) {
        loop {
            match jobs.recv_timeout(TICK) {
                Ok(Job::Line(record, done)) => {
                    // Group commit: the lines already waiting are written with this one and
                    // synced once, each call answered after the sync that covers its line.
                    let mut batch = vec![(record, done)];
                    let mut stop = None;
                    while batch.len() < MAX_BATCH {
                        match jobs.try_recv() {
                            Ok(Job::Line(record, done)) => batch.push((record, done)),
                            Ok(Job::Stop(done)) => {
                                stop = Some(done);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    self.commit(batch, healthy, refused);
                    if let Some(done) = stop {
                        self.stop(done);
                        return;
                    }
                }
                Ok(Job::Stop(done)) => {
                    self.stop(done);
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !healthy.load(Ordering::Relaxed) {
                        self.recover(healthy, refused);
                    } else if self.settings.key.is_some()
                        && self.since_checkpoint > 0
                        && self.last_checkpoint.elapsed() >= self.settings.checkpoint_every
                        && self.checkpoint().is_err()
                    {
                        self.fail(healthy);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Writes `batch` and syncs it once (under `fsync = "line"`), then answers each call.
    fn commit(&mut self, batch: Vec<Waiting>, healthy: &AtomicBool, refused: &AtomicU64) {
        if !healthy.load(Ordering::Relaxed) {
            self.recover(healthy, refused);
        }
        let mut answers = Vec::with_capacity(batch.len());
        for (record, done) in batch {
            let result = if healthy.load(Ordering::Relaxed) {
                self.append(record)
            } else {
                Err(anyhow!("the audit is unavailable"))
            };
            if let Err(error) = &result {
                self.fail(healthy);
                tracing::debug!("audit line not written: {error:#}");
            }
            answers.push((done, result.map_err(|e| format!("{e:#}"))));
        }
        let written = answers.iter().filter(|(_, result)| result.is_ok()).count();
        if written > 0
            && self.settings.fsync == Fsync::Line
            && let Err(error) = self.sync()
        {
            // Written but not known to be on the disk: not acknowledged.
            self.lost += written as u64 - 1;
            self.fail(healthy);
            for (_, result) in &mut answers {
                if result.is_ok() {
                    *result = Err(format!("{error:#}"));
                }
            }
        }
        for (done, result) in answers {
            let _ = done.send(result);
        }
    }

    /// The file's data on the disk itself.
    fn sync(&self) -> Result<()> {
        match &self.file {
            Some(file) => file.sync_data().with_context(|| format!("cannot sync {}", self.path.display())),
            None => Err(anyhow!("the audit file is not open")),
        }
    }

    /// A last checkpoint (with a key), the OTLP batch sent, and the caller told.
    fn stop(&mut self, done: oneshot::Sender<()>) {
        if self.settings.key.is_some() && self.since_checkpoint > 0 {
            let _ = self.checkpoint();
        }
        if let Some(otlp) = &self.otlp {
            otlp.shutdown();
        }
        let _ = done.send(());
    }

    fn fail(&mut self, healthy: &AtomicBool) {
        if healthy.swap(false, Ordering::Relaxed) {
            self.outage_since = Some(now());
        }
        self.lost += 1;
        self.file = None;
    }

    /// Tries to open the file again and write the `outage` line.
    fn recover(&mut self, healthy: &AtomicBool, refused: &AtomicU64) {
        if self.reopen().is_err() {
            return;
        }
        // Lines of calls that ran but could not be written, and calls refused meanwhile.
        let (lost, refused_calls) = (self.lost, refused.load(Ordering::Relaxed));
        let outage = json!({"kind": "outage", "since": self.outage_since, "lost": lost, "refused": refused_calls});
        if self.append(outage.as_object().cloned().unwrap_or_default()).is_ok()
            && (self.settings.fsync == Fsync::Checkpoint || self.sync().is_ok())
        {
            refused.fetch_sub(refused_calls, Ordering::Relaxed);
            self.lost = 0;
            self.outage_since = None;
            healthy.store(true, Ordering::Relaxed);
            // After the flag: whoever reads this line finds calls admitted.
            tracing::warn!(lost, refused = refused_calls, "the audit can be written again");
        } else {
            self.file = None;
        }
    }

    /// Opens the file (append, 0600), narrowing a wider mode.
    fn reopen(&mut self) -> Result<()> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)
            .with_context(|| format!("cannot open the audit {}", self.path.display()))?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(path = %self.path.display(), "the audit file was readable by others: its mode is now 0600");
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        self.size = meta.len();
        self.file = Some(file);
        Ok(())
    }

    /// Writes `record` as the next line: rotated first if it would pass the size, then
    /// checkpointed if the count is reached.
    fn append(&mut self, mut record: Map<String, Value>) -> Result<()> {
        let mut line = self.line(&mut record);
        if self.size > 0 && self.size + line.len() as u64 + 1 > self.settings.rotate_bytes && self.is_regular() {
            self.rotate()?;
            // The rotation's checkpoint took this place in the chain: the line goes after it.
            line = self.line(&mut record);
        }
        self.write_line(&line, &record)?;
        self.since_checkpoint += 1;
        if self.settings.key.is_some() && self.since_checkpoint >= self.settings.checkpoint_lines {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// `record` with its place in the chain, as the line's bytes.
    fn line(&self, record: &mut Map<String, Value>) -> Vec<u8> {
        record.insert("seq".into(), json!(self.seq));
        record.insert("time".into(), json!(now()));
        record.insert("replica".into(), json!(self.replica));
        record.insert("prev".into(), json!(self.prev));
        serde_json::to_vec(record).unwrap_or_default()
    }

    fn write_line(&mut self, line: &[u8], record: &Map<String, Value>) -> Result<()> {
        let file = self.file.as_mut().ok_or_else(|| anyhow!("the audit file is not open"))?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        if let Err(error) = file.write_all(&bytes) {
            // A line cut by a full disk would read as an altered one: cut back to the last
            // whole line (the file only grows by whole lines).
            let _ = file.set_len(self.size);
            return Err(error).with_context(|| format!("cannot write {}", self.path.display()));
        }
        self.size += bytes.len() as u64;
        self.seq += 1;
        let hash = chain::hash(line);
        if let Some(otlp) = &self.otlp {
            otlp.send(line, record, &hash);
        }
        if !crate::switched_off!("audit.chain") {
            self.prev = hash;
        }
        Ok(())
    }

    /// A signed checkpoint of the chain so far.
    fn checkpoint(&mut self) -> Result<()> {
        let Some(key) = self.settings.key.clone() else { return Ok(()) };
        let signature = key.sign_bytes(chain::checkpoint_message(self.seq, &self.prev).as_bytes())?;
        let mut record = Map::new();
        record.insert("kind".into(), json!("checkpoint"));
        record.insert("signature".into(), json!(signature));
        let line = self.line(&mut record);
        self.write_line(&line, &record)?;
        if let Some(file) = &self.file {
            file.sync_data().with_context(|| format!("cannot sync {}", self.path.display()))?;
        }
        self.since_checkpoint = 0;
        self.last_checkpoint = Instant::now();
        Ok(())
    }

    fn is_regular(&self) -> bool {
        self.file.as_ref().and_then(|f| f.metadata().ok()).is_some_and(|m| m.is_file())
    }

    /// Renames the file to the next `PATH.N` (signed first, with a key) and starts a new one.
    fn rotate(&mut self) -> Result<()> {
        if self.settings.key.is_some() && self.since_checkpoint > 0 {
            self.checkpoint()?;
        }
        if let Some(file) = &self.file {
            file.sync_data()?;
        }
        let next = (1..).map(|n| chain::rotated(&self.path, n)).find(|p| !p.exists()).unwrap_or_default();
        std::fs::rename(&self.path, &next).with_context(|| format!("cannot rotate {}", self.path.display()))?;
        self.reopen()
    }
}

/// The time now, RFC 3339 in UTC with milliseconds.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
