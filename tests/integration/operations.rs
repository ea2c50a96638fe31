//! The signals operators watch mcpbox by (docs/deploy.md): Prometheus metrics that
//! `promtool check metrics` accepts and a real Prometheus scrapes, OpenTelemetry spans that an
//! OTLP receiver decodes with the official protobuf definitions and finds parented under the
//! client's span, and JSON log lines with the request's fields and never a secret.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::authorization::Provider;
use super::http::{messages, post};
use super::operations_support::*;
use crate::common::*;

/// The value of the sample `series` (name and labels exactly as rendered) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test]
async fn metrics_count_calls_by_outcome_pass_promtool_and_are_scraped_by_a_real_prometheus() {
    let mut server = chaos(&["--timeout", "1", "--memory", "64", "--metrics", "127.0.0.1:0"]);
    let url = metrics_url(&server);
    for value in [1, 2] {
        assert_eq!(call_tool(&mut server, "chaos.echo", json!({ "value": value }))["isError"], false);
    }
    assert_eq!(call_tool(&mut server, "chaos.echo", json!({ "wrong": 1 }))["isError"], true);
    assert_eq!(call_tool(&mut server, "chaos.loop_forever", json!({}))["isError"], true);
    assert_eq!(call_tool(&mut server, "chaos.alloc_forever", json!({}))["isError"], true);
    // Not served: counted nowhere under a name the client chose.
    server.call("tools/call", json!({ "name": "chaos.nope", "arguments": {} }));

    let text = http_client().get(&url).send().await.unwrap().text().await.unwrap();
    let series =
        |labels: &str| format!("mcpbox_tool_calls_total{{outcome=\"{labels}\",plugin=\"chaos\",tool=\"chaos.echo\"}}");
    assert_eq!(sample(&text, &series("ok")), Some(2.0), "{text}");
    assert_eq!(sample(&text, &series("tool_error")), Some(1.0), "{text}");
    let chaos = |outcome: &str, tool: &str| {
        sample(
            &text,
            &format!("mcpbox_tool_calls_total{{outcome=\"{outcome}\",plugin=\"chaos\",tool=\"chaos.{tool}\"}}"),
        )
    };
    assert_eq!(chaos("timeout", "loop_forever"), Some(1.0), "{text}");
    assert_eq!(chaos("memory_limit", "alloc_forever"), Some(1.0), "{text}");
    assert!(!text.contains("chaos.nope"), "{text}");
    assert_eq!(sample(&text, "mcpbox_guest_timeouts_total{plugin=\"chaos\"}"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "mcpbox_guest_memory_limit_hits_total{plugin=\"chaos\"}"), Some(1.0), "{text}");
    let echo = "{plugin=\"chaos\",tool=\"chaos.echo\"}";
    assert_eq!(sample(&text, &format!("mcpbox_tool_call_duration_seconds_count{echo}")), Some(3.0), "{text}");
    assert!(sample(&text, &format!("mcpbox_tool_output_bytes_total{echo}")).is_some_and(|b| b > 20.0), "{text}");
    assert_eq!(sample(&text, "mcpbox_instances_in_use"), Some(0.0), "{text}");
    assert_eq!(sample(&text, "mcpbox_instance_pool_capacity"), Some(2000.0), "{text}");
    assert_eq!(sample(&text, "mcpbox_sessions{transport=\"stdio\"}"), Some(1.0), "{text}");
    // initialize, initialized, six calls.
    assert_eq!(sample(&text, "mcpbox_requests_total{transport=\"stdio\"}"), Some(8.0), "{text}");

    // promtool's linter: names, types, help texts, units, counters' `_total`.
    let mut promtool = Command::new(tool("PROMTOOL"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut promtool.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    assert!(checked.status.success() && said.trim().is_empty(), "promtool check metrics: {said}\n{text}");

    // A real Prometheus scrapes the listener and answers queries over what it stored.
    let target = url.trim_start_matches("http://").trim_end_matches("/metrics");
    let prometheus = Prometheus::scraping(target);
    let up = prometheus.wait_for("up{job=\"mcpbox\"}", |v| v == "1").await;
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "{up}");
    let timeouts = prometheus
        .wait_for("sum(mcpbox_tool_calls_total{outcome=\"timeout\",tool=\"chaos.loop_forever\"})", |v| v == "1")
        .await;
    assert_eq!(timeouts["data"]["result"][0]["value"][1], "1", "{timeouts}");
    let quantile =
        "histogram_quantile(0.5, sum by (le) (mcpbox_tool_call_duration_seconds_bucket{tool=\"chaos.echo\"}))";
    let median = prometheus.wait_for(quantile, |v| v.parse::<f64>().is_ok_and(f64::is_finite)).await;
    let median: f64 = median["data"]["result"][0]["value"][1].as_str().unwrap_or("NaN").parse().unwrap();
    assert!(median > 0.0 && median < 1.0, "the median echo took {median} s");
    assert_still_serving(&mut server);
}

#[tokio::test]
async fn streamable_http_sessions_and_streams_are_counted_while_open() {
    let (server, url) =
        Server::start_http(&[fixture("echo").as_os_str(), "--metrics".as_ref(), "127.0.0.1:0".as_ref()]);
    let metrics = metrics_url(&server);
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let response = post(&url, &init, &[]).await;
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    messages(response).await;
    // The standalone stream (GET), held open while the metrics are read.
    let stream = http_client()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let text = http_client().get(&metrics).send().await.unwrap().text().await.unwrap();
    assert_eq!(sample(&text, "mcpbox_sessions{transport=\"streamable_http\"}"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "mcpbox_streams{transport=\"streamable_http\"}"), Some(1.0), "{text}");
    assert!(sample(&text, "mcpbox_requests_total{transport=\"streamable_http\"}").is_some_and(|n| n >= 2.0), "{text}");
    drop(stream);
    let ended = http_client().delete(&url).header("mcp-session-id", &session).send().await.unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    let end = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = http_client().get(&metrics).send().await.unwrap().text().await.unwrap();
        let open = (
            sample(&text, "mcpbox_sessions{transport=\"streamable_http\"}"),
            sample(&text, "mcpbox_streams{transport=\"streamable_http\"}"),
        );
        if open == (Some(0.0), Some(0.0)) {
            break;
        }
        assert!(std::time::Instant::now() < end, "still counted open after the session ended: {open:?}\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn spans_reach_an_otlp_receiver_as_children_of_the_clients_span() {
    let receiver = Receiver::start();
    // Spans go out whatever the log level lets through.
    let mut server = Server::start_with_env(
        &[fixture("chaos").as_os_str(), "--otlp-endpoint".as_ref(), receiver.endpoint.as_ref()],
        &[("MCPBOX_LOG", "warn")],
    );
    server.initialize("2025-06-18", json!({}));
    let (trace, client_span) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let traced = json!({ "name": "chaos.echo", "arguments": { "value": "traced" },
        "_meta": { "traceparent": format!("00-{trace}-{client_span}-01") } });
    assert_eq!(text(&server.result("tools/call", traced)), "\"traced\"");
    assert_eq!(call_tool(&mut server, "chaos.echo", json!({ "value": "a root" }))["isError"], false);
    // The batch goes out at the latest when mcpbox ends.
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(30)).is_some_and(|status| status.success()), "{}", server.stderr());
    let spans = receiver.spans(4);

    let requests: Vec<&Value> = spans.iter().filter(|s| s["name"] == "tools/call chaos.echo").collect();
    assert_eq!(requests.len(), 2, "{spans:#?}");
    let request = requests.iter().find(|s| s["trace_id"] == trace).unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(request["parent_span_id"], client_span, "{request}");
    assert_eq!(request["kind"], "SERVER", "{request}");
    assert_eq!(request["service"], "mcpbox", "{request}");
    let attributes = &request["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call", "{request}");
    assert_eq!(attributes["gen_ai.tool.name"], "chaos.echo", "{request}");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool", "{request}");
    assert_eq!(attributes["mcpbox.plugin"], "chaos", "{request}");
    assert_eq!(attributes["mcpbox.outcome"], "ok", "{request}");
    assert_eq!(attributes["mcp.protocol.version"], "2025-06-18", "{request}");
    assert!(attributes["jsonrpc.request.id"].is_string(), "{request}");

    // (The plugin's calls at load are guest spans too, roots of their own.)
    let guests: Vec<&Value> = spans.iter().filter(|s| s["name"] == "guest chaos").collect();
    let guest = guests.iter().find(|s| s["trace_id"] == trace).unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(guest["parent_span_id"], request["span_id"], "the guest call is the request's child: {guest}");
    let number = |key: &str| guest["attributes"][key].as_f64().unwrap_or_else(|| panic!("no {key}: {guest}"));
    assert!(number("mcpbox.guest.memory_peak_bytes") >= 65536.0, "{guest}");
    assert!(number("mcpbox.guest.output_bytes") > 0.0, "{guest}");
    assert!(number("mcpbox.guest.duration_ms") > 0.0, "{guest}");
    assert_eq!(guest["attributes"]["mcpbox.plugin"], "chaos", "{guest}");

    // Without a traceparent the request starts a trace of its own, its guest call inside it.
    let root = requests.iter().find(|s| s["trace_id"] != trace).unwrap();
    assert_eq!(root["parent_span_id"], "", "{root}");
    assert!(
        guests.iter().any(|g| g["trace_id"] == root["trace_id"] && g["parent_span_id"] == root["span_id"]),
        "{spans:#?}"
    );
}

