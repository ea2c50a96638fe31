//! Reflections of a credential in a response, masked before the guest reads it. An API that
//! echoes request headers (a debug endpoint, an error page quoting the request) would otherwise
//! hand the plugin the value it was never given. The response to a request that carried a
//! credential has its headers, body and trailers scanned for every form of each value sent
//! ([`Reflections::of`]: the bytes, base64 and base64url at each of the three alignments a value
//! can have inside a longer encoding, percent-encoded, JSON-escaped), across chunk boundaries
//! (the last `longest - 1` bytes wait for the next chunk), and each match is overwritten with as
//! many `*`: the length stays, so `Content-Length` stays true.
//!
//! Compression: such requests are sent with `Accept-Encoding: identity`; a server that
//! compresses anyway with gzip or deflate (one `Content-Encoding` line, one coding, and no
//! transfer coding but `chunked`) is decoded before the scan (and the response loses its
//! `Content-Encoding` and `Content-Length`); any other coding or combination is refused, since
//! it cannot be scanned ([`Coding::of`]). Header names are scanned like values (a header named
//! by a reflection is dropped). Not caught: a partial echo, or one transformed otherwise (hashed, reversed, split by
//! the server); docs/credentials.md says so.

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine;
use http::HeaderMap;
use hyper::body::{Body, Bytes, Frame, SizeHint};
use wasmtime_wasi_http::{Error as HttpError, WasiBody};
use zeroize::Zeroizing;

/// Derived forms shorter than this are not searched for: a 3-character piece of a base64
/// alignment would mask innocent text everywhere. The value itself always is.
const SHORTEST_FORM: usize = 6;

/// Compressed input is fed to the decoder this much at a time, so that one frame of a
/// decompression bomb expands to at most about a thousand times this, not a thousand times the
/// frame.
const DECODE_STEP: usize = 4 * 1024;

/// Every form of the values a request carried, to be masked in its response.
#[derive(Default)]
pub(crate) struct Reflections {
    forms: Vec<Zeroizing<Vec<u8>>>,
}

impl Reflections {
    /// Adds `value` (a secret, or a whole header value) in each of its forms.
    pub(crate) fn add(&mut self, value: &[u8]) {
        if value.is_empty() {
            return;
        }
        self.push(Zeroizing::new(value.to_vec()), true);
        for engine in
            [&base64::engine::general_purpose::STANDARD_NO_PAD, &base64::engine::general_purpose::URL_SAFE_NO_PAD]
        {
            for offset in 0..3 {
                self.push(aligned_base64(engine, value, offset), false);
            }
        }
        for upper in [true, false] {
            self.push(percent_encoded(value, upper), false);
        }
        self.push(Zeroizing::new(form_urlencoded::byte_serialize(value).collect::<String>().into_bytes()), false);
        // JSON-escaped, also twice (JSON in a JSON string), each also with `/` escaped.
        let once = json_escaped(&String::from_utf8_lossy(value));
        let once_slashed = Zeroizing::new(once.replace('/', "\\/"));
        let twice = json_escaped(&once);
        for escaped in
            [json_escaped(&once_slashed), Zeroizing::new(twice.replace('/', "\\/")), twice, once_slashed, once]
        {
            self.push(Zeroizing::new(escaped.as_bytes().to_vec()), false);
        }
    }

    fn push(&mut self, form: Zeroizing<Vec<u8>>, always: bool) {
        if (always || form.len() >= SHORTEST_FORM) && !self.forms.iter().any(|known| **known == *form) {
            self.forms.push(form);
        }
    }

    /// The longest form: a match can span at most this many bytes.
    fn longest(&self) -> usize {
        self.forms.iter().map(|form| form.len()).max().unwrap_or(0)
    }

