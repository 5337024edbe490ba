//! The daemon's shared state ([`DaemonState`]): the live policy and the approval
//! gate, who may call, the request limits, the logs, the metrics, the judging
//! threads, and what the console and the webhooks are told. The routes, the
//! reload and the console work on it; starting and stopping it is `server`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use axum::http::HeaderMap;
use tokio::sync::Semaphore;
use warden_log::{ArgumentPolicy, DecisionLog, Fsync, JsonLines};

use crate::auth::{self, Access, Principal, Role, Tokens};
use crate::body::ApiError;
use crate::config::Config;
use crate::connections::{self, Connections};
use crate::console::Sessions;
use crate::error::ServeError;
use crate::events::Events;
use crate::limits::HttpLimits;
use crate::metrics::{self, Metrics};
use crate::notify;
use crate::proxies::TrustedProxies;
use crate::shares::{self, Shares};
use crate::telemetry::Telemetry;
use crate::throttle::SignInThrottle;
use crate::workers::{PoolError, WorkerPool};
use warden::Warden;
use warden_approval::lease::{Holder, LEASE_TTL, Lease};
use warden_approval::{ApprovalGate, Durability};

/// The swap audit log, in the data directory.
pub const SWAP_LOG: &str = "swaps.jsonl";

/// How the routes run their blocking work (the pipeline, the approval store)
/// from the async runtime, for `warden bench` only (the `bench` feature). The
/// daemon always uses [`Dispatch::Pool`], which keeps the async workers free
/// whatever a provider or the store does; the others are kept to measure
/// against (see `docs/benchmarks.md`).
#[cfg(feature = "bench")]
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
    /// Instead of `server.node_name` (a node of a fleet whose nodes share
    /// one configuration file).
    pub node_name: Option<String>,
    /// Instead of `server.watch_config`.
    pub watch: Option<bool>,
    /// How blocking work is run (`warden bench` measures the alternatives).
    #[cfg(feature = "bench")]
    pub dispatch: Dispatch,
}

/// What the last successful load applied.
pub(crate) struct Applied {
    pub(crate) config_sha256: String,
    /// Where a promotion that rewrote the config file kept its previous
    /// text, until a rollback or a reload.
    pub(crate) rewritten: Option<PathBuf>,
}

/// The settings that a reload replaces along with the provider set.
pub(crate) struct Settings {
    pub(crate) tokens: Tokens,
    pub(crate) limits: HttpLimits,
    pub(crate) proxies: TrustedProxies,
    pub(crate) arguments: ArgumentPolicy,
    /// The webhooks of `hitl_approval.notify`, their secrets read.
    pub(crate) notify: Vec<notify::Target>,
}

impl Settings {
    pub(crate) fn resolve(config: &Config) -> Result<Settings, ServeError> {
        let tokens = Tokens::resolve(&config.server.tokens, |var| std::env::var(var).ok())?;
        for warning in crate::auth::deprecations(&config.server.tokens) {
            tracing::warn!("{warning}");
        }
        if tokens.is_empty() {
            return Err(ServeError::NoTokens {
                config: config.core.source.clone(),
            });
        }
        config.server.limits.check().map_err(ServeError::Limits)?;
        let notify = notify::resolve(&config.core.hitl_approval.notify, |var| {
            std::env::var(var).ok()
        })
        .map_err(ServeError::Notify)?;
        Ok(Settings {
            notify,
            tokens,
            limits: config.server.limits,
            proxies: config.server.trusted_proxies.clone(),
            arguments: ArgumentPolicy::new(&config.decision_log)?,
        })
    }
}

/// The settings that only a restart changes; a reload that changes them says so.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fixed {
    pub(crate) listen: SocketAddr,
    pub(crate) watch: bool,
    pub(crate) decision_log: (bool, PathBuf, Fsync, u64),
    pub(crate) durability: Durability,
    /// `hitl_approval.store`.
    pub(crate) store: warden_approval::Backend,
    pub(crate) data_dir: PathBuf,
    pub(crate) limits: [(&'static str, u64); 7],
    /// `server.public_url`, without a trailing slash.
    pub(crate) public_url: Option<String>,
    /// `server.node_name`, as set (absent: the host name).
    pub(crate) node_name: Option<String>,
    pub(crate) telemetry: Option<crate::telemetry::TelemetryConfig>,
}

impl Fixed {
    pub(crate) fn of(config: &Config) -> Fixed {
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
            durability: config.store.durability,
            store: config.store.backend.clone(),
            data_dir: config.core.data_dir(),
            limits: config.server.limits.fixed_at_start(),
            public_url: config.server.public_base(),
            node_name: config.server.node_name.clone(),
            telemetry: config.telemetry.clone(),
        }
    }
}

