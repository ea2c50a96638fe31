//! GET through `wasi:http`, following redirects as httpx does (up to 20), each hop a request
//! the host checks against the network grant. A hook runs before every hop after the first
//! (the reference checks each redirect target's robots.txt).

use url::Url;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, IncomingBody, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

/// httpx's default.
const MAX_REDIRECTS: usize = 20;
/// The most a page may hold: the model reads at most 999,999 characters of it anyway.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
}

/// Why a request got no response: the host refused it, or the connection failed.
pub(crate) struct Failure(pub(crate) String);

fn get_once(url: &Url, user_agent: &str) -> Result<(Response, Option<String>), Failure> {
    let headers = Fields::new();
    headers.append("user-agent", user_agent.as_bytes()).map_err(|e| Failure(format!("{e:?}")))?;
    headers.append("accept", b"*/*").map_err(|e| Failure(format!("{e:?}")))?;
    let request = OutgoingRequest::new(headers);
    let scheme = if url.scheme() == "https" { Scheme::Https } else { Scheme::Http };
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    request.set_scheme(Some(&scheme)).map_err(|()| Failure("bad scheme".into()))?;
    request.set_authority(Some(&authority)).map_err(|()| Failure("bad authority".into()))?;
    request.set_path_with_query(Some(&path)).map_err(|()| Failure("bad path".into()))?;
    let pending = outgoing_handler::handle(request, None).map_err(|e| Failure(format!("{e:?}")))?;
    pending.subscribe().block();
    let response = pending
        .get()
        .ok_or_else(|| Failure("no response".into()))?
        .map_err(|()| Failure("no response".into()))?
        .map_err(|e| Failure(format!("{e:?}")))?;
    let header = |name: &str| response.headers().get(name).first().map(|v| String::from_utf8_lossy(v).into_owned());
    let (status, location, content_type) = (response.status(), header("location"), header("content-type"));
    let body = response.consume().map_err(|()| Failure("no body".into()))?;
    let mut bytes = Vec::new();
    {
        let stream = body.stream().map_err(|()| Failure("no body stream".into()))?;
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => bytes.extend(chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => return Err(Failure(e.to_debug_string())),
            }
            if bytes.len() > MAX_BODY_BYTES {
                return Err(Failure(format!("the response is larger than {MAX_BODY_BYTES} bytes")));
            }
        }
    }
    drop(IncomingBody::finish(body));
    Ok((Response { status, content_type: content_type.unwrap_or_default(), body: bytes }, location))
}

/// GET `url`, following redirects; `before_hop` vets each redirect target before it is
/// requested.
pub(crate) fn get(
    url: &Url,
    user_agent: &str,
    before_hop: &mut dyn FnMut(&Url) -> Result<(), mcpbox_sdk::Error>,
) -> Result<Result<Response, Failure>, mcpbox_sdk::Error> {
    let mut current = url.clone();
    for hop in 0..=MAX_REDIRECTS {
        if hop > 0 {
            before_hop(&current)?;
        }
        let (response, location) = match get_once(&current, user_agent) {
            Ok(answer) => answer,
            Err(failure) => return Ok(Err(failure)),
        };
        match location {
            Some(next) if matches!(response.status, 301 | 302 | 303 | 307 | 308) => match current.join(&next) {
                Ok(next) => current = next,
                Err(e) => return Ok(Err(Failure(format!("invalid redirect location {next}: {e}")))),
            },
            _ => return Ok(Ok(response)),
        }
    }
    Ok(Err(Failure(format!("Exceeded maximum allowed redirects ({MAX_REDIRECTS})"))))
}

/// The body as text: the charset the response names when it is one we read, else UTF-8, bad
/// bytes replaced (httpx decodes the same way).
pub(crate) fn text(response: &Response) -> String {
    let charset = response
        .content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .next()
        .map(|c| c.trim_matches('"').to_ascii_lowercase());
    match charset.as_deref() {
        Some("iso-8859-1" | "latin-1" | "latin1") => response.body.iter().map(|&b| b as char).collect(),
        _ => String::from_utf8_lossy(&response.body).into_owned(),
    }
}
