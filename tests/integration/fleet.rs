//! A fleet on this machine (issue 20): three replicas sharing one Redis behind HAProxy, all
//! started by `scripts/fleet.sh` (which a person can run too). Stateless calls spread over the
//! replicas; multi round-trip rounds, task polls, answers and cancellations land on other
//! replicas than the one that started them; a resource update made through one replica
//! reaches a listener on another; a replica joining with another catalogue tells listeners to
//! list again; a legacy session stays on its replica. `fleet_kill.rs` kills
//! one under load.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::fleet_support::{Fleet, call, listen, open_session, request, session_call, task, wait_task, write};

fn accept(name: &str) -> Value {
    json!({ "action": "accept", "content": { "name": name } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_tasks_rounds_and_updates_and_legacy_sessions_stay_on_theirs() {
    let fleet = Fleet::up();
    let (status, ready) = fleet.readyz(1).await;
    assert_eq!((status, &ready["ready"], &ready["store"]), (200, &json!(true), &json!("ok")), "{ready}");

    // Stateless calls spread over every replica.
    let mut served = BTreeSet::new();
    for n in 0..9 {
        let (message, by) = request(
            &fleet.lb(),
            "tools/call",
            Some("greet"),
            json!({ "name": "greet", "arguments": { "name": n.to_string() } }),
        )
        .await
        .unwrap();
        assert_eq!(text(&message["result"]), format!("Hello, {n}!"));
        served.insert(by);
    }
    assert_eq!(served, BTreeSet::from(["r1".to_owned(), "r2".to_owned(), "r3".to_owned()]));

    // A multi round-trip request: each round on another replica (the state is sealed with the
    // operator's shared keys).
    let round = |answers: Option<Value>, state: Option<String>| {
        let mut params = json!({ "name": "chaos.ask_twice", "arguments": {} });
        if let Some(answers) = answers {
            params["inputResponses"] = answers;
        }
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        params
    };
    let (first, _) =
        request(&fleet.replica(1), "tools/call", Some("chaos.ask_twice"), round(None, None)).await.unwrap();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let user = json!({ "elicitation-0": { "action": "accept", "content": { "name": "ada" } } });
    let (second, _) = request(&fleet.replica(2), "tools/call", Some("chaos.ask_twice"), round(Some(user), Some(state)))
        .await
        .unwrap();
    let state = second["result"]["requestState"].as_str().expect("a second round").to_owned();
    let model =
        json!({ "sampling-1": { "role": "assistant", "content": { "type": "text", "text": "hi" }, "model": "m" } });
    let (done, _) = request(&fleet.replica(3), "tools/call", Some("chaos.ask_twice"), round(Some(model), Some(state)))
        .await
        .unwrap();
    let answer = text(&done["result"]);
    assert!(answer.contains("\"name\":\"ada\"") && answer.contains("model: hi"), "{done}");

    // A task started on r1 asks two questions: read on r2, answered in parts on r3 and r2,
    // completed where it runs, its result read on r3.
    let created = call(&fleet.replica(1), "multi_input", json!({})).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = wait_task(&fleet.replica(2), &id, |t| t["status"] == "input_required").await;
    assert_eq!(waiting["inputRequests"].as_object().map(serde_json::Map::len), Some(2), "{waiting}\n{}", fleet.logs());
    let update = |answers: Value| json!({ "taskId": id, "inputResponses": answers });
    for (replica, answers) in [(3, json!({ "first": accept("Ada") })), (2, json!({ "second": accept("Grace") }))] {
        let (ack, _) = request(&fleet.replica(replica), "tasks/update", Some(&id), update(answers)).await.unwrap();
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    }
    let finished = wait_task(&fleet.replica(3), &id, |t| t["status"] == "completed").await;
    assert_eq!(text(&finished["result"]), "got Ada and Grace", "{finished}");

    // A long task on r1, cancelled through r2: the guest on r1 stops, r3 reads it cancelled.
    let created = call(&fleet.replica(1), "slow_compute", json!({ "seconds": 60 })).await;
    let id = created["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(task(&fleet.replica(3), &id).await["status"], "working");
    let (ack, _) = request(&fleet.replica(2), "tasks/cancel", Some(&id), json!({ "taskId": id })).await.unwrap();
    assert!(ack.get("error").is_none(), "{ack}");
    let cancelled = wait_task(&fleet.replica(3), &id, |t| t["status"] == "cancelled").await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");

    // A resource updated through r1 is announced to a listener on r2.
    let uri = format!("file:///roots/{}/watched.txt", fleet.files.path().file_name().unwrap().to_str().unwrap());
    let mut listener = listen(&fleet.replica(2), json!({ "resourceSubscriptions": [uri] })).await;
    assert_eq!(write(&fleet, &fleet.replica(1), "watched.txt", "x").await, uri);
    let update = tokio::time::timeout(Duration::from_secs(5), listener.recv()).await.expect("no update reached r2");
    let update = update.unwrap();
    assert_eq!((&update["method"], &update["params"]["uri"]), (&json!("notifications/resources/updated"), &json!(uri)));

    // A replica with another catalogue joins (a rolling update): a listener on r1 is told to
    // list again.
    let mut lists = listen(&fleet.replica(1), json!({ "toolsListChanged": true })).await;
    let mut args = vec![fixture("echo").display().to_string(), "--replica".to_owned(), "r4".to_owned()];
    args.extend(fleet.store_args());
    let (_newer, _) = Server::start_http(&args);
    let changed = tokio::time::timeout(Duration::from_secs(10), lists.recv()).await.expect("no list change reached r1");
    assert_eq!(changed.unwrap()["method"], "notifications/tools/list_changed");

    // A legacy session through either load balancer: every request lands on its replica,
    // whose name starts the session id (HAProxy learned it from the response, nginx reads it).
    for balancer in [fleet.lb(), fleet.nginx()] {
        let (session, home) = open_session(&balancer).await;
        assert!(session.starts_with(&format!("{home}.")), "{session} names its replica {home}");
        for n in 1..=6 {
            let (status, by) = session_call(&balancer, &session, n).await;
            assert_eq!(status, 200, "request {n} of the session through {balancer}: {}", fleet.logs());
            assert_eq!(fleet.name_of(&by), home, "request {n} of the session through {balancer}");
        }
    }

    // Each replica audits the calls it served in a chain of its own, told apart by its name
    // (in the file's name and in every line).
    let audits = fleet.audits();
    assert_eq!(audits.iter().map(|(replica, _)| replica.as_str()).collect::<Vec<_>>(), ["r1", "r2", "r3"]);
    for (replica, path) in &audits {
        let lines = std::fs::read_to_string(path).unwrap();
        assert!(lines.lines().filter(|l| l.contains("\"kind\":\"call\"")).count() >= 2, "{lines}");
        for line in lines.lines() {
            assert_eq!(serde_json::from_str::<Value>(line).unwrap()["replica"], replica.as_str(), "{line}");
        }
        let verified = mcpbox("audit").arg("verify").arg(path).output().unwrap();
        assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stderr));
    }
}
