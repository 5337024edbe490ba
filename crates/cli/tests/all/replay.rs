//! `warden replay`: a decision log of 1,000 mixed calls, written by the
//! library's log writer as the library judged them, replayed by the real
//! binary against a stricter and a looser candidate. The transitions expected
//! come from judging the same calls live against both candidates, never from
//! the replay code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use warden::{CallContext, Caller, Config, ToolCall, Warden};
use warden_log::{DecisionLog, DecisionLogConfig};

const CALLS: usize = 1000;

/// The live policy: a permission engine with asks and denies, and the
/// allowlist provider.
const LIVE: &str = r#"
permissions:
  mode: full_auto
  ask: ["Bash(git push *)"]
  deny: ["Read(/etc/shadow)", "Write(/workspace/secrets/*)"]
guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config:
        allowed_tools: [bash, read_file, write_file, web_fetch, github.create_issue]
        denied_tools: [bash_unsafe]
"#;

/// Stricter: fetches and MCP issues are no longer allowed, every git command asks.
const STRICTER: &str = r#"
permissions:
  mode: full_auto
  ask: ["Bash(git *)"]
  deny: ["Read(/etc/shadow)", "Write(/workspace/secrets/*)", "Write(/workspace/build/*)"]
guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config:
        allowed_tools: [bash, read_file, write_file]
        denied_tools: [bash_unsafe]
"#;

/// Looser: no asks, secrets writable, the unsafe tool allowed.
const LOOSER: &str = r#"
permissions:
  mode: full_auto
  deny: ["Read(/etc/shadow)"]
guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config:
        allowed_tools: [bash, bash_unsafe, read_file, write_file, web_fetch, github.create_issue]
"#;

/// The arguments the operator opted in. `read_file` is not: its lines are
/// not replayable. `web_fetch` opts in `url` only: a fetch with headers is
/// logged in part.
const LOGGED: &str = "arguments: {bash: [command], bash_unsafe: [command], write_file: [path, content], web_fetch: [url], github.create_issue: [title, body, labels]}\nchain: true\ncheckpoint_every: 100\n";

/// How a call is logged, as the test made it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Logged {
    Whole,
    Omitted,
    Partial,
}

/// Call `i` of the mixed log, and how its arguments are logged.
fn mixed_call(i: usize) -> (ToolCall, Logged) {
    let n = i / 11;
    let (call, logged) = match i % 11 {
        0 => (
            ToolCall::new("bash", json!({"command": format!("ls -la src/{n}")})),
            Logged::Whole,
        ),
        1 => (
            ToolCall::new("bash", json!({"command": "git push origin main"})),
            Logged::Whole,
        ),
        2 => (
            ToolCall::new("bash", json!({"command": format!("git log -n {n}")})),
            Logged::Whole,
        ),
        3 => (
            ToolCall::new(
                "write_file",
                json!({"path": format!("/workspace/build/out-{n}.txt"), "content": "x"}),
            ),
            Logged::Whole,
        ),
        4 => (
            ToolCall::new(
                "write_file",
                json!({"path": format!("/workspace/secrets/k{n}"), "content": "y"}),
            ),
            Logged::Whole,
        ),
        5 => (
            ToolCall::new(
                "web_fetch",
                json!({"url": format!("https://example.com/{n}")}),
            ),
            Logged::Whole,
        ),
        6 => (
            ToolCall::new(
                "web_fetch",
                json!({"url": "https://example.com/", "headers": {"accept": "text/html"}}),
            ),
            Logged::Partial,
        ),
        7 => (
            ToolCall::new(
                "github.create_issue",
                json!({"title": format!("bug {n}"), "body": "it broke", "labels": ["bug", n]}),
            ),
            Logged::Whole,
        ),
        8 => (
            ToolCall::new("read_file", json!({"path": "/etc/shadow"})),
            Logged::Omitted,
        ),
        9 => (
            ToolCall::new("bash_unsafe", json!({"command": "make"})),
            Logged::Whole,
        ),
        _ => (
            ToolCall::new("bash", json!({"command": "git push --force"})),
            Logged::Whole,
        ),
    };
    let mut context = CallContext {
        thread_id: Some(format!("thread-{}", i % 7)),
        cwd: Some("/workspace".into()),
        ..CallContext::default()
    };
    // Some calls come from a subagent: its ask is a deny.
    context.is_subagent = i.is_multiple_of(13);
    (
        call.tool_call_id(format!("call-{i}")).context(context),
        logged,
    )
}

