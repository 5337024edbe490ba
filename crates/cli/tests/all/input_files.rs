//! Every file Warden reads from its configuration is bounded, against the
//! real binary: a provider's component, a `config_files` entry, the signing key
//! and the configuration itself, named through a symlink to `/dev/zero` or as
//! a FIFO, fail at once with an error that names the file and says what it is;
//! the daemon keeps serving, a later reload of the fixed file works, and
//! SIGTERM still stops it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::daemon::*;
use crate::common::guest;
use serde_json::Value;

/// Longer than any answer that is not hung.
const HUNG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Points the symlink `link` at `target`.
fn relink(link: &Path, target: &Path) {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// `POST /v1/admin/reload`, failing the test instead of waiting forever.
async fn reload(daemon: &Daemon) -> (u16, Value) {
    let response = daemon
        .request(reqwest::Method::POST, "/v1/admin/reload", Some(ADMIN))
        .timeout(HUNG)
        .send()
        .await
        .expect("the reload answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A reload refused because of `file`: 422, naming it and what it is.
async fn assert_reload_refused(daemon: &Daemon, file: &Path, what: &str) {
    let (status, report) = reload(daemon).await;
    assert_eq!(status, 422, "{report}");
    let message = report.to_string();
    assert!(
        message.contains(&file.display().to_string()) && message.contains(what),
        "the error names {} and says {what}: {message}",
        file.display()
    );
}

/// With `link` pointed at `/dev/zero`, then at a FIFO (made beside it), a
/// reload is refused at once, naming `link` and what it is.
async fn assert_device_and_fifo_refused(daemon: &Daemon, link: &Path) {
    relink(link, Path::new("/dev/zero"));
    assert_reload_refused(daemon, link, "a character device").await;
    let fifo = link.with_extension("fifo");
    mkfifo(&fifo);
    relink(link, &fifo);
    assert_reload_refused(daemon, link, "a FIFO").await;
}

/// SIGTERM stops the daemon, cleanly, promptly.
fn assert_stops_on_sigterm(mut daemon: Daemon) {
    daemon.signal("TERM");
    let status = daemon.wait_for_exit(Duration::from_secs(15));
    assert!(
        status.is_some_and(|s| s.success()),
        "{status:?}\n{}",
        daemon.stderr()
    );
}

#[tokio::test]
async fn a_component_path_to_a_device_or_a_fifo_fails_the_reload_and_the_fixed_one_reloads() {
    let files = tempfile::tempdir().unwrap();
    let link = files.path().join("provider.wasm");
    relink(&link, &guest("allowlist"));
    let daemon = Daemon::start(&format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: {}\n      config: {{allowed_tools: [bash], denied_tools: []}}\n{}",
        link.display(),
        server_block(false)
    ));
    let generation = daemon.generation().await;

    assert_device_and_fifo_refused(&daemon, &link).await;
    assert_eq!(daemon.generation().await, generation, "the old set serves");

    relink(&link, &guest("allowlist"));
    let (status, report) = reload(&daemon).await;
    assert_eq!(status, 200, "{report}");
    assert_stops_on_sigterm(daemon);
}

#[tokio::test]
async fn a_config_file_on_a_device_or_a_fifo_fails_the_reload_and_the_fixed_one_reloads() {
    let files = tempfile::tempdir().unwrap();
    let passport = files.path().join("passport.json");
    std::fs::copy(
        crate::common::repo_root().join("examples/passport.json"),
        &passport,
    )
    .unwrap();
    let link = files.path().join("current.json");
    relink(&link, &passport);
    let daemon = Daemon::start(&format!(
        "guardrails:\n  providers:\n    - name: oap\n      wasm: builtin:oap-passport\n      config_files: {{passport: {}}}\n{}",
        link.display(),
        server_block(false)
    ));

    assert_device_and_fifo_refused(&daemon, &link).await;

    relink(&link, &passport);
    let (status, report) = reload(&daemon).await;
    assert_eq!(status, 200, "{report}");
    assert_stops_on_sigterm(daemon);
}

/// `warden ARGS` in `dir`: its exit code and stderr; killed (and the test
/// failed) if it has not exited within [`HUNG`].
fn warden_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .current_dir(dir)
        .env(INTERNAL_ENV, INTERNAL)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + HUNG;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("warden {args:?} did not exit within {HUNG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A directory with `warden.yaml` a symlink to `/dev/zero` and `fifo.yaml` a FIFO.
fn unreadable_configs() -> (tempfile::TempDir, [(PathBuf, &'static str); 2]) {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("warden.yaml");
    relink(&zero, Path::new("/dev/zero"));
    let fifo = dir.path().join("fifo.yaml");
    mkfifo(&fifo);
    (dir, [(zero, "a character device"), (fifo, "a FIFO")])
}

#[test]
fn check_refuses_a_config_that_is_a_device_or_a_fifo() {
    let (dir, configs) = unreadable_configs();
    for (config, what) in &configs {
        let path = config.display().to_string();
        let (code, stderr) = warden_in(dir.path(), &["check", "--config", &path]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(&path) && stderr.contains(what), "{stderr}");
    }
}

#[test]
fn serve_refuses_a_config_that_is_a_device_or_a_fifo() {
    let (dir, configs) = unreadable_configs();
    for (config, what) in &configs {
        let path = config.display().to_string();
        let (code, stderr) = warden_in(
            dir.path(),
            &["serve", "--config", &path, "--listen", "127.0.0.1:0"],
        );
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(&path) && stderr.contains(what), "{stderr}");
    }
}

#[test]
fn check_refuses_a_signing_key_that_is_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("ops.key");
    relink(&key, Path::new("/dev/zero"));
    std::fs::write(
        dir.path().join("warden.yaml"),
        format!(
            "guardrails:\n  providers: []\nsigning: {{key: {}, kid: ops, expires_in: 60}}\n",
            key.display()
        ),
    )
    .unwrap();
    let (code, stderr) = warden_in(dir.path(), &["check", "--config", "warden.yaml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&key.display().to_string()) && stderr.contains("a character device"),
        "{stderr}"
    );
}