/// The daemon's shared state: the live policy, who may call, the logs and the
/// metrics.
pub struct DaemonState {
    pub(crate) warden: Arc<Warden>,
    /// Human approval, over the same live policy.
    pub(crate) gate: ApprovalGate,
    pub(crate) config_path: PathBuf,
    pub(crate) tokens: ArcSwap<Tokens>,
    pub(crate) limits: Arc<ArcSwap<HttpLimits>>,
    pub(crate) metrics: Metrics,
    pub(crate) decisions: DecisionLog,
    /// This node's name (`server.node_name`, default the host name).
    pub(crate) node_name: String,
    pub(crate) swaps: JsonLines,
    /// Serialises reloads, and remembers what was applied last.
    pub(crate) reloading: Mutex<Applied>,
    pub(crate) fixed: Fixed,
    /// `--data-dir`, which every reloaded configuration is held to.
    pub(crate) data_dir: Option<PathBuf>,
    #[cfg(feature = "bench")]
    pub(crate) dispatch: Dispatch,
    /// The threads that judge calls and wait on the store.
    pub(crate) workers: WorkerPool,
    /// Turns of the requests whose body is read and judged at once.
    pub(crate) bodies: Arc<Semaphore>,
    /// How many there are (`max_concurrent_bodies` at start).
    max_bodies: usize,
    /// Each principal's share of those turns.
    pub(crate) body_shares: Arc<Shares>,
    /// Each principal's share of the judging pool's places.
    pub(crate) queued: Arc<Shares>,
    /// `server.trusted_proxies`: whose `X-Forwarded-For` is believed.
    pub(crate) proxies: ArcSwap<TrustedProxies>,
    /// Wrong credentials by source address.
    pub(crate) throttle: SignInThrottle,
    pub(crate) connections: Arc<Connections>,
    /// Pauses made and resolved, for the console's event stream.
    pub(crate) events: Events,
    /// Webhooks told of every pause.
    pub(crate) notifier: notify::Notifier,
    /// The console's logged-in people.
    pub(crate) sessions: Sessions,
    /// `http://<bound address>`, where `server.public_url` is not set.
    pub(crate) bound_url: std::sync::OnceLock<String>,
    /// Traces and log records for a collector (`telemetry:`); `None`, and
    /// nothing done for it, where off.
    pub(crate) telemetry: Option<Arc<Telemetry>>,
    /// This daemon's hold on a SQLite store, given up when it stops.
    _lease: Option<Lease>,
}

/// The lease on a SQLite store (crates/approval/src/lease.rs): one daemon per
/// store file. PostgreSQL stores are shared by design and take none.
fn lease(
    store: &warden_approval::StoreConfig,
    data_dir: &Path,
    node: &str,
) -> Result<Option<Lease>, ServeError> {
    if !matches!(store.backend, warden_approval::Backend::Sqlite) {
        return Ok(None);
    }
    let holder = Holder {
        host: warden_log::stamp::host_name(),
        node: node.to_string(),
        pid: std::process::id(),
    };
    let path = data_dir.join(warden_approval::sqlite::STORE_FILE);
    Ok(Some(Lease::acquire(&path, &holder, LEASE_TTL)?))
}

