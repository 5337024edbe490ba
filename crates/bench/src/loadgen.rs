//! A load generator for the daemon, behind `warden bench --scenario daemon`
//! and `--scenario reload`: the real server on a loopback port, and many
//! keep-alive HTTP/1.1 connections, each sending requests back to back (a
//! closed loop) and timing every one, from sending the request to having read
//! the whole answer. Server and clients run on separate runtimes of two
//! threads each, sharing the machine as a daemon and its harness would.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::Measurement;
use crate::fixtures;
use warden_server::{Dispatch, ServeOptions, Server};

const AGENT_TOKEN: &str = "bench-agent-token-0123456789";
const ADMIN_TOKEN: &str = "bench-admin-token-0123456789";

/// The benchmark's provider bounded so that its worst case (5 + 11 + 6 ms)
/// is within `server.limits.inline_budget_ms` (25 ms): the daemon may judge
/// a call on the async thread that read it.
const WITHIN_BUDGET: &str = "      limits: {timeout_ms: 5, configure_timeout_ms: 10}\n";

/// The shipped provider, allowing the benchmark's call.
fn config(allowed: &str) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {{allowed_tools: [{allowed}], denied_tools: [rm]}}\nserver:\n  watch_config: false\n  tokens:\n    - {{name: bench, role: agent, token: {AGENT_TOKEN}}}\n    - {{name: ops, role: admin, token: {ADMIN_TOKEN}}}\n"
    )
}

const CALL: &str = r#"{"tool_name":"bash","tool_input":{"command":"git status"},"tool_call_id":"call-1","context":{"thread_id":"t-1","run_id":"r-1","user_id":"u-1"}}"#;

/// A scratch directory for the config file and the logs, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(yaml: &str) -> anyhow::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!(
            "warden-bench-{}-{}",
            std::process::id(),
            warden_log::new_decision_id()
        ));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("warden.yaml"), yaml)?;
        Ok(Scratch(dir))
    }

    fn config(&self) -> PathBuf {
        self.0.join("warden.yaml")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn runtime(name: &str) -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()?)
}

/// A running daemon on its own runtime.
struct Daemon {
    runtime: tokio::runtime::Runtime,
    server: Option<Server>,
    scratch: Scratch,
}

impl Daemon {
    fn start(dispatch: Dispatch) -> anyhow::Result<Daemon> {
        Daemon::start_with(&config("bash, read_file"), dispatch)
    }

    fn start_with(yaml: &str, dispatch: Dispatch) -> anyhow::Result<Daemon> {
        let scratch = Scratch::new(yaml)?;
        let runtime = runtime("warden-http")?;
        let options = ServeOptions {
            listen: Some("127.0.0.1:0".parse()?),
            data_dir: Some(scratch.0.join("data")),
            watch: Some(false),
            dispatch,
            ..ServeOptions::default()
        };
        let server = runtime.block_on(Server::start(&scratch.config(), options))?;
        Ok(Daemon {
            runtime,
            server: Some(server),
            scratch,
        })
    }

    fn addr(&self) -> SocketAddr {
        self.server.as_ref().expect("running").local_addr()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let _ = self.runtime.block_on(server.shutdown());
        }
    }
}

/// One keep-alive connection.
struct Connection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    addr: SocketAddr,
}