    /// Overwrites every match in `bytes`; says how many there were.
    pub(crate) fn mask(&self, bytes: &mut [u8]) -> usize {
        let mut found = Vec::new();
        for form in &self.forms {
            found.extend(memchr::memmem::find_iter(bytes, form.as_slice()).map(|at| at..at + form.len()));
        }
        for range in &found {
            bytes[range.clone()].fill(b'*');
        }
        found.len()
    }

    /// Masks every header value, and drops every header whose name holds a reflection; says
    /// how many matches there were. Names are compared in any case: hyper hands them over
    /// lower-cased, so an echo in a name is the value lower-cased (a name masked with `*` could
    /// merge with another, so the header goes).
    pub(crate) fn mask_headers(&self, headers: &mut HeaderMap) -> usize {
        let mut masked = 0;
        if !crate::switched_off!("credentials.header-names-scanned") {
            let named: Vec<http::HeaderName> =
                headers.keys().filter(|name| self.found_in_any_case(name.as_str().as_bytes())).cloned().collect();
            for name in named {
                headers.remove(&name);
                masked += 1;
            }
        }
        let mut unmaskable = Vec::new();
        for (name, value) in headers.iter_mut() {
            let mut bytes = Zeroizing::new(value.as_bytes().to_vec());
            let found = self.mask(&mut bytes);
            if found > 0 {
                masked += found;
                // `*` keeps a valid header value valid; were it not, the header goes, never
                // unmasked.
                match http::HeaderValue::from_bytes(&bytes) {
                    Ok(clean) => *value = clean,
                    Err(_) => unmaskable.push(name.clone()),
                }
            }
        }
        for name in unmaskable {
            headers.remove(&name);
        }
        masked
    }

    /// Whether some form is in `bytes`, letters compared in any case.
    fn found_in_any_case(&self, bytes: &[u8]) -> bool {
        let lower = bytes.to_ascii_lowercase();
        self.forms.iter().any(|form| memchr::memmem::find(&lower, &form.to_ascii_lowercase()).is_some())
    }
}

/// `value`'s base64 as it appears when `offset` bytes precede it in a longer encoded text:
/// only the characters that depend on `value` alone.
fn aligned_base64(engine: &base64::engine::GeneralPurpose, value: &[u8], offset: usize) -> Zeroizing<Vec<u8>> {
    let mut input = Zeroizing::new(vec![0u8; offset]);
    input.extend_from_slice(value);
    let encoded = Zeroizing::new(engine.encode(&*input).into_bytes());
    // Characters mixing the preceding bytes' bits: none, the first two, the first three.
    let skip = [0, 2, 3][offset];
    // The last character mixes in the following bytes' bits unless the bits end on a character.
    let end = if (input.len() * 8).is_multiple_of(6) { encoded.len() } else { encoded.len() - 1 };
    Zeroizing::new(encoded.get(skip..end).unwrap_or_default().to_vec())
}

/// `text` as it stands between the quotes of a JSON string.
fn json_escaped(text: &str) -> Zeroizing<String> {
    let quoted = Zeroizing::new(serde_json::to_string(text).unwrap_or_default());
    Zeroizing::new(quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned())
}

/// `value` percent-encoded as a URL component (unreserved characters as they are).
fn percent_encoded(value: &[u8], upper: bool) -> Zeroizing<Vec<u8>> {
    let digits: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut out = Zeroizing::new(Vec::with_capacity(value.len() * 3));
    for &byte in value {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte);
        } else {
            out.extend_from_slice(&[b'%', digits[usize::from(byte >> 4)], digits[usize::from(byte & 15)]]);
        }
    }
    out
}

/// How a response's body is coded, as far as the scan is concerned.
pub(crate) enum Coding {
    Identity,
    Gzip,
    Deflate,
}

