//! The real `warden serve` binary, started by a test on a free loopback port
//! with a config file in a temporary directory, and stopped when dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

pub const AGENT: &str = "agent-token-0123456789abcdef";
pub const INTERNAL: &str = "internal-token-0123456789abcdef";
pub const ADMIN: &str = "admin-token-0123456789abcdef";
/// An approver's token: the human `alice`.
pub const APPROVER: &str = "approver-token-0123456789abcdef";
/// A second agent, `other-agent`, whose threads are its own.
pub const OTHER_AGENT: &str = "other-agent-token-0123456789abcdef";
/// A harness's token that may relay a named human's answer (`gateway-relay`).
pub const RELAY: &str = "relay-token-0123456789abcdef";
/// The environment variable the internal token is read from.
pub const INTERNAL_ENV: &str = "WARDEN_TEST_INTERNAL_TOKEN";

/// `warden ARGS` in `dir`, its state directory under `dir`, `stdin` written
/// to its input when given (the binary may exit before it reads it).
pub fn warden_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    warden_in_env(dir, args, stdin, &[])
}

/// As [`warden_in`], with the variables `env` set too.
pub fn warden_in_env(
    dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// The `server:` block every test daemon uses: one token per role, a second
/// agent, and a relay.
pub fn server_block(watch: bool) -> String {
    format!(
        "server:\n  watch_config: {watch}\n  tokens:\n    - {{name: harness, role: agent, token: {AGENT}}}\n    - {{name: gateway, role: internal, token_env: {INTERNAL_ENV}}}\n    - {{name: ops, role: admin, token: {ADMIN}}}\n    - {{name: alice, role: approver, token: {APPROVER}}}\n    - {{name: other-agent, role: agent, token: {OTHER_AGENT}}}\n    - {{name: gateway-relay, role: agent, relay: true, token: {RELAY}}}\n"
    )
}

/// `warden serve` on `yaml`, in a fresh directory, for a daemon that must
/// not start: its exit code and what it printed on stderr. `env` adjusts the
/// command's environment.
pub fn serve_refused(yaml: &str, env: impl FnOnce(&mut Command)) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("warden.yaml"), yaml).unwrap();
    let mut command = serve_command(dir.path());
    env(&mut command);
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first line `child` printed on its (piped) stdout.
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

/// `warden serve` on `dir`'s `warden.yaml`, in `dir`, on a free loopback port.
pub fn serve_command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
    command
        .args([
            "serve",
            "--config",
            "warden.yaml",
            "--listen",
            "127.0.0.1:0",
        ])
        .current_dir(dir);
    command
}

/// A `guardrails:` block with one allowlist provider.
pub fn allowlist(name: &str, allowed: &[&str], denied: &[&str]) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: {name}\n      wasm: builtin:allowlist\n      config: {{allowed_tools: {allowed:?}, denied_tools: {denied:?}}}\n"
    )
}

/// The head of a `POST /v1/evaluate` with `token`, announcing a body of
/// `length` bytes: for a client that sends its body slowly, or never.
pub fn evaluate_head(token: &str, length: usize) -> String {
    format!(
        "POST /v1/evaluate HTTP/1.1\r\nhost: warden\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

/// A daemon whose one provider (the hostile fixture) loops until its
/// `timeout_ms`; `limits` is appended to the `server:` block.
pub fn stuck_daemon(timeout_ms: u64, limits: &str) -> Daemon {
    stuck_daemon_within(&format!("timeout_ms: {timeout_ms}"), limits)
}

/// As [`stuck_daemon`], the provider's time limits given as `time_limits`
/// (`timeout_ms: 5, configure_timeout_ms: 100`).
pub fn stuck_daemon_within(time_limits: &str, limits: &str) -> Daemon {
    Daemon::start(&format!(
        "guardrails:\n  providers:\n    - name: stuck\n      wasm: {}\n      config: {{behaviour: infinite_loop}}\n      limits: {{{time_limits}, fuel: 1125899906842624, pool_size: 8}}\n{}{limits}",
        crate::common::guest("hostile").display(),
        server_block(false)
    ))
}

pub struct Daemon {
    child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
    http: reqwest::Client,
}

/// How to start the daemon, beyond [`Daemon::start`].
#[derive(Clone, Copy, Default)]
pub struct Launch<'a> {
    /// Shell commands run before the shell becomes the daemon (same pid), such
    /// as `ulimit -n 256` or `umask 022`.
    pub prelude: &'a str,
    /// More arguments to `warden serve`.
    pub args: &'a [&'a str],
    /// Another `warden` binary than this build's (a release build, say).
    pub bin: Option<&'a str>,
    /// More environment variables for the daemon.
    pub env: &'a [(&'a str, &'a str)],
}

