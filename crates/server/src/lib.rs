//! The Warden daemon (`warden serve`): the HTTP/JSON API in front of the
//! pipeline, its authentication and limits, the decision log, the metrics, and
//! the hot swap of the provider set (on a change of the config file, on SIGHUP,
//! or on `POST /v1/admin/reload`).
//!
//! ```no_run
//! # async fn run() -> Result<(), warden_server::ServeError> {
//! use warden_server::{ServeOptions, Server};
//!
//! let server = Server::start("warden.yaml".as_ref(), ServeOptions::default()).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.shutdown().await
//! # }
//! ```

pub mod auth;
mod body;
pub mod config;
mod connections;
pub mod console;
pub mod decision_log;
pub mod events;
mod expiry;
mod limits;
pub mod metrics;
pub mod notify;
mod refusal;
mod reload;
mod routes;
mod watch;
mod workers;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use axum::http::HeaderMap;
use serde::Deserialize;
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinHandle;

pub use auth::{Access, Principal, Role, TokenError, TokenSpec, Tokens};
pub use body::{ApiError, ErrorBody, ErrorDetail};
pub use config::Config;
pub use connections::raise_open_file_limit;
pub use limits::HttpLimits;
pub use metrics::Metrics;
pub use reload::{ProviderDigest, ReloadError, ReloadReport, Trigger};
pub use routes::{OPENAPI, ROUTES, RouteInfo};
pub use workers::{PoolError, WorkerPool};

use crate::config::ConfigError;
use crate::decision_log::{ArgumentPolicy, DecisionLog, DecisionLogError, Fsync, JsonLines};
use connections::Connections;
use warden::Warden;
use warden_approval::{ApprovalGate, Durability, SqliteApprovalStore, StoreError};
use warden_runtime::provider::LoadError;

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// The swap audit log, in the data directory.
pub const SWAP_LOG: &str = "swaps.jsonl";

/// The `server:` block of the configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The address to listen on.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Reload when the config file changes.
    #[serde(default = "yes")]
    pub watch_config: bool,
    /// Who may call, and as what.
    #[serde(default)]
    pub tokens: Vec<TokenSpec>,
    #[serde(default)]
    pub limits: HttpLimits,
    /// Where people reach this daemon (`https://warden.example.com`), for the
    /// links in notices and the console's cookies (`Secure` under https).
    #[serde(default)]
    pub public_url: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: default_listen(),
            watch_config: true,
            tokens: Vec::new(),
            limits: HttpLimits::default(),
            public_url: None,
        }
    }
}

impl ServerConfig {
    /// Checks what parsing cannot; on error, the key under `server` and why.
    pub fn check(&self) -> Result<(), (String, String)> {
        if let Some(public) = &self.public_url {
            let url = url::Url::parse(public).map_err(|err| {
                (
                    "public_url".to_string(),
                    format!("'{public}' is not a URL: {err}"),
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err((
                    "public_url".into(),
                    format!("'{public}' must be an http:// or https:// URL with a host"),
                ));
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err((
                    "public_url".into(),
                    format!("'{public}' must not have a query or a fragment"),
                ));
            }
        }
        Ok(())
    }

    /// `public_url` without a trailing slash, if set.
    pub fn public_base(&self) -> Option<String> {
        self.public_url
            .as_deref()
            .map(|u| u.trim_end_matches('/').to_string())
    }
}

fn default_listen() -> SocketAddr {
    DEFAULT_LISTEN.parse().expect("valid default address")
}

fn yes() -> bool {
    true
}

/// How the routes run their blocking work (the pipeline, the approval store)
/// from the async runtime. The default, [`Dispatch::Pool`], keeps the async
/// workers free whatever a provider or the store does; the others are kept to
/// measure against (see `docs/benchmarks.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// On the judging pool ([`WorkerPool`]), refused at once when its queue is full.
    #[default]
    Pool,
    /// On the runtime's worker thread.
    Inline,
    /// On the worker thread, after handing its other tasks to another worker.
    BlockInPlace,
    /// On the runtime's blocking thread pool.
    SpawnBlocking,
}

/// What the command line (or an embedding program) overrides.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Instead of `server.listen`.
    pub listen: Option<SocketAddr>,
    /// Instead of the configuration's `data_dir`.
    pub data_dir: Option<PathBuf>,
    /// Instead of `server.watch_config`.
    pub watch: Option<bool>,
    pub dispatch: Dispatch,
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("provider '{provider}' could not be configured: {message}")]
    Unhealthy { provider: String, message: String },
    #[error(transparent)]
    Tokens(#[from] TokenError),
    #[error("{0}")]
    Limits(String),
    #[error(transparent)]
    Log(#[from] DecisionLogError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{config}: no token is configured under server.tokens, so nobody could call the daemon; add one, e.g.\n  server:\n    tokens:\n      - {{name: my-agent, role: agent, token_env: WARDEN_AGENT_TOKEN}}"
    )]
    NoTokens { config: String },
    #[error("{0}")]
    Notify(String),
    #[error("cannot start the judging threads: {0}")]
    Workers(std::io::Error),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot watch the config file {path}: {message}")]
    Watch { path: String, message: String },
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The settings that a reload replaces along with the provider set.
struct Settings {
    tokens: Tokens,
    limits: HttpLimits,
    arguments: ArgumentPolicy,
    /// The webhooks of `hitl_approval.notify`, their secrets read.
    notify: Vec<notify::Target>,
}

