//! Two `warden serve` processes on one PostgreSQL database (the test
//! PostgreSQL, a fresh database per test): a pause taken on one node is
//! listed and resumed on the other, and of resumes raced across the two
//! exactly one wins; a call on a thread paused on one node is refused by the
//! other within the stated window; a pause made or answered on one node reaches the other's
//! console, while a console session stays the node's it signed in on (the
//! load balancer keeps a browser there); two nodes sweeping one database
//! expire each approval once; a
//! database outage answers 503 on the approval routes while evaluate keeps
//! judging; under load, a node killed with `kill -9` leaves every pause it
//! made resumable on the other, and a database restart loses nothing and
//! consumes nothing twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::daemon::*;
use crate::console::{console, read_until, sign_in};
use reqwest::Method;
use serde_json::{Value, json};
use warden_testkit::postgres::PgServer;

/// The environment variable the nodes read the database's URL from.
const URL_ENV: &str = "WARDEN_DATABASE_URL";

fn node(url: &str) -> Daemon {
    node_with(url, "")
}

/// A node whose `hitl_approval:` has the keys `more` besides its store.
fn node_with(url: &str, more: &str) -> Daemon {
    Daemon::launch(
        &format!(
            "hitl_approval:\n  tools: [bash]\n  store: {{kind: postgres, url_env: {URL_ENV}}}\n{more}{}{}",
            allowlist("allowlist", &["bash", "read_file"], &[]),
            server_block(false)
        ),
        Launch {
            env: &[(URL_ENV, url)],
            ..Launch::default()
        },
    )
}

fn git_push(call: &str) -> Value {
    json!({"message": {"tool_calls": [
        {"id": call, "name": "bash", "args": {"command": "git push origin main"}}
    ]}})
}

async fn pause(node: &Daemon, thread: &str) -> Value {
    let path = format!("/v1/threads/{thread}/runs/r-1/tool-calls");
    let (status, outcome) = node.post(&path, Some(AGENT), &git_push("c1")).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    outcome
}

/// The approver's approval of the pause `outcome` on `thread`, sent to `node`.
async fn approve_on(node: &Daemon, thread: &str, outcome: &Value) -> (u16, Value) {
    node.post(
        &resume_path(thread, outcome),
        Some(APPROVER),
        &approve(outcome),
    )
    .await
}

#[tokio::test]
async fn a_pause_on_one_node_is_listed_and_resumed_on_the_other() {
    let url = PgServer::shared().database();
    let (a, b) = (node(&url), node(&url));
    let outcome = pause(&a, "t-1").await;
    let (status, page) = b.get("/v1/threads/t-1/approvals", Some(AGENT)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["approvals"][0]["approval_id"], outcome["approval_id"]);
    // Node B knows the thread waits: new work on it is refused there too.
    let (status, body) = b
        .post(
            "/v1/threads/t-1/runs/r-2/tool-calls",
            Some(AGENT),
            &git_push("c2"),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, resolution) = approve_on(&b, "t-1", &outcome).await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(resolution["calls"][0]["status"], "run");
    let (status, again) = a
        .post(
            &resume_path("t-1", &outcome),
            Some(APPROVER),
            &json!({"reject_all": {}}),
        )
        .await;
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "approval_resolved");
    assert!(
        a.stderr().contains("approval store opened"),
        "{}",
        a.stderr()
    );
    assert!(
        a.stderr().contains("postgres postgres://127.0.0.1"),
        "{}",
        a.stderr()
    );
    assert!(
        !a.stderr().contains("warden-test"),
        "no password in the log"
    );
}