fn load(dir: &Path, name: &str, yaml: &str) -> (PathBuf, Warden) {
    let path = dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    let warden = Warden::new(&Config::load(&path).unwrap()).unwrap();
    (path, warden)
}

/// The transition counts a replay against `candidate` must find: each
/// replayable call judged live by the live policy and by the candidate.
fn expected(
    calls: &[(ToolCall, Logged)],
    live: &Warden,
    candidate: &Warden,
) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (call, _) in calls.iter().filter(|(_, l)| *l == Logged::Whole) {
        let before = live.evaluate(call, Caller::Agent).unwrap().verdict;
        let after = candidate.evaluate(call, Caller::Agent).unwrap().verdict;
        *counts.entry(format!("{before}->{after}")).or_default() += 1;
    }
    counts
}

struct Fixture {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    log: PathBuf,
    calls: Vec<(ToolCall, Logged)>,
    live: Warden,
}

/// The live policy judges the 1,000 calls and the library's log writer logs
/// them; one malformed line is added in the middle.
fn logged_calls() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let (_, live) = load(&dir, "live.yaml", LIVE);
    let config: DecisionLogConfig = serde_norway::from_str(LOGGED).unwrap();
    let log = DecisionLog::open(&config, &dir).unwrap();
    let calls: Vec<_> = (0..CALLS).map(mixed_call).collect();
    for (call, _) in &calls {
        let evaluation = live.evaluate(call, Caller::Agent).unwrap();
        let id = DecisionLog::decision_id(&evaluation);
        log.record_judged(&id, call, Caller::Agent, &evaluation, None, None);
    }
    log.flush();
    let path = log.path().unwrap().to_path_buf();
    drop(log);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(500, "{\"decision_id\": \"cut-short\", \"verdict\": ");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    Fixture {
        _dir: tmp,
        dir,
        log: path,
        calls,
        live,
    }
}

fn replay(log: &Path, config: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["replay", "--log"])
        .arg(log)
        .arg("--config")
        .arg(config)
        .args(extra)
        .env("XDG_STATE_HOME", log.parent().unwrap().join("state"))
        .output()
        .unwrap()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn transitions(report: &Value) -> BTreeMap<String, u64> {
    serde_json::from_value(report["transitions"].clone()).unwrap()
}

fn count(calls: &[(ToolCall, Logged)], kind: Logged) -> u64 {
    calls.iter().filter(|(_, l)| *l == kind).count() as u64
}

