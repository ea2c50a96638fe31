//! What a plugin may say in `_meta` and icons (WIT 0.1.3): bounded JSON objects, no key under a
//! prefix MCP reserves, and, for MCP Apps (`io.modelcontextprotocol/ui`), nothing that would
//! reach past the plugin's grants from the user's browser. A client builds the app iframe's
//! Content Security Policy from `ui.csp` and its `allow` attribute from `ui.permissions`, so a
//! domain there is a place the app may send tool results to: it must lie within the plugin's
//! network allow-list, and a permission (camera, microphone, geolocation, clipboard) is the
//! operator's to allow (`[plugin.NAME] ui_permissions`).

use serde_json::{Map, Value};

use super::policy::{HostMatch, HostPattern, NetworkPolicy};

/// The most bytes one item's `_meta` may take, as JSON text.
pub const MAX_META_BYTES: usize = 64 << 10;
/// How deeply `_meta` may nest.
const MAX_META_DEPTH: usize = 16;
/// The most icons one item may have, and the longest `src` (a `data:` URI holds the image).
pub const MAX_ICONS: usize = 8;
pub const MAX_ICON_SRC_BYTES: usize = 64 << 10;
/// The MIME type of an MCP App's HTML (extensions/apps §UI Resource Format).
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The scheme of MCP App resources.
pub const UI_SCHEME: &str = "ui://";
/// The browser permissions an app may ask for (extensions/apps `UIResourceMeta.permissions`).
pub const UI_PERMISSIONS: [&str; 4] = ["camera", "microphone", "geolocation", "clipboardWrite"];

/// Where a piece of `_meta` stands: what its `ui` object may hold differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaPlace {
    /// A tool's descriptor: `ui.resourceUri`, `ui.visibility`.
    Tool,
    /// A resource's descriptor or contents: `ui.csp`, `ui.permissions`, `ui.domain`,
    /// `ui.prefersBorder`.
    Resource,
    /// Anything else (a prompt, a template, a result): no `ui`.
    Other,
}

/// What a plugin's `_meta` may reach: its network grant and the permissions the operator allows.
#[derive(Debug, Clone, Copy)]
pub struct MetaReach<'a> {
    pub network: Option<&'a NetworkPolicy>,
    pub permissions: &'a [String],
}

