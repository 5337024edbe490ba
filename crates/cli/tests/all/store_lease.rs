//! One `warden serve` per SQLite store: the daemon holds a lease the store
//! records. A second daemon on the same store is refused naming the first;
//! one started after the first was killed (`kill -9`) on this host, or after
//! the lease of a daemon elsewhere expired, takes over; a clean stop gives
//! the lease up; the CLI opens the store beside a running daemon.

use std::path::Path;
use std::process::{Child, Stdio};

use crate::common::daemon::*;

fn config() -> String {
    format!(
        "{}{}",
        allowlist("allowlist", &["read_file"], &[]),
        server_block(false)
    )
}

/// `warden serve` in `dir` on its `warden.yaml` (the data directory
/// `.warden` under it): the child and the first line it printed.
fn serve_in(dir: &Path) -> (Child, String) {
    let mut child = serve_command(dir)
        .env(INTERNAL_ENV, INTERNAL)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = first_line(&mut child);
    (child, line)
}

/// A daemon that must not start in `dir`: what it said on stderr.
fn refused_in(dir: &Path) -> String {
    let (child, line) = serve_in(dir);
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "a second daemon started: {line}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A daemon that must start in `dir`, stopped again at once.
fn starts_in(dir: &Path) {
    let (mut child, line) = serve_in(dir);
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(
        line.starts_with("warden: listening on "),
        "{line:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn store(daemon: &Daemon) -> rusqlite::Connection {
    rusqlite::Connection::open(daemon.data_file("approvals.sqlite3")).unwrap()
}

#[test]
fn a_second_daemon_on_the_same_sqlite_store_is_refused_naming_the_first() {
    let first = Daemon::start(&config());
    let said = refused_in(first.dir.path());
    assert!(
        said.contains("another warden serve holds this store"),
        "{said}"
    );
    assert!(said.contains(&format!("process {}", first.pid())), "{said}");
    assert!(said.contains("PostgreSQL"), "{said}");
}

#[test]
fn the_cli_opens_the_store_beside_a_running_daemon() {
    let daemon = Daemon::start(&config());
    let out = warden_in(
        daemon.dir.path(),
        &["approvals", "list", "--config", "warden.yaml"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_daemon_killed_with_sigkill_is_followed_at_once_by_a_new_one() {
    let mut first = Daemon::start(&config());
    first.signal("KILL");
    first
        .wait_for_exit(std::time::Duration::from_secs(10))
        .unwrap();
    starts_in(first.dir.path());
}

#[test]
fn a_daemon_stopped_cleanly_gives_its_lease_up() {
    let mut daemon = Daemon::start(&config());
    let held: i64 = store(&daemon)
        .query_row("SELECT COUNT(*) FROM daemon_lease", [], |row| row.get(0))
        .unwrap();
    assert_eq!(held, 1);
    daemon.stop();
    let held: i64 = store(&daemon)
        .query_row("SELECT COUNT(*) FROM daemon_lease", [], |row| row.get(0))
        .unwrap();
    assert_eq!(held, 0);
}

#[test]
fn the_lease_of_a_daemon_on_another_host_holds_until_it_expires() {
    let mut daemon = Daemon::start(&config());
    daemon.stop();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let held_elsewhere = |expires_at: i64| {
        store(&daemon)
            .execute(
                "INSERT OR REPLACE INTO daemon_lease (id, token, host, node, pid, acquired_at, expires_at)
                 VALUES (1, 'theirs', 'elsewhere', 'node-b', 1, ?1, ?2)",
                rusqlite::params![now_ms, expires_at],
            )
            .unwrap();
    };
    held_elsewhere(now_ms + 60_000);
    let said = refused_in(daemon.dir.path());
    assert!(
        said.contains("node node-b, process 1 on elsewhere"),
        "{said}"
    );
    held_elsewhere(now_ms - 1);
    starts_in(daemon.dir.path());
}