impl Connection {
    async fn open(addr: SocketAddr) -> anyhow::Result<Connection> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Connection { sender, addr })
    }

    /// Sends one request and reads the whole answer; returns status and body.
    async fn send(&mut self, path: &str, token: &str, body: Bytes) -> anyhow::Result<(u16, Bytes)> {
        let request = Request::post(path)
            .header(HOST, self.addr.to_string())
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))?;
        self.round_trip(request).await
    }

    /// `GET path`, without a token; returns status and body.
    async fn get(&mut self, path: &str) -> anyhow::Result<(u16, Bytes)> {
        let request = Request::get(path)
            .header(HOST, self.addr.to_string())
            .body(Full::new(Bytes::new()))?;
        self.round_trip(request).await
    }

    async fn round_trip(&mut self, request: Request<Full<Bytes>>) -> anyhow::Result<(u16, Bytes)> {
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    async fn evaluate(&mut self) -> anyhow::Result<Value> {
        let (status, body) = self
            .send(
                "/v1/evaluate",
                AGENT_TOKEN,
                Bytes::from_static(CALL.as_bytes()),
            )
            .await?;
        ensure!(
            status == 200,
            "evaluate answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
        Ok(serde_json::from_slice(&body)?)
    }
}

/// Drives `connections` connections, `requests` evaluate calls each; every
/// call must be judged allow.
fn load(
    addr: SocketAddr,
    connections: usize,
    requests: usize,
) -> anyhow::Result<(Vec<Duration>, Duration)> {
    let clients = runtime("warden-load")?;
    clients.block_on(async move {
        let mut opened = Vec::with_capacity(connections);
        for _ in 0..connections {
            let mut c = Connection::open(addr).await?;
            // Warm up the connection and the daemon.
            for _ in 0..(requests / 20).max(5) {
                c.evaluate().await?;
            }
            opened.push(c);
        }
        let started = Instant::now();
        let tasks: Vec<_> = opened
            .into_iter()
            .map(|mut c| {
                tokio::spawn(async move {
                    let mut samples = Vec::with_capacity(requests);
                    for _ in 0..requests {
                        let t = Instant::now();
                        let decision = c.evaluate().await?;
                        samples.push(t.elapsed());
                        ensure!(decision["allow"] == true, "not allowed: {decision}");
                    }
                    anyhow::Ok(samples)
                })
            })
            .collect();
        let mut samples = Vec::with_capacity(connections * requests);
        for task in tasks {
            samples.extend(task.await??);
        }
        Ok((samples, started.elapsed()))
    })
}

/// Percentiles of per-request latencies.
fn summarize(
    scenario: &str,
    connections: usize,
    mut samples: Vec<Duration>,
    wall: Duration,
) -> Measurement {
    samples.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |q: f64| us(samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)]);
    Measurement {
        scenario: scenario.to_string(),
        threads: connections,
        calls: samples.len(),
        p50_us: at(0.50),
        p99_us: at(0.99),
        mean_us: samples.iter().map(|d| us(*d)).sum::<f64>() / samples.len() as f64,
        throughput: samples.len() as f64 / wall.as_secs_f64(),
    }
}

/// One row: `connections` connections to `addr`, `calls` evaluate calls
/// shared between them (at least 100 each), summarized under `scenario`.
fn row(
    scenario: &str,
    addr: SocketAddr,
    connections: usize,
    calls: usize,
) -> anyhow::Result<Measurement> {
    let requests = (calls / connections).max(100);
    let (samples, wall) = load(addr, connections, requests)?;
    Ok(summarize(scenario, connections, samples, wall))
}

/// `warden bench --scenario daemon`: `POST /v1/evaluate` over loopback HTTP
/// with 1, 4 and 32 connections (the threads column), decision log on.
pub fn daemon(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let daemon = Daemon::start(Dispatch::default())?;
    let mut out = Vec::new();
    for connections in [1, 4, 32] {
        out.push(row(
            "daemon: POST /v1/evaluate over HTTP",
            daemon.addr(),
            connections,
            calls,
        )?);
    }
    Ok(out)
}

/// A minimal hyper server on its own two-thread runtime, as the daemon's: it
/// reads each request's whole body and answers `answer`, nothing else (no
/// routing, no token, no JSON, no log). What HTTP alone costs on this machine.
struct Floor {
    /// Serves until dropped, with the tasks it runs.
    _runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
}

