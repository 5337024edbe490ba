//! The real `warden serve` binary, started by a test on a free loopback port
//! with a config file in a temporary directory, and stopped when dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub const AGENT: &str = "agent-token-0123456789abcdef";
pub const INTERNAL: &str = "internal-token-0123456789abcdef";
pub const ADMIN: &str = "admin-token-0123456789abcdef";
/// The environment variable the internal token is read from.
pub const INTERNAL_ENV: &str = "WARDEN_TEST_INTERNAL_TOKEN";

/// The `server:` block every test daemon uses: one token per role.
pub fn server_block(watch: bool) -> String {
    format!(
        "server:\n  watch_config: {watch}\n  tokens:\n    - {{name: harness, role: agent, token: {AGENT}}}\n    - {{name: gateway, role: internal, token_env: {INTERNAL_ENV}}}\n    - {{name: ops, role: admin, token: {ADMIN}}}\n"
    )
}

/// A `guardrails:` block with one allowlist provider.
pub fn allowlist(name: &str, allowed: &[&str], denied: &[&str]) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: {name}\n      wasm: builtin:allowlist\n      config: {{allowed_tools: {allowed:?}, denied_tools: {denied:?}}}\n"
    )
}

pub struct Daemon {
    child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
    http: reqwest::Client,
}

impl Daemon {
    /// Starts the daemon on `yaml` (which should include [`server_block`]).
    pub fn start(yaml: &str) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("warden.yaml"), yaml).unwrap();
        let stderr = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args([
                "serve",
                "--config",
                "warden.yaml",
                "--listen",
                "127.0.0.1:0",
            ])
            .current_dir(dir.path())
            .env(INTERNAL_ENV, INTERNAL)
            .env("WARDEN_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
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