impl Settings {
    fn resolve(config: &Config) -> Result<Settings, ServeError> {
        let tokens = Tokens::resolve(&config.server.tokens, |var| std::env::var(var).ok())?;
        if tokens.is_empty() {
            return Err(ServeError::NoTokens {
                config: config.source.clone(),
            });
        }
        config.server.limits.check().map_err(ServeError::Limits)?;
        let notify = notify::resolve(&config.hitl_approval.notify, |var| std::env::var(var).ok())
            .map_err(ServeError::Notify)?;
        Ok(Settings {
            notify,
            tokens,
            limits: config.server.limits,
            arguments: ArgumentPolicy::new(&config.decision_log)?,
        })
    }
}

/// The settings that only a restart changes; a reload that changes them says so.
#[derive(Clone, Debug, PartialEq)]
struct Fixed {
    listen: SocketAddr,
    watch: bool,
    decision_log: (bool, PathBuf, Fsync, u64),
    durability: Durability,
    data_dir: PathBuf,
    limits: [(&'static str, u64); 5],
    /// `server.public_url`, without a trailing slash.
    public_url: Option<String>,
}

impl Fixed {
    fn of(config: &Config) -> Fixed {
        let log = &config.decision_log;
        Fixed {
            listen: config.server.listen,
            watch: config.server.watch_config,
            decision_log: (
                log.enabled,
                log.path.clone(),
                log.fsync,
                log.fsync_interval_ms,
            ),
            durability: config.hitl_approval.durability,
            data_dir: config.data_dir(),
            limits: config.server.limits.fixed_at_start(),
            public_url: config.server.public_base(),
        }
    }
}

/// The daemon's shared state: the live policy, who may call, the logs and the
/// metrics.
pub struct Daemon {
    warden: Arc<Warden>,
    /// Human approval, over the same live policy.
    gate: ApprovalGate,
    config_path: PathBuf,
    tokens: ArcSwap<Tokens>,
    limits: Arc<ArcSwap<HttpLimits>>,
    metrics: Metrics,
    decisions: DecisionLog,
    swaps: JsonLines,
    /// Serialises reloads, and remembers what was applied last.
    reloading: Mutex<reload::Applied>,
    fixed: Fixed,
    /// `--data-dir`, which every reloaded configuration is held to.
    data_dir: Option<PathBuf>,
    dispatch: Dispatch,
    /// The threads that judge calls and wait on the store.
    workers: WorkerPool,
    /// Turns of the requests whose body is read and judged at once.
    bodies: Arc<Semaphore>,
    connections: Arc<Connections>,
    /// Pauses made and resolved, for the console's event stream.
    events: events::Events,
    /// Webhooks told of every pause.
    notifier: notify::Notifier,
    /// The console's logged-in people.
    sessions: console::Sessions,
    /// `http://<bound address>`, where `server.public_url` is not set.
    bound_url: std::sync::OnceLock<String>,
}

impl Daemon {
    /// Loads the configuration file and everything it names. Blocks while
    /// providers are compiled and configured.
    pub fn load(config_path: &Path, options: &ServeOptions) -> Result<Daemon, ServeError> {
        let (mut config, digest) = reload::read_config(config_path)?;
        settle_data_dir(&mut config, options.data_dir.as_deref());
        let settings = Settings::resolve(&config)?;
        let data_dir = config.data_dir();
        warden_runtime::data_dir::create_private_dir(&data_dir).map_err(|source| {
            ServeError::DataDir {
                path: data_dir.display().to_string(),
                source,
            }
        })?;
        let warden = Arc::new(Warden::new(&config)?);
        if let Some((provider, failure)) = warden.snapshot().providers.unhealthy().next() {
            return Err(ServeError::Unhealthy {
                provider: provider.name().to_string(),
                message: failure.to_string(),
            });
        }
        let limits = settings.limits;
        let store = SqliteApprovalStore::open_in(&data_dir, config.hitl_approval.durability)?;
        store.set_busy_timeout(limits.store_busy_timeout())?;
        let gate = ApprovalGate::new(warden.clone(), Arc::new(store));
        let decisions = DecisionLog::open(&config.decision_log, &data_dir)?;
        decisions.set_policy(settings.arguments);
        let swaps = JsonLines::open(&data_dir.join(SWAP_LOG))?;
        let metrics = Metrics::new();
        let notifier = notify::Notifier::new(metrics.notify_counters());
        notifier.set(settings.notify);
        metrics.swapped(None, warden.snapshot().providers.generation());
        let fixed = Fixed::of(&config);
        let workers = WorkerPool::start(limits.worker_count(), limits.queue_depth)
            .map_err(ServeError::Workers)?;
        let connections = Arc::new(Connections::new(connections::connection_cap(
            limits.max_connections,
        )));
        if connections.cap() < limits.max_connections {
            tracing::warn!(
                cap = connections.cap(),
                "server.limits.max_connections lowered to fit the open-file limit"
            );
        }
        Ok(Daemon {
            config_path: config_path.to_path_buf(),
            tokens: ArcSwap::from_pointee(settings.tokens),
            limits: Arc::new(ArcSwap::from_pointee(limits)),
            metrics,
            decisions,
            swaps,
            reloading: Mutex::new(reload::Applied {
                config_sha256: digest,
            }),
            fixed,
            data_dir: options.data_dir.clone(),
            dispatch: options.dispatch,
            workers,
            bodies: Arc::new(Semaphore::new(limits.max_concurrent_bodies)),
            connections,
            warden,
            gate,
            events: events::Events::new(),
            notifier,
            sessions: console::Sessions::new(),
            bound_url: std::sync::OnceLock::new(),
        })
    }

    /// The pipeline and its live policy.
    pub fn warden(&self) -> &Warden {
        &self.warden
    }

    /// The approval gate.
    pub fn gate(&self) -> &ApprovalGate {
        &self.gate
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub fn decision_log(&self) -> &DecisionLog {
        &self.decisions
    }

    pub fn config_path(&self) -> &Path {
        &self.config_path
    }

    /// Who is calling, if they may: 401 without a valid token, 403 with a
    /// token of the wrong role.
    pub fn authorize(&self, headers: &HeaderMap, access: Access) -> Result<Principal, ApiError> {
        let header = headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| ApiError::unauthorized("missing `Authorization: Bearer <token>`"))?;
        let token = header.to_str().ok().and_then(auth::bearer).ok_or_else(|| {
            ApiError::unauthorized("the Authorization header is not `Bearer <token>`")
        })?;
        let who = self
            .tokens
            .load()
            .authenticate(token)
            .ok_or_else(|| ApiError::unauthorized("the bearer token is not valid"))?;
        let admins_approve = self.warden.snapshot().hitl_approval.admins_may_approve;
        if !access.allows(who.role, admins_approve) {
            return Err(ApiError::forbidden(format!(
                "the token '{}' has the {} role; this route needs {}",
                who.name,
                who.role,
                access.describe()
            )));
        }
        Ok(who)
    }

    /// What the caller may do with approvals: answer any (an approver, or an
    /// admin where `hitl_approval.admins_may_approve`), relay a named human's
    /// answer to its own (a `relay: true` token), or nothing.
    pub fn authority(&self, who: &Principal) -> warden_approval::Authority {
        use warden_approval::Authority;
        match who.role {
            Role::Approver => Authority::Approver,
            Role::Admin if self.warden.snapshot().hitl_approval.admins_may_approve => {
                Authority::Approver
            }
            Role::Agent | Role::Internal if who.relay => Authority::Relay,
            _ => Authority::Denied,
        }
    }

    /// Pauses made and resolved.
    pub fn events(&self) -> &events::Events {
        &self.events
    }

    /// Where people reach the daemon: `server.public_url`, else the address it
    /// is bound to.
    pub fn public_url(&self) -> String {
        self.fixed
            .public_url
            .clone()
            .or_else(|| self.bound_url.get().cloned())
            .unwrap_or_else(|| format!("http://{}", self.fixed.listen))
    }

    /// The request limits in force.
    pub fn limits(&self) -> HttpLimits {
        **self.limits.load()
    }

    /// Runs blocking work (the pipeline, the approval store) as the dispatch
    /// says: on the judging pool unless measuring the alternatives.
    async fn offload<T: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&Daemon) -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        match self.dispatch {
            Dispatch::Pool => {
                let daemon = self.clone();
                self.workers.run(move || job(&daemon)).await
            }
            Dispatch::Inline => Ok(job(self)),
            Dispatch::BlockInPlace => Ok(tokio::task::block_in_place(|| job(self))),
            Dispatch::SpawnBlocking => {
                let daemon = self.clone();
                tokio::task::spawn_blocking(move || job(&daemon))
                    .await
                    .map_err(|_| PoolError::Panicked)
            }
        }
    }