impl Coding {
    /// The coding `headers` declare, or the codings that cannot be scanned. Deny by default:
    /// `Content-Encoding` absent or one line of one token among `identity`, `gzip`, `x-gzip` and
    /// `deflate`, and `Transfer-Encoding` absent or exactly `chunked` (hyper removes the
    /// chunking only: any coding listed before it would reach the guest unscanned, and the
    /// guest never sees that header); every other combination (two lines, a list, an empty
    /// value, another coding) is refused.
    pub(crate) fn of(headers: &HeaderMap) -> Result<Coding, String> {
        let lines = |name: http::HeaderName| -> Vec<String> {
            headers.get_all(name).iter().map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase()).collect()
        };
        let (content, transfer) = (lines(http::header::CONTENT_ENCODING), lines(http::header::TRANSFER_ENCODING));
        if crate::switched_off!("credentials.codings-deny-by-default") {
            // The round-three reading: one Content-Encoding line, or identity.
            return match content.as_slice() {
                [one] if one == "gzip" || one == "x-gzip" => Ok(Coding::Gzip),
                [one] if one == "deflate" => Ok(Coding::Deflate),
                [one] if !one.is_empty() && one != "identity" => Err(one.clone()),
                _ => Ok(Coding::Identity),
            };
        }
        match transfer.as_slice() {
            [] => {}
            [one] if one == "chunked" => {}
            _ => return Err(format!("transfer-encoding: {}", transfer.join(" / "))),
        }
        match content.as_slice() {
            [] => Ok(Coding::Identity),
            [one] if one == "identity" => Ok(Coding::Identity),
            [one] if one == "gzip" || one == "x-gzip" => Ok(Coding::Gzip),
            [one] if one == "deflate" => Ok(Coding::Deflate),
            _ => Err(content.join(" / ")),
        }
    }
}

enum Decoder {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Deflate(flate2::write::ZlibDecoder<Vec<u8>>),
}

impl Decoder {
    fn write(&mut self, input: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Decoder::Gzip(d) => d.write_all(input).map(|()| std::mem::take(d.get_mut())),
            Decoder::Deflate(d) => d.write_all(input).map(|()| std::mem::take(d.get_mut())),
        }
    }

    fn finish(self) -> std::io::Result<Vec<u8>> {
        match self {
            Decoder::Gzip(d) => d.finish(),
            Decoder::Deflate(d) => d.finish(),
        }
    }
}

/// A response body with every reflection masked, decoded first if it was compressed.
pub(crate) struct Redacting {
    inner: WasiBody,
    reflections: std::sync::Arc<Reflections>,
    decoder: Option<Decoder>,
    /// Compressed bytes not yet fed to the decoder.
    pending: Bytes,
    /// Scanned bytes not yet handed on: a match may go on in the next chunk.
    held: Zeroizing<Vec<u8>>,
    trailers: Option<HeaderMap>,
    ended: bool,
    /// Called with each count of matches masked, for the log.
    on_masked: Box<dyn Fn(usize) + Send>,
}

impl Redacting {
    pub(crate) fn new(
        inner: WasiBody,
        reflections: std::sync::Arc<Reflections>,
        coding: Coding,
        on_masked: Box<dyn Fn(usize) + Send>,
    ) -> Redacting {
        let decoder = match coding {
            Coding::Identity => None,
            Coding::Gzip => Some(Decoder::Gzip(flate2::write::GzDecoder::new(Vec::new()))),
            Coding::Deflate => Some(Decoder::Deflate(flate2::write::ZlibDecoder::new(Vec::new()))),
        };
        Redacting {
            inner,
            reflections,
            decoder,
            pending: Bytes::new(),
            held: Zeroizing::new(Vec::new()),
            trailers: None,
            ended: false,
            on_masked,
        }
    }

    /// Masks what is held and hands on all but what a match could still continue from.
    fn scanned(&mut self, all: bool) -> Option<Frame<Bytes>> {
        let masked = self.reflections.mask(&mut self.held);
        if masked > 0 {
            (self.on_masked)(masked);
        }
        let keep = if all { 0 } else { self.reflections.longest().saturating_sub(1) };
        let cut = self.held.len().saturating_sub(keep);
        (cut > 0).then(|| Frame::data(Bytes::from(self.held.drain(..cut).collect::<Vec<u8>>())))
    }
}

