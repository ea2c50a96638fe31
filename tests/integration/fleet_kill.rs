//! A replica's death and a replica's orderly stop (issue 20). One of three replicas is killed
//! with SIGKILL in the middle of a load run: every request gets a final answer (a result, or
//! an error the client retries), every retried call succeeds, every task reaches a terminal
//! state every surviving replica shows, every update published before the kill reached the
//! listeners on the survivors, and once the leases expire the store holds nothing of the dead
//! replica; its legacy session answers 404 through either load balancer. SIGTERM fails readiness
//! first and lets the calls in flight finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::fleet_support::{
    Fleet, call, listen, open_session, request, session_call, task, wait_task, wait_task_until, write,
};

/// A call through the load balancer (40 ms long, so that some are in flight on the replica
/// that dies), retried on what a client retries (the connection, a
/// 502/503 of the load balancer) up to 20 times: how many attempts it took, and the answer.
async fn retried_call(url: &str, n: usize) -> (usize, Result<Value, String>) {
    let mut last = String::new();
    for attempt in 1..=20 {
        let params = json!({ "name": "chaos.sleep", "arguments": { "ms": 40 + n % 2 } });
        match request(url, "tools/call", Some("chaos.sleep"), params).await {
            Ok((message, _)) => return (attempt, Ok(message)),
            Err(error) => last = error,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (20, Err(last))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_load_loses_nothing() {
    let fleet = Fleet::up();
    let (_, ready) = fleet.readyz(3).await;
    let dead = ready["replica"].as_str().unwrap().to_owned();

    // Listeners on the replicas that will survive; tasks on the one that will not (60 s: it
    // dies first) and on a survivor (1 s).
    let uri = format!("file:///roots/{}/news.txt", fleet.files.path().file_name().unwrap().to_str().unwrap());
    let filter = || json!({ "resourceSubscriptions": [uri] });
    let mut listeners = [listen(&fleet.replica(1), filter()).await, listen(&fleet.replica(2), filter()).await];
    let mut doomed = Vec::new();
    for _ in 0..3 {
        let created = call(&fleet.replica(3), "slow_compute", json!({ "seconds": 60 })).await;
        doomed.push(created["taskId"].as_str().expect("a task").to_owned());
    }
    let survivor = call(&fleet.replica(1), "slow_compute", json!({ "seconds": 1 })).await;
    let survivor = survivor["taskId"].as_str().expect("a task").to_owned();
    // A legacy session on the doomed replica (initialized until the load balancer puts one there).
    let mut doomed_session = String::new();
    for _ in 0..12 {
        let (session, home) = open_session(&fleet.lb()).await;
        if home == "r3" {
            doomed_session = session;
            break;
        }
    }
    assert!(!doomed_session.is_empty(), "no session landed on r3 in 12 tries");
    // Updates published through the doomed replica before it dies.
    for n in 0..5 {
        write(&fleet, &fleet.replica(3), "news.txt", &n.to_string()).await;
    }

    // Load: four clients calling through the load balancer; r3 killed a second in.
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for client in 0..4 {
        let (url, stop) = (fleet.lb(), stop.clone());
        clients.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            let mut n = client * 100_000;
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let outcome = retried_call(&url, n).await;
                outcomes.push((started, started.elapsed(), outcome));
                n += 1;
            }
            outcomes
        }));
    }
    // A call certainly in flight on r3 when it dies: 4 s long, in its session.
    let in_flight = {
        let (lb, session) = (fleet.lb(), doomed_session.clone());
        tokio::spawn(async move {
            let body = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": { "name": "chaos.sleep", "arguments": { "ms": 4000 } } });
            let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
            // The response is an SSE stream: its headers come at once, its result or its end later.
            let response = crate::http::post(&lb, &body, &headers).await;
            response.text().await.map(|text| text.contains("slept"))
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let killed_at = Instant::now();
    fleet.kill(3);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut calls, mut retried, mut last_retry, mut slowest_retried) = (0, 0, None, Duration::ZERO);
    for client in clients {
        for (at, took, (attempts, answer)) in client.await.unwrap() {
            calls += 1;
            let answer = answer.unwrap_or_else(|e| panic!("a call never succeeded: {e}\n{}", fleet.logs()));
            assert!(answer.get("error").is_none(), "a survivor refused a call: {answer}");
            assert_eq!(text(&answer["result"]), "slept", "{answer}");
            if attempts > 1 {
                retried += 1;
                last_retry = Some(at.max(killed_at) - killed_at);
                slowest_retried = slowest_retried.max(took);
            }
        }
    }
    assert!(calls > 20, "the load ran: {calls} calls");
    // The call in flight on the dead replica got a final answer at once: its stream ended
    // without a result (what a client retries), rather than hanging.
    let answered = tokio::time::timeout(Duration::from_secs(3), in_flight).await.expect("it hung").unwrap();
    assert!(!matches!(answered, Ok(true)), "a dead replica cannot have answered: {answered:?}");
    eprintln!(
        "fleet kill: {calls} calls, {retried} retried (the slowest took {slowest_retried:?} with its retries), \
         the last retried call started {last_retry:?} after the kill"
    );

    // Every update published before the kill reached both survivors' listeners.
    for listener in &mut listeners {
        let mut heard = 0;
        while heard < 5 {
            let update = tokio::time::timeout(Duration::from_secs(5), listener.recv())
                .await
                .unwrap_or_else(|_| panic!("a listener heard {heard} of 5 updates"))
                .unwrap();
            if update["method"] == "notifications/resources/updated" {
                assert_eq!(update["params"]["uri"], uri.as_str());
                heard += 1;
            }
        }
    }

    // The dead replica's tasks read as failed once its lease (3 s) ran out, on every survivor
    // (all within one lease and a sweep of it, whose 2.5 s have passed already); the survivor's
    // task completed.
    let settled_by = Instant::now() + Duration::from_secs(10);
    for id in &doomed {
        let failed = wait_task_until(&fleet.replica(1), id, settled_by, |t| t["status"] == "failed").await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert_eq!(task(&fleet.replica(2), id).await["status"], "failed");
    }
    let done = wait_task(&fleet.replica(2), &survivor, |t| t["status"] == "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(task(&fleet.replica(1), &survivor).await["status"], "completed");

    // Nothing in the store names the dead replica: no presence, no inbox subscription, no
    // task it owns.
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let keys = fleet.redis(&["--scan"]);
        let channels = fleet.redis(&["pubsub", "channels"]);
        let mut naming: Vec<String> = keys.lines().filter(|k| k.contains(&dead)).map(str::to_owned).collect();
        naming.extend(channels.lines().filter(|c| c.contains(&dead)).map(str::to_owned));
        for key in keys.lines().filter(|k| k.contains(":task:")) {
            if fleet.redis(&["hget", key, "doc"]).contains(&dead) {
                naming.push(key.to_owned());
            }
        }
        if naming.is_empty() {
            break;
        }
        assert!(Instant::now() < end, "the store still names the dead replica {dead}: {naming:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Everything the store holds expires (but the one key naming the catalogue last announced).
    for key in fleet.redis(&["--scan"]).lines().filter(|key| *key != "mcpbox:catalog") {
        let ttl: i64 = fleet.redis(&["pttl", key]).trim().parse().unwrap();
        assert!(ttl > 0, "{key} never expires ({ttl})");
    }

    // The survivors still serve.
    let (message, _) =
        request(&fleet.lb(), "tools/call", Some("greet"), json!({ "name": "greet", "arguments": { "name": "end" } }))
            .await
            .unwrap();
    assert_eq!(text(&message["result"]), "Hello, end!");

    // The dead replica's session is unknown to the survivors: 404 through either load balancer,
    // and the client initializes again.
    for balancer in [fleet.lb(), fleet.nginx()] {
        assert_eq!(session_call(&balancer, &doomed_session, 1).await.0, 404, "through {balancer}");
    }

    // Without the store, a replica is not ready (and says why).
    fleet.stop_store();
    let (status, ready) = fleet.readyz(1).await;
    assert_eq!(status, 503, "{ready}");
    assert!(ready["reasons"][0].as_str().unwrap().starts_with("the store"), "{ready}");
}

#[tokio::test]
async fn sigterm_fails_readiness_first_and_lets_calls_in_flight_finish() {
    // A drain delay with room for a busy machine: the request made after the signal must still
    // come within it.
    let (server, url) = Server::start_http(&[fixture("chaos").as_os_str(), "--drain-delay".as_ref(), "3".as_ref()]);
    let readyz = url.replace("/mcp", "/readyz");
    assert_eq!(http_client().get(&readyz).send().await.unwrap().status(), 200);
    let sleep = |ms: u64| {
        let url = url.clone();
        tokio::spawn(async move {
            request(
                &url,
                "tools/call",
                Some("chaos.sleep"),
                json!({ "name": "chaos.sleep", "arguments": { "ms": ms } }),
            )
            .await
        })
    };
    let slow = sleep(2500);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let terminated = Instant::now();
    assert!(std::process::Command::new("kill").args(["-TERM", &server.pid().to_string()]).status().unwrap().success());
    // Readiness fails as the signal is handled: waited for, not assumed after a fixed delay.
    let response = loop {
        let response = http_client().get(&readyz).send().await.unwrap();
        if response.status() == 503 || terminated.elapsed() > WAIT {
            break response;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["reasons"][0], "shutting down", "{body}");
    // Within the drain delay a new request is still served.
    let quick = sleep(10).await.unwrap().unwrap();
    assert_eq!(text(&quick.0["result"]), "slept", "{quick:?}");
    // The call in flight finishes; the process ends after it.
    let (finished, _) = slow.await.unwrap().unwrap();
    assert_eq!(text(&finished["result"]), "slept", "{finished}");
    let mut server = server;
    assert!(server.wait_exit(Duration::from_secs(30)).is_some(), "the server did not stop after draining");
    assert!(terminated.elapsed() >= Duration::from_secs(2), "it waited for the call in flight");
}

/// 2026-07-28 basic/patterns/subscriptions §Graceful Closure: a server that stops answers an
/// open `subscriptions/listen` with its completion result, carrying the subscription's id,
/// before the stream closes (rather than dropping the connection).
#[tokio::test]
async fn a_stopping_server_ends_a_subscription_with_its_completion_result() {
    let (server, url) = Server::start_http(&[fixture("chaos").as_os_str()]);
    let mut stream = crate::fleet_support::listen(&url, json!({ "toolsListChanged": true })).await;
    assert!(std::process::Command::new("kill").args(["-TERM", &server.pid().to_string()]).status().unwrap().success());
    let end = tokio::time::timeout(Duration::from_secs(10), stream.recv())
        .await
        .unwrap()
        .expect("the stream ended without its result");
    assert_eq!(end["id"], 7, "{end}");
    assert_eq!(end["result"]["resultType"], "complete", "{end}");
    assert_eq!(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7, "{end}");
    assert_schema("2026-07-28", "SubscriptionsListenResult", &end["result"]);
    let mut server = server;
    assert!(server.wait_exit(Duration::from_secs(10)).is_some(), "the server did not stop");
}