    /// How loaded the daemon is: connections, and calls waiting or being judged.
    pub fn current_load(&self) -> metrics::Load {
        metrics::Load {
            connections: self.connections.open(),
            max_connections: self.connections.cap(),
            jobs: self.workers.busy(),
            workers: self.workers.workers(),
        }
    }
}

/// Puts the data directory where the command line says, else where the file
/// says, as an absolute path: the compiled cache, the store and the logs all
/// live there.
fn settle_data_dir(config: &mut Config, command_line: Option<&Path>) {
    let dir = command_line
        .map(Path::to_path_buf)
        .unwrap_or_else(|| config.data_dir());
    config.set_data_dir(&dir);
}

/// A running daemon.
pub struct Server {
    daemon: Arc<Daemon>,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    sweeper: JoinHandle<()>,
    _watcher: Option<watch::ConfigWatcher>,
}

impl Server {
    /// Loads the configuration, binds the listener and starts serving (on the
    /// current tokio runtime).
    pub async fn start(config_path: &Path, options: ServeOptions) -> Result<Server, ServeError> {
        let path = config_path.to_path_buf();
        let opts = options.clone();
        let daemon = tokio::task::spawn_blocking(move || Daemon::load(&path, &opts))
            .await
            .map_err(|err| ServeError::Io(std::io::Error::other(err)))??;
        let daemon = Arc::new(daemon);
        let addr = options.listen.unwrap_or(daemon.fixed.listen);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr()?;
        let _ = daemon.bound_url.set(format!("http://{addr}"));
        let watcher = if options.watch.unwrap_or(daemon.fixed.watch) {
            Some(watch::ConfigWatcher::start(daemon.clone())?)
        } else {
            None
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let app = routes::router(daemon.clone());
        let task = tokio::spawn(connections::serve(
            listener,
            app,
            daemon.connections.clone(),
            daemon.limits.clone(),
            stopped,
        ));
        let sweeper = expiry::spawn(daemon.clone());
        tracing::info!(%addr, config = %daemon.config_path.display(), "warden is serving");
        Ok(Server {
            daemon,
            addr,
            stop: Some(stop),
            task,
            sweeper,
            _watcher: watcher,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn daemon(&self) -> &Arc<Daemon> {
        &self.daemon
    }

    /// Stops accepting connections, lets requests in flight finish (for at most
    /// `server.limits.shutdown_timeout_ms`, then drops their connections), and
    /// writes out and syncs the logs.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // The console's event streams would otherwise hold the shutdown.
        self.daemon.events.close();
        self.sweeper.abort();
        let served = (&mut self.task)
            .await
            .map_err(|err| ServeError::Io(std::io::Error::other(err)))?;
        let daemon = self.daemon.clone();
        tokio::task::spawn_blocking(move || {
            daemon.decisions.flush();
            daemon.swaps.flush();
        })
        .await
        .map_err(|err| ServeError::Io(std::io::Error::other(err)))?;
        Ok(served?)
    }
}

/// `warden serve`: runs the daemon until SIGTERM or Ctrl-C; SIGHUP reloads.
/// Prints `warden: listening on http://ADDR` on stdout once it accepts calls.
pub fn run(config_path: &Path, options: ServeOptions) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("warden-http")
        .build()?;
    runtime.block_on(async {
        // Handle signals before anyone can know the daemon is up: a SIGHUP or
        // SIGTERM sent right after the "listening" line must not kill it.
        let mut hangup = signal(SignalKind::hangup())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        if let Some(files) = raise_open_file_limit() {
            tracing::debug!(files, "open-file limit");
        }
        let server = Server::start(config_path, options).await?;
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "warden: listening on http://{}", server.local_addr())?;
            out.flush()?;
        }
        loop {
            tokio::select! {
                _ = hangup.recv() => {
                    let daemon = server.daemon().clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = daemon.reload(&Trigger::Signal);
                    });
                }
                _ = terminate.recv() => break,
                _ = interrupt.recv() => break,
            }
        }
        tracing::info!("shutting down");
        server.shutdown().await?;
        Ok(())
    })
}