impl Daemon {
    /// Starts the daemon on `yaml` (which should include [`server_block`]).
    pub fn start(yaml: &str) -> Daemon {
        Daemon::launch(yaml, Launch::default())
    }

    /// Starts the daemon on `yaml` as `launch` says.
    pub fn launch(yaml: &str, launch: Launch<'_>) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("warden.yaml"), yaml).unwrap();
        let bin = launch.bin.unwrap_or(env!("CARGO_BIN_EXE_warden"));
        let mut command = if launch.prelude.is_empty() {
            Command::new(bin)
        } else {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("{}\nexec \"$0\" \"$@\"", launch.prelude))
                .arg(bin);
            sh
        };
        command
            .args(["serve", "--config", "warden.yaml"])
            .args(launch.args)
            .current_dir(dir.path())
            .env(INTERNAL_ENV, INTERNAL)
            .envs(launch.env.iter().copied());
        Daemon::spawn(command, dir)
    }

    /// Stops the daemon (SIGTERM) and starts it again in the same directory,
    /// on the same config file and data directory (a new port).
    pub fn restart(&mut self) {
        self.stop();
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command
            .args(["serve", "--config", "warden.yaml"])
            .current_dir(self.dir.path())
            .env(INTERNAL_ENV, INTERNAL);
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        let next = Daemon::spawn(command, dir);
        // The stopped one goes with the placeholder directory.
        drop(std::mem::replace(self, next));
    }

    /// Starts the daemon on a shipped example config (relative to the
    /// repository), with the token variables it names in `env`.
    pub fn start_example(config: &str, env: &[(&str, &str)]) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command
            .args(["serve", "--config", config, "--no-watch", "--data-dir"])
            .arg(dir.path().join(".warden"))
            .current_dir(crate::common::repo_root())
            .envs(env.iter().copied());
        Daemon::spawn(command, dir)
    }

    fn spawn(mut command: Command, dir: tempfile::TempDir) -> Daemon {
        let stderr = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
        let mut child = command
            .args(["--listen", "127.0.0.1:0"])
            .env("WARDEN_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let line = first_line(&mut child);
        let Some(addr) = line.trim().strip_prefix("warden: listening on ") else {
            let _ = child.wait();
            panic!(
                "the daemon did not start: {line:?}\n{}",
                std::fs::read_to_string(dir.path().join("stderr.log")).unwrap()
            );
        };
        Daemon {
            url: addr.to_string(),
            child,
            dir,
            http: reqwest::Client::new(),
        }
    }

    /// The daemon's address, `127.0.0.1:PORT`.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.url.trim_start_matches("http://").parse().unwrap()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The daemon's resident memory, in bytes.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb * 1024
    }

    /// The file descriptors the daemon holds open.
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    /// Waits for the daemon to exit, at most `within`; `None` if it is still running.
    pub fn wait_for_exit(
        &mut self,
        within: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// The data directory when the command line names none.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join(".warden")
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("warden.yaml")
    }

    /// Replaces the config file (atomically, as editors do).
    pub fn write_config(&self, yaml: &str) {
        let next = self.dir.path().join("warden.yaml.next");
        std::fs::write(&next, yaml).unwrap();
        std::fs::rename(next, self.config_path()).unwrap();
    }

    pub fn data_file(&self, name: &str) -> PathBuf {
        self.dir.path().join(".warden").join(name)
    }

    /// The JSON lines of a log in the data directory.
    pub fn log(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(self.data_file(name))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// A request to `path` with `token` (if any).
    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.url));
        match token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// POSTs a JSON body; returns the status and the JSON answer.
    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::POST, path, token)
            .json(body)
            .send()
            .await
            .unwrap();
        answer(response).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::GET, path, token)
            .send()
            .await
            .unwrap();
        answer(response).await
    }

    pub async fn evaluate(&self, token: &str, body: &Value) -> (u16, Value) {
        self.post("/v1/evaluate", Some(token), body).await
    }

    pub async fn reload(&self) -> (u16, Value) {
        self.post("/v1/admin/reload", Some(ADMIN), &Value::Null)
            .await
    }

    pub async fn generation(&self) -> u64 {
        self.get("/healthz", None).await.1["generation"]
            .as_u64()
            .unwrap()
    }

    /// Waits (a bounded number of times) until the serving generation differs
    /// from `old`; returns it.
    pub async fn wait_for_new_generation(&self, old: u64) -> u64 {
        for _ in 0..500 {
            let now = self.generation().await;
            if now != old {
                return now;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!(
            "the provider set was not swapped (still generation {old})\n{}",
            self.stderr()
        );
    }

    /// A value of `warden_daemon_load` (`connections`, `jobs`, `bodies`, ...).
    pub async fn load(&self, what: &str) -> Option<u64> {
        let prefix = format!("warden_daemon_load{{what=\"{what}\"}} ");
        self.metrics()
            .await
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).and_then(|v| v.trim().parse().ok()))
    }

    /// Waits (a bounded number of times) until `warden_daemon_load{what}`
    /// is at least `at_least`.
    pub async fn wait_for_load(&self, what: &str, at_least: u64) {
        for _ in 0..1000 {
            if self.load(what).await.is_some_and(|n| n >= at_least) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!(
            "warden_daemon_load{{what=\"{what}\"}} never reached {at_least} (it is {:?})",
            self.load(what).await
        );
    }

    pub async fn metrics(&self) -> String {
        self.request(reqwest::Method::GET, "/metrics", None)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}

async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the answer ({status}) is not JSON ({e}): {text}"));
    (status, value)
}