/// Whether `key` is under a prefix MCP reserves: one whose first or second label is
/// `modelcontextprotocol` or `mcp` (2026-07-28 basic §_meta: "the second label"; the 2025
/// revisions' examples put it first, as in `modelcontextprotocol.io/`).
pub fn reserved_key(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else { return false };
    prefix
        .split('.')
        .take(2)
        .any(|label| label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp"))
}

/// `text` as a `_meta` object a plugin may give at `place`, or why not.
pub fn check_meta(text: &str, place: MetaPlace, reach: MetaReach<'_>) -> Result<Map<String, Value>, String> {
    if text.len() > MAX_META_BYTES {
        return Err(format!("_meta is {} bytes; the limit is {MAX_META_BYTES}", text.len()));
    }
    let Ok(Value::Object(meta)) = serde_json::from_str::<Value>(text) else {
        return Err("_meta is not a JSON object".to_owned());
    };
    check_value(&Value::Object(meta.clone()), 0)?;
    if let Some(key) = meta.keys().find(|key| reserved_key(key)) {
        return Err(format!("_meta key `{key}` is under a prefix MCP reserves (only the host sets those)"));
    }
    if let Some(ui) = meta.get("ui") {
        check_ui(ui, place, reach)?;
    }
    if meta.contains_key("ui/resourceUri") {
        return Err("_meta `ui/resourceUri` is the deprecated form: use `ui.resourceUri`".to_owned());
    }
    Ok(meta)
}

/// No control characters and none a person would not see in any string (keys included; a
/// newline or tab in a value is fine), and nesting bounded.
fn check_value(value: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_META_DEPTH {
        return Err(format!("_meta nests deeper than {MAX_META_DEPTH} levels"));
    }
    let control = |text: &str, multiline: bool| {
        text.chars().find(|c| c.is_control() && !(multiline && matches!(c, '\n' | '\r' | '\t')))
    };
    // What a person would not see a client or a model still reads (readable.rs).
    let hidden = |text: &str, multiline: bool| {
        crate::readable::first_hidden(text, multiline)
            .filter(|_| !crate::switched_off!("descriptors.invisible-refused"))
    };
    let problem = |what: &str, text: &str, multiline: bool| {
        if let Some(c) = control(text, multiline) {
            return Err(format!("{what} the control character U+{:04X}", u32::from(c)));
        }
        match hidden(text, multiline) {
            Some(c) => Err(format!("{what} the invisible character U+{:04X}", u32::from(c))),
            None => Ok(()),
        }
    };
    match value {
        Value::String(text) => problem("_meta contains", text, true),
        Value::Array(items) => items.iter().try_for_each(|item| check_value(item, depth + 1)),
        Value::Object(object) => object.iter().try_for_each(|(key, item)| {
            problem("a _meta key contains", key, false)?;
            check_value(item, depth + 1)
        }),
        _ => Ok(()),
    }
}

/// An MCP Apps `ui` object at `place`.
fn check_ui(ui: &Value, place: MetaPlace, reach: MetaReach<'_>) -> Result<(), String> {
    let Value::Object(ui) = ui else { return Err("_meta `ui` is not an object".to_owned()) };
    let allowed: &[&str] = match place {
        MetaPlace::Tool => &["resourceUri", "visibility"],
        MetaPlace::Resource => &["csp", "permissions", "domain", "prefersBorder"],
        MetaPlace::Other => &[],
    };
    if let Some(key) = ui.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(format!("_meta `ui.{key}` has no meaning here (MCP Apps: {})", allowed.join(", ")));
    }
    if let Some(uri) = ui.get("resourceUri") {
        let uri = uri.as_str().ok_or("_meta `ui.resourceUri` is not a string")?;
        if !uri.starts_with(UI_SCHEME) {
            return Err(format!("_meta `ui.resourceUri` `{uri}` is not a ui:// URI"));
        }
    }
    if let Some(visibility) = ui.get("visibility") {
        let valid = visibility
            .as_array()
            .is_some_and(|items| items.iter().all(|v| v.as_str().is_some_and(|v| v == "model" || v == "app")));
        if !valid {
            return Err("_meta `ui.visibility` is not a list of \"model\" and \"app\"".to_owned());
        }
    }
    if let Some(csp) = ui.get("csp") {
        let Value::Object(csp) = csp else { return Err("_meta `ui.csp` is not an object".to_owned()) };
        for (directive, domains) in csp {
            if !["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"].contains(&directive.as_str()) {
                return Err(format!("_meta `ui.csp.{directive}` is not a CSP setting MCP Apps defines"));
            }
            let domains = domains.as_array().ok_or_else(|| format!("_meta `ui.csp.{directive}` is not a list"))?;
            for domain in domains {
                let domain = domain.as_str().ok_or_else(|| format!("_meta `ui.csp.{directive}` holds a non-string"))?;
                if !within_network(domain, reach.network) {
                    return Err(format!(
                        "_meta `ui.csp.{directive}` names `{domain}`, outside the plugin's network grant: the app could send data there from the user's browser"
                    ));
                }
            }
        }
    }
    if let Some(permissions) = ui.get("permissions") {
        let Value::Object(permissions) = permissions else {
            return Err("_meta `ui.permissions` is not an object".to_owned());
        };
        for permission in permissions.keys() {
            if !UI_PERMISSIONS.contains(&permission.as_str()) {
                return Err(format!("_meta `ui.permissions.{permission}` is not a permission MCP Apps defines"));
            }
            if !reach.permissions.iter().any(|allowed| allowed == permission) {
                return Err(format!(
                    "_meta `ui.permissions.{permission}` is not allowed for this plugin (the operator's `ui_permissions`)"
                ));
            }
        }
    }
    if let Some(domain) = ui.get("domain") {
        // The sandbox origin the client gives the app: host-specific, never a place the app
        // sends data to; bounded like any string.
        domain.as_str().ok_or("_meta `ui.domain` is not a string")?;
    }
    if ui.get("prefersBorder").is_some_and(|b| !b.is_boolean()) {
        return Err("_meta `ui.prefersBorder` is not a boolean".to_owned());
    }
    Ok(())
}

/// Whether the origin `domain` (`https://api.example.com`, `wss://*.example.com`) lies within
/// the network grant: every host it can name is one the allow-list admits.
pub fn within_network(domain: &str, network: Option<&NetworkPolicy>) -> bool {
    let Some(network) = network else { return false };
    let (scheme, rest) = match domain.split_once("://") {
        Some(("wss", rest)) => ("https", rest),
        Some(("ws", rest)) => ("http", rest),
        Some((scheme, rest)) => (scheme, rest),
        None => return false,
    };
    let Ok(wanted) = format!("{scheme}://{rest}").parse::<HostPattern>() else { return false };
    network.allow.iter().any(|allow| covers(allow, &wanted))
}

