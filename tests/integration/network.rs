//! Network policy: `wasi:http` only with a grant, only to allow-listed hosts, only to public
//! addresses (after DNS) unless the operator allows private ones, every redirect hop checked
//! again; raw sockets and DNS never. A local HTTP server records every request that reaches it,
//! so "refused" means the request never left the host.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::*;

/// An HTTP server on 127.0.0.1 that logs request lines: `/hello` answers, `/redirect?to=URL`
/// redirects.
struct TestServer {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl TestServer {
    fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let line = head.lines().next().unwrap_or_default().to_owned();
                log.lock().unwrap().push(line.clone());
                let path = line.split(' ').nth(1).unwrap_or("/");
                let response = match path.strip_prefix("/redirect?to=") {
                    Some(to) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    None => "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello".to_owned(),
                };
                let _ = stream.write_all(response.as_bytes());
            }
        });
        TestServer { port, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// Serves net (under `policy`) and the conformance plugin; keep the config alive with the server.
fn serve(policy: &str) -> (Server, ConfigFile) {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.net]\n{policy}\n",
        fixture("net"),
        fixture("conformance")
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    (server, config)
}

fn fetch(server: &mut Server, url: &str, redirects: u32) -> Value {
    call_tool(server, "net.fetch", json!({ "url": url, "redirects": redirects }))
}

fn assert_refused(result: &Value, code: &str) {
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(result).contains(code), "expected {code}: {result}");
}

#[test]
fn a_plugin_importing_wasi_http_needs_a_grant_to_load() {
    let mut server = Server::start(&[fixture("net"), fixture("conformance")]);
    server.initialize("2025-06-18", json!({}));
    assert!(server.wait_for_log("has no network grant", LOGGED), "{}", server.stderr());
    let log = server.stderr();
    assert!(log.contains("plugin `net` imports `wasi:http/"), "names the interface: {log}");
    assert!(log.contains("[plugin.net] network = ["), "says how to grant it: {log}");
    let tools = server.result("tools/list", json!({}));
    assert!(!tools.to_string().contains("net.fetch"));
    assert_still_serving(&mut server);
}

#[test]
fn the_denying_stub_refuses_every_request() {
    let target = TestServer::start();
    let (mut server, _config) = serve("stub_ungranted = true");
    assert_refused(&fetch(&mut server, &target.url("/hello"), 0), "HttpRequestDenied");
    assert!(target.requests().is_empty(), "{:?}", target.requests());
    assert_still_serving(&mut server);
}

/// The operator's `[network] hosts` sends a name to the address it gives (a loopback stand-in
/// here), for plugins whose allow-list names it; a name routed but not allow-listed is refused
/// like any other, and nothing reaches the stand-in.
#[test]
fn a_name_the_operator_routes_is_reached_only_through_the_allow_list() {
    let target = TestServer::start();
    let port = target.port;
    let (mut server, _config) = serve(&format!(
        "network = [\"http://routed.test\"]\n\n[network]\n\
         hosts = {{ \"routed.test\" = \"127.0.0.1:{port}\", \"unlisted.test\" = \"127.0.0.1:{port}\" }}"
    ));
    assert_refused(&fetch(&mut server, "http://unlisted.test/hello", 0), "HttpRequestDenied");
    assert!(target.requests().is_empty(), "a refused request reached the stand-in: {:?}", target.requests());
    let reached = fetch(&mut server, "http://routed.test/hello", 0);
    assert_eq!(reached["isError"], false, "{reached}");
    assert!(text(&reached).contains("hello"), "{reached}");
    assert_eq!(target.requests(), ["GET /hello HTTP/1.1"]);
}

