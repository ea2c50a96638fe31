//! A response sent before its request's body was read says that the connection closes.
//!
//! A refusal (401 without a token, 403 for an origin, 404, 413) is decided from the request's
//! head, and the body is dropped unread. hyper then drains what has already arrived; when the
//! body is still on its way (clients such as httpx write the head and the body separately, and
//! on a busy machine the refusal can go out between the two), it gives up and closes the
//! connection after the response. Without a word in the response: the client keeps the
//! connection for its next request (the retry with a token, in the OAuth flow) and that request
//! finds it closed ("server disconnected without sending a response"). RFC 9112 §9.6: a server
//! that closes says `Connection: close` in its last response, and the client opens a new one.
//!
//! Responses to requests whose body was read to its end, or that had none, are left as they
//! are: their connection stays open for the next request.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Version, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};

/// The middleware, outermost on the listener's router (`http.rs`).
pub(crate) async fn close_when_body_unread(request: Request, next: Next) -> Response {
    // HTTP/2 has no `Connection` header (RFC 9113 §8.2.2) and never closes for one stream.
    if request.body().is_end_stream() || request.version() >= Version::HTTP_2 {
        return next.run(request).await;
    }
    let ended = Arc::new(AtomicBool::new(false));
    let watched = ended.clone();
    let request = request.map(|inner| Body::new(Watched { inner, ended: watched }));
    let mut response = next.run(request).await;
    if !ended.load(Ordering::Acquire) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The request's body, noting when it has been read to its end.
struct Watched {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        // A reader that stops after the last byte of a known length has read it all too.
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
