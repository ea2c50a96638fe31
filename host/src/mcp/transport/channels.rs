//! An rmcp session over a pair of channels, the shape every transport that frames messages
//! itself shares (stdio, WebSocket, the 2024-11-05 HTTP+SSE transport): messages from the client
//! arrive on one channel, and the session's messages leave on another, encoded as the
//! transport writes them (a line, a text frame, an SSE event's data).

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::Session;
use crate::telemetry::metrics::{Open, metrics};

/// Serves `session` on `incoming` until it ends or `ended` is cancelled (which cancels its
/// calls), sending each of its messages to `outgoing` as `encode` makes it. Returns why the
/// session never began, if it did not (its first message could not start one, or the input
/// ended first). `transport` names it in logs and metrics (`stdio`, `websocket`, `sse`).
pub(crate) async fn serve_on_channels<T: Send + 'static>(
    session: Session,
    mut incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<T>,
    encode: fn(&ServerJsonRpcMessage) -> serde_json::Result<T>,
    ended: CancellationToken,
    transport: &'static str,
) -> Option<String> {
    let _open = Open::count(&metrics().sessions, transport);
    let sink = futures::sink::unfold(outgoing, move |outgoing, message: ServerJsonRpcMessage| async move {
        let encoded = encode(&message).map_err(std::io::Error::other)?;
        outgoing
            .send(encoded)
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the connection is closed"))?;
        Ok::<_, std::io::Error>(outgoing)
    });
    let stream = futures::stream::poll_fn(move |cx| incoming.poll_recv(cx));
    match rmcp::service::serve_server_with_ct(session, (Box::pin(sink), stream), ended).await {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::debug!(?reason, transport, "session ended");
            None
        }
        Err(e) => {
            tracing::info!(transport, "no session: {e}");
            Some(e.to_string())
        }
    }
}