fn undecodable(e: &std::io::Error) -> HttpError {
    HttpError::HttpResponseContentCoding(Some(format!("cannot decode the response: {e}")))
}

impl Body for Redacting {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = &mut *self;
        loop {
            if !this.pending.is_empty() {
                let step = this.pending.split_to(this.pending.len().min(DECODE_STEP));
                if let Some(decoder) = &mut this.decoder {
                    match decoder.write(&step) {
                        Ok(decoded) => this.held.extend_from_slice(&decoded),
                        Err(e) => return Poll::Ready(Some(Err(undecodable(&e)))),
                    }
                }
                if let Some(frame) = this.scanned(false) {
                    return Poll::Ready(Some(Ok(frame)));
                }
                continue;
            }
            if this.ended {
                if let Some(decoder) = this.decoder.take() {
                    match decoder.finish() {
                        Ok(decoded) => this.held.extend_from_slice(&decoded),
                        Err(e) => return Poll::Ready(Some(Err(undecodable(&e)))),
                    }
                }
                if let Some(frame) = this.scanned(true) {
                    return Poll::Ready(Some(Ok(frame)));
                }
                return Poll::Ready(this.trailers.take().map(|trailers| Ok(Frame::trailers(trailers))));
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => this.ended = true,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if this.decoder.is_some() => this.pending = data,
                    Ok(data) => {
                        this.held.extend_from_slice(&data);
                        if let Some(frame) = this.scanned(false) {
                            return Poll::Ready(Some(Ok(frame)));
                        }
                    }
                    Err(frame) => {
                        if let Ok(mut trailers) = frame.into_trailers() {
                            let masked = this.reflections.mask_headers(&mut trailers);
                            if masked > 0 {
                                (this.on_masked)(masked);
                            }
                            this.trailers = Some(trailers);
                        }
                    }
                },
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
            && self.pending.is_empty()
            && self.held.is_empty()
            && self.decoder.is_none()
            && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        // Masking keeps the length; decoding changes it.
        if self.decoder.is_none() && self.held.is_empty() { self.inner.size_hint() } else { SizeHint::default() }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    const TOKEN: &[u8] = b"ghp_S3cr3t/t0ken+value";

    fn reflections() -> std::sync::Arc<Reflections> {
        let mut reflections = Reflections::default();
        reflections.add(TOKEN);
        reflections.add(b"Bearer ghp_S3cr3t/t0ken+value");
        std::sync::Arc::new(reflections)
    }

    /// Every encoding an echo could use, alone and embedded at each alignment.
    #[test]
    fn every_form_is_masked_at_every_alignment() {
        let reflections = reflections();
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let mut echoes = vec![
            String::from_utf8(TOKEN.to_vec()).unwrap(),
            percent_encoded(TOKEN, true).iter().map(|&b| b as char).collect(),
            form_urlencoded::byte_serialize(TOKEN).collect(),
            serde_json::to_string("ghp_S3cr3t/t0ken+value").unwrap().replace('/', "\\/"),
            // A JSON document quoted in a JSON string: the header's quotes escaped twice over.
            serde_json::to_string(&json_escaped("\"Bearer ghp_S3cr3t/t0ken+value\"").replace('/', "\\/")).unwrap(),
        ];
        for prefix in ["", "u", "us", "user:"] {
            echoes.push(b64(&[prefix.as_bytes(), TOKEN].concat()));
            echoes.push(base64::engine::general_purpose::URL_SAFE.encode([prefix.as_bytes(), TOKEN, b"!"].concat()));
        }
        for echo in echoes {
            let mut body = format!("{{\"echo\":\"{echo}\"}}").into_bytes();
            assert!(reflections.mask(&mut body) > 0, "{echo}");
            let body = String::from_utf8(body).unwrap();
            for form in &reflections.forms {
                assert!(!body.as_bytes().windows(form.len()).any(|w| w == form.as_slice()), "{body}");
            }
            assert!(body.starts_with("{\"echo\":\"") && body.ends_with("\"}"), "the rest stays: {body}");
        }
    }

    async fn read(body: Redacting) -> Vec<u8> {
        body.collect().await.unwrap().to_bytes().to_vec()
    }

    fn chunked(bytes: &[u8], size: usize) -> WasiBody {
        let frames: Vec<Result<Frame<Bytes>, HttpError>> =
            bytes.chunks(size).map(|c| Ok(Frame::data(Bytes::copy_from_slice(c)))).collect();
        http_body_util::StreamBody::new(futures::stream::iter(frames)).boxed_unsync()
    }

    #[tokio::test]
    async fn matches_across_chunks_and_inside_gzip_are_masked() {
        let plain = [b"headers: Authorization=Bearer ".as_slice(), TOKEN, b"; done"].concat();
        for size in [1, 3, 7, 64] {
            let out =
                read(Redacting::new(chunked(&plain, size), reflections(), Coding::Identity, Box::new(|_| {}))).await;
            assert_eq!(out.len(), plain.len(), "same length at chunk size {size}");
            assert!(!out.windows(TOKEN.len()).any(|w| w == TOKEN), "chunk size {size}");
            assert!(out.ends_with(b"; done"));
        }
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(&plain).unwrap();
        let gzip = gzip.finish().unwrap();
        let out = read(Redacting::new(chunked(&gzip, 5), reflections(), Coding::Gzip, Box::new(|_| {}))).await;
        assert!(out.starts_with(b"headers: Authorization=") && !out.windows(TOKEN.len()).any(|w| w == TOKEN));
        let broken = Redacting::new(chunked(b"not gzip at all", 4), reflections(), Coding::Gzip, Box::new(|_| {}));
        assert!(broken.collect().await.is_err(), "an undecodable body is an error, not passed on");
    }

    /// Round four: a coding is scanned only when it is one the scan reads, declared once, with
    /// no transfer coding but plain chunking; every other combination is refused.
    #[test]
    fn only_one_known_content_coding_and_plain_chunking_are_scanned() {
        let of = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.append(*name, http::HeaderValue::from_static(value));
            }
            Coding::of(&headers)
        };
        assert!(matches!(of(&[]), Ok(Coding::Identity)));
        assert!(matches!(of(&[("content-encoding", "identity")]), Ok(Coding::Identity)));
        assert!(matches!(of(&[("content-encoding", "X-Gzip")]), Ok(Coding::Gzip)));
        assert!(matches!(
            of(&[("content-encoding", "deflate"), ("transfer-encoding", "chunked")]),
            Ok(Coding::Deflate)
        ));
        let refused: [&[(&str, &str)]; 7] = [
            &[("content-encoding", "gzip"), ("content-encoding", "identity")],
            &[("content-encoding", "gzip, identity")],
            &[("content-encoding", "")],
            &[("content-encoding", "br")],
            &[("transfer-encoding", "gzip, chunked")],
            &[("transfer-encoding", "chunked"), ("transfer-encoding", "chunked")],
            &[("transfer-encoding", "gzip")],
        ];
        for headers in refused {
            assert!(of(headers).is_err(), "{headers:?}");
        }
    }

    /// Round four: header names are scanned like values, in any case (hyper lower-cases them).
    #[test]
    fn a_header_named_by_a_reflection_is_dropped() {
        let reflections = reflections();
        let percent: String = form_urlencoded::byte_serialize(TOKEN).collect::<String>().to_ascii_lowercase();
        let mut headers = HeaderMap::new();
        headers.insert(http::HeaderName::from_bytes(percent.as_bytes()).unwrap(), http::HeaderValue::from_static("1"));
        headers.insert("x-other", http::HeaderValue::from_static("fine"));
        assert_eq!(reflections.mask_headers(&mut headers), 1);
        assert_eq!(headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["x-other"]);
    }
}
