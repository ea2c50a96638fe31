//! Credentials set on a plugin's request at the last moment: after the allow-list and address
//! checks, after the line that logs the request's URL, just before it is sent. The plugin built
//! the request without the value and never reads it back: the request is not its any more, and
//! the response is scanned for the value (`redaction.rs`).
//!
//! A credential goes only to its own origin (scheme, host and port, exactly); a redirect is the
//! guest's next request, judged by its own origin. The value replaces whatever the plugin put in
//! the same header or query parameter. `Host` stays a forbidden guest header (wasmtime-wasi-http
//! derives it from the authority checked here), so a plugin cannot send the credential to
//! another virtual host at an allowed address.

use std::sync::Arc;

use base64::Engine;
use http::{HeaderValue, header};
use wasmtime_wasi_http::WasiBody;
use zeroize::Zeroizing;

use super::redaction::Reflections;
use crate::runtime::grants::credentials::{Credential, LinkedAccounts, LinkedTokens, Placement};

/// A credential that could not be set: the request is not sent. Names the credential, never a
/// value.
pub(crate) struct Unsendable(pub(crate) String);

/// Whether `credential` goes on a request to `scheme://host:port`.
fn applies(credential: &Credential, (scheme, host, port): (&str, &str, u16)) -> bool {
    credential.applies_to(scheme, host, port) || crate::switched_off!("credentials.origin-scoped")
}

/// The caller's access tokens the credentials for this origin need, from its linked accounts
/// (the token vault); a missing one stops the request, naming the OAuth client.
pub(crate) async fn linked_tokens(
    credentials: &[Arc<Credential>],
    origin: (&str, &str, u16),
    linked: Option<&dyn LinkedAccounts>,
) -> Result<LinkedTokens, Unsendable> {
    let mut tokens = LinkedTokens::new();
    for credential in credentials.iter().filter(|c| applies(c, origin)) {
        for client in credential.value.linked_clients() {
            if tokens.contains_key(client) {
                continue;
            }
            let linked = linked.ok_or_else(|| {
                Unsendable(format!("the credential ({}) needs a caller with linked accounts", credential.describe()))
            })?;
            let token = linked.access_token(client).await.map_err(Unsendable)?;
            tokens.insert(client.to_owned(), token);
        }
    }
    Ok(tokens)
}

/// Sets every credential of `credentials` that belongs to `scheme://host:port` on `request`,
/// with the caller's `linked` tokens; the forms to mask in the response, or `None` when none
/// applied.
pub(crate) fn inject(
    credentials: &[Arc<Credential>],
    origin: (&str, &str, u16),
    request: &mut http::Request<WasiBody>,
    linked: &LinkedTokens,
) -> Result<Option<Reflections>, Unsendable> {
    let mut reflections = Reflections::default();
    let mut applied = false;
    for credential in credentials {
        if !applies(credential, origin) {
            continue;
        }
        applied = true;
        for secret in credential.secrets() {
            reflections.add(&secret.value());
        }
        for client in credential.value.linked_clients() {
            reflections.add(linked.get(client).map_or(&[][..], |t| &t[..]));
        }
        let value = credential.value.render(linked);
        reflections.add(&value);
        match &credential.placement {
            Placement::Header(name) => {
                set_header(request, name.clone(), &value, credential)?;
            }
            Placement::Basic { username } => {
                let mut pair = username.render(linked);
                pair.push(b':');
                pair.extend_from_slice(&value);
                let encoded = Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(&*pair));
                let header = Zeroizing::new(format!("Basic {}", *encoded).into_bytes());
                reflections.add(&pair);
                reflections.add(&header);
                set_header(request, header::AUTHORIZATION, &header, credential)?;
            }
            Placement::Query(name) => set_query(request, name, &value, credential)?,
        }
    }
    if !applied {
        return Ok(None);
    }
    // An encoding the scan cannot read would carry an echo past it (redaction.rs); a range
    // would cut an echo into pieces, each too short to match, that the plugin puts together.
    request.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    if !crate::switched_off!("credentials.no-ranges") {
        request.headers_mut().remove(header::RANGE);
        request.headers_mut().remove(header::IF_RANGE);
    }
    Ok(Some(reflections))
}

fn set_header(
    request: &mut http::Request<WasiBody>,
    name: http::HeaderName,
    value: &[u8],
    credential: &Credential,
) -> Result<(), Unsendable> {
    let mut value = HeaderValue::from_bytes(value).map_err(|_| {
        Unsendable(format!("the value of the credential ({}) is not a valid header value", credential.describe()))
    })?;
    value.set_sensitive(true);
    // `insert` drops every value the plugin set under the name.
    request.headers_mut().insert(name, value);
    Ok(())
}

/// Replaces the query parameter `name` (every occurrence the plugin wrote) with `value`; the
/// other parameters stay as the plugin wrote them.
fn set_query(
    request: &mut http::Request<WasiBody>,
    name: &str,
    value: &[u8],
    credential: &Credential,
) -> Result<(), Unsendable> {
    let uri = request.uri();
    let kept = uri.query().unwrap_or_default().split('&').filter(|pair| {
        let key = pair.split('=').next().unwrap_or_default();
        !pair.is_empty() && form_urlencoded::parse(key.as_bytes()).next().map_or(key != name, |(k, _)| k != name)
    });
    let mut query: Vec<String> = kept.map(str::to_owned).collect();
    let encoded: String = form_urlencoded::byte_serialize(value).collect();
    query.push(format!("{}={encoded}", form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()));
    let path_and_query = Zeroizing::new(format!("{}?{}", uri.path(), query.join("&")));
    let mut parts = uri.clone().into_parts();
    parts.path_and_query =
        Some(path_and_query.parse().map_err(|_| {
            Unsendable(format!("the credential ({}) does not make a valid query", credential.describe()))
        })?);
    *request.uri_mut() = http::Uri::from_parts(parts)
        .map_err(|_| Unsendable(format!("the credential ({}) does not make a valid URL", credential.describe())))?;
    Ok(())
}