/// Whether `allow` admits every host, scheme and port `wanted` names.
fn covers(allow: &HostPattern, wanted: &HostPattern) -> bool {
    let scheme = allow.scheme.is_none() || allow.scheme == wanted.scheme;
    let port = allow.port.is_none() || allow.port == wanted.port;
    let host = match (&allow.host, &wanted.host) {
        (HostMatch::Any, _) => true,
        (HostMatch::Exact(a), HostMatch::Exact(w)) => a == w,
        (HostMatch::Subdomains(a), HostMatch::Exact(w)) => w.ends_with(&format!(".{a}")),
        (HostMatch::Subdomains(a), HostMatch::Subdomains(w)) => w == a || w.ends_with(&format!(".{a}")),
        _ => false,
    };
    scheme && port && host
}

/// Whether an icon's `src` is one a client may load: a `data:` URI, or an `https:` URL on a host
/// the plugin's network grant admits.
pub fn icon_allowed(src: &str, network: Option<&NetworkPolicy>) -> bool {
    if src.starts_with("data:") {
        return true;
    }
    let Some(rest) = src.strip_prefix("https://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    !authority.contains('@') && within_network(&format!("https://{authority}"), network)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn network(allow: &[&str]) -> NetworkPolicy {
        NetworkPolicy {
            allow: allow.iter().map(|a| a.parse().unwrap()).collect(),
            allow_private: false,
            credentials: Vec::new(),
            routes: Default::default(),
        }
    }

    #[test]
    fn reserved_prefixes_are_refused() {
        for key in
            ["io.modelcontextprotocol/ui", "dev.mcp/x", "modelcontextprotocol.io/x", "org.modelcontextprotocol.api/x"]
        {
            assert!(reserved_key(key), "{key}");
        }
        for key in ["ui", "com.example.mcp/x", "com.example/x", "mcp"] {
            assert!(!reserved_key(key), "{key}");
        }
        let none = MetaReach { network: None, permissions: &[] };
        assert!(check_meta(r#"{"io.modelcontextprotocol/related-task": {}}"#, MetaPlace::Other, none).is_err());
        assert!(check_meta(r#"{"com.example/x": "a\nb"}"#, MetaPlace::Other, none).is_ok());
        assert!(check_meta(r#"{"x": "a\u0007"}"#, MetaPlace::Other, none).unwrap_err().contains("U+0007"));
        assert!(check_meta("[1]", MetaPlace::Other, none).unwrap_err().contains("not a JSON object"));
        let big = format!(r#"{{"x": "{}"}}"#, "a".repeat(MAX_META_BYTES));
        assert!(check_meta(&big, MetaPlace::Other, none).unwrap_err().contains("limit"));
    }

    #[test]
    fn app_domains_and_permissions_stay_within_the_grants() {
        let net = network(&["https://api.example.com", "https://*.cdn.example.net"]);
        let reach = MetaReach { network: Some(&net), permissions: &["clipboardWrite".to_owned()] };
        let ok = r#"{"ui": {"csp": {"connectDomains": ["https://api.example.com", "wss://api.example.com"],
            "resourceDomains": ["https://*.cdn.example.net", "https://a.cdn.example.net"]},
            "permissions": {"clipboardWrite": {}}, "prefersBorder": true}}"#;
        assert!(check_meta(ok, MetaPlace::Resource, reach).is_ok());
        for bad in [
            r#"{"ui": {"csp": {"connectDomains": ["https://evil.example"]}}}"#,
            r#"{"ui": {"csp": {"connectDomains": ["https://*.example.com"]}}}"#,
            r#"{"ui": {"csp": {"connectDomains": ["http://api.example.com"]}}}"#,
            r#"{"ui": {"permissions": {"camera": {}}}}"#,
            r#"{"ui": {"resourceUri": "ui://x"}}"#,
        ] {
            assert!(check_meta(bad, MetaPlace::Resource, reach).is_err(), "{bad}");
        }
        assert!(
            check_meta(r#"{"ui": {"resourceUri": "ui://x/app", "visibility": ["app"]}}"#, MetaPlace::Tool, reach)
                .is_ok()
        );
        assert!(check_meta(r#"{"ui": {"resourceUri": "https://x"}}"#, MetaPlace::Tool, reach).is_err());
        assert!(check_meta(r#"{"ui": {"visibility": ["root"]}}"#, MetaPlace::Tool, reach).is_err());
        assert!(icon_allowed("data:image/png;base64,AAAA", None));
        assert!(icon_allowed("https://api.example.com/icon.png", Some(&net)));
        assert!(!icon_allowed("https://evil.example/icon.png", Some(&net)));
        assert!(!icon_allowed("http://api.example.com/icon.png", Some(&net)));
    }
}
