//! Heartbeats for a Streamable HTTP response that is slow to start. rmcp holds back the headers
//! of a 2026-07-28 request's response until the handler's first message, because that message
//! picks the status (a version error is 400, 2026-07-28 `basic/transports/streamable-http`),
//! so a call that sends nothing for a minute sends nothing at all for a minute: a proxy with a
//! shorter idle timeout cuts it, and keep-alives cannot help before there is a stream.
//!
//! This middleware gives such a response one heartbeat interval. A response ready by then
//! (every refusal rmcp decides from the request alone, and every quick call) passes as it is.
//! Past it, when the client accepts `text/event-stream`, the response starts as SSE at once: a
//! comment every interval until rmcp answers, then rmcp's events, or its JSON message as one
//! event. What a client gives up is only the HTTP status of a JSON-RPC error that a call
//! produced after running longer than the interval; the error itself arrives in the stream.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::{Stream, StreamExt};

/// The middleware's state: the heartbeat interval, `None` when heartbeats are off.
pub(crate) async fn stream_early(State(heartbeat): State<Option<Duration>>, request: Request, next: Next) -> Response {
    let accepts_sse = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"));
    let Some(period) = heartbeat.filter(|_| accepts_sse && request.method() == Method::POST) else {
        return next.run(request).await;
    };
    let mut pending: Pin<Box<dyn Future<Output = Response> + Send>> = Box::pin(next.run(request));
    tokio::select! {
        response = &mut pending => return response,
        () = tokio::time::sleep(period), if !crate::switched_off!("http.slow-response-streams-early") => {}
    }
    let body = Body::from_stream(events(pending, period).map(Ok::<_, std::convert::Infallible>));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Where the stream is.
enum Phase {
    /// Waiting for rmcp's response, with a heartbeat every interval.
    Waiting(Pin<Box<dyn Future<Output = Response> + Send>>, tokio::time::Interval),
    /// Passing rmcp's SSE body on.
    Forwarding(Pin<Box<dyn Stream<Item = Bytes> + Send>>),
    Done,
}

/// Heartbeat comments until `pending` answers, then its messages as SSE.
fn events(pending: Pin<Box<dyn Future<Output = Response> + Send>>, period: Duration) -> impl Stream<Item = Bytes> {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    futures::stream::unfold(Phase::Waiting(pending, ticks), |phase| async move {
        match phase {
            Phase::Waiting(mut pending, mut ticks) => {
                tokio::select! {
                    response = &mut pending => Some(as_events(response).await),
                    _ = ticks.tick() => Some((Bytes::from_static(b":\n\n"), Phase::Waiting(pending, ticks))),
                }
            }
            Phase::Forwarding(mut body) => body.next().await.map(|chunk| (chunk, Phase::Forwarding(body))),
            Phase::Done => None,
        }
    })
}

/// rmcp's late response, as the stream's next bytes and what follows them.
async fn as_events(response: Response) -> (Bytes, Phase) {
    let (parts, body) = response.into_parts();
    let is_sse =
        parts.headers.get(header::CONTENT_TYPE).is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
    if parts.status == StatusCode::OK && is_sse {
        let chunks = body.into_data_stream().filter_map(|chunk| async move { chunk.ok() });
        return (Bytes::new(), Phase::Forwarding(Box::pin(chunks)));
    }
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let is_json =
        parts.headers.get(header::CONTENT_TYPE).is_some_and(|kind| kind.as_bytes().starts_with(b"application/json"));
    if is_json && !bytes.contains(&b'\n') {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(&bytes);
        event.extend_from_slice(b"\n\n");
        return (Bytes::from(event), Phase::Done);
    }
    tracing::warn!(status = %parts.status, "a slow response was neither SSE nor one JSON message; its stream ends empty");
    (Bytes::from(format!(": the response was HTTP {}\n\n", parts.status.as_u16())), Phase::Done)
}