impl DaemonState {
    /// Loads the configuration file and everything it names. Blocks while
    /// providers are compiled and configured.
    pub fn load(config_path: &Path, options: &ServeOptions) -> Result<DaemonState, ServeError> {
        let (mut config, digest) = Config::load_with_digest(config_path)?;
        settle_data_dir(&mut config, options.data_dir.as_deref());
        let dir = config.core.data_dir();
        crate::promotion_record::apply(&mut config, &digest, &dir)?;
        let settings = Settings::resolve(&config)?;
        let data_dir = config.core.create_data_dir()?;
        // A provider that cannot be configured stops the start.
        let warden = Arc::new(Warden::new_healthy(&config.core)?);
        let limits = settings.limits;
        let node_name = match &options.node_name {
            Some(name) => {
                warden_log::check_node_name(name)
                    .map_err(|message| ServeError::NodeName(format!("'{name}': {message}")))?;
                name.clone()
            }
            None => config
                .server
                .node_name()
                .map_err(|(key, message)| config.core.invalid(format!("server.{key}"), message))?,
        };
        let opened = warden_approval::backend::open_serving(
            &config.store,
            &data_dir,
            limits.store_busy_timeout(),
        )?;
        let lease = lease(&config.store, &data_dir, &node_name)?;
        tracing::info!(store = %opened.mode, leased = lease.is_some(), "approval store opened");
        // A store shared with other daemons carries their pause events too.
        let events = match opened.store.announcer() {
            Some(announcer) => Events::shared(announcer)?,
            None => Events::new(),
        };
        let gate = ApprovalGate::new(warden.clone(), opened.store);
        // The decision-signing key also signs the log's checkpoints.
        let checkpoint_key = warden::decision_log::checkpoint_key(&config.core)?;
        let decisions = DecisionLog::open_signed(&config.decision_log, &data_dir, checkpoint_key)?;
        decisions.set_policy(settings.arguments);
        decisions.set_node_name(node_name.clone());
        let swaps = JsonLines::open(&data_dir.join(SWAP_LOG))?;
        let metrics = Metrics::new();
        let notifier = notify::Notifier::new(metrics.notify_counters());
        notifier.set(settings.notify);
        metrics.swapped(None, warden.snapshot().generation());
        let telemetry = match &config.telemetry {
            Some(settings) => {
                let telemetry =
                    Telemetry::start(settings, &node_name, metrics.telemetry_counters())
                        .map_err(ServeError::Io)?;
                if telemetry.sends_logs() {
                    let tap = telemetry.clone();
                    // A fresh log has no tap yet.
                    let _ = decisions.set_tap(Box::new(move |line| tap.line(line)));
                }
                tracing::info!(endpoint = %settings.otlp_endpoint, sample_ratio = settings.sample_ratio,
                    logs = settings.logs, "telemetry: sending traces over OTLP");
                Some(telemetry)
            }
            None => None,
        };
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
        Ok(DaemonState {
            config_path: config_path.to_path_buf(),
            tokens: ArcSwap::from_pointee(settings.tokens),
            limits: Arc::new(ArcSwap::from_pointee(limits)),
            metrics,
            decisions,
            node_name,
            swaps,
            reloading: Mutex::new(Applied {
                config_sha256: digest,
                rewritten: None,
            }),
            fixed,
            data_dir: options.data_dir.clone(),
            #[cfg(feature = "bench")]
            dispatch: options.dispatch,
            workers,
            bodies: Arc::new(Semaphore::new(limits.max_concurrent_bodies)),
            max_bodies: limits.max_concurrent_bodies,
            body_shares: Shares::new(limits.bodies_per_principal()),
            queued: Shares::new(limits.queued_per_principal()),
            proxies: ArcSwap::from_pointee(settings.proxies),
            throttle: SignInThrottle::new(),
            connections,
            warden,
            gate,
            events,
            notifier,
            sessions: Sessions::new(),
            bound_url: std::sync::OnceLock::new(),
            telemetry,
            _lease: lease,
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

    /// What `GET /metrics` renders.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Where every decision is recorded.
    pub fn decision_log(&self) -> &DecisionLog {
        &self.decisions
    }

    /// The config file a reload reads.
    pub fn config_path(&self) -> &Path {
        &self.config_path
    }

    /// Who is calling, if they may: 401 without a valid token, 403 with a
    /// token of the wrong role.
    pub fn authorize(&self, headers: &HeaderMap, access: Access) -> Result<Principal, ApiError> {
        self.authorize_admitted(headers, None, access)
    }

    /// As [`DaemonState::authorize`], taking admission's answer for the token
    /// when it has one. The token set in force now decides: admission's
    /// answer stands only if it came from that same set; after a reload in
    /// between (or without an answer) the header's token is looked up again,
    /// so a token the reload revoked is refused.
    pub(crate) fn authorize_admitted(
        &self,
        headers: &HeaderMap,
        admitted: Option<crate::auth::Authenticated>,
        access: Access,
    ) -> Result<Principal, ApiError> {
        let tokens = self.tokens.load();
        let who = match admitted {
            Some(admitted) if Arc::ptr_eq(&admitted.tokens, &tokens) => admitted.principal,
            _ => authenticate(headers, &tokens)?,
        };
        let admins_approve = self.warden.snapshot().hitl_approval().admins_may_approve;
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
            Role::Admin if self.warden.snapshot().hitl_approval().admins_may_approve => {
                Authority::Approver
            }
            Role::Agent | Role::Internal => match &who.relay {
                Some(names) => Authority::Relay(names.clone()),
                None => Authority::Denied,
            },
            _ => Authority::Denied,
        }
    }

    /// Pauses made and resolved.
    pub fn events(&self) -> &Events {
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

    /// Runs blocking work (the pipeline, the approval store) on the judging
    /// pool (or, measuring the alternatives, as the dispatch says). The
    /// request's principal (see `admission`) may have at most
    /// `max_queued_per_principal` jobs queued or running.
    pub(crate) async fn offload<T: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&DaemonState) -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let share = match shares::current() {
            Some(who) => match self.queued.try_take(&who) {
                Some(share) => Some(share),
                None => {
                    self.metrics.admission_refused("max_queued_per_principal");
                    return Err(PoolError::PrincipalFull {
                        principal: who.to_string(),
                        cap: self.queued.cap(),
                    });
                }
            },
            None => None,
        };
        #[cfg(feature = "bench")]
        match self.dispatch {
            Dispatch::Pool => {}
            Dispatch::Inline => return Ok(job(self)),
            Dispatch::BlockInPlace => return Ok(tokio::task::block_in_place(|| job(self))),
            Dispatch::SpawnBlocking => {
                let daemon = self.clone();
                return tokio::task::spawn_blocking(move || job(&daemon))
                    .await
                    .map_err(|_| PoolError::Panicked);
            }
        }
        let daemon = self.clone();
        let ran = self
            .workers
            .run(move || {
                let _share = share;
                job(&daemon)
            })
            .await;
        if let Err(PoolError::Full { .. }) = ran {
            self.metrics.admission_refused("queue_depth");
        }
        ran
    }

    /// Judges on this async thread when that cannot keep it long (see
    /// `server.limits.inline_budget_ms`): the judging pool is idle, the live
    /// configuration's worst case is within the budget, and `at_once` does not
    /// decline (it returns `None` for what would wait on the store).
    /// Otherwise `job` runs on the judging pool, as [`DaemonState::offload`].
    /// A configuration reloaded between the check and the judgment is judged
    /// as the old one was; the budget bounds the next call again.
    pub(crate) async fn judge<T: Send + 'static>(
        self: &Arc<Self>,
        at_once: impl FnOnce(&DaemonState) -> Option<T>,
        job: impl FnOnce(&DaemonState) -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        #[cfg(feature = "bench")]
        let pooled = self.dispatch == Dispatch::Pool;
        #[cfg(not(feature = "bench"))]
        let pooled = true;
        let budget = self.limits().inline_budget();
        if pooled
            && !budget.is_zero()
            && self.warden.worst_case() <= budget
            // The principal's share of the queue is not taken: with the pool
            // idle, no principal holds any of it.
            && let Some(judged) = self.workers.at_once(|| at_once(self))
        {
            self.metrics.judged_at_once();
            return judged;
        }
        self.offload(job).await
    }

