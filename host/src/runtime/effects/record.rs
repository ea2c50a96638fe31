//! What one call did beyond its sandbox, as the doors of this room saw it: the files it read,
//! wrote, made and removed (with bytes), the HTTP requests it sent (method, host, path without
//! its query, status, bytes), the questions it put to the client, and what was refused, with
//! the reason. The protocol layer hands a call an [`EffectLog`] when someone keeps a record (the
//! audit, `--audit`) and writes it out after the call; every door records into it as it goes.
//!
//! A hostile guest chooses what it touches, so the record is bounded like everything else it
//! emits: at most [`MAX_ENTRIES`] paths and as many requests and questions per call (the rest
//! counted in `omitted`, the byte totals always complete), each path or URL cut at
//! [`MAX_TEXT`] characters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

/// Paths, requests or questions recorded per call; more are counted, not listed.
pub const MAX_ENTRIES: usize = 256;
/// Characters of a path, host or URL path kept in the record.
pub const MAX_TEXT: usize = 512;

/// One call's effects, shared by the doors that record them (the filesystem, its streams, the
/// network, the host imports that ask the client).
#[derive(Debug, Default)]
pub struct EffectLog {
    entries: Mutex<Entries>,
    /// What the call was granted: its directories and the hosts it may reach.
    granted: Mutex<(Vec<GrantEffect>, Vec<String>)>,
}

/// A directory in force for the call.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GrantEffect {
    pub name: String,
    /// Where the guest saw it.
    pub path: String,
    /// Where it is on the host.
    pub host_path: String,
    pub writable: bool,
}

#[derive(Debug, Default)]
struct Entries {
    files: Vec<FileEffect>,
    by_path: HashMap<String, usize>,
    http: Vec<HttpEntry>,
    questions: Vec<QuestionEffect>,
    calls: Vec<ToolCallEffect>,
    omitted: Omitted,
    totals: Totals,
}

/// What a call did to one path, everything it did there folded into one entry.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct FileEffect {
    /// The path as the guest sees it (`/roots/data/a.txt`).
    pub path: String,
    /// Bytes read; present once the file was opened for reading or read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<u64>,
    /// Bytes written; present once the file was opened for writing or written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<u64>,
    /// The call made it (a file, a directory or a link).
    #[serde(skip_serializing_if = "is_false")]
    pub created: bool,
    /// The call removed it.
    #[serde(skip_serializing_if = "is_false")]
    pub removed: bool,
    /// The call renamed it to this path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// The size the call set (`set-size`, or opening with truncation: 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_set: Option<u64>,
    /// The call changed its times.
    #[serde(skip_serializing_if = "is_false")]
    pub times_set: bool,
    /// The call listed it (a directory).
    #[serde(skip_serializing_if = "is_false")]
    pub listed: bool,
    /// What was refused there, and why (a write past a budget, a write to a read-only grant).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// One outgoing HTTP request; its byte counts are kept current by the bodies as they flow.
#[derive(Debug)]
struct HttpEntry {
    method: String,
    host: String,
    path: String,
    status: Option<u16>,
    refused: Option<String>,
    counts: Arc<HttpCounts>,
}

/// The bytes of one request's bodies, counted as they pass.
#[derive(Debug, Default)]
pub struct HttpCounts {
    /// Request body bytes sent.
    pub sent: AtomicU64,
    /// Response body bytes the guest received.
    pub received: AtomicU64,
}

/// A request as it appears in the record.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct HttpEffect {
    pub method: String,
    pub host: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    pub sent: u64,
    pub received: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A question put to the client for the call: what kind, and how it was answered.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QuestionEffect {
    /// `elicitation`, `sampling`, `roots` or `approval`.
    pub kind: String,
    /// `answered`, `declined`, `cancelled`, `refused: ...`, or `pending` (a 2026-07-28 round
    /// that returned the question to the client).
    pub outcome: String,
}

/// A call of another served tool (`host.call-tool`): which, and how it ended.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ToolCallEffect {
    /// Its served name.
    pub tool: String,
    /// `ok`, `error`, `refused: ...` or `pending: ...`.
    pub outcome: String,
}

/// Entries past [`MAX_ENTRIES`], counted.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Omitted {
    #[serde(skip_serializing_if = "is_zero")]
    pub files: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub http: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub questions: u64,
}

/// Every byte, listed or not.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    pub bytes_read: u64,
    pub bytes_written: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// A call's effects as written in the record.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Effects {
    pub files: Vec<FileEffect>,
    pub http: Vec<HttpEffect>,
    pub questions: Vec<QuestionEffect>,
    /// Other served tools the call called, in order (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCallEffect>,
    pub totals: Totals,
    #[serde(skip_serializing_if = "Omitted::is_empty")]
    pub omitted: Omitted,
}

impl Omitted {
    fn is_empty(&self) -> bool {
        self.files == 0 && self.http == 0 && self.questions == 0
    }
}