impl Daemon {
    /// Stops the daemon as an operator would (SIGTERM: it finishes what is in
    /// flight and writes out its logs) and waits for it.
    pub fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            let status = self.child.wait().unwrap();
            assert!(
                status.success(),
                "the daemon exited with {status}\n{}",
                self.stderr()
            );
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The answer has every property the schema requires, and no other.
pub fn assert_matches_schema(doc: &Value, schema: &str, answer: &Value) {
    let schema_doc = &doc["components"]["schemas"][schema];
    let properties: Vec<&String> = schema_doc["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
    for key in &keys {
        assert!(
            properties.contains(key),
            "{schema}: '{key}' is not documented"
        );
    }
    for required in schema_doc["required"].as_array().into_iter().flatten() {
        let required = required.as_str().unwrap().to_string();
        assert!(
            keys.contains(&&required),
            "{schema}: '{required}' is missing from {answer}"
        );
    }
}

/// The provider stages of a decision, in order (the native stages left out).
pub fn provider_stages(decision: &Value) -> Vec<Value> {
    decision["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stage"].as_str().unwrap().starts_with("provider:"))
        .cloned()
        .collect()
}

/// An answer approving the first request of a pause's outcome.
pub fn approve(outcome: &Value) -> Value {
    serde_json::json!({"decisions": [{"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}]})
}

/// The resume route of a pause's outcome on `thread`.
pub fn resume_path(thread: &str, outcome: &Value) -> String {
    format!(
        "/v1/threads/{thread}/approvals/{}/resume",
        outcome["approval_id"].as_str().unwrap()
    )
}
