//! Guest stdout and stderr. Neither is ever inherited: on the stdio transport our stdout is
//! the protocol stream. Stderr lines go to the host log tagged with the plugin name; stdout
//! lines go there at debug level. Both are bounded per call, so a flood costs a counter,
//! not memory, and the guest is never blocked or trapped for writing.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Bytes of guest output logged per stream and call; the rest is counted and dropped.
const LOG_BUDGET: usize = 256 * 1024;
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
    dropped: usize,
    tail: Vec<u8>,
}

impl GuestOutput {
    pub fn new(plugin: Arc<str>, kind: StreamKind) -> Self {
        GuestOutput(Arc::new(Mutex::new(State {
            plugin,
            kind,
            line: Vec::new(),
            budget: LOG_BUDGET,
            dropped: 0,
            tail: Vec::new(),
        })))
    }

    /// The last few KiB written, for error messages.
    pub fn tail(&self) -> String {
        let state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&state.tail).into_owned()
    }

    /// Takes `bytes` of this stream's log budget for a message the guest logs through the host
    /// (`host.log`), so that its logs reaching the host's stderr share the budget its stderr
    /// has; false (and counted as dropped) once it is spent.
    pub fn take_log_budget(&self, bytes: usize) -> bool {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if bytes > state.budget {
            state.budget = 0;
            state.dropped = state.dropped.saturating_add(bytes);
            return false;
        }
        state.budget -= bytes;
        true
    }

    /// Logs a trailing partial line and how much was dropped. Call once the call is over.
    pub fn finish(&self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.emit_line();
        if state.dropped > 0 {
            tracing::warn!(
                plugin = %state.plugin,
                stream = ?state.kind,
                dropped_bytes = state.dropped,
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
        let kept = if crate::switched_off!("guest-io.log-budget") { bytes.len() } else { bytes.len().min(self.budget) };
        self.budget = self.budget.saturating_sub(kept);
        self.dropped += bytes.len() - kept;
        for &byte in &bytes[..kept] {
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

    fn emit_line(&mut self) {
        if self.line.is_empty() {
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
