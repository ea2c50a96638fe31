//! The WebSocket transport, as the official TypeScript SDK's `WebSocketClientTransport` speaks
//! it (MCP defines custom transports in `basic/transports` §Custom Transports; this one is the
//! subprotocol `mcp`, one JSON-RPC message per text frame). A socket is one session, of either
//! era, served like stdio: many requests in flight, answered as they finish; server-to-client
//! requests, notifications and cancellation both ways.
//!
//! What a client gets for what it sends (close codes from RFC 6455 §7.4.1):
//!
//! | it sends | it gets |
//! |---|---|
//! | a text frame that is not a good JSON-RPC message | the JSON-RPC error stdio gives (`framing.rs`); the socket stays open |
//! | a binary frame | close 1003 (unsupported data) |
//! | a message over `--max-message-bytes` | close 1009 (message too big) |
//! | no `mcp` subprotocol in the handshake | close 1008 (policy violation), right after the upgrade, so that a browser's `WebSocket` sees why |
//! | invalid UTF-8 in a text frame | close 1007 |
//! | a broken frame (unmasked, reserved bits, unknown opcode) | close 1002 |
//! | nothing for two heartbeat intervals, pings unanswered | dropped without a close handshake; its calls cancelled |
//! | (the session fails inside mcpbox) | close 1011 (internal error) |
//! | (mcpbox shuts down) | close 1001 (going away) |
//! | (with `[auth]`: the access token that opened the socket expires) | close 1008 (policy violation) |
//!
//! The Host, Origin and bearer checks run before the upgrade (`guard.rs`). Any end of the
//! socket ends the session and cancels its calls: nobody is left to read their answers.

use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::channels::serve_on_channels;
use super::framing::{Framed, Framer};
use crate::access::Principal;
use crate::mcp::{McpState, Session};
use crate::telemetry::metrics::{Open, metrics};

/// The subprotocol, as the TypeScript SDK asks for it.
const SUBPROTOCOL: &str = "mcp";

/// What every WebSocket of a listener shares.
pub(crate) struct Sockets {
    pub(crate) state: Arc<McpState>,
    /// The largest message (and frame) read (`--max-message-bytes`).
    pub(crate) max_message_bytes: usize,
    /// How often an idle socket is pinged; `None`: never.
    pub(crate) heartbeat: Option<Duration>,
    /// Cancelled when mcpbox shuts down, after the grace period.
    pub(crate) shutdown: CancellationToken,
}

/// `GET /ws`: the upgrade (its Host, Origin and token already checked; the token's principal,
/// with `[auth]`, is the session's).
pub(crate) async fn upgrade(
    State(sockets): State<Arc<Sockets>>,
    principal: Option<Extension<Arc<Principal>>>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let principal = principal.map(|Extension(principal)| principal);
    let upgrade = upgrade.protocols([SUBPROTOCOL]);
    let upgrade = if crate::switched_off!("websocket.message-bounded") {
        upgrade
    } else {
        upgrade.max_message_size(sockets.max_message_bytes).max_frame_size(sockets.max_message_bytes)
    };
    let speaks_mcp = upgrade.selected_protocol().is_some();
    upgrade.on_upgrade(move |socket| async move {
        if speaks_mcp {
            serve(socket, &sockets, principal).await;
        } else {
            let reason =
                "this endpoint speaks only the WebSocket subprotocol `mcp`: ask for it (Sec-WebSocket-Protocol: mcp)";
            close(socket, close_code::POLICY, reason).await;
        }
    })
}

async fn close(mut socket: WebSocket, code: u16, reason: &str) {
    // A close frame's reason is at most 123 bytes (RFC 6455 §5.5: control frames carry 125).
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame { code, reason: reason[..end].into() };
    if socket.send(Message::Close(Some(frame))).await.is_ok() {
        // Let the client's close frame arrive, briefly, for a clean close handshake.
        let _ = tokio::time::timeout(Duration::from_secs(1), async { while socket.recv().await.is_some() {} }).await;
    }
}

/// How a socket's loop ended.
enum End {
    /// The connection is gone.
    Gone,
    /// The client closed it: tungstenite has queued the answering close frame.
    ClosedByClient,
    /// Close with this code and reason.
    Close(u16, String),
}

