//! The streams a file descriptor hands out (`read-via-stream`, `write-via-stream`,
//! `append-via-stream`), wrapped: most guest file I/O goes through them (wasi-libc's `read` and
//! `write`, the preview1 adapter's), then through `wasi:io` calls that never name the file
//! again. Each write is charged to the call's and the tree's budgets before it reaches the
//! file; each read and write is counted in the call's record.

use std::sync::Arc;

use tokio_util::bytes::Bytes;
use wasmtime_wasi::async_trait;
use wasmtime_wasi::p2::{
    DynInputStream, DynOutputStream, InputStream, OutputStream, Pollable, StreamError, StreamResult,
};

use super::file_door::{Refusals, charge};
use super::quota::Held;
use super::record::EffectLog;

/// A file's input stream, its bytes counted in the record.
pub(crate) struct CountedReader {
    pub(crate) inner: DynInputStream,
    pub(crate) log: Arc<EffectLog>,
    pub(crate) path: Arc<str>,
}

#[async_trait]
impl Pollable for CountedReader {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[async_trait]
impl InputStream for CountedReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        let bytes = self.inner.read(size)?;
        self.log.read(&self.path, bytes.len() as u64);
        Ok(bytes)
    }

    async fn blocking_read(&mut self, size: usize) -> StreamResult<Bytes> {
        let bytes = self.inner.blocking_read(size).await?;
        self.log.read(&self.path, bytes.len() as u64);
        Ok(bytes)
    }

    fn skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.inner.skip(nelem)
    }

    async fn blocking_skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.inner.blocking_skip(nelem).await
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

/// What one stream write was charged: where it lands, the call's bytes, the tree's growth.
#[derive(Clone, Copy)]
struct Charged {
    at: u64,
    written: u64,
    growth: u64,
}

/// A file's output stream under the call's write budgets.
pub(crate) struct BudgetedWriter {
    pub(crate) inner: DynOutputStream,
    pub(crate) path: Arc<str>,
    /// Where the next byte lands.
    pub(crate) position: u64,
    /// The file's end when the stream was made, and as this stream's writes moved it (what
    /// round three charged against: stale once another descriptor truncated the file).
    pub(crate) end: u64,
    /// The file, whose size is asked at each write: bytes past its end grow the tree.
    pub(crate) file: Option<Arc<std::fs::File>>,
    /// The end of this stream's writes that may not have landed yet (a `write` hands its
    /// bytes to a task; `ready` and the blocking writes wait for them).
    pub(crate) unlanded: u64,
    /// Every write lands at the end (`append-via-stream`).
    pub(crate) append: bool,
    pub(crate) tree: Option<Arc<Held>>,
    pub(crate) refusals: Refusals,
}

impl BudgetedWriter {
    /// Charges a write of `len` bytes, or the stream error that carries the refusal (the
    /// guest reads it as WASI's `quota` error through `filesystem-error-code`).
    fn charge(&mut self, len: u64) -> StreamResult<Charged> {
        let end = self.known_end();
        let at = if self.append { end } else { self.position };
        let growth = at.saturating_add(len).saturating_sub(end);
        // A write past the end makes the file that long: the hole counts, as for `set-size`.
        let written = if crate::switched_off!("writes.offset-charged") { len } else { len.max(growth) };
        match charge(&self.refusals.writes, self.tree.as_deref(), written, growth, 0) {
            Ok(()) => Ok(Charged { at, written, growth }),
            Err(refusal) => {
                self.refusals.tell(&self.path, &refusal);
                Err(StreamError::LastOperationFailed(wasmtime::Error::new(refusal)))
            }
        }
    }

    /// The file's end now: its size on disk, or past it, where this stream's writes not yet
    /// landed end.
    fn known_end(&self) -> u64 {
        match &self.file {
            Some(file) if !crate::switched_off!("writes.stream-end-current") => {
                file.metadata().map(|m| m.len()).unwrap_or(self.end).max(self.unlanded)
            }
            _ => self.end,
        }
    }

    /// A charged write of `len` bytes (`written` and `growth` charged) happened (`Ok`) or did
    /// not (the charge given back); `landed`: the write has reached the file.
    fn settle<T>(&mut self, len: u64, charged: Charged, landed: bool, result: StreamResult<T>) -> StreamResult<T> {
        let Charged { at, written, growth } = charged;
        match &result {
            Ok(_) => {
                self.position = at.saturating_add(len);
                self.end = self.end.max(self.position);
                self.unlanded = if landed { 0 } else { self.unlanded.max(self.position) };
                if let Some(log) = &self.refusals.log {
                    log.wrote(&self.path, len);
                }
            }
            Err(_) => {
                self.refusals.writes.refund(written);
                if let Some(tree) = &self.tree {
                    tree.shrink(growth, 0);
                }
            }
        }
        result
    }
}

#[async_trait]
impl Pollable for BudgetedWriter {
    async fn ready(&mut self) {
        self.inner.ready().await;
        // What was written has landed: the file's size says it from now on.
        self.unlanded = 0;
    }
}

#[async_trait]
impl OutputStream for BudgetedWriter {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len() as u64;
        let charged = self.charge(len)?;
        let result = self.inner.write(bytes);
        self.settle(len, charged, false, result)
    }

    async fn blocking_write_and_flush(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len() as u64;
        let charged = self.charge(len)?;
        let result = self.inner.blocking_write_and_flush(bytes).await;
        self.settle(len, charged, true, result)
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        let len = nelem as u64;
        let charged = self.charge(len)?;
        let result = self.inner.write_zeroes(nelem);
        self.settle(len, charged, false, result)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}
