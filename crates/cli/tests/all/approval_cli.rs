//! `warden gate` and `warden approvals`, driven as an operator or a harness
//! would: separate processes sharing one data directory.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("warden.yaml"),
            "hitl_approval:\n  tools: [bash]\ndata_dir: state\n",
        )
        .unwrap();
        Env { dir }
    }

    fn spawn(&self, args: &[&str], stdin: Option<&str>) -> Child {
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .args(["--config", "warden.yaml"])
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        drop(input);
        child
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.spawn(args, stdin).wait_with_output().unwrap()
    }

    fn write(&self, name: &str, value: &Value) -> String {
        std::fs::write(self.dir.path().join(name), value.to_string()).unwrap();
        name.to_string()
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Pauses `thread` on one bash call; returns the gate's outcome.
    fn pause(&self, thread: &str) -> Value {
        let out = self.run(
            &["gate", "--thread", thread, "--run", "r1"],
            Some(&bash_call("c1").to_string()),
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let outcome = json_of(&out);
        assert_eq!(outcome["run_state"], "waiting_for_input");
        outcome
    }
}

fn bash_call(id: &str) -> Value {
    json!({"message": {"tool_calls": [{"id": id, "name": "bash", "args": {"command": "git push"}}]}})
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn approve_all(outcome: &Value) -> Value {
    let decisions: Vec<Value> = outcome["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!({"request_id": r["request_id"], "decision": "approve"}))
        .collect();
    json!({"decisions": decisions})
}

#[test]
fn a_pause_made_by_one_process_is_resumed_by_another() {
    let env = Env::new();
    let outcome = env.pause("t1");
    assert!(
        env.path().join("state/approvals.sqlite3").exists(),
        "the store is under data_dir"
    );
    let file = env.write("decisions.json", &approve_all(&outcome));
    let out = env.run(
        &[
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            &file,
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let resolution = json_of(&out);
    assert_eq!(resolution["calls"][0]["status"], "run");
    assert_eq!(resolution["run_state"], "running");
}

#[test]
fn gate_exits_three_with_the_error_body_when_the_thread_waits_for_a_human() {
    let env = Env::new();
    let outcome = env.pause("t1");
    let out = env.run(
        &["gate", "--thread", "t1", "--run", "r2"],
        Some(&bash_call("c2").to_string()),
    );
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let body = json_of(&out);
    assert_eq!(body["error"]["code"], "approval_pending");
    assert_eq!(
        body["error"]["details"]["approval_id"],
        outcome["approval_id"]
    );
}

#[test]
fn gate_takes_the_thread_and_run_from_the_context() {
    let env = Env::new();
    let mut response = bash_call("c1");
    response["context"] = json!({"thread_id": "from-context", "run_id": "r1"});
    let out = env.run(&["gate"], Some(&response.to_string()));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["thread_id"], "from-context");
}

#[test]
fn gate_without_a_thread_is_a_usage_error() {
    let out = Env::new().run(&["gate"], Some(&bash_call("c1").to_string()));
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--thread"), "{}", stderr(&out));
}

#[test]
fn list_prints_pending_approvals_and_filters_by_thread() {
    let env = Env::new();
    env.pause("t1");
    env.pause("t2");
    let all = json_of(&env.run(&["approvals", "list"], None));
    assert_eq!(all.as_array().unwrap().len(), 2);
    let one = json_of(&env.run(&["approvals", "list", "--thread", "t2"], None));
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["thread_id"], "t2");
    assert_eq!(one[0]["run_state"], "waiting_for_input");
    assert!(
        one[0]["requests"][0]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
}

#[test]
fn list_on_a_data_directory_without_a_store_prints_nothing_and_creates_nothing() {
    let env = Env::new();
    let out = env.run(&["approvals", "list"], None);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out), json!([]));
    assert!(!env.path().join("state").exists());
}

#[test]
fn resume_with_decisions_that_do_not_match_exits_two_with_the_mismatch() {
    let env = Env::new();
    let outcome = env.pause("t1");
    let file = env.write(
        "decisions.json",
        &json!({"decisions": [{"request_id": "req_other", "decision": "approve"}]}),
    );
    let out = env.run(
        &[
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            &file,
        ],
        None,
    );
    assert_eq!(code(&out), 2);
    let body = json_of(&out);
    assert_eq!(body["error"]["code"], "decisions_mismatch");
    assert_eq!(body["error"]["details"]["extra"], json!(["req_other"]));
    assert_eq!(
        body["error"]["details"]["missing"],
        json!([outcome["requests"][0]["request_id"]])
    );
}

#[test]
fn of_two_different_resumes_started_at_once_in_two_processes_exactly_one_wins() {
    let env = Env::new();
    let outcome = env.pause("t1");
    let file = env.write("decisions.json", &approve_all(&outcome));
    let resume = |reviewer: &'static str| {
        let args = [
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            file.as_str(),
            "--reviewer",
            reviewer,
        ];
        env.spawn(&args, None)
    };
    let children = [resume("alice"), resume("bob")];
    let mut codes: Vec<i32> = children
        .into_iter()
        .map(|c| code(&c.wait_with_output().unwrap()))
        .collect();
    codes.sort();
    assert_eq!(codes, [0, 3]);
}

#[test]
fn the_same_resume_in_two_processes_consumes_once_and_both_get_the_answer() {
    let env = Env::new();
    let outcome = env.pause("t1");
    let file = env.write("decisions.json", &approve_all(&outcome));
    let args = [
        "approvals",
        "resume",
        "--thread",
        "t1",
        "--decisions",
        file.as_str(),
        "--reviewer",
        "alice",
    ];
    let children = [env.spawn(&args, None), env.spawn(&args, None)];
    let answers: Vec<Value> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert_eq!(code(&out), 0, "{}", stderr(&out));
            json_of(&out)
        })
        .collect();
    assert_eq!(
        answers[0]["consumption_id"], answers[1]["consumption_id"],
        "one consumption"
    );
    let replayed: Vec<bool> = answers
        .iter()
        .map(|a| a["replayed"].as_bool().unwrap())
        .collect();
    assert!(
        replayed.contains(&true) && replayed.contains(&false),
        "{replayed:?}"
    );
    let history = json_of(&env.run(&["approvals", "history", "--thread", "t1"], None));
    let resumed = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "resumed")
        .count();
    assert_eq!(resumed, 1);
}