#[tokio::test]
async fn of_resumes_raced_across_two_nodes_exactly_one_wins_each_time() {
    let url = PgServer::shared().database();
    let nodes = Arc::new([node(&url), node(&url)]);
    for round in 0..50 {
        let thread = format!("t-{round}");
        let outcome = pause(&nodes[round % 2], &thread).await;
        let path = resume_path(&thread, &outcome);
        // Two resumes a node, each a different answer (none the replay of
        // another), all sent at once.
        let answers = [
            approve(&outcome),
            json!({"reject_all": {"message": "no (1)"}}),
            json!({"reject_all": {"message": "no (2)"}}),
            json!({"reject_all": {"message": "no (3)"}}),
        ];
        let mut racing = Vec::new();
        for (i, answer) in answers.into_iter().enumerate() {
            let (nodes, path) = (nodes.clone(), path.clone());
            racing.push(tokio::spawn(async move {
                nodes[i % 2].post(&path, Some(APPROVER), &answer).await
            }));
        }
        let mut statuses = Vec::new();
        for r in racing {
            let (status, body) = r.await.unwrap();
            assert!(
                status == 200 || status == 409,
                "round {round}: {status} {body}"
            );
            statuses.push(status);
        }
        let winners = statuses.iter().filter(|s| **s == 200).count();
        assert_eq!(winners, 1, "round {round}: {statuses:?}");
        let (_, all) = nodes[round % 2]
            .get(
                &format!("/v1/threads/{thread}/approvals?all=true"),
                Some(APPROVER),
            )
            .await;
        assert_eq!(all["approvals"].as_array().unwrap().len(), 1, "{all}");
        assert_eq!(all["approvals"][0]["status"], "resumed", "{all}");
    }
}