#[test]
fn replay_against_a_stricter_and_a_looser_candidate_finds_the_transitions_live_judging_finds() {
    let f = logged_calls();
    for (name, yaml) in [("stricter.yaml", STRICTER), ("looser.yaml", LOOSER)] {
        let (path, candidate) = load(&f.dir, name, yaml);
        let want = expected(&f.calls, &f.live, &candidate);
        let changed: u64 = want
            .iter()
            .filter(|(t, _)| t.split_once("->").is_some_and(|(a, b)| a != b))
            .map(|(_, n)| n)
            .sum();
        assert!(changed > 0, "{name} must change some verdicts: {want:?}");
        let out = replay(&f.log, &path, &["--json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = report(&out);
        assert_eq!(transitions(&report), want, "{name}");
        assert_eq!(
            report["changed"].as_array().unwrap().len() as u64,
            changed,
            "{name}"
        );
    }
}

#[test]
fn replay_coverage_counts_the_lines_it_could_not_judge_again_by_reason() {
    let f = logged_calls();
    let (path, _) = load(&f.dir, "looser.yaml", LOOSER);
    let report = report(&replay(&f.log, &path, &["--json"]));
    let coverage = &report["coverage"];
    let whole = count(&f.calls, Logged::Whole);
    assert_eq!(coverage["rejudged"], json!(whole));
    assert_eq!(
        coverage["not_rejudged"]["arguments_not_logged"],
        json!(count(&f.calls, Logged::Omitted))
    );
    assert_eq!(
        coverage["not_rejudged"]["arguments_partial"],
        json!(count(&f.calls, Logged::Partial))
    );
    assert_eq!(coverage["not_rejudged"]["malformed"], json!(1));
    // 1,000 decisions, the malformed line, and the chain's checkpoints.
    assert!(
        coverage["lines_read"].as_u64().unwrap() > CALLS as u64,
        "{coverage}"
    );
    let problems = coverage["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{coverage}");
    assert_eq!(problems[0]["line"], json!(501));
    assert_eq!(problems[0]["reason"], json!("malformed"));
}

#[test]
fn replay_names_what_decided_each_side_of_a_changed_call() {
    let f = logged_calls();
    let (path, _) = load(&f.dir, "stricter.yaml", STRICTER);
    let report = report(&replay(&f.log, &path, &["--json"]));
    let fetch = report["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool_name"] == "web_fetch")
        .expect("a fetch the stricter candidate denies");
    assert_eq!(fetch["logged"]["verdict"], "allow");
    assert_eq!(fetch["replayed"]["verdict"], "deny");
    assert_eq!(fetch["replayed"]["decided_by"], "provider:allowlist");
    assert!(fetch["replayed"]["digest"].is_string(), "{fetch}");
}

#[test]
fn replay_fail_on_exits_one_only_when_a_listed_transition_occurs() {
    let f = logged_calls();
    let (path, candidate) = load(&f.dir, "stricter.yaml", STRICTER);
    let want = expected(&f.calls, &f.live, &candidate);
    assert!(want.contains_key("allow->deny"), "{want:?}");
    assert!(!want.contains_key("deny->allow"), "{want:?}");
    let gated = replay(&f.log, &path, &["--fail-on", "deny->allow,allow->deny"]);
    assert_eq!(gated.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gated.stderr).contains("allow->deny"));
    // The text report leads with coverage.
    assert!(String::from_utf8_lossy(&gated.stdout).starts_with("coverage"));
    let quiet = replay(&f.log, &path, &["--fail-on", "deny->allow"]);
    assert_eq!(
        quiet.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

#[test]
fn replay_refuses_a_transition_that_names_no_verdict() {
    let f = logged_calls();
    let (path, _) = load(&f.dir, "looser.yaml", LOOSER);
    let out = replay(&f.log, &path, &["--fail-on", "allow->maybe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'maybe'"));
}

/// The daemon's own log, with `bash` arguments opted in: calls from an
/// agent (whose claimed interaction mode is dropped) and from an internal
/// caller (whose `scheduled` mode turns an ask into a deny).
#[tokio::test]
async fn replay_of_the_daemons_own_log_against_its_own_config_changes_nothing() {
    use crate::common::daemon::{AGENT, Daemon, INTERNAL, server_block};
    let yaml = format!(
        "permissions:\n  mode: full_auto\n  ask: [\"Bash(git push *)\"]\n{}decision_log:\n  fsync: always\n  arguments: {{bash: [command]}}\n{}",
        crate::common::daemon::allowlist("allowlist", &["bash"], &["rm"]),
        server_block(false)
    );
    let mut d = Daemon::start(&yaml);
    let push = |context: Value| json!({"tool_name": "bash", "tool_input": {"command": "git push origin main"}, "context": context});
    let mut verdicts = Vec::new();
    for (token, body) in [
        (AGENT, push(json!({"cwd": "/workspace"}))),
        (
            AGENT,
            push(json!({"interaction_mode": "scheduled", "user_role": "admin"})),
        ),
        (INTERNAL, push(json!({"interaction_mode": "scheduled"}))),
        (
            AGENT,
            json!({"tool_name": "bash", "tool_input": {"command": "ls"}}),
        ),
        (
            AGENT,
            json!({"tool_name": "rm", "tool_input": {"path": "/"}}),
        ),
    ] {
        let (status, answer) = d.evaluate(token, &body).await;
        assert_eq!(status, 200, "{answer}");
        verdicts.push(answer["verdict"].as_str().unwrap().to_string());
    }
    d.stop();
    // The agent's claimed mode was dropped (an ask), the internal caller's believed (a deny).
    assert_eq!(verdicts, ["ask", "ask", "deny", "allow", "deny"]);
    let log = d.data_file("decisions.jsonl");
    let report = report(&replay(&log, &d.config_path(), &["--json"]));
    assert_eq!(report["coverage"]["rejudged"], json!(4), "{report}");
    assert_eq!(
        report["coverage"]["not_rejudged"]["arguments_not_logged"],
        json!(1),
        "{report}"
    );
    assert_eq!(report["changed"], json!([]), "{report}");
    assert_eq!(
        transitions(&report),
        BTreeMap::from([
            ("allow->allow".to_string(), 1),
            ("ask->ask".to_string(), 2),
            ("deny->deny".to_string(), 1),
        ])
    );
}