#[test]
fn clear_rejects_the_pause_frees_the_thread_and_is_journalled() {
    let env = Env::new();
    env.pause("t1");
    let out = env.run(
        &[
            "approvals",
            "clear",
            "--thread",
            "t1",
            "--actor",
            "ops-bob",
            "--reason",
            "abandoned",
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cleared = json_of(&out);
    assert_eq!(cleared["cleared"]["calls"][0]["status"], "denied");
    assert_eq!(cleared["cleared"]["resolved_by"]["actor"], "ops-bob");
    let history = json_of(&env.run(&["approvals", "history", "--thread", "t1"], None));
    let last = history.as_array().unwrap().last().unwrap();
    assert_eq!(
        (last["kind"].as_str(), last["reviewer"].as_str()),
        (Some("cleared"), Some("ops-bob"))
    );
    let out = env.run(
        &["gate", "--thread", "t1", "--run", "r2"],
        Some(&bash_call("c2").to_string()),
    );
    assert_eq!(code(&out), 0, "the thread takes new runs: {}", stderr(&out));
}

#[test]
fn list_all_includes_resolved_approvals() {
    let env = Env::new();
    env.pause("t1");
    env.run(&["approvals", "clear", "--thread", "t1"], None);
    assert_eq!(json_of(&env.run(&["approvals", "list"], None)), json!([]));
    let all = json_of(&env.run(&["approvals", "list", "--all"], None));
    assert_eq!(all[0]["status"], "cleared");
}

#[test]
fn the_data_dir_flag_overrides_the_configuration() {
    let env = Env::new();
    let out = env.run(
        &[
            "gate",
            "--thread",
            "t1",
            "--run",
            "r1",
            "--data-dir",
            "elsewhere",
        ],
        Some(&bash_call("c1").to_string()),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(env.path().join("elsewhere/approvals.sqlite3").exists());
    assert!(!env.path().join("state").exists());
}

#[test]
fn a_pause_survives_the_process_being_killed_and_is_resumed_by_a_new_one() {
    use std::os::unix::process::ExitStatusExt;
    let env = Env::new();
    // Arguments far larger than a pipe's buffer: with nobody reading its
    // stdout, the process blocks while printing, after the pause is stored,
    // until it is killed.
    let big = "x".repeat(1 << 20);
    let response = json!({"message": {"tool_calls": [
        {"id": "c1", "name": "bash", "args": {"command": big}}
    ]}});
    let mut child = env.spawn(
        &["gate", "--thread", "t1", "--run", "r1"],
        Some(&response.to_string()),
    );
    let mut listed = json!([]);
    for _ in 0..600 {
        listed = json_of(&env.run(&["approvals", "list"], None));
        if !listed.as_array().unwrap().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "the pause was never stored"
    );
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the process was killed, not finished: {status:?}"
    );

    let file = env.write(
        "decisions.json",
        &json!({"decisions": [
            {"request_id": listed[0]["requests"][0]["request_id"], "decision": "reject"}
        ]}),
    );
    let out = env.run(
        &[
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            &file,
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["calls"][0]["status"], "denied");
}

#[test]
fn the_example_configuration_pauses_the_example_response_and_takes_the_example_decisions() {
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let root = crate::common::repo_root();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .args([
                "--config",
                "examples/approvals.yaml",
                "--data-dir",
                data_dir,
            ])
            .current_dir(root)
            .output()
            .unwrap()
    };
    let out = run(&["gate", "--response", "examples/responses/git-push.json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["run_state"], "waiting_for_input");
    let out = run(&[
        "approvals",
        "resume",
        "--thread",
        "thread-1",
        "--decisions",
        "examples/decisions/reject-all.json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["calls"][0]["status"], "denied");
}

#[test]
fn a_resume_whose_result_cannot_be_printed_is_restored_for_a_retry() {
    let env = Env::new();
    let outcome = env.pause("t1");
    let file = env.write("decisions.json", &approve_all(&outcome));
    // A stdout whose reader is already gone: the hand-off (printing) fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            &file,
        ])
        .args(["--config", "warden.yaml"])
        .current_dir(env.path())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("pending again"), "{}", stderr(&out));
    let listed = json_of(&env.run(&["approvals", "list", "--thread", "t1"], None));
    assert_eq!(listed[0]["status"], "pending");
    let out = env.run(
        &[
            "approvals",
            "resume",
            "--thread",
            "t1",
            "--decisions",
            &file,
        ],
        None,
    );
    assert_eq!(code(&out), 0, "the retry goes through: {}", stderr(&out));
}