    /// How loaded the daemon is: connections, body turns held, and calls
    /// waiting or being judged.
    pub fn current_load(&self) -> metrics::Load {
        metrics::Load {
            connections: self.connections.open(),
            max_connections: self.connections.cap(),
            jobs: self.workers.busy(),
            workers: self.workers.workers(),
            bodies: self.max_bodies - self.bodies.available_permits(),
            max_bodies: self.max_bodies,
        }
    }
}

/// Puts the data directory where the command line says, else where the file
/// says, as an absolute path: the compiled cache, the store and the logs all
/// live there.
pub(crate) fn settle_data_dir(config: &mut Config, command_line: Option<&Path>) {
    let dir = command_line
        .map(Path::to_path_buf)
        .unwrap_or_else(|| config.core.data_dir());
    config.core.set_data_dir(&dir);
}

/// Who holds the request's bearer token in `tokens`: 401 saying what is
/// wrong when no configured token is presented.
fn authenticate(headers: &HeaderMap, tokens: &Tokens) -> Result<Principal, ApiError> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .ok_or_else(|| ApiError::unauthorized("missing `Authorization: Bearer <token>`"))?;
    let token = header.to_str().ok().and_then(auth::bearer).ok_or_else(|| {
        ApiError::unauthorized("the Authorization header is not `Bearer <token>`")
    })?;
    tokens
        .authenticate(token)
        .ok_or_else(|| ApiError::unauthorized("the bearer token is not valid"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Authenticated;
    use crate::reload::Trigger;
    use axum::http::{HeaderValue, StatusCode, header};

    const KEPT: &str = "kept-token-0123456789abcdef";
    const REVOKED: &str = "revoked-token-0123456789abcdef";

    fn config(tokens: &[(&str, &str)]) -> String {
        let mut yaml = String::from("guardrails:\n  providers: []\nserver:\n  tokens:\n");
        for (name, token) in tokens {
            yaml.push_str(&format!(
                "    - {{name: {name}, role: agent, token: {token}}}\n"
            ));
        }
        yaml
    }

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        headers.insert(header::AUTHORIZATION, value);
        headers
    }

    /// What admission would keep with a request bearing `token`.
    fn admitted(daemon: &DaemonState, token: &str) -> Authenticated {
        let tokens = daemon.tokens.load_full();
        let principal = tokens.authenticate(token).expect("a configured token");
        Authenticated { principal, tokens }
    }

    fn daemon(dir: &tempfile::TempDir) -> DaemonState {
        let path = dir.path().join("warden.yaml");
        std::fs::write(&path, config(&[("kept", KEPT), ("revoked", REVOKED)])).unwrap();
        let options = ServeOptions {
            data_dir: Some(dir.path().join("data")),
            watch: Some(false),
            ..ServeOptions::default()
        };
        DaemonState::load(&path, &options).unwrap()
    }

    #[test]
    fn admissions_answer_stands_while_its_token_set_is_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = daemon(&dir);
        let admitted = admitted(&daemon, KEPT);
        // The header is not looked at again: admission's answer names the caller.
        let who = daemon
            .authorize_admitted(&HeaderMap::new(), Some(admitted), Access::Agent)
            .unwrap();
        assert_eq!(&*who.name, "kept");
    }

    #[test]
    fn a_token_revoked_by_a_reload_after_admission_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = daemon(&dir);
        let admitted = admitted(&daemon, REVOKED);
        std::fs::write(daemon.config_path(), config(&[("kept", KEPT)])).unwrap();
        daemon.reload(&Trigger::Signal).unwrap();
        let err = daemon
            .authorize_admitted(&bearer(REVOKED), Some(admitted), Access::Agent)
            .unwrap_err();
        assert_eq!(err.status, StatusCode::UNAUTHORIZED);
        assert_eq!(err.message, "the bearer token is not valid");
    }

    #[test]
    fn a_token_kept_by_a_reload_after_admission_is_looked_up_again_and_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = daemon(&dir);
        let admitted = admitted(&daemon, KEPT);
        std::fs::write(daemon.config_path(), config(&[("kept", KEPT)])).unwrap();
        daemon.reload(&Trigger::Signal).unwrap();
        let who = daemon
            .authorize_admitted(&bearer(KEPT), Some(admitted), Access::Agent)
            .unwrap();
        assert_eq!(&*who.name, "kept");
    }

    #[test]
    fn without_admissions_answer_the_token_is_authenticated() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = daemon(&dir);
        let err = daemon
            .authorize_admitted(&HeaderMap::new(), None, Access::Agent)
            .unwrap_err();
        assert_eq!(err.status, StatusCode::UNAUTHORIZED);
        let who = daemon
            .authorize_admitted(&bearer(KEPT), None, Access::Agent)
            .unwrap();
        assert_eq!(&*who.name, "kept");
    }
}
