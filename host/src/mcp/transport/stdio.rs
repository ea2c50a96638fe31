//! The stdio transport (MCP `basic/transports` §stdio): newline-delimited JSON-RPC on
//! stdin/stdout. We own the framing in front of rmcp's message stream (`framing.rs`) so that
//! bad input gets a JSON-RPC error and the server goes on; an oversized line gets an error too,
//! and is skipped, never buffered without bound.

use std::io::{self, Read, Write};

use anyhow::Result;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::channels::serve_on_channels;
use super::framing::{Framed, Framer, INVALID_REQUEST, error_line};
use crate::mcp::Session;

/// Serves one MCP session over `input`/`output` until `input` ends.
///
/// Input and output each get a dedicated OS thread doing plain blocking I/O. (tokio's own
/// stdin/stdout hand every read and write to its blocking pool, one more thread wake-up per
/// message each way; on 2 cores that was most of a trivial call's round trip.)
pub async fn serve<R, W>(server: Session, input: R, output: W, max_message_bytes: usize) -> Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(256);
    let writer = std::thread::Builder::new().name("mcpbox-stdout".into()).spawn(move || write_loop(output, out_rx))?;
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(64);
    // Weak, so that the writer ends with the session even while the reader waits on input.
    let replies = out_tx.downgrade();
    std::thread::Builder::new()
        .name("mcpbox-stdin".into())
        .spawn(move || read_loop(input, in_tx, replies, max_message_bytes))?;

    // Nothing cancels a stdio session but the end of its input.
    serve_on_channels(server, in_rx, out_tx, line, CancellationToken::new(), "stdio").await;
    // The reader thread may still be blocked in a read; it ends with the process. The writer
    // ends once every sender (the session's sink, the reader's replies) is gone.
    tokio::task::spawn_blocking(move || writer.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the stdout writer panicked"))??;
    Ok(())
}

/// A message as one line of stdout.
fn line(message: &ServerJsonRpcMessage) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_loop<W: Write>(mut output: W, mut messages: mpsc::Receiver<Vec<u8>>) -> io::Result<()> {
    while let Some(bytes) = messages.blocking_recv() {
        output.write_all(&bytes)?;
        // Flush once the queue is drained, not per message, when answers come in bursts.
        while let Ok(more) = messages.try_recv() {
            output.write_all(&more)?;
        }
        output.flush()?;
    }
    Ok(())
}

fn read_loop<R: Read>(
    mut input: R,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    replies: mpsc::WeakSender<Vec<u8>>,
    max_message_bytes: usize,
) {
    let mut framer = Framer::new("stdio");
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    // After an oversized line has been answered, the rest of it is skipped up to its newline.
    let mut skipping = false;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::error!("cannot read stdin: {e}");
                break;
            }
        };
        let mut data = &chunk[..n];
        loop {
            let newline = data.iter().position(|&b| b == b'\n');
            let piece = &data[..newline.unwrap_or(data.len())];
            if !skipping {
                if line.len() + piece.len() > max_message_bytes && !crate::switched_off!("stdio.message-size") {
                    let message = format!("message too large: the limit is {max_message_bytes} bytes per line");
                    if !reply(&replies, error_line(Value::Null, INVALID_REQUEST, message)) {
                        return;
                    }
                    line.clear();
                    skipping = true;
                } else {
                    line.extend_from_slice(piece);
                }
            }
            let Some(newline) = newline else { break };
            if !skipping && !dispatch(&mut framer, &line, &messages, &replies) {
                return;
            }
            line.clear();
            skipping = false;
            data = &data[newline + 1..];
        }
    }
    if !skipping && !line.is_empty() {
        dispatch(&mut framer, &line, &messages, &replies);
    }
}

/// Sends an error line to the writer; false once the session is gone.
fn reply(replies: &mpsc::WeakSender<Vec<u8>>, line: String) -> bool {
    let mut bytes = line.into_bytes();
    bytes.push(b'\n');
    replies.upgrade().is_some_and(|sender| sender.blocking_send(bytes).is_ok())
}

/// Sends a framed line on; false once nobody listens any more.
fn dispatch(
    framer: &mut Framer,
    line: &[u8],
    messages: &mpsc::Sender<ClientJsonRpcMessage>,
    replies: &mpsc::WeakSender<Vec<u8>>,
) -> bool {
    match framer.frame(line) {
        Framed::Message(message) => messages.blocking_send(*message).is_ok(),
        Framed::Reply(bytes) => reply(replies, bytes),
        Framed::Skip => true,
    }
}
