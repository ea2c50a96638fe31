//! Guest stdout and stderr. Neither is ever inherited: on the stdio transport our stdout is
//! the protocol stream. Stderr lines go to the host log tagged with the plugin name; stdout
//! lines go there at debug level. Both are bounded per call, so a flood costs a counter,
//! not memory, and the guest is never blocked or trapped for writing.
//!
//! The bound is on what reaches the host's log, as it is written: each line costs its text
//! and [`LINE_COST`] (its timestamp, level, the plugin's name and the request's fields), so a
//! flood of short or empty lines is bounded as tightly as one long one. The stderr stream's
//! budget is also the call's for every other line the guest causes: its `host.log` messages
//! and mcpbox's warnings about what it refused it (updates of others' URIs, denied HTTP
//! requests). What is dropped is said once, when the call ends.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Bytes of log lines a call's guest may cause per stream, as written; the rest is counted
/// and dropped.
pub(crate) const LOG_BUDGET: usize = 256 * 1024;
/// What a log line costs beyond its text: the JSON log format writes about 470 bytes of
/// timestamp, level, target, plugin and the request span's fields around an empty message
/// (text logs fewer). So at most 512 lines per stream and call.
pub(crate) const LINE_COST: usize = 512;
/// A line longer than this is logged in pieces.
const MAX_LINE: usize = 8 * 1024;
/// How much of the end of stderr is kept to explain a trap (a Rust panic message).
const TAIL: usize = 4 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Stdout,
    Stderr,
}

/// One guest output stream of one call.
#[derive(Clone)]
pub struct GuestOutput(Arc<Mutex<State>>);

struct State {
    plugin: Arc<str>,
    kind: StreamKind,
    line: Vec<u8>,
    budget: usize,
    dropped_bytes: usize,
    dropped_lines: usize,
    tail: Vec<u8>,
}

impl GuestOutput {
    pub fn new(plugin: Arc<str>, kind: StreamKind) -> Self {
        GuestOutput(Arc::new(Mutex::new(State {
            plugin,
            kind,
            line: Vec::new(),
            budget: LOG_BUDGET,
            dropped_bytes: 0,
            dropped_lines: 0,
            tail: Vec::new(),
        })))
    }

    /// The last few KiB written, for error messages.
    pub fn tail(&self) -> String {
        let state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&state.tail).into_owned()
    }

    /// Takes this stream's log budget for one more line the guest causes, of `bytes` of text
    /// (a `host.log` message, or mcpbox's warning about something it refused the guest), so
    /// that it shares the budget the guest's stderr has; false (and counted as dropped) once
    /// the line does not fit.
    pub fn take_line(&self, bytes: usize) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take_line(bytes)
    }

    /// Logs a trailing partial line and, once, how much was dropped. Call once the call is over.
    pub fn finish(&self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.emit_line();
        if state.dropped_bytes > 0 || state.dropped_lines > 0 {
            tracing::warn!(
                plugin = %state.plugin,
                stream = ?state.kind,
                dropped_lines = state.dropped_lines,
                dropped_bytes = state.dropped_bytes,
                "guest output over the {LOG_BUDGET}-byte log budget was dropped"
            );
        }
    }
}

impl State {
    fn write(&mut self, bytes: &[u8]) {
        if self.kind == StreamKind::Stderr {
            self.tail.extend_from_slice(bytes);
            if self.tail.len() > TAIL {
                let excess = self.tail.len() - TAIL;
                self.tail.drain(..excess);
            }
        }
        // Spent: not even an empty line fits, so nothing more is buffered, only counted.
        if self.budget < LINE_COST && !crate::switched_off!("guest-io.log-budget") {
            self.dropped_bytes = self.dropped_bytes.saturating_add(bytes.len());
            self.dropped_lines = self.dropped_lines.saturating_add(bytes.iter().filter(|&&b| b == b'\n').count());
            return;
        }
        for &byte in bytes {
            if byte == b'\n' {
                self.emit_line();
            } else {
                self.line.push(byte);
                if self.line.len() >= MAX_LINE {
                    self.emit_line();
                }
            }
        }
    }

    /// Charges a line of `bytes` of text, as written, to the budget; false if it does not fit.
    fn take_line(&mut self, bytes: usize) -> bool {
        let cost = bytes.saturating_add(LINE_COST);
        if cost > self.budget && !crate::switched_off!("guest-io.log-budget") {
            self.dropped_bytes = self.dropped_bytes.saturating_add(bytes);
            self.dropped_lines = self.dropped_lines.saturating_add(1);
            return false;
        }
        self.budget = self.budget.saturating_sub(cost);
        true
    }

    fn emit_line(&mut self) {
        if self.line.is_empty() {
            return;
        }
        if !self.take_line(self.line.len()) {
            self.line.clear();
            return;
        }
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_end_matches('\r');
        match self.kind {
            StreamKind::Stderr => tracing::info!(target: "mcpbox::guest", plugin = %self.plugin, "{text}"),
            StreamKind::Stdout => {
                tracing::debug!(target: "mcpbox::guest", plugin = %self.plugin, stream = "stdout", "{text}")
            }
        }
        self.line.clear();
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for GuestOutput {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