impl Floor {
    fn start(answer: Bytes) -> anyhow::Result<Floor> {
        let runtime = runtime("floor-http")?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let addr = listener.local_addr()?;
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: Request<hyper::body::Incoming>| {
                            let answer = answer.clone();
                            async move {
                                request.into_body().collect().await?;
                                let response = hyper::Response::builder()
                                    .header(CONTENT_TYPE, "application/json")
                                    .body(Full::new(answer))
                                    .expect("a static response");
                                Ok::<_, hyper::Error>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Floor {
            _runtime: runtime,
            addr,
        })
    }
}

/// `warden bench --scenario daemon-floor`: the daemon's evaluate beside its
/// floor, in one run: a minimal hyper server answering the daemon's own answer
/// bytes to the same requests (1 and 4 connections, alternated with the
/// daemon's rows, three rounds), and the pipeline alone (`Warden::evaluate` on
/// the same call and config, in process). What the daemon adds is its p50
/// minus the floor's and the pipeline's. The daemon twice: with the default
/// provider limits (every call on the judging pool), and with the provider
/// bounded within `inline_budget_ms` (a call judged at once while the pool is
/// idle).
pub fn floor(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let daemon = Daemon::start(Dispatch::default())?;
    let bounded = Daemon::start_with(
        &config("bash, read_file").replacen("server:\n", &format!("{WITHIN_BUDGET}server:\n"), 1),
        Dispatch::default(),
    )?;
    let answer = {
        let clients = runtime("warden-load")?;
        let addr = daemon.addr();
        let decision = clients.block_on(async move {
            let mut c = Connection::open(addr).await?;
            c.evaluate().await
        })?;
        Bytes::from(serde_json::to_vec(&decision)?)
    };
    let floor = Floor::start(answer)?;
    let warden = warden::Warden::new(&warden::Config::parse(
        &config("bash, read_file"),
        "<bench>",
        ".".into(),
    )?)?;
    let call: warden_types::request::ToolCall = serde_json::from_str(CALL)?;
    let mut out = Vec::new();
    for _round in 0..3 {
        out.push(crate::measure(
            "pipeline alone (Warden::evaluate, same call and config)",
            1,
            calls,
            &|| {
                let e = warden
                    .evaluate(&call, warden_types::Caller::Agent)
                    .expect("a decision");
                assert!(e.allow, "the benchmark call must be allowed: {e:?}");
            },
        ));
        for connections in [1, 4] {
            out.push(row(
                "floor: minimal hyper server, same bytes",
                floor.addr,
                connections,
                calls,
            )?);
            out.push(row(
                "daemon: POST /v1/evaluate over HTTP",
                daemon.addr(),
                connections,
                calls,
            )?);
            out.push(row(
                "daemon, provider within inline_budget_ms: judged at once when idle",
                bounded.addr(),
                connections,
                calls,
            )?);
        }
    }
    Ok(out)
}

/// `warden bench --scenario daemon-telemetry`: the daemon's evaluate with
/// telemetry off and on (every call traced, `sample_ratio: 1`; then every
/// decision line sent as a log record too), the collector a minimal HTTP server
/// that reads each export and answers 200; 1 and 4 connections, the three
/// daemons alternated, three rounds.
pub fn telemetry(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let collector = Floor::start(Bytes::new())?;
    let off = Daemon::start(Dispatch::default())?;
    let with = |section: String| {
        Daemon::start_with(
            &format!("{}{section}", config("bash, read_file")),
            Dispatch::default(),
        )
    };
    let traces = with(telemetry_section(collector.addr).replace("logs: true", "logs: false"))?;
    let both = with(telemetry_section(collector.addr))?;
    alternated(
        &[
            ("telemetry off", &off),
            ("telemetry on, traces", &traces),
            ("telemetry on, traces and lines", &both),
        ],
        calls,
    )
}

/// Each of `daemons` in turn on 1 and 4 connections, three rounds: rows
/// named `daemon evaluate, {name}`.
fn alternated(daemons: &[(&str, &Daemon)], calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let mut out = Vec::new();
    for _round in 0..3 {
        for connections in [1, 4] {
            for (name, daemon) in daemons {
                let name = format!("daemon evaluate, {name}");
                out.push(row(&name, daemon.addr(), connections, calls)?);
            }
        }
    }
    Ok(out)
}

/// `telemetry:` sending every trace and line to `collector`.
fn telemetry_section(collector: SocketAddr) -> String {
    format!("telemetry:\n  otlp_endpoint: http://{collector}\n  sample_ratio: 1\n  logs: true\n")
}

/// `warden bench --scenario daemon-everything`: the daemon's evaluate with
/// everything on at once (a shadow provider judging every call, the decision
/// log's hash chain, telemetry as in `daemon-telemetry`, and approvals in the
/// PostgreSQL database `WARDEN_DATABASE_URL` names) against the same daemon
/// with all of it off (no shadow, no chain, no telemetry, SQLite). Fair
/// admission (each token's share of bodies and of the judging queue) is
/// always on, in both. 1 and 4 connections, alternated, three rounds.
pub fn everything(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    anyhow::ensure!(
        std::env::var_os("WARDEN_DATABASE_URL").is_some(),
        "set WARDEN_DATABASE_URL to a PostgreSQL database the benchmark may write"
    );
    let collector = Floor::start(Bytes::new())?;
    let off = Daemon::start_with(
        &format!(
            "{}decision_log:\n  chain: false\n",
            config("bash, read_file")
        ),
        Dispatch::default(),
    )?;
    let shadow = "    - name: shadow\n      wasm: builtin:allowlist\n      mode: shadow\n      config: {allowed_tools: [read_file], denied_tools: [rm]}\n";
    let base = config("bash, read_file").replacen("server:\n", &format!("{shadow}server:\n"), 1);
    let on = Daemon::start_with(
        &format!(
            "{base}decision_log:\n  chain: true\n{}hitl_approval:\n  store: {{kind: postgres, url_env: WARDEN_DATABASE_URL}}\n",
            telemetry_section(collector.addr)
        ),
        Dispatch::default(),
    )?;
    alternated(&[("all off", &off), ("everything on", &on)], calls)
}

/// `warden bench --scenario daemon-dispatch`: the same load with each way of
/// running the synchronous pipeline from the async server.
pub fn dispatch(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let mut out = Vec::new();
    for (name, dispatch) in [
        ("judging pool", Dispatch::Pool),
        ("inline", Dispatch::Inline),
        ("block_in_place", Dispatch::BlockInPlace),
        ("spawn_blocking", Dispatch::SpawnBlocking),
    ] {
        let daemon = Daemon::start(dispatch)?;
        for connections in [1, 4, 32] {
            out.push(row(
                &format!("daemon evaluate, {name}"),
                daemon.addr(),
                connections,
                calls,
            )?);
        }
    }
    Ok(out)
}

/// `warden bench --scenario daemon-fsync`: the daemon's evaluate with the
/// decision log synced every 20 ms (`fsync: interval`) and before every answer
/// (`fsync: always`), 1 and 8 connections.
pub fn fsync(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let mut out = Vec::new();
    for fsync in ["interval", "always"] {
        let yaml = format!(
            "{}decision_log:\n  fsync: {fsync}\n",
            config("bash, read_file")
        );
        let daemon = Daemon::start_with(&yaml, Dispatch::default())?;
        for connections in [1, 8] {
            out.push(row(
                &format!("daemon evaluate, decision_log.fsync: {fsync}"),
                daemon.addr(),
                connections,
                calls,
            )?);
        }
    }
    Ok(out)
}

const FLOOD_TOKEN: &str = "bench-flood-token-0123456789";

/// How long each row of the flood scenario measures, at least: longer than a
/// flooding connection waits for a turn (10 s) and than the first bodies'
/// allowance, so that the flood's refusals and reconnections happen while the
/// other token's calls are timed.
const FLOOD_WINDOW: Duration = Duration::from_secs(15);

/// `warden bench --scenario daemon-flood`: one token's evaluate (1 and 4
/// connections, closed loop, for at least `FLOOD_WINDOW` each) on an idle
/// daemon, then while another token
/// holds 40 connections, each sending the first 64 KiB of a 1 MiB body and
/// then a byte every 2 s (reconnecting when refused): the flood takes that
/// token's share of the body turns and waits among itself for more.
pub fn flood(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let yaml = format!(
        "{}    - {{name: flood, role: agent, token: {FLOOD_TOKEN}}}\n",
        config("bash, read_file")
    );
    let daemon = Daemon::start_with(&yaml, Dispatch::default())?;
    let addr = daemon.addr();
    let mut out = Vec::new();
    let mut measure = |scenario: &str| -> anyhow::Result<()> {
        for connections in [1, 4] {
            let requests = (calls / connections).max(100);
            let (mut samples, mut wall) = (Vec::new(), Duration::ZERO);
            while wall < FLOOD_WINDOW {
                let (more, took) = load(addr, connections, requests)?;
                samples.extend(more);
                wall += took;
            }
            out.push(summarize(scenario, connections, samples, wall));
        }
        Ok(())
    };
    measure("daemon evaluate of one token, no flood")?;
    let flooders = runtime("warden-flood")?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for _ in 0..40 {
        let stop = stop.clone();
        flooders.spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if slow_body(addr, &stop).await.is_err() {
                    // Refused (or not connected): start the next body soon.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        });
    }
    // The flood holds its token's share of the turns before measuring.
    let serving = daemon.server.as_ref().expect("running").daemon();
    let share = serving.limits().bodies_per_principal();
    let held = Instant::now() + Duration::from_secs(30);
    while serving.current_load().bodies < share {
        ensure!(
            Instant::now() < held,
            "the flood never took its {share} body turns"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    measure("daemon evaluate of one token, another's 40 slow 1 MiB bodies")?;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flooders.shutdown_background();
    Ok(out)
}

/// One slow body of the flood: the head of a 1 MiB evaluate, 64 KiB of it,
/// then a byte every 2 s until the daemon refuses it or `stop` is set.
async fn slow_body(addr: SocketAddr, stop: &std::sync::atomic::AtomicBool) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let head = format!(
        "POST /v1/evaluate HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {FLOOD_TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        1 << 20
    );
    stream.write_all(head.as_bytes()).await?;
    stream
        .write_all(br#"{"tool_name":"bash","tool_input":{"pad":""#)
        .await?;
    stream.write_all(&vec![b'x'; 64 * 1024]).await?;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        stream.write_all(b"x").await?;
    }
    Ok(())
}

/// `warden bench --scenario healthz-stuck`: `GET /healthz` on its own
/// connection, on an idle daemon and while 8 connections keep calls running to
/// their provider's timeout (the hostile test fixture looping for 100 ms), with
/// the pipeline on the judging pool and, for comparison, inline on the async
/// workers. Needs a source checkout (the fixture is not shipped).
pub fn healthz_stuck(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let hostile = fixtures::guest("hostile")?;
    ensure!(
        hostile.is_file(),
        "{} is missing: this scenario needs the test fixtures of a source checkout",
        hostile.display()
    );
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: stuck\n      wasm: {}\n      config: {{behaviour: infinite_loop}}\n      limits: {{timeout_ms: 100, fuel: 1125899906842624, pool_size: 8}}\nserver:\n  watch_config: false\n  tokens:\n    - {{name: bench, role: agent, token: {AGENT_TOKEN}}}\n",
        hostile.display()
    );
    let probes = (calls / 10).clamp(100, 2_000);
    let mut out = Vec::new();
    for (name, dispatch, stuck, probes) in [
        ("idle daemon", Dispatch::Pool, 0, probes),
        (
            "8 calls stuck at the provider timeout, judging pool",
            Dispatch::Pool,
            8,
            probes,
        ),
        // Each probe waits for a stuck call here: a few are enough.
        (
            "8 calls stuck at the provider timeout, inline",
            Dispatch::Inline,
            8,
            (probes / 25).max(20),
        ),
    ] {
        let daemon = Daemon::start_with(&yaml, dispatch)?;
        let addr = daemon.addr();
        let clients = runtime("warden-load")?;
        let (samples, wall) = clients.block_on(async move {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let mut load = Vec::new();
            for _ in 0..stuck {
                let mut c = Connection::open(addr).await?;
                let stop = stop.clone();
                load.push(tokio::spawn(async move {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let decision = c.evaluate().await?;
                        ensure!(decision["allow"] == false, "allowed: {decision}");
                    }
                    anyhow::Ok(())
                }));
            }
            // Let the stuck calls take the threads first.
            tokio::time::sleep(Duration::from_millis(300)).await;
            let mut probe = Connection::open(addr).await?;
            let mut samples = Vec::with_capacity(probes);
            let started = Instant::now();
            for _ in 0..probes {
                let t = Instant::now();
                let (status, _) = probe.get("/healthz").await?;
                samples.push(t.elapsed());
                ensure!(status == 200, "/healthz answered {status}");
                // A probe every 5 ms, as a monitor would, not a flood.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let wall = started.elapsed();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for task in load {
                task.await??;
            }
            anyhow::Ok((samples, wall))
        })?;
        out.push(summarize(
            &format!("GET /healthz, {name}"),
            1,
            samples,
            wall,
        ));
    }
    Ok(out)
}

/// `warden bench --scenario reload`: from sending `POST /v1/admin/reload`
/// (with a changed config file) to the first evaluate judged by the new set,
/// alternating between two configurations of the shipped provider.
pub fn reload(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let daemon = Daemon::start(Dispatch::default())?;
    let rounds = (calls / 100).clamp(20, 200);
    let addr = daemon.addr();
    let config_path = daemon.scratch.config();
    let clients = runtime("warden-load")?;
    let (samples, wall) = clients.block_on(async move {
        let mut c = Connection::open(addr).await?;
        let mut samples = Vec::with_capacity(rounds);
        let started = Instant::now();
        for round in 0..rounds {
            let allowed = if round % 2 == 0 {
                "bash, ls"
            } else {
                "bash, read_file"
            };
            write_atomically(&config_path, &config(allowed))?;
            let t = Instant::now();
            let (status, body) = c
                .send("/v1/admin/reload", ADMIN_TOKEN, Bytes::new())
                .await?;
            ensure!(
                status == 200,
                "reload answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
            let report: Value = serde_json::from_slice(&body)?;
            let generation = report["generation"].as_u64().context("generation")?;
            loop {
                let decision = c.evaluate().await?;
                if decision["generation"].as_u64() == Some(generation) {
                    break;
                }
            }
            samples.push(t.elapsed());
        }
        anyhow::Ok((samples, started.elapsed()))
    })?;
    Ok(vec![summarize(
        "reload request to the new set serving (shipped allowlist)",
        1,
        samples,
        wall,
    )])
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let next = path.with_extension("next");
    std::fs::write(&next, text)?;
    std::fs::rename(next, path)
}

const APPROVER_TOKEN: &str = "bench-approver-token-0123456789";

/// `warden bench --scenario console`: from sending a model response that
/// pauses (`POST .../tool-calls`) to the console's event stream delivering
/// its `paused` event to a signed-in reader, one pause after another, each on
/// a new thread.
pub fn console(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let pauses = calls.clamp(1, 200);
    let yaml = format!(
        "hitl_approval:\n  tools: [bash]\n  max_pending_per_principal: 1000000\n{}    - {{name: alice, role: approver, token: {APPROVER_TOKEN}}}\n",
        config("bash, read_file")
    );
    let daemon = Daemon::start_with(&yaml, Dispatch::default())?;
    let addr = daemon.addr();
    let clients = runtime("warden-load")?;
    let (samples, wall) = clients.block_on(async move {
        let mut c = Connection::open(addr).await?;
        let login = Request::post("/console/login")
            .header(HOST, addr.to_string())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"token":"{APPROVER_TOKEN}"}}"#
            ))))?;
        c.sender.ready().await?;
        let response = c.sender.send_request(login).await?;
        ensure!(response.status() == 200, "sign-in answered {}", response.status());
        let cookie = response
            .headers()
            .get_all(hyper::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("warden_session="))
            .and_then(|v| v.split(';').next())
            .context("no session cookie")?
            .to_string();
        response.into_body().collect().await?;

        // The reader: every `paused` event, with when it arrived.
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (mut sse, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let request = Request::get("/console/api/events")
            .header(HOST, addr.to_string())
            .header(hyper::header::COOKIE, cookie)
            .body(Full::new(Bytes::new()))?;
        let response = sse.send_request(request).await?;
        ensure!(response.status() == 200, "the event stream answered {}", response.status());
        let (arrived, mut arrivals) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
        let mut body = response.into_body();
        tokio::spawn(async move {
            let mut text = String::new();
            while let Some(Ok(frame)) = body.frame().await {
                let now = Instant::now();
                let Ok(data) = frame.into_data() else { continue };
                text.push_str(&String::from_utf8_lossy(&data));
                while let Some(end) = text.find("\n\n") {
                    let block: String = text.drain(..end + 2).collect();
                    if !block.contains("event: paused") {
                        continue;
                    }
                    let id = block
                        .lines()
                        .find_map(|l| l.strip_prefix("data: "))
                        .and_then(|d| serde_json::from_str::<Value>(d).ok())
                        .and_then(|v| v["approval_id"].as_str().map(str::to_string));
                    if let Some(id) = id {
                        let _ = arrived.send((id, now));
                    }
                }
            }
        });

        let warm_up = 10;
        let mut samples = Vec::with_capacity(pauses);
        let started = Instant::now();
        for i in 0..warm_up + pauses {
            let body = Bytes::from_static(
                br#"{"message":{"tool_calls":[{"id":"call-1","name":"bash","args":{"command":"git push origin main"}}]}}"#,
            );
            let t = Instant::now();
            let (status, answer) = c
                .send(&format!("/v1/threads/t-{i}/runs/r-1/tool-calls"), AGENT_TOKEN, body)
                .await?;
            ensure!(status == 200, "tool-calls answered {status}: {}", String::from_utf8_lossy(&answer));
            let outcome: Value = serde_json::from_slice(&answer)?;
            let id = outcome["approval_id"].as_str().context("the call did not pause")?;
            let at = loop {
                let (seen, at) = tokio::time::timeout(Duration::from_secs(10), arrivals.recv())
                    .await
                    .context("no event within 10 s")?
                    .context("the event stream ended")?;
                if seen == id {
                    break at;
                }
            };
            if i >= warm_up {
                samples.push(at.saturating_duration_since(t));
            }
        }
        anyhow::Ok((samples, started.elapsed()))
    })?;
    Ok(vec![summarize(
        "pause to its event in the console (SSE)",
        1,
        samples,
        wall,
    )])
}