#[test]
fn only_allow_listed_public_addresses_are_reached() {
    let target = TestServer::start();
    let port = target.port;
    let (mut server, _config) = serve(&format!(
        "network = [\"http://127.0.0.1:{port}\", \"http://localhost:{port}\", \"http://169.254.169.254\", \"http://[::1]:{port}\"]"
    ));
    // Allow-listed, but loopback or link-local: refused after resolution.
    for url in [
        target.url("/hello"),
        format!("http://localhost:{port}/hello"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("http://[::1]:{port}/"),
    ] {
        assert_refused(&fetch(&mut server, &url, 0), "DestinationIpProhibited");
    }
    // Not allow-listed at all: another port, another scheme, another host.
    for url in [
        format!("http://127.0.0.1:{}/hello", port.wrapping_add(1)),
        format!("https://127.0.0.1:{port}/hello"),
        "https://example.com/".to_owned(),
        "http://127.0.0.2/".to_owned(),
    ] {
        assert_refused(&fetch(&mut server, &url, 0), "HttpRequestDenied");
    }
    assert!(target.requests().is_empty(), "a refused request reached the server: {:?}", target.requests());
    // The client is told why (the guest only gets an error code).
    let warnings = server.take_notifications("notifications/message");
    assert!(
        warnings.iter().any(|n| n["params"]["data"]
            .as_str()
            .is_some_and(|d| d.contains("mcpbox denied plugin `net`") && d.contains("is not in the allow-list"))),
        "{warnings:?}"
    );
    assert_still_serving(&mut server);
}

#[test]
fn redirects_are_checked_at_every_hop() {
    let allowed = TestServer::start();
    let forbidden = TestServer::start();
    let (mut server, _config) =
        serve(&format!("network = [\"http://127.0.0.1:{}\"]\nallow_private_network = true", allowed.port));
    // The positive control: the grant works.
    assert_eq!(text(&fetch(&mut server, &allowed.url("/hello"), 0)), "200 hello");
    // A redirect to a host that is not allowed stops at the redirect.
    let via = allowed.url(&format!("/redirect?to={}", forbidden.url("/hello")));
    assert_refused(&fetch(&mut server, &via, 3), "HttpRequestDenied");
    let metadata = allowed.url("/redirect?to=http://169.254.169.254/latest/meta-data/");
    assert_refused(&fetch(&mut server, &metadata, 3), "HttpRequestDenied");
    assert!(forbidden.requests().is_empty(), "{:?}", forbidden.requests());
    // A redirect within the allow-list is followed.
    let inside = allowed.url(&format!("/redirect?to={}", allowed.url("/hello")));
    assert_eq!(text(&fetch(&mut server, &inside, 3)), "200 hello");
    assert_eq!(allowed.requests().len(), 5, "{:?}", allowed.requests());
    assert_still_serving(&mut server);
}

/// `network = ["*"]` (the grant the bundled `fetch` needs: any host the user names) reaches any
/// public host, yet no loopback, private or link-local address, directly or by a redirect;
/// only `allow_private_network` opens those, as for any other grant.
#[test]
fn any_host_means_any_public_host() {
    let local = TestServer::start();
    let (mut server, _config) = serve("network = [\"*\"]");
    // Admitted by the pattern, refused by the address.
    assert_refused(&fetch(&mut server, &local.url("/hello"), 0), "DestinationIpProhibited");
    let metadata = "http://169.254.169.254/latest/meta-data/";
    assert_refused(&fetch(&mut server, metadata, 0), "DestinationIpProhibited");
    assert_refused(
        &fetch(&mut server, &format!("http://localhost:{}/hello", local.port), 0),
        "DestinationIpProhibited",
    );
    assert!(local.requests().is_empty(), "{:?}", local.requests());
    drop(server);
    // The positive control: the same grant with private addresses allowed reaches the server.
    let (mut server, _config) = serve("network = [\"*\"]\nallow_private_network = true");
    assert_eq!(text(&fetch(&mut server, &local.url("/hello"), 0)), "200 hello");
    let https_only = serve("network = [\"https://*\"]\nallow_private_network = true");
    let (mut https_only, _https_config) = https_only;
    assert_refused(&fetch(&mut https_only, &local.url("/hello"), 0), "HttpRequestDenied");
    assert_eq!(local.requests().len(), 1, "{:?}", local.requests());
    assert_still_serving(&mut server);
}

#[test]
fn sockets_and_dns_stay_off_even_with_a_network_grant() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (mut server, _config) = serve(&format!("network = [\"http://{address}\"]\nallow_private_network = true"));
    let connect = call_tool(&mut server, "net.tcp_connect", json!({ "address": address }));
    assert_eq!(connect["isError"], true, "{connect}");
    assert!(listener.accept().is_err(), "the guest's socket reached the listener");
    for name in ["localhost", "example.com"] {
        let resolved = call_tool(&mut server, "net.resolve", json!({ "name": name }));
        assert_eq!(resolved["isError"], true, "resolving {name}: {resolved}");
    }
    assert_still_serving(&mut server);
}