/// `text` cut to [`MAX_TEXT`] characters (a guest chooses its paths).
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl EffectLog {
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records what the call did at `path` (the entry made on first touch).
    pub fn file(&self, path: &str, change: impl FnOnce(&mut FileEffect)) {
        // Keyed by the cut path too: a guest's megabyte-long paths are not kept whole.
        let path = cut(path);
        let mut entries = self.entries();
        let entries = &mut *entries;
        let at = match entries.by_path.get(&path) {
            Some(&at) => at,
            None if entries.files.len() >= MAX_ENTRIES => {
                entries.omitted.files += 1;
                return;
            }
            None => {
                entries.files.push(FileEffect { path: path.clone(), ..FileEffect::default() });
                entries.by_path.insert(path, entries.files.len() - 1);
                entries.files.len() - 1
            }
        };
        change(&mut entries.files[at]);
    }

    /// Counts `bytes` read at `path`.
    pub fn read(&self, path: &str, bytes: u64) {
        self.entries().totals.bytes_read += bytes;
        self.file(path, |file| *file.read.get_or_insert(0) += bytes);
    }

    /// Counts `bytes` written at `path`.
    pub fn wrote(&self, path: &str, bytes: u64) {
        self.entries().totals.bytes_written += bytes;
        self.file(path, |file| *file.written.get_or_insert(0) += bytes);
    }

    /// A request the guest sent (or tried to: `refused` says why it did not go); the returned
    /// counts are for its bodies.
    pub fn http(&self, method: &str, host: &str, path: &str, refused: Option<String>) -> Arc<HttpCounts> {
        let counts = Arc::new(HttpCounts::default());
        let mut entries = self.entries();
        if entries.http.len() >= MAX_ENTRIES {
            entries.omitted.http += 1;
            return counts;
        }
        entries.http.push(HttpEntry {
            method: cut(method),
            host: cut(host),
            path: cut(path),
            status: None,
            refused,
            counts: counts.clone(),
        });
        counts
    }

    /// The status of the request whose counts are `counts`.
    pub fn http_status(&self, counts: &Arc<HttpCounts>, status: u16) {
        if let Some(entry) = self.entries().http.iter_mut().rev().find(|e| Arc::ptr_eq(&e.counts, counts)) {
            entry.status = Some(status);
        }
    }

    /// A question put to the client for this call.
    pub fn question(&self, kind: &str, outcome: String) {
        let mut entries = self.entries();
        if entries.questions.len() >= MAX_ENTRIES {
            entries.omitted.questions += 1;
            return;
        }
        entries.questions.push(QuestionEffect { kind: kind.to_owned(), outcome: cut(&outcome) });
    }

    /// A call of another served tool this call made (`host.call-tool`), and how it ended; the
    /// callee's own effects are recorded beside this call's.
    pub fn tool_call(&self, tool: &str, outcome: String) {
        let mut entries = self.entries();
        if entries.calls.len() >= MAX_ENTRIES {
            entries.omitted.questions += 1;
            return;
        }
        entries.calls.push(ToolCallEffect { tool: cut(tool), outcome: cut(&outcome) });
    }

    /// What the call was granted: `grants` and the network allow-list `network`.
    pub fn granted(&self, grants: Vec<GrantEffect>, network: Vec<String>) {
        *self.granted.lock().unwrap_or_else(PoisonError::into_inner) = (grants, network);
    }

    /// The grants, the allow-list and the effects so far.
    pub fn parts(&self) -> (Vec<GrantEffect>, Vec<String>, Effects) {
        let (grants, network) = self.granted.lock().unwrap_or_else(PoisonError::into_inner).clone();
        (grants, network, self.effects())
    }

    /// Whether nothing was recorded: no file, request or question.
    pub fn is_empty(&self) -> bool {
        let entries = self.entries();
        entries.files.is_empty()
            && entries.http.is_empty()
            && entries.questions.is_empty()
            && entries.calls.is_empty()
            && entries.omitted == Omitted::default()
    }

    /// Everything so far, as the record writes it.
    pub fn effects(&self) -> Effects {
        let entries = self.entries();
        let http = entries
            .http
            .iter()
            .map(|entry| HttpEffect {
                method: entry.method.clone(),
                host: entry.host.clone(),
                path: entry.path.clone(),
                status: entry.status,
                sent: entry.counts.sent.load(Ordering::Relaxed),
                received: entry.counts.received.load(Ordering::Relaxed),
                refused: entry.refused.clone(),
            })
            .collect();
        Effects {
            files: entries.files.clone(),
            http,
            questions: entries.questions.clone(),
            calls: entries.calls.clone(),
            totals: entries.totals.clone(),
            omitted: entries.omitted.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_path_and_the_rest_counted() {
        let log = EffectLog::default();
        log.read("/roots/a", 3);
        log.read("/roots/a", 4);
        log.wrote("/roots/b", 5);
        log.file("/roots/b", |f| f.created = true);
        for n in 0..MAX_ENTRIES {
            log.read(&format!("/roots/many/{n}"), 1);
        }
        let effects = log.effects();
        assert_eq!(effects.files.len(), MAX_ENTRIES);
        assert_eq!(effects.files[0], FileEffect { path: "/roots/a".into(), read: Some(7), ..FileEffect::default() });
        assert_eq!(
            effects.files[1],
            FileEffect { path: "/roots/b".into(), written: Some(5), created: true, ..FileEffect::default() }
        );
        assert_eq!(effects.omitted.files, 2);
        assert_eq!(effects.totals, Totals { bytes_read: 7 + MAX_ENTRIES as u64, bytes_written: 5 });
    }

    #[test]
    fn a_long_path_is_cut() {
        let log = EffectLog::default();
        log.read(&"x".repeat(10_000), 1);
        assert_eq!(log.effects().files[0].path.chars().count(), MAX_TEXT + 1);
    }
}
