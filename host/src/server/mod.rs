//! The Warden daemon (`warden serve`): the HTTP/JSON API in front of the
//! pipeline, its authentication and limits, the decision log, the metrics, and
//! the hot swap of the provider set (on a change of the config file, on SIGHUP,
//! or on `POST /v1/admin/reload`).
//!
//! ```no_run
//! # async fn run() -> Result<(), warden_host::server::ServeError> {
//! use warden_host::server::{ServeOptions, Server};
//!
//! let server = Server::start("warden.yaml".as_ref(), ServeOptions::default()).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.shutdown().await
//! # }
//! ```

pub mod auth;
mod body;
pub mod loadgen;
pub mod metrics;
mod reload;
mod routes;
mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use axum::http::HeaderMap;
use serde::Deserialize;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use auth::{Access, Principal, Role, TokenError, TokenSpec, Tokens};
pub use body::{ApiError, ErrorBody, ErrorDetail, HttpLimits};
pub use metrics::Metrics;
pub use reload::{ProviderDigest, ReloadError, ReloadReport, Trigger};
pub use routes::{OPENAPI, ROUTES, RouteInfo};

use crate::approval::{ApprovalGate, Durability, StoreError};
use crate::config::{Config, ConfigError};
use crate::decision_log::{ArgumentPolicy, DecisionLog, DecisionLogError, JsonLines};
use crate::pipeline::{Evaluation, Warden};
use crate::provider::LoadError;
use crate::request::{Caller, RequestError, ToolCall};

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
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: default_listen(),
            watch_config: true,
            tokens: Vec::new(),
            limits: HttpLimits::default(),
        }
    }
}

fn default_listen() -> SocketAddr {
    DEFAULT_LISTEN.parse().expect("valid default address")
}

fn yes() -> bool {
    true
}

/// How `POST /v1/evaluate` runs the synchronous pipeline from the async
/// runtime. The default, [`Dispatch::Inline`], was measured fastest (see
/// `docs/benchmarks.md`); the others are kept to measure against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// On the runtime's worker thread.
    #[default]
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
        Ok(Settings {
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
    decision_log: (bool, PathBuf),
    durability: Durability,
}

impl Fixed {
    fn of(config: &Config) -> Fixed {
        Fixed {
            listen: config.server.listen,
            watch: config.server.watch_config,
            decision_log: (
                config.decision_log.enabled,
                config.decision_log.path.clone(),
            ),
            durability: config.hitl_approval.durability,
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
    limits: ArcSwap<HttpLimits>,
    metrics: Metrics,
    decisions: DecisionLog,
    swaps: JsonLines,
    /// Serialises reloads, and remembers what was applied last.
    reloading: Mutex<reload::Applied>,
    fixed: Fixed,
    dispatch: Dispatch,
}

impl Daemon {
    /// Loads the configuration file and everything it names. Blocks while
    /// providers are compiled and configured.
    pub fn load(config_path: &Path, options: &ServeOptions) -> Result<Daemon, ServeError> {
        let (config, digest) = reload::read_config(config_path)?;
        let settings = Settings::resolve(&config)?;
        let data_dir = options
            .data_dir
            .clone()
            .unwrap_or_else(|| config.data_dir());
        std::fs::create_dir_all(&data_dir).map_err(|source| ServeError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        let warden = Arc::new(Warden::new(&config)?);
        if let Some((provider, failure)) = warden.snapshot().providers.unhealthy().next() {
            return Err(ServeError::Unhealthy {
                provider: provider.name().to_string(),
                message: failure.to_string(),
            });
        }
        let gate = ApprovalGate::open(warden.clone(), &data_dir, config.hitl_approval.durability)?;
        let decisions = DecisionLog::open(&config.decision_log, &data_dir)?;
        decisions.set_policy(settings.arguments);
        let swaps = JsonLines::open(&data_dir.join(SWAP_LOG))?;
        let metrics = Metrics::new();
        metrics.swapped(None, warden.snapshot().providers.generation());
        let fixed = Fixed::of(&config);
        Ok(Daemon {
            config_path: config_path.to_path_buf(),
            tokens: ArcSwap::from_pointee(settings.tokens),
            limits: ArcSwap::from_pointee(settings.limits),
            metrics,
            decisions,
            swaps,
            reloading: Mutex::new(reload::Applied {
                config_sha256: digest,
            }),
            fixed,
            dispatch: options.dispatch,
            warden,
            gate,
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
        if !access.allows(who.role) {
            return Err(ApiError::forbidden(format!(
                "the token '{}' has the {} role; this route needs {}",
                who.name,
                who.role,
                access.describe()
            )));
        }
        Ok(who)
    }

    /// The request limits in force.
    pub fn limits(&self) -> HttpLimits {
        **self.limits.load()
    }

    /// Judges one call as the configured dispatch says.
    async fn judge(
        self: &Arc<Self>,
        call: ToolCall,
        caller: Caller,
    ) -> Result<(ToolCall, Result<Evaluation, RequestError>), ApiError> {
        match self.dispatch {
            Dispatch::Inline => {
                let evaluation = self.warden.evaluate(&call, caller);
                Ok((call, evaluation))
            }
            Dispatch::BlockInPlace => {
                let evaluation =
                    tokio::task::block_in_place(|| self.warden.evaluate(&call, caller));
                Ok((call, evaluation))
            }
            Dispatch::SpawnBlocking => {
                let daemon = self.clone();
                tokio::task::spawn_blocking(move || {
                    let evaluation = daemon.warden.evaluate(&call, caller);
                    (call, evaluation)
                })
                .await
                .map_err(|err| ApiError::internal(format!("the evaluation failed: {err}")))
            }
        }
    }
}

/// A running daemon.
pub struct Server {
    daemon: Arc<Daemon>,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
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
        let watcher = if options.watch.unwrap_or(daemon.fixed.watch) {
            Some(watch::ConfigWatcher::start(daemon.clone())?)
        } else {
            None
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let app = routes::router(daemon.clone());
        // Answers are small and each is written at once: do not let Nagle's
        // algorithm hold them back.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!(%addr, config = %daemon.config_path.display(), "warden is serving");
        Ok(Server {
            daemon,
            addr,
            stop: Some(stop),
            task,
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

    /// Stops accepting connections, lets requests in flight finish, and
    /// writes out the logs.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
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