#[test]
fn inspect_shows_requested_grants_beside_the_configured_ones() {
    let config =
        ConfigFile::new("[plugin.net]\nnetwork = [\"https://example.com\"]\nenv = { NET_TOKEN = \"t0ken\" }\n");
    let output = mcpbox("inspect").arg(fixture("net")).args(config.args()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("reason given: fetches the URLs it is given"), "{stdout}");
    assert!(stdout.contains("network: https://example.com, http://127.0.0.1 → https://example.com:443"), "{stdout}");
    assert!(stdout.contains("env: NET_TOKEN → NET_TOKEN"), "{stdout}");
    assert!(!stdout.contains("t0ken"), "inspect must not print environment values");
    assert!(stdout.contains("loads under this policy: yes"), "{stdout}");

    // Without a config: the request is shown, nothing is granted, and the load problem is named.
    let bare = mcpbox("inspect").args(["--json"]).arg(fixture("net")).output().unwrap();
    let description: Value = serde_json::from_slice(&bare.stdout).unwrap();
    assert_eq!(description["requested"]["network"], json!(["https://example.com", "http://127.0.0.1"]));
    assert_eq!(description["granted"]["network"], Value::Null);
    assert!(description["loadProblem"].as_str().unwrap().contains("has no network grant"), "{description}");
}

/// One address of every block the IANA special-purpose registries (host/data/iana/) do not
/// mark globally reachable, multicast, and every form that embeds a non-public IPv4 address.
const SPECIAL_PURPOSE: &[&str] = &[
    // IPv4 registry
    "0.1.2.3",
    "0.0.0.0",
    "10.1.2.3",
    "100.64.0.1",
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "192.0.0.100",
    "192.0.0.1",
    "192.0.0.8",
    "192.0.0.170",
    "192.0.0.171",
    "192.0.2.1",
    "192.88.99.1",
    "192.88.99.2",
    "192.168.1.1",
    "198.18.0.1",
    "198.51.100.1",
    "203.0.113.1",
    "240.0.0.1",
    "255.255.255.255",
    "224.0.0.1",
    // IPv6 registry
    "::1",
    "::",
    "64:ff9b:1::1",
    "100::1",
    "100:0:0:1::1",
    "2001:100::1",
    "2001::1",
    "2001:2::1",
    "2001:10::1",
    "2001:db8::1",
    "2002::1",
    "3fff::1",
    "5f00::1",
    "fc00::1",
    "fe80::1",
    "ff02::1",
    // IPv4 inside IPv6: mapped, NAT64, IPv4-compatible, 6to4, ISATAP
    "::ffff:127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "::10.0.0.1",
    "2002:c0a8:101::1",
    "2606:4700::5efe:a00:1",
];

#[test]
fn every_special_purpose_address_is_refused_when_a_name_resolves_to_it() {
    let dir = temp_dir();
    let hosts = dir.path().join("hosts");
    let mut lines = String::new();
    for (i, address) in SPECIAL_PURPOSE.iter().enumerate() {
        lines.push_str(&format!("{address} host{i}.test\n"));
    }
    // A globally reachable address resolves and is tried (and fails: no network here).
    lines.push_str("192.31.196.1 reachable.test\n");
    std::fs::write(&hosts, lines).unwrap();
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.net]\nnetwork = [\"http://*.test\"]\n",
        fixture("net"),
        fixture("conformance")
    ));
    let [flag, path] = config.args();
    let mut server = Server::start_isolated(&hosts, &[flag, path]);
    server.initialize("2025-06-18", json!({}));
    for (i, address) in SPECIAL_PURPOSE.iter().enumerate() {
        let result = fetch(&mut server, &format!("http://host{i}.test/"), 0);
        assert_refused(&result, "DestinationIpProhibited");
        let warnings = Value::from(server.take_notifications("notifications/message")).to_string();
        let shown = address.parse::<std::net::IpAddr>().unwrap().to_string();
        assert!(
            warnings.contains(&format!("host{i}.test resolves to {shown}, which is not a public address")),
            "{address}: {warnings}"
        );
    }
    let reachable = fetch(&mut server, "http://reachable.test/", 0);
    assert_eq!(reachable["isError"], true, "{reachable}");
    assert!(!text(&reachable).contains("DestinationIpProhibited"), "{reachable}");
    assert_still_serving(&mut server);
}