#[tokio::test]
async fn a_call_on_a_thread_paused_on_one_node_is_refused_by_the_other_once_the_window_passed() {
    let url = PgServer::shared().database();
    let (a, b) = (node(&url), node(&url));
    let on = |thread: &str| json!({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": thread}});
    // Node B judges a call on the thread (its index knows the thread free).
    let (_, decision) = b.evaluate(AGENT, &on("t-1")).await;
    assert_eq!(decision["verdict"], "allow", "{decision}");
    let outcome = pause(&a, "t-1").await;
    // The stated window (crates/approval/src/waiting.rs), 100 ms.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, decision) = b.evaluate(AGENT, &on("t-1")).await;
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(decision["reasons"][0]["code"], "warden.approval_pending");
    assert_eq!(decision["metadata"]["approval_id"], outcome["approval_id"]);
    // Another thread is judged as ever.
    let (_, decision) = b.evaluate(AGENT, &on("t-2")).await;
    assert_eq!(decision["verdict"], "allow", "{decision}");
}

#[tokio::test]
async fn a_pause_made_and_answered_on_one_node_reaches_the_other_nodes_console() {
    let url = PgServer::shared().database();
    let (a, b) = (node(&url), node(&url));
    let session = sign_in(&b).await;
    let mut events = console(&b, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let outcome = pause(&a, "t-1").await;
    let approval_id = outcome["approval_id"].as_str().unwrap();
    let seen = read_until(&mut events, "event: paused", Duration::from_secs(10)).await;
    assert!(seen.contains(approval_id), "{seen}");
    assert!(seen.contains("\"tools\":[\"bash\"]"), "{seen}");
    let (status, _) = approve_on(&a, "t-1", &outcome).await;
    assert_eq!(status, 200);
    let seen = read_until(&mut events, "event: resolved", Duration::from_secs(10)).await;
    assert!(seen.contains(approval_id), "{seen}");
}

#[tokio::test]
async fn a_console_session_is_the_own_of_the_node_it_signed_in_on() {
    let url = PgServer::shared().database();
    let (a, b) = (node(&url), node(&url));
    let session = sign_in(&a).await;
    let on = |node| console(node, Method::GET, "/console/api/session", &session).send();
    assert_eq!(on(&a).await.unwrap().status(), 200);
    let elsewhere = on(&b).await.unwrap();
    assert_eq!(elsewhere.status(), 401);
    let body: Value = elsewhere.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("opened on another node"), "{message}");
    assert!(message.contains("load balancer"), "{message}");
}

#[tokio::test]
async fn two_nodes_sweeping_one_database_expire_each_approval_once() {
    let url = PgServer::shared().database();
    let (a, b) = (
        node_with(&url, "  expire_after: 1s\n"),
        node_with(&url, "  expire_after: 1s\n"),
    );
    let session = sign_in(&b).await;
    let mut events = console(&b, Method::GET, "/console/api/events", &session)
        .send()
        .await
        .unwrap();
    let threads = ["t-1", "t-2", "t-3", "t-4"];
    for thread in threads {
        pause(&a, thread).await;
    }
    // Whichever node expired them, B's console is told to read again.
    read_until(&mut events, "event: resync", Duration::from_secs(10)).await;
    for thread in threads {
        let path = format!("/v1/threads/{thread}/approvals?all=true");
        let started = std::time::Instant::now();
        loop {
            let (_, page) = b.get(&path, Some(APPROVER)).await;
            if page["approvals"][0]["status"] == "expired" {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{page}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // Both nodes swept every second; the journal holds one expiry each.
    let expiries = counts(
        &url,
        "SELECT approval_id, count(*) FROM approval_events WHERE kind = 'expired' GROUP BY approval_id",
    )
    .await;
    let expiries: Vec<i64> = expiries.into_iter().map(|(_, n)| n).collect();
    assert_eq!(expiries, [1, 1, 1, 1]);
}

#[tokio::test]
async fn a_database_outage_answers_503_on_approvals_while_evaluate_keeps_judging() {
    let server = PgServer::start().unwrap();
    let url = server.database();
    let a = node(&url);
    let outcome = pause(&a, "t-1").await;
    server.stop();

    let (status, body) = a.get("/v1/threads/t-1/approvals", Some(AGENT)).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "store_unavailable");
    let (status, body) = approve_on(&a, "t-1", &outcome).await;
    assert_eq!(status, 503, "{body}");
    // A call on no thread needs no store: judged as ever.
    let call = json!({"tool_name": "read_file", "tool_input": {"path": "x"}});
    let (status, decision) = a.evaluate(AGENT, &call).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["verdict"], "allow", "{decision}");
    // A call on a thread: whether the thread waits is unknown, so it is
    // denied, never run.
    let on_thread = json!({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": "t-1"}});
    let (_, decision) = a.evaluate(AGENT, &on_thread).await;
    assert_eq!(decision["verdict"], "deny", "{decision}");
    let codes: Vec<&str> = decision["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    assert!(codes.contains(&"warden.store_unavailable"), "{decision}");

    // The database comes back: the node reconnects by itself, and the pause
    // is still there, unconsumed.
    server.restart().unwrap();
    let mut resumed = None;
    for _ in 0..100 {
        let (status, body) = approve_on(&a, "t-1", &outcome).await;
        if status != 503 {
            resumed = Some((status, body));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (status, body) = resumed.expect("the node reconnected");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["calls"][0]["status"], "run");
}

/// The rows `(text, count)` of a query of the database at `url`, read
/// directly, as the nodes never show them.
async fn counts(url: &str, sql: &'static str) -> Vec<(String, i64)> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        db.query(sql, &[])
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
    })
    .await
    .unwrap()
}

/// The calls of the load: pauses of fresh threads on `pauses_on` (their
/// names kept in `threads`), and evaluates on `judges`, until `stop`. Every
/// answer from a node in `must_answer` must be a 200; a node killed meanwhile
/// may answer nothing.
fn load(
    nodes: Arc<Vec<Daemon>>,
    pauses_on: usize,
    must_answer: &'static [usize],
    stop: Arc<AtomicBool>,
    threads: Arc<std::sync::Mutex<Vec<String>>>,
) -> Vec<tokio::task::JoinHandle<usize>> {
    let mut workers = Vec::new();
    for worker in 0..2 {
        let (nodes, stop, threads) = (nodes.clone(), stop.clone(), threads.clone());
        workers.push(tokio::spawn(async move {
            let mut sent = 0;
            while !stop.load(Ordering::Acquire) {
                let thread = format!("load-{worker}-{sent}");
                threads.lock().unwrap().push(thread.clone());
                let path = format!("/v1/threads/{thread}/runs/r-1/tool-calls");
                let _ = nodes[pauses_on]
                    .request(Method::POST, &path, Some(AGENT))
                    .json(&git_push("c1"))
                    .send()
                    .await;
                sent += 1;
            }
            sent
        }));
    }
    for worker in 0..2 {
        let (nodes, stop) = (nodes.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut judged = 0;
            while !stop.load(Ordering::Acquire) {
                for (n, node) in nodes.iter().enumerate() {
                    let call = json!({"tool_name": "read_file", "tool_input": {"path": "x"},
                        "context": {"thread_id": format!("judged-{worker}")}});
                    let answer = node
                        .request(Method::POST, "/v1/evaluate", Some(AGENT))
                        .json(&call)
                        .send()
                        .await;
                    if must_answer.contains(&n) {
                        let status = answer.map(|a| a.status().as_u16());
                        assert!(matches!(status, Ok(200)), "node {n}: {status:?}");
                        judged += 1;
                    }
                }
            }
            judged
        }));
    }
    workers
}

/// Every approval still pending on the threads named, resumed on `node`:
/// how many.
async fn resume_every_pending(node: &Daemon, threads: &[String]) -> usize {
    let mut resumed = 0;
    for thread in threads {
        let (status, page) = node
            .get(&format!("/v1/threads/{thread}/approvals"), Some(AGENT))
            .await;
        assert_eq!(status, 200, "{page}");
        for pending in page["approvals"].as_array().unwrap() {
            let (status, resolution) = approve_on(node, thread, pending).await;
            assert_eq!(status, 200, "{thread}: {resolution}");
            assert_eq!(resolution["calls"][0]["status"], "run");
            resumed += 1;
        }
    }
    resumed
}

#[tokio::test]
async fn a_node_killed_under_load_leaves_every_pause_it_made_resumable_on_the_other() {
    let url = PgServer::shared().database();
    let nodes = Arc::new(vec![node(&url), node(&url)]);
    let (stop, threads) = (Arc::new(AtomicBool::new(false)), Arc::default());
    // Node A pauses; node B judges throughout and must answer every call.
    let workers = load(nodes.clone(), 0, &[1], stop.clone(), Arc::clone(&threads));
    tokio::time::sleep(Duration::from_millis(700)).await;
    nodes[0].signal("KILL");
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Release);
    let mut counts = Vec::new();
    for worker in workers {
        counts.push(worker.await.unwrap());
    }
    assert!(
        counts.iter().all(|&n| n > 0),
        "a worker sent nothing: {counts:?}"
    );
    let threads = threads.lock().unwrap().clone();
    // Whatever node A committed before it died, node B resumes.
    let resumed = resume_every_pending(&nodes[1], &threads).await;
    assert!(resumed > 0, "no pause was committed before the kill");
}

#[tokio::test]
async fn a_database_restart_under_load_loses_no_pause_and_consumes_none_twice() {
    let server = PgServer::start().unwrap();
    let url = server.database();
    let nodes = Arc::new(vec![node(&url), node(&url)]);
    let (stop, threads) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let workers = load(nodes.clone(), 0, &[], stop.clone(), Arc::clone(&threads));
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.restart().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Release);
    for worker in workers {
        worker.await.unwrap();
    }
    let threads = threads.lock().unwrap().clone();
    // The nodes reconnect by themselves: the first reads after the restart
    // may find the pool's old connections closed and answer 503.
    for _ in 0..100 {
        let (status, _) = nodes[1]
            .get("/v1/threads/t-none/approvals", Some(AGENT))
            .await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resumed = resume_every_pending(&nodes[1], &threads).await;
    assert!(resumed > 0, "no pause was committed");
    // Each pause was consumed once: one resume, journalled once, and none
    // is pending any more.
    let resumes = counts(
        &url,
        "SELECT approval_id, count(*) FROM approval_events WHERE kind = 'resumed' GROUP BY approval_id",
    )
    .await;
    let statuses = counts(
        &url,
        "SELECT status, count(*) FROM approvals GROUP BY status",
    )
    .await;
    assert_eq!(resumes.len(), resumed, "{resumes:?}");
    assert!(resumes.iter().all(|(_, n)| *n == 1), "{resumes:?}");
    assert_eq!(statuses, [("resumed".to_string(), resumed as i64)]);
}