/// Serves one session on `socket` until either side ends it.
async fn serve(mut socket: WebSocket, sockets: &Sockets, principal: Option<Arc<Principal>>) {
    // The session lasts as long as the token that opened it (MCP `basic/authorization`
    // §Token Handling: an expired token is no longer accepted).
    let expires =
        principal.as_ref().map(|p| p.expiry().duration_since(std::time::SystemTime::now()).unwrap_or_default());
    let token_expired = async move {
        match expires {
            Some(left) => tokio::time::sleep(left).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(token_expired);
    let (to_client, mut outgoing) = mpsc::channel::<String>(256);
    let (to_session, incoming) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let session_ended = CancellationToken::new();
    let session = Session { transport: "websocket", ..Session::for_principal(sockets.state.clone(), principal) };
    let to_text = |message: &ServerJsonRpcMessage| serde_json::to_string(message);
    let mut session =
        tokio::spawn(serve_on_channels(session, incoming, to_client, to_text, session_ended.clone(), "websocket"));
    let mut session_over = false;
    let mut framer = Framer::new("websocket");
    let _stream = Open::count(&metrics().streams, "websocket");
    let mut heartbeat = sockets.heartbeat.map(|period| {
        let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticks
    });
    let mut awaiting_pong = false;
    let end = loop {
        tokio::select! {
            frame = socket.recv() => {
                // Whatever arrived, the client is alive.
                awaiting_pong = false;
                match frame {
                None => break End::Gone,
                Some(Ok(Message::Close(_))) => break End::ClosedByClient,
                Some(Ok(Message::Text(text))) => match framer.frame(text.as_bytes()) {
                    Framed::Message(message) => {
                        if to_session.send(*message).await.is_err() {
                            session_over = true;
                            break why_it_ended(&mut session).await;
                        }
                    }
                    Framed::Reply(line) => {
                        if !send(&mut socket, Message::text(line), sockets.heartbeat).await {
                            break End::Gone;
                        }
                    }
                    Framed::Skip => {}
                },
                Some(Ok(Message::Binary(_))) => break End::Close(
                    close_code::UNSUPPORTED,
                    "binary frames are not MCP messages: send each JSON-RPC message as a text frame".into(),
                ),
                // Any traffic proves the client alive; tungstenite answers pings itself.
                Some(Ok(Message::Pong(_) | Message::Ping(_))) => {}
                Some(Err(error)) => break end_for(error, sockets.max_message_bytes),
                }
            },
            message = outgoing.recv() => match message {
                Some(text) => {
                    if !send(&mut socket, Message::text(text), sockets.heartbeat).await {
                        break End::Gone;
                    }
                }
                None => {
                    session_over = true;
                    break why_it_ended(&mut session).await;
                }
            },
            () = next_tick(&mut heartbeat) => {
                if awaiting_pong && !crate::switched_off!("websocket.unanswered-ping-drops") {
                    tracing::warn!("dropping a WebSocket client that did not answer a ping within {:?}", sockets.heartbeat);
                    break End::Gone;
                }
                if !send(&mut socket, Message::Ping(Default::default()), sockets.heartbeat).await {
                    break End::Gone;
                }
                awaiting_pong = true;
            },
            () = sockets.shutdown.cancelled() => break End::Close(close_code::AWAY, "mcpbox is shutting down".into()),
            () = &mut token_expired => break End::Close(
                close_code::POLICY,
                "the access token expired: connect again with a fresh one".into(),
            ),
        }
    };
    session_ended.cancel();
    match end {
        End::Close(code, reason) => {
            tracing::info!(code, %reason, "closing a WebSocket");
            close(socket, code, &reason).await;
        }
        // Reading on sends the queued close frame and then ends.
        End::ClosedByClient => {
            let _ =
                tokio::time::timeout(Duration::from_secs(1), async { while socket.recv().await.is_some() {} }).await;
        }
        End::Gone => {}
    }
    if !session_over {
        let _ = session.await;
    }
}

/// The close a session that ended by itself deserves: one that never began (its first request
/// was not one that starts a session) is the client's violation; anything else is ours.
async fn why_it_ended(session: &mut tokio::task::JoinHandle<Option<String>>) -> End {
    match session.await {
        Ok(Some(reason)) => End::Close(close_code::POLICY, format!("no session: {reason}")),
        Ok(None) => End::Close(close_code::ERROR, "the session ended inside mcpbox".into()),
        Err(_) => End::Close(close_code::ERROR, "the session failed inside mcpbox".into()),
    }
}

/// Sends `message`; false if the connection failed or, with heartbeats, the client took two
/// intervals to take it (a client that stops reading must not stall its socket's loop, which
/// also watches the heartbeat).
async fn send(socket: &mut WebSocket, message: Message, heartbeat: Option<Duration>) -> bool {
    match heartbeat {
        Some(period) => matches!(tokio::time::timeout(period * 2, socket.send(message)).await, Ok(Ok(()))),
        None => socket.send(message).await.is_ok(),
    }
}

/// Waits for the next heartbeat; never, without heartbeats.
async fn next_tick(heartbeat: &mut Option<Interval>) {
    match heartbeat {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The close a read error deserves.
fn end_for(error: axum::Error, max_message_bytes: usize) -> End {
    use tungstenite::Error as WsError;
    let inner = error.into_inner();
    match inner.downcast_ref::<WsError>() {
        Some(WsError::Capacity(_)) => End::Close(
            close_code::SIZE,
            format!("message too large: the limit is {max_message_bytes} bytes per message"),
        ),
        Some(WsError::Utf8(_)) => End::Close(close_code::INVALID, "a text frame must be valid UTF-8".into()),
        Some(WsError::Protocol(problem)) => {
            End::Close(close_code::PROTOCOL, format!("websocket protocol error: {problem}"))
        }
        _ => {
            tracing::debug!("websocket read failed: {inner}");
            End::Gone
        }
    }
}