#[tokio::test]
async fn json_logs_carry_the_requests_fields_and_never_a_token_or_key() {
    let provider = Provider::start();
    let config =
        ConfigFile::new(&format!("[auth]\nissuers = [\"{}\"]\nscopes_supported = [\"tools:read\"]\n", provider.issuer));
    let dir = temp_dir();
    let keys = dir.path().join("state.keys");
    let key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    std::fs::write(&keys, format!("{key}\n")).unwrap();
    let [flag, path] = config.args();
    let (server, url) = Server::start_http(&[
        flag,
        path,
        fixture("echo").as_os_str(),
        "--log-format".as_ref(),
        "json".as_ref(),
        "--request-state-keys".as_ref(),
        keys.as_os_str(),
    ]);
    let token = provider.token("ada", "tools:read", Some(&url)).await;
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo.echo", "arguments": { "text": "logged?" }, "_meta": modern_meta() } });
    let bearer = format!("Bearer {token}");
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo.echo")];
    let mut with_token = headers.to_vec();
    with_token.push(("authorization", &bearer));
    let answer = messages(post(&url, &call, &with_token).await).await.pop().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // A forged token and a wrong one are refused, and not logged either.
    let forged = format!("Bearer {}x", token);
    let mut with_forged = headers.to_vec();
    with_forged.push(("authorization", &forged));
    assert_eq!(post(&url, &call, &with_forged).await.status(), 401);

    assert!(server.wait_for_log("request finished", WAIT), "{}", server.stderr());
    let log = server.stderr();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect();
    let finished = lines.iter().find(|l| l["message"] == "request finished").unwrap();
    let span = &finished["span"];
    assert_eq!(span["mcp.method.name"], "tools/call", "{finished}");
    assert_eq!(span["gen_ai.tool.name"], "echo.echo", "{finished}");
    assert_eq!(span["mcpbox.plugin"], "echo", "{finished}");
    assert_eq!(span["mcpbox.principal"], "ada", "{finished}");
    assert_eq!(span["mcpbox.outcome"], "ok", "{finished}");
    assert_eq!(span["jsonrpc.request.id"], "7", "{finished}");
    assert!(span["mcpbox.duration_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{finished}");
    for secret in [token.as_str(), token.rsplit('.').next().unwrap(), "ada-secret", key, "logged?"] {
        assert!(!log.contains(secret), "the log holds a secret or an argument ({secret}):\n{log}");
    }
}

/// No argument or result of a call reaches the log at any level `MCPBOX_LOG` can ask for, over
/// any transport: the libraries that write whole messages and frames below info (rmcp each
/// request and response, tungstenite each WebSocket frame) are held at info whatever it says.
#[tokio::test]
async fn no_argument_or_result_reaches_the_log_at_debug_or_trace() {
    for level in ["debug", "trace", "info,rmcp=trace,tungstenite=trace"] {
        let marker = format!("argument-and-result-{}", level.len());
        let env = [("MCPBOX_LOG", level)];
        // stdio
        let mut stdio = Server::start_with_env(&[fixture("echo")], &env);
        stdio.initialize("2025-06-18", json!({}));
        assert_eq!(text(&call_tool(&mut stdio, "echo.echo", json!({ "text": marker }))), marker);
        // Streamable HTTP (stateless 2026-07-28) and WebSocket
        let (http, url) = Server::start_http_with_env(&[fixture("echo")], &env);
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "echo.echo", "arguments": { "text": marker }, "_meta": modern_meta() } });
        let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo.echo")];
        let answer = messages(post(&url, &call, &headers).await).await.pop().unwrap();
        assert_eq!(text(&answer["result"]), marker, "{answer}");
        let mut socket = super::websocket::connect(&super::websocket::ws_url(&url), &[]).await.unwrap();
        super::websocket::initialize(&mut socket).await;
        super::websocket::send(
            &mut socket,
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "echo.echo", "arguments": { "text": marker } } }),
        )
        .await;
        assert_eq!(text(&super::websocket::response(&mut socket, 2).await["result"]), marker);
        drop(socket);
        for (transport, log) in [("stdio", stdio.stderr()), ("HTTP and WebSocket", http.stderr())] {
            assert!(log.contains("DEBUG") || level.starts_with("info"), "MCPBOX_LOG={level} logs at debug: {log}");
            assert!(
                !log.contains(&marker),
                "MCPBOX_LOG={level}, {transport}: the log holds an argument or result:\n{log}"
            );
        }
    }
}

