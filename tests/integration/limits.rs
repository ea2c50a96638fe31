//! No value a user types can panic the host: absurd limits are refused naming the flag, and a
//! maximal page size with a forged cursor is answered.

use serde_json::json;

use crate::common::*;

/// Runs `mcpbox serve ARGS` with stdin closed, expects it to fail without a panic, and returns
/// its stderr.
fn refused(args: &[&str]) -> String {
    let output = mcpbox("serve").arg(fixture("echo")).args(args).stdin(std::process::Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} was accepted: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    stderr
}

#[test]
fn absurd_limits_are_refused_naming_the_flag() {
    for timeout in ["1e20", "1e19", "inf", "NaN", "-3", "0"] {
        let stderr = refused(&[&format!("--timeout={timeout}")]);
        assert!(stderr.contains("mcpbox: --timeout must be"), "--timeout {timeout}: {stderr}");
    }
    let stderr = refused(&["--memory", "18446744073709551615"]);
    assert!(stderr.contains("mcpbox: --memory must be at most 4096 MiB"), "{stderr}");
    let stderr = refused(&["--max-output", "99999999"]);
    assert!(stderr.contains("mcpbox: --max-output must be at most 1024 MiB"), "{stderr}");
    // Too large for a number at all: clap's own error, naming the flag.
    let stderr = refused(&["--memory", "99999999999999999999999"]);
    assert!(stderr.contains("--memory"), "{stderr}");
}

#[test]
fn absurd_limits_in_the_config_name_file_line_and_key() {
    let config = ConfigFile::new("[limits]\ntimeout_ms = 9223372036854775807\n");
    let stderr = refused(&config.args().map(|a| a.to_str().unwrap()));
    assert!(stderr.contains(":2:14: [limits] timeout_ms must be at most 86400000 ms"), "{stderr}");
}

#[test]
fn a_maximal_page_size_with_a_forged_cursor_is_answered() {
    let mut server =
        Server::start(&[fixture("conformance").into_os_string(), "--page-size".into(), usize::MAX.to_string().into()]);
    server.initialize("2025-06-18", json!({}));
    let all = server.result("tools/list", json!({}));
    assert!(all["nextCursor"].is_null(), "one page holds everything: {all}");
    let tools = all["tools"].as_array().unwrap();
    assert!(tools.len() > 2);
    // A cursor the server never made, after the first tool's name: the rest, in one page.
    use base64::Engine as _;
    let after_first = format!("v1:{}", tools[0]["name"].as_str().unwrap());
    let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(after_first);
    let rest = server.result("tools/list", json!({ "cursor": forged }));
    assert_eq!(rest["tools"].as_array().unwrap()[..], tools[1..], "{rest}");
    // One past every name: an empty page, not an error.
    let past = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("v1:\u{10ffff}");
    assert_eq!(server.result("tools/list", json!({ "cursor": past }))["tools"], json!([]));
    assert_still_serving(&mut server);
}
