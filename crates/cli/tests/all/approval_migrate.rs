//! `warden approvals migrate`: a node's SQLite store copied into PostgreSQL
//! (the test PostgreSQL, a fresh database per test), where its pending
//! approval is listed and resumed; never into a store that holds anything,
//! never from a store a daemon serves from.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use warden_testkit::postgres::PgServer;

use crate::common::daemon::{Daemon, allowlist, server_block, warden_in_env};

const URL_ENV: &str = "WARDEN_DATABASE_URL";

/// `warden ARGS` in `dir` with the database's URL in its environment.
fn warden(dir: &Path, args: &[&str], url: &str, stdin: &str) -> Output {
    warden_in_env(dir, args, Some(stdin), &[(URL_ENV, url)])
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// A directory with `sqlite.yaml` (the store in `state/`) and `postgres.yaml`
/// (the store in the database), both putting `bash` under approval, and a
/// pause on thread `t-1` in the SQLite store.
fn node_with_a_pause(url: &str) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    let hitl = "hitl_approval:\n  tools: [bash]\n";
    std::fs::write(
        dir.path().join("sqlite.yaml"),
        format!("{hitl}data_dir: state\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("postgres.yaml"),
        format!("{hitl}  store: {{kind: postgres, url_env: {URL_ENV}}}\ndata_dir: state\n"),
    )
    .unwrap();
    let call = json!({"message": {"tool_calls": [
        {"id": "c1", "name": "bash", "args": {"command": "git push"}}
    ]}});
    let out = warden(
        dir.path(),
        &[
            "gate",
            "--config",
            "sqlite.yaml",
            "--thread",
            "t-1",
            "--run",
            "r1",
        ],
        url,
        &call.to_string(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (dir, json_of(&out))
}

fn migrate(dir: &Path, from: &str, to: &str, url: &str) -> Output {
    warden(
        dir,
        &["approvals", "migrate", "--from", from, "--to", to],
        url,
        "",
    )
}

#[test]
fn a_pending_approval_migrated_to_postgres_is_listed_and_resumed_there() {
    let url = PgServer::shared().database();
    let (dir, outcome) = node_with_a_pause(&url);
    let out = migrate(dir.path(), "sqlite:state", "postgres", &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let copied = json_of(&out);
    assert_eq!(
        (&copied["approvals"], &copied["pending"], &copied["journal"]),
        (&json!(1), &json!(1), &json!(1)),
        "{copied}"
    );
    assert!(
        copied["to"]
            .as_str()
            .unwrap()
            .starts_with("postgres postgres://")
    );

    let listed = warden(
        dir.path(),
        &["approvals", "list", "--config", "postgres.yaml"],
        &url,
        "",
    );
    assert_eq!(json_of(&listed)[0]["approval_id"], outcome["approval_id"]);
    let decisions = json!({"decisions": [
        {"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}
    ]});
    let resumed = warden(
        dir.path(),
        &[
            "approvals",
            "resume",
            "--config",
            "postgres.yaml",
            "--thread",
            "t-1",
            "--decisions",
            "-",
        ],
        &url,
        &decisions.to_string(),
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(json_of(&resumed)["calls"][0]["status"], "run");
}

#[test]
fn a_store_that_holds_approvals_is_not_migrated_into_and_the_exit_is_3() {
    let url = PgServer::shared().database();
    let (dir, _) = node_with_a_pause(&url);
    assert!(
        migrate(dir.path(), "sqlite:state", "postgres", &url)
            .status
            .success()
    );
    let again = migrate(dir.path(), "sqlite:state", "postgres", &url);
    assert_eq!(again.status.code(), Some(3), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("already holds 1 approvals, 1 journal entries and 0 grants"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_sqlite_store_a_daemon_serves_from_is_not_migrated() {
    let url = PgServer::shared().database();
    let daemon = Daemon::start(&format!(
        "{}{}",
        allowlist("allowlist", &["read_file"], &[]),
        server_block(false)
    ));
    let store = daemon.data_file("approvals.sqlite3");
    let out = migrate(
        Path::new("."),
        &format!("sqlite:{}", store.display()),
        "postgres",
        &url,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another warden serve holds this store"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_source_store_that_does_not_exist_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let out = migrate(dir.path(), "sqlite:nowhere.sqlite3", "postgres", "unused");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no approval store at nowhere.sqlite3"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("nowhere.sqlite3").exists());
}

#[test]
fn a_store_named_neither_sqlite_nor_postgres_is_refused_saying_how_to_name_one() {
    let out = migrate(Path::new("."), "mysql://db", "postgres", "unused");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("write sqlite:PATH"),
        "{}",
        stderr(&out)
    );
}