/// A call that failed in the host reaches the client as an `isError` result, as a tool's own
/// error does; the request's span (in its `request finished` line) and the metrics still say the
/// same outcome: `timeout`, `memory_limit`, `crashed`, or `tool_error` for the tool's own.
#[tokio::test]
async fn the_span_the_log_line_and_the_metric_agree_on_a_host_failure() {
    let mut server = chaos(&["--timeout", "1", "--memory", "64", "--metrics", "127.0.0.1:0", "--log-format", "json"]);
    let url = metrics_url(&server);
    let calls = [
        ("loop_forever", json!({}), "timeout"),
        ("alloc_forever", json!({}), "memory_limit"),
        ("panic", json!({ "message": "boom" }), "crashed"),
        ("echo", json!({ "wrong": 1 }), "tool_error"),
    ];
    for (tool, arguments, _) in &calls {
        assert_eq!(call_tool(&mut server, &format!("chaos.{tool}"), arguments.clone())["isError"], true, "{tool}");
    }
    // Each request's end is a line of its own, written before its response, read from the
    // pipe after it: the last call's tool named in its failure's warning is not yet its end.
    let ended = |log: &str| log.matches("\"message\":\"request finished\"").count() >= calls.len();
    assert!(server.wait_for_log_where(LOGGED, ended), "{}", server.stderr());
    let log = server.stderr();
    let metrics = http_client().get(&url).send().await.unwrap().text().await.unwrap();
    for (tool, _, outcome) in calls {
        let name = format!("chaos.{tool}");
        let finished: Vec<Value> = log
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line["message"] == "request finished" && line["span"]["gen_ai.tool.name"] == name)
            .collect();
        assert_eq!(finished.len(), 1, "{name}: {log}");
        assert_eq!(finished[0]["span"]["mcpbox.outcome"], outcome, "{name}: the span says {}", finished[0]);
        let series = format!("mcpbox_tool_calls_total{{outcome=\"{outcome}\",plugin=\"chaos\",tool=\"{name}\"}}");
        assert_eq!(sample(&metrics, &series), Some(1.0), "{name}: {metrics}");
    }
}
