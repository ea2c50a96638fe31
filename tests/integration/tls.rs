//! HTTPS on the listener: a certificate from PEM files serves MCP, a renewed certificate
//! written over the files serves new connections without a restart, and `[auth]` refuses to
//! take tokens over plain HTTP off loopback.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

/// A self-signed certificate for 127.0.0.1 and its key, written to `dir` (openssl, Debian's).
fn certificate(dir: &Path, name: &str) -> reqwest::Certificate {
    let (cert, key) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
    // A config of its own: openssl's default one makes a CA certificate, which rustls refuses
    // as a server's own.
    let config = dir.join("openssl.cnf");
    std::fs::write(&config, "[req]\ndistinguished_name = dn\n[dn]\n").unwrap();
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"])
        .arg("-config")
        .arg(&config)
        .args(["-subj", &format!("/CN={name}"), "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE", "-addext", "extendedKeyUsage=serverAuth"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    reqwest::Certificate::from_pem(&std::fs::read(&cert).unwrap()).unwrap()
}

/// mcpbox serving the conformance plugin over HTTPS with this pair; its URL.
fn serve_tls(cert: &Path, key: &Path) -> (Server, String) {
    Server::start_http(&[
        fixture("conformance").as_os_str(),
        "--tls-cert".as_ref(),
        cert.as_os_str(),
        "--tls-key".as_ref(),
        key.as_os_str(),
    ])
}

/// A client that trusts `only` this certificate.
fn trusting(only: reqwest::Certificate) -> reqwest::Client {
    let _ = http_client(); // installs ring as rustls's provider
    reqwest::Client::builder().tls_certs_only([only]).build().unwrap()
}

async fn list_tools(client: &reqwest::Client, url: &str) -> Result<u16, reqwest::Error> {
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": modern_meta() } });
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(list.to_string())
        .send()
        .await?;
    Ok(response.status().as_u16())
}

#[tokio::test]
async fn https_serves_and_a_renewed_certificate_is_picked_up_without_a_restart() {
    let dir = temp_dir();
    let first = certificate(dir.path(), "first");
    let (cert, key) = (dir.path().join("first.crt"), dir.path().join("first.key"));
    let (server, url) = serve_tls(&cert, &key);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    assert_eq!(list_tools(&trusting(first.clone()), &url).await.unwrap(), 200);
    // Plain HTTP to the TLS port gets no MCP answer.
    let plain = url.replacen("https://", "http://", 1);
    assert!(!matches!(list_tools(&http_client(), &plain).await, Ok(200)));

    // A renewed certificate (another key) written over the files: new connections get it.
    let second = certificate(dir.path(), "second");
    std::fs::copy(dir.path().join("second.key"), &key).unwrap();
    std::fs::copy(dir.path().join("second.crt"), &cert).unwrap();
    let renewed = trusting(second);
    // Once the watcher has read the new pair (a debounced file event; it logs it), within
    // moments.
    assert!(server.wait_for_log("TLS certificate reloaded", Duration::from_secs(10)), "{}", server.stderr());
    let deadline = Instant::now() + Duration::from_secs(3);
    while list_tools(&renewed, &url).await.is_err() {
        assert!(Instant::now() < deadline, "the renewed certificate was not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And the old one is no longer presented.
    assert!(list_tools(&trusting(first), &url).await.is_err());
}

/// cert-manager's way: the pair in a Kubernetes secret volume, `tls.crt` and `tls.key` links
/// through `..data`, which the kubelet swaps for a new directory when the certificate renews.
#[tokio::test]
async fn a_certificate_in_a_kubernetes_secret_volume_is_picked_up_when_it_is_rotated() {
    let dir = temp_dir();
    let volume = dir.path().join("tls");
    let swap_in = |name: &str| {
        let version = volume.join(format!("..{name}"));
        std::fs::create_dir_all(&version).unwrap();
        std::fs::copy(dir.path().join(format!("{name}.crt")), version.join("tls.crt")).unwrap();
        std::fs::copy(dir.path().join(format!("{name}.key")), version.join("tls.key")).unwrap();
        std::os::unix::fs::symlink(format!("..{name}"), volume.join("..data_tmp")).unwrap();
        std::fs::rename(volume.join("..data_tmp"), volume.join("..data")).unwrap();
    };
    let first = certificate(dir.path(), "first");
    swap_in("first");
    for file in ["tls.crt", "tls.key"] {
        std::os::unix::fs::symlink(format!("..data/{file}"), volume.join(file)).unwrap();
    }
    let (cert, key) = (volume.join("tls.crt"), volume.join("tls.key"));
    let (server, url) = serve_tls(&cert, &key);
    assert_eq!(list_tools(&trusting(first.clone()), &url).await.unwrap(), 200);
    let second = certificate(dir.path(), "second");
    swap_in("second");
    assert!(server.wait_for_log("TLS certificate reloaded", Duration::from_secs(10)), "{}", server.stderr());
    let deadline = Instant::now() + Duration::from_secs(3);
    while list_tools(&trusting(second.clone()), &url).await.is_err() {
        assert!(Instant::now() < deadline, "the rotated certificate was not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(list_tools(&trusting(first), &url).await.is_err());
}

#[test]
fn auth_off_loopback_needs_tls_or_a_proxy_in_front() {
    let config =
        ConfigFile::new("[auth]\nissuers = [\"http://127.0.0.1:1\"]\nresource = \"https://mcp.example.com/mcp\"\n");
    let [flag, path] = config.args();
    let mut serve = mcpbox("serve");
    serve.args([flag, path]).args(["--http", "0.0.0.0:0"]);
    let error = refused_start(serve);
    assert!(error.contains("would take access tokens in the clear"), "{error}");
    assert!(error.contains("--behind-tls-proxy"), "{error}");
}
